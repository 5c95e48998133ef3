// Tests for core/io/csv: RFC 4180 parsing, integer columns, and precise error locations.
#include <gtest/gtest.h>

#include <chrono>

#include "core/io/csv.h"
#include "test_io_util.h"

namespace shardlens {
namespace {

using io_test::TempDir;
using io_test::write_bytes;

const std::vector<std::string> kLabelNames{"label", "target"};

TEST(CsvParse, HeaderRowsAndLines) {
  const CsvTable t = parse_csv("index,label\n0,3\n1,4\n", "f.csv");
  EXPECT_EQ(t.header, (std::vector<std::string>{"index", "label"}));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[1], (std::vector<std::string>{"1", "4"}));
  EXPECT_EQ(t.lines, (std::vector<size_t>{2, 3}));
  EXPECT_EQ(t.column("label"), 1);
  EXPECT_EQ(t.column("Label"), -1);
  EXPECT_EQ(t.column("missing"), -1);
}

TEST(CsvParse, NumericFirstRowMeansNoHeader) {
  const CsvTable t = parse_csv("3\n-1\n2.5\n", "f.csv");
  EXPECT_TRUE(t.header.empty());
  EXPECT_EQ(t.rows.size(), 3u);
}

TEST(CsvParse, QuotesBomCrlfAndBlankLines) {
  const std::string text =
      "\xEF\xBB\xBF"
      "name, label\r\n"
      "\"a, b\",1\r\n"
      "\r\n"
      "\"say \"\"hi\"\"\" , 2\r\n"
      "\"two\nlines\",3\r\n"
      "  plain  ,4\r\n"
      "\r\n\r\n";
  const CsvTable t = parse_csv(text, "f.csv");
  EXPECT_EQ(t.header, (std::vector<std::string>{"name", "label"}));
  ASSERT_EQ(t.rows.size(), 4u);
  EXPECT_EQ(t.rows[0][0], "a, b");
  EXPECT_EQ(t.rows[1][0], "say \"hi\"");
  EXPECT_EQ(t.rows[2][0], "two\nlines");
  EXPECT_EQ(t.rows[3][0], "plain");
  EXPECT_EQ(t.lines, (std::vector<size_t>{2, 4, 5, 7}));
  EXPECT_EQ(csv_integer_column(t, kLabelNames, "f.csv"), (std::vector<int64_t>{1, 2, 3, 4}));
}

TEST(CsvParse, LastLineWithoutNewlineAndQuotedEmptyField) {
  const CsvTable t = parse_csv("a,b\n\"\",1", "f.csv");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0], (std::vector<std::string>{"", "1"}));
}

TEST(CsvParse, RejectsRaggedRowsWithLineNumber) {
  EXPECT_INPUT_ERROR(parse_csv("a,b\n1,2\n3\n", "r.csv"), "r.csv",
                     "r.csv: line 3: 1 fields, expected 2 as on line 1");
  EXPECT_INPUT_ERROR(parse_csv("1,2\n\n3,4,5\n", "r.csv"), "r.csv", "line 3: 3 fields");
}

TEST(CsvParse, RejectsEmptyAndMalformedText) {
  EXPECT_INPUT_ERROR(parse_csv("", "e.csv"), "e.csv", "no data");
  EXPECT_INPUT_ERROR(parse_csv("\n  \r\n\n", "e.csv"), "e.csv", "no data");
  EXPECT_INPUT_ERROR(parse_csv("a\n\"open\n1\n", "q.csv"), "q.csv",
                     "line 2: unterminated quoted field");
  EXPECT_INPUT_ERROR(parse_csv("a,b\n\"x\"y,1\n", "q.csv"), "q.csv",
                     "line 2: unexpected text after a closing quote");
  EXPECT_INPUT_ERROR(parse_csv("label\n1\n\xff\xfe\n", "u.csv"), "u.csv",
                     "line 3: not valid UTF-8");
  EXPECT_INPUT_ERROR(parse_csv(std::string("label\n1\0\n", 9), "n.csv"), "n.csv",
                     "line 2: NUL byte");
  EXPECT_INPUT_ERROR(parse_csv("label,label\n1,2\n", "d.csv"), "d.csv",
                     "duplicate column name 'label'");
}

// The duplicate-name check compared each header name with all before it: 100,000 names
// (a 1 MB header) took 20 s. It must stay linear.
TEST(CsvParse, WideHeaderIsCheckedInLinearTime) {
  std::string header;
  for (int i = 0; i < 200000; ++i) header += (i ? ",c" : "c") + std::to_string(i);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(parse_csv(header + "\n", "wide.csv").header.size(), 200000u);
  EXPECT_INPUT_ERROR(parse_csv(header + ",c7\n", "wide.csv"), "wide.csv",
                     "line 1: duplicate column name 'c7'");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(CsvIntegers, PicksNamedOrOnlyColumn) {
  EXPECT_EQ(csv_integer_column(parse_csv("idx,TARGET\n0,5\n1,+6\n", "f"), kLabelNames, "f"),
            (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(csv_integer_column(parse_csv("7\n-8\n", "f"), kLabelNames, "f"),
            (std::vector<int64_t>{7, -8}));
  EXPECT_EQ(csv_integer_column(parse_csv("whatever\n1\n", "f"), kLabelNames, "f"),
            std::vector<int64_t>{1});
  // "label" wins over "target" because it comes first in the list of names.
  EXPECT_EQ(csv_integer_column(parse_csv("target,label\n1,2\n", "f"), kLabelNames, "f"),
            std::vector<int64_t>{2});
}

TEST(CsvIntegers, RejectsMissingColumnsAndBadValues) {
  EXPECT_INPUT_ERROR(csv_integer_column(parse_csv("a,b\n1,2\n", "f.csv"), kLabelNames, "f.csv"),
                     "f.csv", "no column named label or target (columns: a, b)");
  EXPECT_INPUT_ERROR(csv_integer_column(parse_csv("1,2\n", "f.csv"), kLabelNames, "f.csv"), "f.csv",
                     "2 columns and no header row");
  EXPECT_INPUT_ERROR(csv_integer_column(parse_csv("label\n", "f.csv"), kLabelNames, "f.csv"),
                     "f.csv", "no data rows");
  const auto bad = [](const std::string& text) {
    return io_test::input_error_of(
        [&] { csv_integer_column(parse_csv(text, "v.csv"), {"label"}, "v.csv"); });
  };
  EXPECT_EQ(bad("i,label\n0,1\n1,cat\n"),
            "v.csv: line 3: 'cat' in column 'label' is not an integer");
  EXPECT_EQ(bad("label\n1\n2.5\n"), "v.csv: line 3: '2.5' in column 'label' is not an integer");
  EXPECT_EQ(bad("label\n\"\"\n"), "v.csv: line 2: empty value in column 'label'");
  EXPECT_EQ(bad("label\n99999999999999999999\n"),
            "v.csv: line 2: '99999999999999999999' in column 'label' is out of the 64-bit "
            "integer range");
  EXPECT_EQ(bad("label\n+-3\n"), "v.csv: line 2: '+-3' in column 'label' is not an integer");
  EXPECT_EQ(bad("1\n0x10\n"), "v.csv: line 2: '0x10' in column 1 is not an integer");
}

TEST(CsvParse, SurvivesRandomMutations) {
  const int accepted = io_test::survive_mutations(
      "idx,label\n0,\"1\"\n1,2\r\n\"a\"\"b\",3\n", 3000,
      [](const std::string& text) { csv_integer_column(parse_csv(text, "m"), {"label"}, "m"); });
  EXPECT_GT(accepted, 0);  // Some edits (e.g. inside the first column) keep it valid.
}

TEST(CsvFile, ReadsFileAndNamesItInErrors) {
  TempDir dir;
  const std::string p = dir.path("labels.csv");
  write_bytes(p, "label\n0\n1\n9\n");
  EXPECT_EQ(read_csv_integers(p, kLabelNames), (std::vector<int64_t>{0, 1, 9}));
  write_bytes(p, "label\n0\nx\n");
  EXPECT_INPUT_ERROR(read_csv_integers(p, kLabelNames), p, "line 3: 'x'");
  write_bytes(p, "");
  EXPECT_INPUT_ERROR(read_csv(p), p, "empty file");
  EXPECT_INPUT_ERROR(read_csv(dir.path("none.csv")), dir.path("none.csv"), "cannot open");
}

}  // namespace
}  // namespace shardlens
