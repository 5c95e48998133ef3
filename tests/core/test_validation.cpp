// One owner per rule, one row a case: the bounds of a record's values
// (core/vocabulary/records.h: check_record_bounds, which every reader calls) and the checked JSON
// reader (core/io/json_fields.h, behind meta.json, scenario files and recorded settings).
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "core/io/json_fields.h"
#include "core/runfile/import.h"
#include "core/vocabulary/records.h"
#include "core/vocabulary/types.h"
#include "test_io_util.h"

namespace shardlens {
namespace {

using nlohmann::json;

// --- the checked JSON reader ----------------------------------------------------------------

struct JsonFieldCase {
  std::string name;
  json object;
  std::function<void(const json&)> read;
  std::string message;  // the whole InputError
};

class JsonFields : public testing::TestWithParam<JsonFieldCase> {};

TEST_P(JsonFields, SaysWhatTheKeyMustBe) {
  const JsonFieldCase& c = GetParam();
  EXPECT_EQ(io_test::input_error_of([&] { c.read(c.object); }), c.message);
}

auto integer(int64_t lo, int64_t hi) {
  return [=](const json& j) { json_integer(j, "k", "f.json", lo, hi); };
}
auto any_integer() {
  return [](const json& j) { json_integer(j, "k", "f.json"); };
}

INSTANTIATE_TEST_SUITE_P(
    Cases, JsonFields,
    testing::Values(JsonFieldCase{"AbsentKeyMustBeGiven", json::object(), any_integer(),
                                  "f.json: 'k' must be given"},
                    JsonFieldCase{"FractionIsNoInteger", json{{"k", 2.5}}, any_integer(),
                                  "f.json: 'k' must be an integer (is 2.5)"},
                    JsonFieldCase{"IntegerBelowItsRange", json{{"k", 0}}, integer(1, 3),
                                  "f.json: 'k' must be an integer in [1, 3] (is 0)"},
                    JsonFieldCase{"UnsignedBeyondInt64", json{{"k", 18446744073709551615ULL}},
                                  any_integer(),
                                  "f.json: 'k' must be an integer in [-9223372036854775808, "
                                  "9223372036854775807] (is 18446744073709551615)"},
                    JsonFieldCase{"IntegerBeyondItsType", json{{"k", 4294967297LL}},
                                  [](const json& j) { json_integer_of<int>(j, "k", "f.json"); },
                                  "f.json: 'k' must be an integer in [-2147483648, 2147483647] (is "
                                  "4294967297)"},
                    JsonFieldCase{"LongStringShownBySize", json{{"k", std::string(100, 'x')}},
                                  any_integer(),
                                  "f.json: 'k' must be an integer (is a string of 100 bytes)"},
                    JsonFieldCase{"ListIsNoString", json{{"k", {1, 2}}},
                                  [](const json& j) { json_string(j, "k", "f.json"); },
                                  "f.json: 'k' must be a string (is a list)"},
                    JsonFieldCase{"StringIsNoBool", json{{"k", "yes"}},
                                  [](const json& j) { json_bool(j, "k", "f.json"); },
                                  "f.json: 'k' must be true or false (is \"yes\")"},
                    JsonFieldCase{"NumberIsNoObject", json{{"k", 3}},
                                  [](const json& j) { json_object(j, "k", "f.json"); },
                                  "f.json: 'k' must be an object (is 3)"},
                    JsonFieldCase{"ListLongerThanItsCap", json{{"k", {1, 2, 3}}},
                                  [](const json& j) { json_integers(j, "k", "f.json", 2); },
                                  "f.json: 'k' must be a list of at most 2 entries (has 3)"},
                    JsonFieldCase{"ListHoldingAString", json{{"k", {1, "a"}}},
                                  [](const json& j) { json_integers(j, "k", "f.json"); },
                                  "f.json: 'k' must be a list of integers (holds \"a\")"},
                    JsonFieldCase{"ListEntryBeyondItsRange", json{{"k", {1, 5}}},
                                  [](const json& j) { json_integers(j, "k", "f.json", 9, 0, 3); },
                                  "f.json: 'k' must be a list of integers in [0, 3] (holds 5)"},
                    JsonFieldCase{"StringListHoldingANumber", json{{"k", {"a", 1}}},
                                  [](const json& j) { json_strings(j, "k", "f.json"); },
                                  "f.json: 'k' must be a list of strings (holds 1)"},
                    JsonFieldCase{"NumberListHoldingAString", json{{"k", {0.5, "a"}}},
                                  [](const json& j) { json_numbers(j, "k", "f.json"); },
                                  "f.json: 'k' must be a list of numbers (holds \"a\")"}),
    [](const testing::TestParamInfo<JsonFieldCase>& info) { return info.param.name; });

TEST(JsonFields, ReadsWhatIsWithinItsBounds) {
  const json j = {{"i", 3},        {"big", 18446744073709551615ULL},
                  {"s", "x"},      {"b", true},
                  {"l", {1, -2}},  {"names", {"a", "b"}},
                  {"w", {0.5, 2}}, {"o", {{"x", 1}}}};
  EXPECT_EQ(json_integer(j, "i", "f", 3, 3), 3);
  EXPECT_EQ(json_integer_of<int8_t>(j, "i", "f"), 3);
  EXPECT_EQ(json_string(j, "s", "f"), "x");
  EXPECT_TRUE(json_bool(j, "b", "f"));
  EXPECT_EQ(json_integers(j, "l", "f", 2, -2, 1), (std::vector<int64_t>{1, -2}));
  EXPECT_EQ(json_strings(j, "names", "f"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(json_numbers(j, "w", "f"), (std::vector<double>{0.5, 2}));
  EXPECT_EQ(json_object(j, "o", "f").size(), 1u);
  EXPECT_EQ(describe_json(j.at("o")), "an object");
}

// --- the bounds of a record's values --------------------------------------------------------

struct RecordCase {
  std::string name;
  RecordBounds bounds;
  int64_t rank, index, target, prediction, flags;
  std::string message;  // the whole InputError; empty: the record passes
};

class RecordBoundsCheck : public testing::TestWithParam<RecordCase> {};

TEST_P(RecordBoundsCheck, NamesTheFileTheRecordTheKeyAndTheValue) {
  const RecordCase& c = GetParam();
  const RecordSite site{"dump.csv",
                        {"column 'rank'", "column 'index'", "column 'target'",
                         "column 'prediction'", "column 'flags'"}};
  auto check = [&] {
    check_record_bounds(c.bounds, site, 4, c.rank, c.index, c.target, c.prediction, c.flags);
  };
  if (c.message.empty()) {
    EXPECT_NO_THROW(check());
  } else {
    EXPECT_EQ(io_test::input_error_of(check), c.message);
  }
}

const RecordBounds kStorable = RecordBounds::storable();
// Three classes, ten samples, targets of -100 ignored.
const RecordBounds kRun = RecordBounds::of_run(3, 10, -100);

INSTANTIATE_TEST_SUITE_P(
    Cases, RecordBoundsCheck,
    testing::Values(
        RecordCase{"NegativeRank", kStorable, -1, 0, 0, 0, 0,
                   "dump.csv: record 4 (column 'rank'): rank -1 is outside [0, 65536)"},
        RecordCase{"TargetBeyondInt32", kStorable, 1, 0, int64_t(1) << 31, 0, 0,
                   "dump.csv: record 4 of rank 1 (column 'target'): target 2147483648 is "
                   "outside [-2147483648, 2147483648)"},
        RecordCase{"FlagsBeyondAByte", kStorable, 1, 0, 0, 0, 256,
                   "dump.csv: record 4 of rank 1 (column 'flags'): flags 256 is outside [0, 256)"},
        RecordCase{"IndexBeyondTheLargestDataset", kStorable, 1, kMaxSamples, 0, 0, 0,
                   "dump.csv: record 4 of rank 1 (column 'index'): dataset index 4294967295 is "
                   "outside [0, 4294967295), beyond the largest dataset ShardLens handles "
                   "(2^32-1 samples); are these dataset indices?"},
        RecordCase{"NegativeIndex", kStorable, 1, -3, 0, 0, 0,
                   "dump.csv: record 4 of rank 1 (column 'index'): dataset index -3 is outside "
                   "[0, 4294967295)"},
        RecordCase{"NegativeClassIdsAreStorable", kStorable, 1, 0, -7, -7, 0, ""},
        RecordCase{"PredictionOutsideTheClasses", kRun, 1, 0, 0, 3, 0,
                   "dump.csv: record 4 of rank 1 (column 'prediction'): prediction 3 is outside "
                   "[0, 3)"},
        RecordCase{"TargetOutsideTheClasses", kRun, 1, 0, -1, 0, 0,
                   "dump.csv: record 4 of rank 1 (column 'target'): target -1 is outside [0, 3)"},
        RecordCase{"IgnoredTargetPasses", kRun, 1, 9, -100, 2, 1, ""},
        RecordCase{"IndexBeyondTheDataset", kRun, 1, 10, 0, 0, 0,
                   "dump.csv: record 4 of rank 1 (column 'index'): dataset index 10 is outside "
                   "[0, 10), beyond the dataset's 10 samples"}),
    [](const testing::TestParamInfo<RecordCase>& info) { return info.param.name; });

TEST(RecordBoundsCheck, UnknownDatasetSizeBoundsByTheLargestDataset) {
  const RecordBounds b = RecordBounds::of_run(3, 0, -1);
  EXPECT_NO_THROW(check_record_bounds(b, RecordSite{"r", {}}, 0, 0, Record{1000, 0, 0, 0}));
  EXPECT_EQ(io_test::input_error_of([&] {
              check_record_bounds(b, RecordSite{"run.slrun", {}}, 2, 5, Record{0, 5, 0, 0});
            }),
            "run.slrun: record 2 of rank 5: target 5 is outside [0, 3)");
}

// A reader's records reach the same check: an import names the column the value came from.
TEST(RecordBoundsCheck, AnImportNamesTheColumn) {
  io_test::TempDir dir;
  const std::string path = dir.path("pred.csv");
  io_test::write_bytes(path, "rank,index,label,prediction\n0,1,0,-2\n");
  EXPECT_EQ(io_test::input_error_of([&] { import_dumps({path}, {}); }),
            path + ": record 0 of rank 0 (column 'prediction'): prediction -2 is outside [0, 1)");
  io_test::write_bytes(path, "rank,index,label,prediction\n0,1,0,0\n1,1,9,2147483648\n");
  EXPECT_EQ(io_test::input_error_of([&] { import_dumps({path}, {}); }),
            path +
                ": record 1 of rank 1 (column 'prediction'): prediction 2147483648 is "
                "outside [-2147483648, 2147483648)");
}

// A rank beyond the world size reads alike whether it came from the records or the file name.
TEST(RecordBoundsCheck, ARankBeyondTheWorldSizeNamesItsDump) {
  io_test::TempDir dir;
  const std::string path = dir.path("two.csv");
  io_test::write_bytes(path, "rank,index,target,prediction\n0,0,0,0\n1,1,0,0\n");
  ImportOptions one;
  one.world_size = 1;
  EXPECT_EQ(io_test::input_error_of([&] { import_dumps({path}, one); }),
            path + ": rank 1 is outside the world size 1");
}

}  // namespace
}  // namespace shardlens
