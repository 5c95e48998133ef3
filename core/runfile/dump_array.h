#pragma once
// One array of a per-rank dump, whatever file it came from (core/runfile/import_read.h). A
// header of its own, in plain C++17, so the LibTorch half of the .pt reader
// (core/torch/pt_unpickle.cpp) builds with compilers whose C++20 mode LibTorch's headers
// defeat (clang with libstdc++ 12 and LibTorch 1.13, for the fuzz target).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace shardlens {

struct DumpArray {
  std::vector<int64_t> shape;
  bool integral = true;
  std::vector<int64_t> ints;  // when integral
  std::vector<double> reals;  // when not
  int64_t size() const { return integral ? int64_t(ints.size()) : int64_t(reals.size()); }
};
using DumpArrays = std::map<std::string, DumpArray>;

}  // namespace shardlens
