#include "core/io/npy.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <type_traits>

#include "core/io/detail.h"
#include "core/io/files.h"
#include "core/vocabulary/memory_budget.h"

namespace shardlens {
namespace {

using io_detail::checked_mul;
using io_detail::fail;
using io_detail::quote_excerpt;

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kMaxHeaderBytes = kMaxNpyHeaderBytes;
constexpr size_t kMaxDims = 64;  // NPY_MAXDIMS in numpy 2.x (32 in 1.x).

// ---- Header dictionary: the Python literal numpy writes, e.g.
// {'descr': '<i8', 'fortran_order': False, 'shape': (3, 4), }
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& origin) : m_s(text), m_origin(origin) {}

  NpyHeader parse() {
    NpyHeader h;
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    for (;;) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = parse_string("key");
      expect(':');
      if (key == "descr") {
        once(have_descr, key);
        skip_space();
        if (peek() == '[') bad("structured dtypes (record arrays) are not supported");
        h.descr = parse_string("'descr' value");
      } else if (key == "fortran_order") {
        once(have_order, key);
        h.fortran_order = parse_bool();
      } else if (key == "shape") {
        once(have_shape, key);
        h.shape = parse_shape();
      } else {
        bad("unexpected key " + quote_excerpt(key) + " in header");
      }
      skip_space();
      if (peek() == ',') {
        ++m_pos;
        continue;
      }
      if (peek() != '}') bad_here("expected ',' or '}'");
    }
    ++m_pos;
    skip_space();
    if (m_pos != m_s.size()) bad_here("unexpected text after the header dictionary");
    if (!have_descr) bad("header lacks 'descr'");
    if (!have_order) bad("header lacks 'fortran_order'");
    if (!have_shape) bad("header lacks 'shape'");
    return h;
  }

 private:
  [[noreturn]] void bad(const std::string& what) const {
    fail(m_origin, "bad NPY header: " + what);
  }
  [[noreturn]] void bad_here(const std::string& what) const {
    bad(what + " at " + quote_excerpt(m_s.substr(m_pos), 20));
  }
  void once(bool& seen, const std::string& key) const {
    if (seen) bad("key '" + key + "' appears twice");
    seen = true;
  }
  char peek() const { return m_pos < m_s.size() ? m_s[m_pos] : '\0'; }
  void skip_space() {
    while (m_pos < m_s.size() &&
           (m_s[m_pos] == ' ' || m_s[m_pos] == '\n' || m_s[m_pos] == '\t' || m_s[m_pos] == '\r'))
      ++m_pos;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) bad_here(std::string("expected '") + c + "'");
    ++m_pos;
  }
  bool consume_word(std::string_view w) {
    if (m_s.substr(m_pos, w.size()) != w) return false;
    m_pos += w.size();
    return true;
  }

  // Python string literal without escapes (numpy never writes any in these keys).
  std::string parse_string(const char* what) {
    skip_space();
    const char q = peek();
    if (q != '\'' && q != '"') bad_here(std::string("expected a quoted ") + what);
    const size_t end = m_s.find(q, m_pos + 1);
    if (end == std::string_view::npos) bad(std::string("unterminated ") + what);
    std::string out(m_s.substr(m_pos + 1, end - m_pos - 1));
    if (out.find('\\') != std::string::npos) bad(std::string("escape sequence in ") + what);
    m_pos = end + 1;
    return out;
  }

  bool parse_bool() {
    skip_space();
    if (consume_word("True")) return true;
    if (consume_word("False")) return false;
    bad_here("'fortran_order' must be True or False");
  }

  int64_t parse_dim() {
    skip_space();
    if (peek() == '-') bad("negative dimension in 'shape'");
    if (peek() < '0' || peek() > '9') bad_here("expected an integer dimension in 'shape'");
    int64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      const int digit = peek() - '0';
      if (v > (INT64_MAX - digit) / 10) bad("dimension in 'shape' is too large");
      v = v * 10 + digit;
      ++m_pos;
    }
    if (peek() == 'L') ++m_pos;  // Python 2 long suffix, written by very old numpy.
    return v;
  }

  std::vector<int64_t> parse_shape() {
    expect('(');
    std::vector<int64_t> shape;
    bool saw_comma = false;
    for (;;) {
      skip_space();
      if (peek() == ')') break;
      if (shape.size() == kMaxDims)
        bad("more than " + std::to_string(kMaxDims) + " dimensions in 'shape'");
      shape.push_back(parse_dim());
      skip_space();
      if (peek() == ',') {
        saw_comma = true;
        ++m_pos;
        continue;
      }
      if (peek() != ')') bad_here("expected ',' or ')' in 'shape'");
    }
    ++m_pos;
    // "(3)" is an int in Python, not a tuple: numpy never writes it.
    if (shape.size() == 1 && !saw_comma) bad("'shape' must be a tuple, e.g. (3,)");
    return shape;
  }

  std::string_view m_s;
  const std::string& m_origin;
  size_t m_pos = 0;
};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

// ---- dtypes

struct DType {
  char kind = 0;  // 'b' bool, 'i' signed, 'u' unsigned, 'f' float
  size_t size = 0;
  bool big_endian = false;
};

DType parse_descr(const std::string& descr, const std::string& origin) {
  std::string_view d = descr;
  DType t;
  if (!d.empty() && (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=')) {
    t.big_endian = d[0] == '>';  // '|' (not applicable) and '=' (native) mean little here.
    d.remove_prefix(1);
  }
  if (d == "O")
    fail(origin, "object arrays (dtype '" + descr +
                     "') are not supported: they hold pickled Python objects");
  const bool known = d == "b1" || d == "i1" || d == "u1" || d == "i2" || d == "u2" || d == "i4" ||
                     d == "u4" || d == "i8" || d == "u8" || d == "f2" || d == "f4" || d == "f8";
  if (!known)
    fail(origin, "unsupported dtype " + quote_excerpt(descr) +
                     " (expected bool, integer or float of 1-8 bytes)");
  t.kind = d[0];
  t.size = size_t(d[1] - '0');
  return t;
}

template <typename U>
U byteswap(U v) {
  if constexpr (sizeof(U) == 1) return v;
  if constexpr (sizeof(U) == 2) return __builtin_bswap16(v);
  if constexpr (sizeof(U) == 4) return __builtin_bswap32(v);
  if constexpr (sizeof(U) == 8) return __builtin_bswap64(v);
}

template <size_t N>
struct UIntOf;
template <>
struct UIntOf<1> {
  using type = uint8_t;
};
template <>
struct UIntOf<2> {
  using type = uint16_t;
};
template <>
struct UIntOf<4> {
  using type = uint32_t;
};
template <>
struct UIntOf<8> {
  using type = uint64_t;
};

template <typename T>
T load_value(const char* p, bool swap) {
  using U = typename UIntOf<sizeof(T)>::type;
  U u;
  std::memcpy(&u, p, sizeof u);
  if (swap) u = byteswap(u);
  return std::bit_cast<T>(u);
}

// IEEE half precision; numpy's float16 ('<f2').
double half_to_double(uint16_t h) {
  const int exp = (h >> 10) & 0x1F;
  const int mant = h & 0x3FF;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exp == 0) return sign * std::ldexp(mant, -24);
  if (exp == 31) return mant ? std::nan("") : sign * INFINITY;
  return sign * std::ldexp(mant + 1024, exp - 25);
}

// Calls fn.template operator()<T>() with the C++ type matching the dtype.
template <typename Fn>
void dispatch(const DType& t, Fn&& fn) {
  switch (t.kind) {
    case 'b':
    case 'u':
      if (t.size == 1) return fn.template operator()<uint8_t>();
      if (t.size == 2) return fn.template operator()<uint16_t>();
      if (t.size == 4) return fn.template operator()<uint32_t>();
      return fn.template operator()<uint64_t>();
    case 'i':
      if (t.size == 1) return fn.template operator()<int8_t>();
      if (t.size == 2) return fn.template operator()<int16_t>();
      if (t.size == 4) return fn.template operator()<int32_t>();
      return fn.template operator()<int64_t>();
    default:
      if (t.size == 2) return fn.template operator()<uint16_t>();  // half, converted by caller
      if (t.size == 4) return fn.template operator()<float>();
      return fn.template operator()<double>();
  }
}

// A parsed array whose data size has been checked against the buffer.
struct ArrayView {
  NpyHeader header;
  DType type;
  const char* data = nullptr;
  size_t count = 0;
  bool swap = false;
};

ArrayView check_array(const std::string& bytes, const std::string& origin) {
  ArrayView v;
  v.header = parse_npy_header(bytes, origin);
  v.type = parse_descr(v.header.descr, origin);
  if (v.header.fortran_order)
    fail(origin,
         "Fortran-order arrays are not supported; save a C-order copy "
         "(numpy.ascontiguousarray)");
  uint64_t count = 1;
  for (int64_t d : v.header.shape) count = *checked_mul(count, uint64_t(d));  // Checked in parse.
  const uint64_t available = bytes.size() - v.header.data_offset;
  const auto need = checked_mul(count, v.type.size);
  if (!need || *need > available)
    fail(origin, "truncated data: header says " + std::to_string(count) + " values of " +
                     std::to_string(v.type.size) + " bytes, file has " + std::to_string(available) +
                     " bytes after the header");
  if (*need < available)
    fail(origin, std::to_string(available - *need) + " bytes of trailing data after the " +
                     std::to_string(count) + " values");
  v.data = bytes.data() + v.header.data_offset;
  v.count = size_t(count);
  v.swap = v.type.big_endian != (std::endian::native == std::endian::big);
  return v;
}

template <typename T>
std::string npy_bytes_impl(const std::vector<T>& values, const std::vector<int64_t>& shape,
                           const char* descr) {
  uint64_t count = 1;
  for (int64_t d : shape) {
    const auto next = d < 0 ? std::nullopt : checked_mul(count, uint64_t(d));
    if (!next) throw std::invalid_argument("npy_bytes: invalid shape " + shape_text(shape));
    count = *next;
  }
  if (count != values.size())
    throw std::invalid_argument("npy_bytes: shape " + shape_text(shape) + " holds " +
                                std::to_string(count) + " values but " +
                                std::to_string(values.size()) + " were given");
  std::string dict = std::string("{'descr': '") + descr +
                     "', 'fortran_order': False, 'shape': " + shape_text(shape) + ", }";
  // Pad with spaces and a final newline so the data starts 64-byte aligned, as numpy does.
  size_t prefix = 10;
  size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  if (total - prefix > 0xFFFF) {  // Does not fit format 1.0's 16-bit length: use 2.0.
    prefix = 12;
    total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  }
  const size_t header_len = total - prefix;
  dict.append(header_len - dict.size() - 1, ' ');
  dict += '\n';

  std::string out(kMagic);
  out += char(prefix == 10 ? 1 : 2);
  out += char(0);
  for (size_t i = 0; i < prefix - 8; ++i) out += char((header_len >> (8 * i)) & 0xFF);
  out += dict;
  const size_t data_at = out.size();
  out.resize(data_at + values.size() * sizeof(T));
  for (size_t i = 0; i < values.size(); ++i) {
    using U = typename UIntOf<sizeof(T)>::type;
    U u = std::bit_cast<U>(values[i]);
    if constexpr (std::endian::native == std::endian::big) u = byteswap(u);
    std::memcpy(out.data() + data_at + i * sizeof(T), &u, sizeof u);
  }
  return out;
}

}  // namespace

NpyHeader parse_npy_header(const std::string& bytes, const std::string& origin) {
  if (bytes.empty()) fail(origin, "empty file");
  if (bytes.size() < kMagic.size() || bytes.compare(0, kMagic.size(), kMagic) != 0)
    fail(origin, "not an NPY file (missing \\x93NUMPY magic)");
  if (bytes.size() < 10) fail(origin, "truncated NPY header");
  const int major = uint8_t(bytes[6]);
  const int minor = uint8_t(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    fail(origin, "unsupported NPY format version " + std::to_string(major) + "." +
                     std::to_string(minor) + " (expected 1.0, 2.0 or 3.0)");
  const size_t prefix = major == 1 ? 10 : 12;
  if (bytes.size() < prefix) fail(origin, "truncated NPY header");
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + 8);
  const size_t header_len = size_t(io_detail::load_uint(p, prefix - 8, false));
  if (header_len > kMaxHeaderBytes)
    fail(origin, "implausible NPY header length " + std::to_string(header_len) + " bytes");
  if (header_len > bytes.size() - prefix)
    fail(origin, "truncated NPY header: length field says " + std::to_string(header_len) +
                     " bytes, file has " + std::to_string(bytes.size() - prefix));
  const std::string_view text(bytes.data() + prefix, header_len);
  // Format 3.0 allows UTF-8 field names; our keys are ASCII, so only check the encoding.
  if (major == 3 && !is_valid_utf8(text)) fail(origin, "bad NPY header: not valid UTF-8");

  NpyHeader h = HeaderParser(text, origin).parse();
  uint64_t count = 1;
  for (int64_t d : h.shape) {
    const auto next = checked_mul(count, uint64_t(d));
    if (!next || *next > uint64_t(INT64_MAX))
      fail(origin, "shape " + shape_text(h.shape) + " has too many elements");
    count = *next;
  }
  h.data_offset = prefix + header_len;
  return h;
}

uint64_t npy_value_count(const NpyHeader& header) {
  uint64_t count = 1;
  for (int64_t d : header.shape) count *= uint64_t(d);  // checked in parse_npy_header
  return count;
}

uint64_t npy_data_bytes(const NpyHeader& header, const std::string& origin) {
  const DType type = parse_descr(header.descr, origin);
  const auto bytes = checked_mul(npy_value_count(header), type.size);
  if (!bytes) fail(origin, "shape " + shape_text(header.shape) + " has too many elements");
  return *bytes;
}

std::vector<int64_t> npy_integers_from_bytes(const std::string& bytes, const std::string& origin,
                                             std::vector<int64_t>* shape) {
  const ArrayView v = check_array(bytes, origin);
  check_load_budget(origin, uint64_t(v.count) * sizeof(int64_t), "its values as 64-bit integers");
  if (v.type.kind == 'f')
    fail(origin, "float array (dtype '" + v.header.descr + "') where integers are expected");
  std::vector<int64_t> out(v.count);  // Count verified against the buffer size.
  dispatch(v.type, [&]<typename T>() {
    for (size_t i = 0; i < v.count; ++i) {
      const T x = load_value<T>(v.data + i * sizeof(T), v.swap);
      if constexpr (std::is_same_v<T, uint64_t>) {
        if (x > uint64_t(INT64_MAX))
          fail(origin, "value " + std::to_string(x) + " at index " + std::to_string(i) +
                           " does not fit in a 64-bit signed integer");
      }
      out[i] = int64_t(x);  // NOLINT(bugprone-signed-char-misuse): int8 data sign-extends
    }
  });
  if (v.type.kind == 'b')
    for (int64_t& x : out) x = x != 0;
  if (shape) *shape = v.header.shape;
  return out;
}

std::vector<double> npy_doubles_from_bytes(const std::string& bytes, const std::string& origin,
                                           std::vector<int64_t>* shape) {
  const ArrayView v = check_array(bytes, origin);
  check_load_budget(origin, uint64_t(v.count) * sizeof(double), "its values as doubles");
  std::vector<double> out(v.count);  // Count verified against the buffer size.
  const bool is_half = v.type.kind == 'f' && v.type.size == 2;
  const bool is_bool = v.type.kind == 'b';
  dispatch(v.type, [&]<typename T>() {
    for (size_t i = 0; i < v.count; ++i) {
      const T x = load_value<T>(v.data + i * sizeof(T), v.swap);
      if constexpr (std::is_same_v<T, uint16_t>) {
        out[i] = is_half ? half_to_double(x) : double(x);
      } else {
        out[i] = double(x);
      }
    }
  });
  if (is_bool)
    for (double& x : out) x = x != 0;
  if (shape) *shape = v.header.shape;
  return out;
}

size_t read_npy_integer_column(const std::string& path, const IntegerChunkSink& sink) {
  require_regular_file(path);
  std::ifstream file(path, std::ios::binary);
  std::error_code ec;
  if (!file || std::filesystem::is_directory(path, ec)) fail(path, "cannot open for reading");
  const auto file_size = std::filesystem::file_size(path, ec);
  if (ec) fail(path, "cannot open for reading (" + ec.message() + ")");
  // The header alone, read first: its length field says how much of the file it takes.
  std::string head(12, '\0');
  file.read(head.data(), std::streamsize(head.size()));
  head.resize(size_t(file.gcount()));
  size_t header_bytes = head.size();
  if (head.size() >= 10 && head.compare(0, kMagic.size(), kMagic) == 0) {
    const size_t prefix = uint8_t(head[6]) == 1 ? 10 : 12;
    const auto* p = reinterpret_cast<const unsigned char*>(head.data() + 8);
    const size_t header_len = size_t(io_detail::load_uint(p, prefix - 8, false));
    header_bytes =
        std::min<uint64_t>(prefix + std::min(header_len, kMaxHeaderBytes + 1), file_size);
  }
  if (header_bytes > head.size()) {
    const size_t have = head.size();
    head.resize(header_bytes);
    file.read(head.data() + have, std::streamsize(header_bytes - have));
    head.resize(have + size_t(file.gcount()));
  }
  const NpyHeader header = parse_npy_header(head, path);
  const DType type = parse_descr(header.descr, path);
  if (type.kind == 'f')
    fail(path, "float array (dtype '" + header.descr + "') where integers are expected");
  if (header.fortran_order && header.shape.size() > 1)
    fail(path,
         "Fortran-order arrays are not supported; save a C-order copy "
         "(numpy.ascontiguousarray)");
  const bool column =
      header.shape.size() == 1 || (header.shape.size() == 2 && header.shape[1] == 1);
  if (!column)
    fail(path, "shape " + shape_text(header.shape) +
                   ": expected one value per sample, an array of shape (N,) or (N, 1)");
  const auto count = size_t(header.shape[0]);
  const uint64_t available = file_size - header.data_offset;
  const uint64_t need = uint64_t(count) * type.size;  // count < 2^63 / 8: checked in the header
  if (need > available)
    fail(path, "truncated data: header says " + std::to_string(count) + " values of " +
                   std::to_string(type.size) + " bytes, file has " + std::to_string(available) +
                   " bytes after the header");
  if (need < available)
    fail(path, std::to_string(available - need) + " bytes of trailing data after the " +
                   std::to_string(count) + " values");
  // Callers keep one 32-bit class id (or index) per value: bound that before they reserve.
  check_load_budget(path, uint64_t(count) * sizeof(int32_t), "one 32-bit value per sample");
  const bool swap = type.size > 1 && type.big_endian != (std::endian::native == std::endian::big);
  file.seekg(std::streamoff(header.data_offset));
  constexpr size_t kChunk = size_t(1) << 18;
  std::vector<char> raw(kChunk * type.size);
  std::vector<int64_t> values(kChunk);
  for (size_t offset = 0; offset < count || (count == 0 && offset == 0);) {
    const size_t len = std::min(kChunk, count - offset);
    file.read(raw.data(), std::streamsize(len * type.size));
    if (size_t(file.gcount()) != len * type.size) fail(path, "read error (file changed?)");
    dispatch(type, [&]<typename T>() {
      for (size_t i = 0; i < len; ++i) {
        const T x = load_value<T>(raw.data() + i * sizeof(T), swap);
        if constexpr (std::is_same_v<T, uint64_t>) {
          if (x > uint64_t(INT64_MAX))
            fail(path, "value " + std::to_string(x) + " at index " + std::to_string(offset + i) +
                           " does not fit in a 64-bit signed integer");
        }
        values[i] = type.kind == 'b' ? int64_t(x != 0) : int64_t(x);
      }
    });
    sink(count, offset, std::span<const int64_t>(values.data(), len));
    offset += len;
    if (count == 0) break;
  }
  return count;
}

std::vector<int64_t> read_npy_integers(const std::string& path) {
  return npy_integers_from_bytes(read_file_bytes(path), path);
}

std::vector<double> read_npy_doubles(const std::string& path) {
  return npy_doubles_from_bytes(read_file_bytes(path), path);
}

std::string npy_bytes(const std::vector<int64_t>& values, const std::vector<int64_t>& shape) {
  return npy_bytes_impl(values, shape, "<i8");
}
std::string npy_bytes(const std::vector<int32_t>& values, const std::vector<int64_t>& shape) {
  return npy_bytes_impl(values, shape, "<i4");
}
std::string npy_bytes(const std::vector<uint8_t>& values, const std::vector<int64_t>& shape) {
  return npy_bytes_impl(values, shape, "|u1");
}
std::string npy_bytes(const std::vector<double>& values, const std::vector<int64_t>& shape) {
  return npy_bytes_impl(values, shape, "<f8");
}

}  // namespace shardlens
