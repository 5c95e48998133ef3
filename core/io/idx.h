#pragma once
// IDX files (the MNIST format), plain or gzip-compressed (detected by content, not name).
#include <cstdint>
#include <string>
#include <vector>

namespace shardlens {

// Reads an idx1-ubyte label file (magic 0x00000801). Throws InputError naming the file on a
// bad magic, wrong dtype, truncated data, trailing data or an implausible count.
std::vector<int64_t> read_idx_labels(const std::string& path);

struct IdxImages {
  int64_t count = 0;
  int32_t rows = 0;
  int32_t cols = 0;
  std::vector<uint8_t> pixels;  // count * rows * cols, row-major
};
// Reads an idx3-ubyte image file (magic 0x00000803).
IdxImages read_idx_images(const std::string& path);

}  // namespace shardlens
