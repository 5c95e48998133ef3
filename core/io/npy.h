#pragma once
// NumPy .npy arrays (format 1.0, 2.0, 3.0): reading integer/float arrays and writing them.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/vocabulary/limits.h"

namespace shardlens {

struct NpyHeader {
  std::string descr;  // e.g. "<i8", ">i4", "|u1", "<f8"
  bool fortran_order = false;
  std::vector<int64_t> shape;
  size_t data_offset = 0;  // byte offset of the data in the buffer
};

// Parses the header of an in-memory .npy (at most kMaxNpyHeaderBytes of dictionary);
// `origin` names the file in errors.
NpyHeader parse_npy_header(const std::string& bytes, const std::string& origin);
// Values the header's shape holds (checked not to overflow when it was parsed).
uint64_t npy_value_count(const NpyHeader& header);
// Bytes of data the header announces: values times the dtype's size. InputError on a dtype
// the readers do not support, so nothing is read for an array that would be refused.
uint64_t npy_data_bytes(const NpyHeader& header, const std::string& origin);

// A 1-D (or N-D, flattened, C order) array of any integer dtype (bool, i1..i8, u1..u8,
// either byte order) converted to int64. Rejects floats, Fortran order, object arrays,
// truncated data, and sizes that do not match the file.
std::vector<int64_t> npy_integers_from_bytes(const std::string& bytes, const std::string& origin,
                                             std::vector<int64_t>* shape = nullptr);
std::vector<int64_t> read_npy_integers(const std::string& path);
// One column of integers (shape (N,) or (N, 1), any integer dtype) read from a file in
// chunks: `sink(total, offset, values)` receives each chunk converted to int64, so a file of
// N values never needs more memory than the caller's own destination. Any other shape is
// refused with the shape found. Returns N.
using IntegerChunkSink =
    std::function<void(size_t total, size_t offset, std::span<const int64_t> values)>;
size_t read_npy_integer_column(const std::string& path, const IntegerChunkSink& sink);

// Float arrays (f4, f8, and integer dtypes converted) as double.
std::vector<double> npy_doubles_from_bytes(const std::string& bytes, const std::string& origin,
                                           std::vector<int64_t>* shape = nullptr);
std::vector<double> read_npy_doubles(const std::string& path);

// Serializes an array in C order as .npy bytes, little-endian (format 1.0, or 2.0 if the
// header outgrows 64 KiB). Throws std::invalid_argument (a programming error, not an input
// error) when the shape does not hold exactly values.size() elements.
std::string npy_bytes(const std::vector<int64_t>& values, const std::vector<int64_t>& shape);
std::string npy_bytes(const std::vector<int32_t>& values, const std::vector<int64_t>& shape);
std::string npy_bytes(const std::vector<uint8_t>& values, const std::vector<int64_t>& shape);
std::string npy_bytes(const std::vector<double>& values, const std::vector<int64_t>& shape);

}  // namespace shardlens
