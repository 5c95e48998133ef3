// Class groups from a hierarchy file (core/io/class_hierarchy.h, the dataset's
// ",hierarchy=FILE") and the matrices collapsed to them (core/report/class_groups.h).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/dataset/dataset_spec.h"
#include "core/io/class_hierarchy.h"
#include "core/report/class_groups.h"
#include "core/report/report.h"
#include "core/sim/engine.h"
#include "core/sim/lessons.h"
#include "core/vocabulary/limits.h"
#include "tests/core/test_io_util.h"

namespace shardlens {
namespace {

using io_test::TempDir;
using io_test::write_bytes;

TEST(ClassHierarchy, ReadsAParentPerClassInTheOrderTheFileNamesThem) {
  const ClassHierarchy h = parse_class_hierarchy(
      "\xEF\xBB\xBF# ImageNet, cut to four classes\r\n"
      "2 motor vehicle\r\n"
      "0\tdomestic dog\n"
      "\n"
      "3 motor vehicle\n"
      "1   domestic dog  \n",
      4, "h.txt");
  EXPECT_EQ(h.groups, (std::vector<std::string>{"motor vehicle", "domestic dog"}));
  EXPECT_EQ(h.group_of, (std::vector<int32_t>{1, 1, 0, 0}));
  EXPECT_EQ(h.members(0), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(h.members(1), (std::vector<int32_t>{0, 1}));
}

struct BadHierarchy {
  std::string name;
  std::string text;
  std::string error;  // what the InputError must say, after "h.txt: "
};

class MalformedHierarchy : public ::testing::TestWithParam<BadHierarchy> {};

TEST_P(MalformedHierarchy, IsRefusedNamingTheFileAndTheLine) {
  const BadHierarchy& row = GetParam();
  try {
    parse_class_hierarchy(row.text, 3, "h.txt");
    FAIL() << "accepted " << row.text;
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "h.txt: " + row.error);
  }
}

INSTANTIATE_TEST_SUITE_P(
    ClassHierarchy, MalformedHierarchy,
    ::testing::Values(
        BadHierarchy{"name_not_id", "0 a\ndog animal\n",
                     "line 2: 'dog' is not a class id (a line is CLASS_ID PARENT NAME)"},
        BadHierarchy{"unknown_id", "0 a\n1 a\n3 b\n",
                     "line 3: class 3 is not one of the dataset's 3 classes (0..2)"},
        BadHierarchy{"negative_id", "-1 a\n",
                     "line 1: class -1 is not one of the dataset's 3 "
                     "classes (0..2)"},
        BadHierarchy{"no_parent", "0 a\n1\n", "line 2: class 1 has no parent name after its id"},
        BadHierarchy{"twice", "0 a\n1 a\n# note\n1 b\n",
                     "line 4: class 1 is given a parent again (first on line 2)"},
        BadHierarchy{"missing_class", "0 a\n2 b\n",
                     "class 1 has no parent (every class of the dataset needs one line, "
                     "CLASS_ID PARENT NAME)"},
        BadHierarchy{"only_comments", "# nothing\n\n",
                     "classes 0, 1, 2 have no parent (every class of the dataset needs one "
                     "line, CLASS_ID PARENT NAME)"},
        BadHierarchy{"not_utf8", "0 a\n1 caf\xE9\n", "line 2: not valid UTF-8 (byte 6)"},
        BadHierarchy{"control_character", "0 a\x01z\n",
                     "line 1: control character in the "
                     "parent name"},
        BadHierarchy{"long_name", "0 " + std::string(kMaxClassNameBytes + 1, 'x') + "\n",
                     "line 1: parent name of 1025 bytes, more than the 1024 a name may have"}),
    [](const auto& info) { return info.param.name; });

TEST(ClassHierarchy, NamesEveryMissingClassUpToFive) {
  try {
    parse_class_hierarchy("3 a\n", 10, "h.txt");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("classes 0, 1, 2, 4, 5 and 4 more have no parent"),
              std::string::npos)
        << e.what();
  }
}

TEST(ClassHierarchy, FilesThatAreNoHierarchyAreRefusedWithTheirPath) {
  TempDir dir;
  const std::string empty = dir.path("empty.txt");
  write_bytes(empty, "");
  const std::string fifo = dir.path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string huge = dir.path("huge.txt");  // sparse: no disk used
  write_bytes(huge, "0 a\n");
  std::filesystem::resize_file(huge, kMaxClassNamesFileBytes + 1);
  for (const std::string& path : {empty, fifo, huge, dir.path("absent.txt"), dir.dir().string()}) {
    try {
      read_class_hierarchy(path, 3);
      ADD_FAILURE() << "accepted " << path;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(path + ":", 0), 0u) << e.what();
    }
  }
}

// Four classes, two groups: dog, wolf (canine) and car, bus (vehicle).
//   true \ pred  dog wolf car bus      row   true count
//   dog           5    1   0   0        6        5   (+1)
//   wolf          0    3   0   0        3        4   (-1)
//   car           0    0   4   2        6        4   (+2)
//   bus           0    0   1   3        4        4
// canine: 5+1+0+3 = 9 against 5+4 = 9, right (the +1 and -1 cancel);
// vehicle: 4+2+1+3 = 10 against 8, wrong (+2).
Evaluation grouped() {
  Evaluation e;
  e.meta.class_names = {"dog", "wolf", "car", "bus"};
  e.meta.class_counts = {5, 4, 4, 4};
  Matrix m(4);
  m.cells = {5, 1, 0, 0, 0, 3, 0, 0, 0, 0, 4, 2, 0, 0, 1, 3};
  e.synced = m;
  e.per_rank = {m};
  e.row_check = check_rows(m, e.meta.class_counts);
  e.class_groups = std::make_shared<const ClassHierarchy>(
      parse_class_hierarchy("0 canine\n1 canine\n2 vehicle\n3 vehicle\n", 4, "h.txt"));
  return e;
}

TEST(ClassGroups, CollapseSumsEachGroupsRowsAndColumns) {
  const Evaluation e = grouped();
  Matrix expected(2);
  expected.cells = {9, 0,  //
                    0, 10};
  EXPECT_EQ(collapse_classes(*e.synced, *e.class_groups), expected);
  EXPECT_EQ(collapse_counts(e.meta.class_counts, *e.class_groups), (std::vector<int64_t>{9, 8}));
}

TEST(ClassGroups, TheRowCheckAppliesToGroupsWhereErrorsOfSiblingsCancel) {
  const Evaluation e = grouped();
  const RowCheck groups = check_group_rows(e);
  EXPECT_EQ(groups.wrong, (std::vector<bool>{false, true}));
  EXPECT_EQ(groups.off, (std::vector<double>{0, 2}));
  EXPECT_EQ(e.row_check.wrong_rows, (std::vector<int32_t>{0, 1, 2}));  // three classes wrong
  const std::string text = class_groups_text(e);
  EXPECT_NE(text.find("2 groups of 4 classes; 1 groups wrong, 3 classes wrong"), std::string::npos)
      << text;
  EXPECT_NE(text.find("!! vehicle"), std::string::npos) << text;
  EXPECT_NE(text.find("(+2)   1 of 2 classes wrong"), std::string::npos) << text;
  EXPECT_EQ(text.find("!! canine"), std::string::npos) << text;
  EXPECT_EQ(class_groups_text(Evaluation{}), "");
  const nlohmann::json j = class_groups_json(e);
  EXPECT_EQ(j["row_sums"]["observed"], nlohmann::json::parse("[9, 10]"));
  EXPECT_EQ(j["row_sums"]["mismatched"], nlohmann::json::parse("[1]"));
}

TEST(ClassGroups, TheDatasetSpecReadsTheHierarchyAndTheReportShowsTheGroups) {
  TempDir dir;
  const std::string file = dir.path("parents.txt");
  write_bytes(file, "0 even\n1 odd\n2 even\n3 odd\n");
  const std::string spec = "synthetic:classes=4,per-class=5,hierarchy=" + file;
  const Labels labels = load_labels(spec);
  ASSERT_TRUE(labels.hierarchy);
  EXPECT_EQ(labels.hierarchy->group_of, (std::vector<int32_t>{0, 1, 0, 1}));
  EXPECT_EQ(spec_files(spec), std::vector<std::string>{file});
  Scenario s = load_preset("padding-duplicates");
  s.dataset = spec;
  const Evaluation e = simulate(s);
  ASSERT_TRUE(e.class_groups);
  EXPECT_NE(report_text(e).find("Groups (hierarchy): 2 groups of 4 classes"), std::string::npos);
  const nlohmann::json groups = report_json(e)["groups"];
  EXPECT_EQ(groups["names"], nlohmann::json::parse(R"(["even", "odd"])"));
  EXPECT_EQ(groups["row_sums"]["expected"], nlohmann::json::parse("[10, 10]"));
  // A hierarchy for another number of classes is refused, naming the file.
  write_bytes(file, "0 even\n1 odd\n");
  try {
    load_labels(spec);
    FAIL();
  } catch (const InputError& err) {
    EXPECT_EQ(std::string(err.what()).rfind(file + ": classes 2, 3 have no parent", 0), 0u)
        << err.what();
  }
}

}  // namespace
}  // namespace shardlens
