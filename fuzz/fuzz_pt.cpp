// Fuzz target: .pt dumps (core/torch/pt_dump.cpp, LibTorch's unpickler behind the checks of
// core/io/pt_pickle.h). The first input byte picks how the rest becomes a torch.save file:
//   0 the file's raw bytes;
//   1 a member list (fuzz_util.h's layout: 1 byte name length, name, 2 bytes data length,
//     data), zipped here with fresh CRCs under any names;
//   2 the pickle alone (ARCHIVE/data.pkl), zipped with fixed storages data/0 .. data/2 (15
//     int64 each) and data/3 (one float64) and a version, so mutations reach the tensors'
//     sizes, strides, offsets and storage element counts rather than the ZIP's checksums.
// A dump must read to arrays or be refused with an InputError naming the file; a read past a
// storage (AddressSanitizer) or an allocation past the load budget (-malloc_limit_mb) is a
// finding. fuzz/make_pt_corpus.py writes the seeds.
#include <zlib.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/torch/pt_dump.h"
#include "fuzz/fuzz_util.h"

namespace {

using Members = std::vector<std::pair<std::string, std::string>>;

void put16(std::string& out, uint32_t v) {
  out += char(v & 0xFF);
  out += char((v >> 8) & 0xFF);
}

void put32(std::string& out, uint32_t v) {
  put16(out, v & 0xFFFF);
  put16(out, v >> 16);
}

// A ZIP of stored members (no zip64: fuzz inputs are small), names as given.
std::string stored_zip(const Members& members) {
  std::string out, central;
  for (const auto& member : members) {
    const std::string& name = member.first;  // not a structured binding: the lambda uses it
    const std::string& data = member.second;
    const uint32_t crc =
        uint32_t(crc32(0, reinterpret_cast<const Bytef*>(data.data()), uInt(data.size())));
    const uint32_t offset = uint32_t(out.size());
    const auto header = [&](std::string& s, bool is_central) {
      put32(s, is_central ? 0x02014B50 : 0x04034B50);
      if (is_central) put16(s, 20);  // made by
      put16(s, 20);                  // needed to extract
      put16(s, 0);                   // flags
      put16(s, 0);                   // stored
      put32(s, 0);                   // time, date
      put32(s, crc);
      put32(s, uint32_t(data.size()));
      put32(s, uint32_t(data.size()));
      put16(s, uint16_t(name.size()));
      put16(s, 0);  // extra
      if (is_central) {
        put16(s, 0);  // comment
        put16(s, 0);  // disk
        put16(s, 0);  // internal attributes
        put32(s, 0);  // external attributes
        put32(s, offset);
      }
      s += name;
    };
    header(out, false);
    out += data;
    header(central, true);
  }
  const uint32_t at = uint32_t(out.size());
  out += central;
  put32(out, 0x06054B50);
  put16(out, 0);
  put16(out, 0);
  put16(out, uint16_t(members.size()));
  put16(out, uint16_t(members.size()));
  put32(out, uint32_t(central.size()));
  put32(out, at);
  put16(out, 0);
  return out;
}

std::string int64s(const std::vector<int64_t>& values) {
  std::string out;
  for (int64_t v : values)
    for (int b = 0; b < 8; ++b) out += char((uint64_t(v) >> (8 * b)) & 0xFF);
  return out;
}

// Mode 2: the pickle with the fixed storages make_pt_corpus.py's pickle seeds refer to.
Members with_storages(std::string_view pickle) {
  std::vector<int64_t> index, target, prediction;
  for (int64_t i = 0; i < 15; ++i) {
    index.push_back(i);
    target.push_back(i % 3);
    prediction.push_back(i * i % 3);
  }
  const double one = 1.0;
  return {{"dump/data.pkl", std::string(pickle)},
          {"dump/data/0", int64s(index)},
          {"dump/data/1", int64s(target)},
          {"dump/data/2", int64s(prediction)},
          {"dump/data/3", std::string(reinterpret_cast<const char*>(&one), sizeof one)},
          {"dump/version", "3\n"}};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardlens;
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string bytes;
  switch (data[0] % 3) {
    case 0:
      bytes = std::string(rest);
      break;
    case 1:
      bytes = stored_zip(fuzz::parse_member_list(rest));
      break;
    default:
      bytes = stored_zip(with_storages(rest));
      break;
  }
  const std::string path = fuzz::scratch_file("dump_rank0.pt", bytes);
  fuzz::expect_clean(path, [&] { read_pt_dump_arrays(path); });
  return 0;
}
