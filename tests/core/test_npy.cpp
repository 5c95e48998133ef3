// Tests for core/io/npy: header parsing, dtype conversion, writers, and numpy as an oracle.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/io/files.h"
#include "core/io/npy.h"
#include "test_io_util.h"
#include "tests/common/test_rows.h"

namespace shardlens {
namespace {

using io_test::TempDir;
using io_test::write_bytes;

// A hand-made .npy: magic, version, little-endian header length, the dict text, data.
std::string make_npy(const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict + "\n";
  std::string out = std::string("\x93NUMPY", 6) + char(major) + '\0';
  const size_t len = header.size();
  out += char(len & 0xFF);
  out += char((len >> 8) & 0xFF);
  if (major >= 2) {
    out += char((len >> 16) & 0xFF);
    out += char((len >> 24) & 0xFF);
  }
  return out + header + data;
}

std::string dict(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

template <typename T>
std::string raw(std::initializer_list<T> values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), std::data(values), out.size());
  return out;
}

TEST(NpyWriter, RoundTripsEveryWriterType) {
  std::vector<int64_t> shape;
  const std::vector<int64_t> i64{
      -5, 0, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(), 7, 8};
  EXPECT_EQ(npy_integers_from_bytes(npy_bytes(i64, {2, 3}), "a", &shape), i64);
  EXPECT_EQ(shape, (std::vector<int64_t>{2, 3}));
  const std::vector<int32_t> i32{-2147483647 - 1, -1, 0, 2147483647};
  EXPECT_EQ(npy_integers_from_bytes(npy_bytes(i32, {4}), "a"),
            (std::vector<int64_t>{-2147483648LL, -1, 0, 2147483647}));
  const std::vector<uint8_t> u8{0, 1, 255};
  EXPECT_EQ(npy_integers_from_bytes(npy_bytes(u8, {3}), "a"), (std::vector<int64_t>{0, 1, 255}));
  const std::vector<double> f64{-1.5, 0.0, 1e300, 0.1};
  EXPECT_EQ(npy_doubles_from_bytes(npy_bytes(f64, {2, 2}), "a", &shape), f64);
  EXPECT_EQ(shape, (std::vector<int64_t>{2, 2}));
}

TEST(NpyWriter, HeaderIsAlignedAndEdgeShapesWork) {
  const std::string bytes = npy_bytes(std::vector<int64_t>{1, 2, 3}, {3});
  const NpyHeader h = parse_npy_header(bytes, "a");
  EXPECT_EQ(h.descr, "<i8");
  EXPECT_FALSE(h.fortran_order);
  EXPECT_EQ(h.shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(h.data_offset % 64, 0u);
  EXPECT_EQ(bytes[h.data_offset - 1], '\n');
  std::vector<int64_t> shape{9};
  EXPECT_EQ(npy_integers_from_bytes(npy_bytes(std::vector<int64_t>{42}, {}), "a", &shape),
            std::vector<int64_t>{42});
  EXPECT_TRUE(shape.empty());  // 0-d scalar.
  EXPECT_TRUE(npy_integers_from_bytes(npy_bytes(std::vector<int32_t>{}, {0, 5}), "a").empty());
}

TEST(NpyWriter, RejectsShapeThatDoesNotMatchValues) {
  EXPECT_THROW(npy_bytes(std::vector<int64_t>{1, 2, 3}, {2, 2}), std::invalid_argument);
  EXPECT_THROW(npy_bytes(std::vector<int64_t>{}, {-1}), std::invalid_argument);
}

TEST(NpyReader, ReadsOtherVersionsByteOrdersAndBool) {
  const std::string be_i4("\x00\x00\x01\x00\xff\xff\xff\xfe", 8);  // 256, -2 big-endian.
  EXPECT_EQ(npy_integers_from_bytes(make_npy(dict(">i4", "(2,)"), be_i4, 2), "a"),
            (std::vector<int64_t>{256, -2}));
  EXPECT_EQ(
      npy_integers_from_bytes(make_npy(dict("<u2", "(2,)"), raw<uint16_t>({65535, 3}), 3), "a"),
      (std::vector<int64_t>{65535, 3}));
  EXPECT_EQ(npy_integers_from_bytes(make_npy(dict("|b1", "(3,)"), std::string("\1\0\1", 3)), "a"),
            (std::vector<int64_t>{1, 0, 1}));
  // Old Python 2 files spell dimensions with an L suffix; keys may come in any order.
  EXPECT_EQ(
      npy_integers_from_bytes(
          make_npy("{'shape': (2L,), 'fortran_order': False, \"descr\": '|i1'}", "\xfe\x05"), "a"),
      (std::vector<int64_t>{-2, 5}));
  // float16: -1.5, 65504 (largest half), 2^-24 (smallest subnormal).
  const auto halves = npy_doubles_from_bytes(
      make_npy(dict("<f2", "(3,)"), raw<uint16_t>({0xBE00, 0x7BFF, 0x0001})), "a");
  EXPECT_EQ(halves, (std::vector<double>{-1.5, 65504.0, std::ldexp(1.0, -24)}));
  EXPECT_EQ(npy_doubles_from_bytes(
                make_npy(dict(">f4", "(1,)"), std::string("\x3f\xc0\x00\x00", 4)), "a"),
            std::vector<double>{1.5});
  EXPECT_EQ(npy_doubles_from_bytes(make_npy(dict("<i2", "(1,)"), raw<int16_t>({-7})), "a"),
            std::vector<double>{-7.0});
}

TEST(NpyReader, RejectsBadMagicVersionAndTruncatedHeaders) {
  EXPECT_INPUT_ERROR(parse_npy_header("", "x.npy"), "x.npy", "empty file");
  EXPECT_INPUT_ERROR(parse_npy_header("PK\3\4 not npy", "x.npy"), "x.npy", "not an NPY file");
  EXPECT_INPUT_ERROR(parse_npy_header("\x93NUM", "x.npy"), "x.npy", "not an NPY file");
  std::string v4 = make_npy(dict("<i8", "(0,)"), "");
  v4[6] = 4;
  EXPECT_INPUT_ERROR(parse_npy_header(v4, "x.npy"), "x.npy", "unsupported NPY format version 4.0");
  const std::string good = make_npy(dict("<i8", "(1,)"), std::string(8, '\0'));
  EXPECT_INPUT_ERROR(parse_npy_header(good.substr(0, 9), "x.npy"), "x.npy", "truncated NPY header");
  EXPECT_INPUT_ERROR(parse_npy_header(good.substr(0, 30), "x.npy"), "x.npy",
                     "truncated NPY header: length field says");
  std::string huge = good;
  huge[8] = huge[9] = '\xff';
  huge[6] = 2;  // Version 2 reads four length bytes: ff ff 7b 27 -> far beyond the cap.
  EXPECT_INPUT_ERROR(parse_npy_header(huge, "x.npy"), "x.npy", "implausible NPY header length");
}

TEST(NpyReader, RejectsBadHeaderDictionaries) {
  const auto err = [](const std::string& d) {
    return io_test::input_error_of([&] { parse_npy_header(make_npy(d, ""), "h.npy"); });
  };
  EXPECT_NE(err("not a dict").find("h.npy: bad NPY header: expected '{'"), std::string::npos);
  EXPECT_NE(err("{'descr': '<i8', 'shape': (1,)}").find("lacks 'fortran_order'"),
            std::string::npos);
  EXPECT_NE(err("{'descr': '<i8', 'fortran_order': False}").find("lacks 'shape'"),
            std::string::npos);
  EXPECT_NE(err(dict("<i8", "(1,)") + " junk").find("unexpected text after"), std::string::npos);
  EXPECT_NE(err("{'descr': '<i8', 'fortran_order': False, 'shape': (1,), 'x': 1}")
                .find("unexpected key 'x'"),
            std::string::npos);
  EXPECT_NE(err("{'descr': '<i8', 'descr': '<i8', 'fortran_order': False, 'shape': (1,)}")
                .find("appears twice"),
            std::string::npos);
  EXPECT_NE(err(dict("<i8", "(3)")).find("must be a tuple"), std::string::npos);
  EXPECT_NE(err(dict("<i8", "[3]")).find("expected '('"), std::string::npos);
  EXPECT_NE(err(dict("<i8", "(3, -1)")).find("negative dimension"), std::string::npos);
  EXPECT_NE(err(dict("<i8", "(99999999999999999999,)")).find("too large"), std::string::npos);
  EXPECT_NE(err(dict("<i8", "(4294967296, 4294967296)")).find("too many elements"),
            std::string::npos);
  EXPECT_NE(
      err("{'descr': '<i8', 'fortran_order': maybe, 'shape': (1,)}").find("must be True or False"),
      std::string::npos);
  EXPECT_NE(err("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,)}")
                .find("structured dtypes"),
            std::string::npos);
  EXPECT_NE(err("{'descr': '<i8").find("unterminated"), std::string::npos);
}

TEST(NpyReader, RejectsUnsupportedDtypesAndFortranOrder) {
  const std::string d8(8, '\0');
  EXPECT_INPUT_ERROR(npy_integers_from_bytes(make_npy(dict("|O", "(1,)"), d8), "o.npy"), "o.npy",
                     "object arrays");
  EXPECT_INPUT_ERROR(npy_integers_from_bytes(make_npy(dict("<U2", "(1,)"), d8), "u.npy"), "u.npy",
                     "unsupported dtype '<U2'");
  EXPECT_INPUT_ERROR(npy_doubles_from_bytes(make_npy(dict("<c8", "(1,)"), d8), "c.npy"), "c.npy",
                     "unsupported dtype '<c8'");
  EXPECT_INPUT_ERROR(npy_integers_from_bytes(make_npy(dict("<f8", "(1,)"), d8), "f.npy"), "f.npy",
                     "float array (dtype '<f8')");
  EXPECT_INPUT_ERROR(npy_integers_from_bytes(make_npy(dict("<i4", "(1, 2)", true), d8), "F.npy"),
                     "F.npy", "Fortran-order arrays are not supported");
  EXPECT_INPUT_ERROR(
      npy_integers_from_bytes(make_npy(dict("<u8", "(1,)"), std::string(8, '\xff')), "big.npy"),
      "big.npy", "value 18446744073709551615 at index 0 does not fit");
}

TEST(NpyReader, RejectsDataThatDoesNotMatchTheShape) {
  EXPECT_INPUT_ERROR(
      npy_integers_from_bytes(make_npy(dict("<i8", "(1000,)"), std::string(120, '\0')),
                              "labels.npy"),
      "labels.npy",
      "labels.npy: truncated data: header says 1000 values of 8 bytes, file has 120 bytes");
  EXPECT_INPUT_ERROR(
      npy_integers_from_bytes(make_npy(dict("<i4", "(2,)"), std::string(12, '\0')), "t.npy"),
      "t.npy", "4 bytes of trailing data after the 2 values");
  // A shape claiming exabytes in a tiny file: refused from arithmetic, no allocation.
  EXPECT_INPUT_ERROR(
      npy_doubles_from_bytes(make_npy(dict("<f8", "(4611686018427387904,)"), "12345678"), "h.npy"),
      "h.npy", "truncated data: header says 4611686018427387904 values");
  EXPECT_INPUT_ERROR(
      npy_integers_from_bytes(make_npy(dict("<i8", "(3037000499, 3037000499)"), ""), "h.npy"),
      "h.npy", "truncated data");
}

TEST(NpyReader, ReadsFromFileAndNamesIt) {
  TempDir dir;
  write_bytes(dir.path("a.npy"), npy_bytes(std::vector<int32_t>{4, 5}, {2}));
  EXPECT_EQ(read_npy_integers(dir.path("a.npy")), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(read_npy_doubles(dir.path("a.npy")), (std::vector<double>{4, 5}));
  write_bytes(dir.path("empty.npy"), "");
  EXPECT_INPUT_ERROR(read_npy_integers(dir.path("empty.npy")), dir.path("empty.npy"), "empty file");
}

// Random mutations of valid files, one row per file they start from.
struct MutationSeedRow {
  std::string name;
  std::string (*bytes)();
};

// ctest lists a row by its name, not its bytes.
void PrintTo(const MutationSeedRow& row, std::ostream* os) {
  *os << row.name;
}

class MutatedNpy : public ::testing::TestWithParam<MutationSeedRow> {};

TEST_P(MutatedNpy, IsReadOrRefusedWithoutCrashing) {
  io_test::survive_mutations(GetParam().bytes(), 2000, [](const std::string& b) {
    std::vector<int64_t> shape;
    npy_doubles_from_bytes(b, "m", &shape);
    npy_integers_from_bytes(b, "m", &shape);
  });
}

INSTANTIATE_TEST_SUITE_P(
    NpyReader, MutatedNpy,
    ::testing::Values(MutationSeedRow{"Int64Matrix",
                                      [] {
                                        return npy_bytes(std::vector<int64_t>{1, 2, 3, 4}, {2, 2});
                                      }},
                      MutationSeedRow{"Float64Scalar",
                                      [] { return npy_bytes(std::vector<double>{1.5}, {}); }},
                      MutationSeedRow{"Uint8Vector",
                                      [] {
                                        return npy_bytes(std::vector<uint8_t>{7, 8}, {2});
                                      }}),
    shardlens::test::NamedRow());

// numpy writes arrays of every supported dtype and byte order; our reader must agree. The
// files are written once, by the first row that reads them.
constexpr const char* kNumpyWrites = R"PY(
import numpy as np
for t in ['i1','u1','<i2','>i2','<u2','>u2','<i4','>i4','<u4','>u4','<i8','>i8','<u8','>u8']:
    info = np.iinfo(np.dtype(t))
    hi = min(int(info.max), 2**63 - 1)
    vals = [int(info.min), 0, 1, 7, hi] if info.min < 0 else [0, 1, 7, hi]
    np.save(t.replace('<', 'le_').replace('>', 'be_') + '.npy', np.array(vals, dtype=t))
np.save('bool.npy', np.array([True, False, True]))
np.save('u8max.npy', np.array([2**64 - 1], dtype='<u8'))
for t in ['<f2', '>f2', '<f4', '>f4', '<f8', '>f8']:
    np.save(t.replace('<', 'le_').replace('>', 'be_') + '.npy',
            np.array([-1.5, 0.0, 0.25, 1000.0], dtype=t))
np.save('matrix.npy', np.arange(12, dtype='<i8').reshape(3, 4))
np.save('fortran.npy', np.asfortranarray(np.arange(12, dtype='<i8').reshape(3, 4)))
np.save('object.npy', np.array([1, 'a', None], dtype=object), allow_pickle=True)
np.save('strings.npy', np.array(['ab', 'c']))
for v in [(1, 0), (2, 0), (3, 0)]:
    with open('v%d.npy' % v[0], 'wb') as f:
        np.lib.format.write_array(f, np.array([3, 1, 4], dtype='>i2'), version=v)
)PY";

struct NumpyFiles {
  TempDir dir;
  int exit_status = -1;
  std::string path(const std::string& name) const { return dir.path(name + ".npy"); }
};

const NumpyFiles& numpy_files() {
  static const std::unique_ptr<NumpyFiles> files = [] {
    auto f = std::make_unique<NumpyFiles>();
    f->exit_status = io_test::run_python(f->dir, kNumpyWrites);
    return f;
  }();
  return *files;
}

// Every integer dtype numpy writes, in both byte orders: smallest, 0, 1, 7, largest value
// (uint64 up to INT64_MAX).
struct IntegerFileRow {
  std::string name;  // the file numpy wrote: le_i2, be_u8, i1, ...
  std::vector<int64_t> want;
};

// ctest lists a row by its name, not its bytes.
void PrintTo(const IntegerFileRow& row, std::ostream* os) {
  *os << row.name;
}

std::vector<IntegerFileRow> integer_file_rows() {
  std::vector<IntegerFileRow> rows;
  for (const int width : {1, 2, 4, 8}) {
    const std::string bits = std::to_string(width);
    const int nbits = width * 8;
    const int64_t smin =
        nbits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (nbits - 1));
    const int64_t smax =
        nbits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (nbits - 1)) - 1;
    const int64_t umax =
        nbits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << nbits) - 1;
    for (const std::string& order :
         width == 1 ? std::vector<std::string>{""} : std::vector<std::string>{"le_", "be_"}) {
      rows.push_back({order + "i" + bits, {smin, 0, 1, 7, smax}});
      rows.push_back({order + "u" + bits, {0, 1, 7, umax}});
    }
  }
  return rows;
}

class NumpyIntegerFile : public ::testing::TestWithParam<IntegerFileRow> {};

TEST_P(NumpyIntegerFile, ReadsAsNumpyWroteIt) {
  SKIP_WITHOUT_NUMPY();
  const NumpyFiles& files = numpy_files();
  ASSERT_EQ(files.exit_status, 0);
  EXPECT_EQ(read_npy_integers(files.path(GetParam().name)), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(NpyOracle, NumpyIntegerFile, ::testing::ValuesIn(integer_file_rows()),
                         shardlens::test::NamedRow());

// Every float dtype in both byte orders: read as doubles, refused as integers.
struct FileRow {
  std::string name;
};

// ctest lists a row by its name, not its bytes.
void PrintTo(const FileRow& row, std::ostream* os) {
  *os << row.name;
}

class NumpyFloatFile : public ::testing::TestWithParam<FileRow> {};

TEST_P(NumpyFloatFile, ReadsAsDoublesAndIsNoIntegerArray) {
  SKIP_WITHOUT_NUMPY();
  const NumpyFiles& files = numpy_files();
  ASSERT_EQ(files.exit_status, 0);
  const std::string path = files.path(GetParam().name);
  EXPECT_EQ(read_npy_doubles(path), (std::vector<double>{-1.5, 0.0, 0.25, 1000.0}));
  EXPECT_INPUT_ERROR(read_npy_integers(path), path, "float array");
}

INSTANTIATE_TEST_SUITE_P(NpyOracle, NumpyFloatFile,
                         ::testing::Values(FileRow{"le_f2"}, FileRow{"be_f2"}, FileRow{"le_f4"},
                                           FileRow{"be_f4"}, FileRow{"le_f8"}, FileRow{"be_f8"}),
                         shardlens::test::NamedRow());

// Each .npy format version numpy writes.
class NumpyFormatVersion : public ::testing::TestWithParam<FileRow> {};

TEST_P(NumpyFormatVersion, Reads) {
  SKIP_WITHOUT_NUMPY();
  const NumpyFiles& files = numpy_files();
  ASSERT_EQ(files.exit_status, 0);
  EXPECT_EQ(read_npy_integers(files.path(GetParam().name)), (std::vector<int64_t>{3, 1, 4}));
}

INSTANTIATE_TEST_SUITE_P(NpyOracle, NumpyFormatVersion,
                         ::testing::Values(FileRow{"v1"}, FileRow{"v2"}, FileRow{"v3"}),
                         shardlens::test::NamedRow());

TEST(NpyOracle, ReadsWhatNumpyWrites) {
  SKIP_WITHOUT_NUMPY();
  const NumpyFiles& files = numpy_files();
  ASSERT_EQ(files.exit_status, 0);
  const auto d = [&](const std::string& n) { return files.path(n); };
  EXPECT_EQ(read_npy_integers(d("bool")), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_INPUT_ERROR(read_npy_integers(d("u8max")), d("u8max"), "does not fit");
  std::vector<int64_t> shape;
  const auto m = npy_integers_from_bytes(read_file_bytes(d("matrix")), "m", &shape);
  EXPECT_EQ(shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(m[5], 5);
  EXPECT_INPUT_ERROR(read_npy_integers(d("fortran")), d("fortran"), "Fortran-order");
  EXPECT_INPUT_ERROR(read_npy_integers(d("object")), d("object"), "object arrays");
  EXPECT_INPUT_ERROR(read_npy_integers(d("strings")), d("strings"), "unsupported dtype '<U2'");
}

// numpy.load must open what our writers produce, with dtype, shape and values intact.
TEST(NpyOracle, NumpyLoadsWhatWeWrite) {
  SKIP_WITHOUT_NUMPY();
  TempDir dir;
  write_file_atomic(
      dir.path("i8.npy"),
      npy_bytes(std::vector<int64_t>{-1, 0, std::numeric_limits<int64_t>::max(), 3, 4, 5}, {2, 3}));
  write_file_atomic(dir.path("i4.npy"), npy_bytes(std::vector<int32_t>{-7, 7}, {2}));
  write_file_atomic(dir.path("u1.npy"), npy_bytes(std::vector<uint8_t>{0, 200, 255}, {3}));
  write_file_atomic(dir.path("f8.npy"), npy_bytes(std::vector<double>{0.1, -2.5}, {2, 1}));
  write_file_atomic(dir.path("scalar.npy"), npy_bytes(std::vector<int64_t>{9}, {}));
  write_file_atomic(dir.path("empty.npy"), npy_bytes(std::vector<int32_t>{}, {0, 3}));
  EXPECT_EQ(io_test::run_python(dir, R"PY(
import numpy as np
a = np.load('i8.npy'); assert a.dtype == np.dtype('<i8') and a.shape == (2, 3), a
assert a.tolist() == [[-1, 0, 2**63 - 1], [3, 4, 5]], a
a = np.load('i4.npy'); assert a.dtype == np.int32 and a.tolist() == [-7, 7], a
a = np.load('u1.npy'); assert a.dtype == np.uint8 and a.tolist() == [0, 200, 255], a
a = np.load('f8.npy'); assert a.dtype == np.float64 and a.shape == (2, 1)
assert a.ravel().tolist() == [0.1, -2.5], a
a = np.load('scalar.npy'); assert a.shape == () and int(a) == 9, a
a = np.load('empty.npy'); assert a.shape == (0, 3) and a.dtype == np.int32, a
)PY"),
            0);
}

// Labels and predictions are one value per sample: numpy writes the files, including
// dtypes without a byte-order prefix ('i4', 'f8', as hand-written headers and some tools
// have them), which numpy reads in native (little-endian) order.
TEST(NpyColumn, ReadsWhatNumpyWritesInChunksAndRefusesOtherShapes) {
  TempDir dir;
  ASSERT_EQ(io_test::run_python(dir, R"PY(
import numpy as np
n = 600000  # more than one chunk
np.save('long.npy', (np.arange(n, dtype=np.int64) * 7919) % 1000)
np.save('column.npy', np.array([[3], [1], [2]], dtype='>i2'))
np.save('square.npy', np.zeros((10, 10), dtype=np.int64))
np.save('row.npy', np.zeros((1, 3), dtype=np.int64))
np.save('floats.npy', np.zeros(3, dtype=np.float64))
def bare(name, descr, data, shape):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    header += ' ' * (63 - (10 + len(header)) % 64) + '\n'
    with open(name, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + len(header).to_bytes(2, 'little') + header.encode())
        f.write(data)
bare('bare_i4.npy', 'i4', np.array([5, 0, 9], '<i4').tobytes(), '(3,)')
bare('bare_f8.npy', 'f8', np.array([0.5, -1.0], '<f8').tobytes(), '(2,)')
assert np.load('bare_i4.npy').tolist() == [5, 0, 9]
assert np.load('bare_f8.npy').tolist() == [0.5, -1.0]
)PY"),
            0);
  std::vector<int64_t> got;
  size_t chunks = 0;
  const auto collect = [&](size_t, size_t offset, std::span<const int64_t> values) {
    EXPECT_EQ(offset, got.size());
    got.insert(got.end(), values.begin(), values.end());
    ++chunks;
  };
  EXPECT_EQ(read_npy_integer_column(dir.path("long.npy"), collect), 600000u);
  EXPECT_GT(chunks, 1u);
  ASSERT_EQ(got.size(), 600000u);
  for (size_t i = 0; i < got.size(); i += 9973) EXPECT_EQ(got[i], int64_t(i * 7919 % 1000));
  got.clear();
  read_npy_integer_column(dir.path("column.npy"), collect);
  EXPECT_EQ(got, (std::vector<int64_t>{3, 1, 2}));
  got.clear();
  read_npy_integer_column(dir.path("bare_i4.npy"), collect);
  EXPECT_EQ(got, (std::vector<int64_t>{5, 0, 9}));
  EXPECT_EQ(read_npy_doubles(dir.path("bare_f8.npy")), (std::vector<double>{0.5, -1.0}));
  const auto refused = [&](const std::string& name) {
    return io_test::input_error_of([&] { read_npy_integer_column(dir.path(name), collect); });
  };
  EXPECT_NE(refused("square.npy")
                .find("square.npy: shape (10, 10): expected one value per "
                      "sample"),
            std::string::npos);
  EXPECT_NE(refused("row.npy").find("shape (1, 3)"), std::string::npos);
  EXPECT_NE(refused("floats.npy").find("float array"), std::string::npos);
  EXPECT_NE(refused("missing.npy").find("missing.npy"), std::string::npos);
}

}  // namespace
}  // namespace shardlens
