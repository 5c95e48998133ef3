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
  ASSERT_EQ(h.depth(), 1);
  const ClassGroups& top = h.levels[0];
  EXPECT_EQ(top.groups, (std::vector<std::string>{"motor vehicle", "domestic dog"}));
  EXPECT_EQ(top.group_of, (std::vector<int32_t>{1, 1, 0, 0}));
  EXPECT_EQ(top.members(0), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(top.members(1), (std::vector<int32_t>{0, 1}));
}

// Six classes, three levels, paths of three, two and one group:
//   dog, wolf  animal > mammal > canine      sparrow  animal > bird
//   cat        animal > mammal > feline      car, bus vehicle
// Level 1: animal {dog wolf cat sparrow}, vehicle {car bus}. Level 2: mammal {dog wolf cat},
// bird {sparrow}, vehicle {car bus} (a shorter path stays in its own parent). Level 3:
// canine {dog wolf}, feline {cat}, bird {sparrow}, vehicle {car bus}.
constexpr const char* kThreeLevels =
    "0 animal > mammal > canine\n"
    "1 animal\t>\tmammal >  canine\n"
    "2 animal > mammal > feline\n"
    "3 animal > bird\n"
    "4 vehicle\n"
    "5 vehicle\n";

TEST(ClassHierarchy, ReadsPathsOfAncestorsLevelByLevelWithRaggedDepths) {
  const ClassHierarchy h = parse_class_hierarchy(kThreeLevels, 6, "h.txt");
  ASSERT_EQ(h.depth(), 3);
  EXPECT_EQ(h.levels[0].groups, (std::vector<std::string>{"animal", "vehicle"}));
  EXPECT_EQ(h.levels[0].group_of, (std::vector<int32_t>{0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(h.levels[1].groups, (std::vector<std::string>{"mammal", "bird", "vehicle"}));
  EXPECT_EQ(h.levels[1].group_of, (std::vector<int32_t>{0, 0, 0, 1, 2, 2}));
  EXPECT_EQ(h.levels[2].groups, (std::vector<std::string>{"canine", "feline", "bird", "vehicle"}));
  EXPECT_EQ(h.levels[2].group_of, (std::vector<int32_t>{0, 0, 1, 2, 3, 3}));
  // The tree: animal's children mammal and bird; mammal's canine and feline; a class's own
  // parent the last group of its path.
  ASSERT_EQ(h.nodes.size(), 6u);
  std::vector<std::string> top;
  for (int32_t n : h.children(-1)) top.push_back(h.nodes[size_t(n)].name);
  EXPECT_EQ(top, (std::vector<std::string>{"animal", "vehicle"}));
  const int32_t animal = h.children(-1)[0];
  std::vector<std::string> below_animal;
  for (int32_t n : h.children(animal)) below_animal.push_back(h.nodes[size_t(n)].name);
  EXPECT_EQ(below_animal, (std::vector<std::string>{"mammal", "bird"}));
  EXPECT_EQ(h.own_classes(h.children(-1)[1]), (std::vector<int32_t>{4, 5}));
  EXPECT_TRUE(h.own_classes(animal).empty());
  EXPECT_EQ(h.levels[1].group_of_node(animal), -1);            // animal is no group of level 2
  EXPECT_EQ(h.levels[1].group_of_node(h.children(-1)[1]), 2);  // vehicle stays on level 2
}

TEST(ClassHierarchy, AGreaterThanSignWithoutSpacesIsPartOfAName) {
  const ClassHierarchy h = parse_class_hierarchy("0 a>b\n1 x >y\n", 2, "h.txt");
  ASSERT_EQ(h.depth(), 1);
  EXPECT_EQ(h.levels[0].groups, (std::vector<std::string>{"a>b", "x >y"}));
}

TEST(ClassHierarchy, APathAsDeepAsTheLimitIsRead) {
  std::string path;
  for (size_t i = 0; i < kMaxHierarchyLevels; ++i) path += (i ? " > g" : "g") + std::to_string(i);
  const ClassHierarchy h = parse_class_hierarchy("0 " + path + "\n", 1, "h.txt");
  EXPECT_EQ(h.depth(), int32_t(kMaxHierarchyLevels));
  EXPECT_EQ(h.levels.back().groups,
            std::vector<std::string>{"g" + std::to_string(kMaxHierarchyLevels - 1)});
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
                     "line 1: parent name of 1025 bytes, more than the 1024 a name may have"},
        BadHierarchy{"long_name_in_path", "0 a > " + std::string(kMaxClassNameBytes + 1, 'x'),
                     "line 1: group 2 of 2 in the path of 1025 bytes, more than the 1024 a name "
                     "may have"},
        BadHierarchy{"empty_in_path", "0 a\n1 a > > b\n",
                     "line 2: empty group 2 of 3 in the path (ancestors are separated by ' > ')"},
        BadHierarchy{"empty_path_end", "0 a >\n",
                     "line 1: empty group 2 of 2 in the path (ancestors are separated by ' > ')"},
        BadHierarchy{"empty_path_start", "0 > a\n",
                     "line 1: empty group 1 of 2 in the path (ancestors are separated by ' > ')"},
        BadHierarchy{"only_separator", "0 >\n",
                     "line 1: empty group 1 of 2 in the path (ancestors are separated by ' > ')"},
        BadHierarchy{"name_under_two_parents", "0 animal > dog\n1 pet > dog\n",
                     "line 2: 'dog' is under 'pet' here but under 'animal' on line 1 (a name is "
                     "one group: give the two their own names)"},
        BadHierarchy{"top_and_under_a_parent", "0 dog\n\n1 animal > dog\n",
                     "line 3: 'dog' is under 'animal' here but at the top on line 1 (a name is "
                     "one group: give the two their own names)"},
        BadHierarchy{"under_a_parent_then_top", "0 animal > dog\n1 dog\n",
                     "line 2: 'dog' is at the top here but under 'animal' on line 1 (a name is "
                     "one group: give the two their own names)"},
        BadHierarchy{"cycle", "0 a > b > a\n",
                     "line 1: 'a' is under 'b' here but at the top on line 1 (a name is one "
                     "group: give the two their own names)"},
        BadHierarchy{"too_deep",
                     "0 " +
                         [] {
                           std::string p = "g";
                           for (size_t i = 0; i < kMaxHierarchyLevels; ++i)
                             p += " > g" + std::to_string(i);
                           return p;
                         }() +
                         "\n",
                     "line 1: a path of more than the 32 levels a hierarchy may have"},
        BadHierarchy{"not_utf8_in_path", "0 a > caf\xE9\n", "line 1: not valid UTF-8 (byte 10)"},
        BadHierarchy{"control_character_in_path", "0 a > b\x01\n",
                     "line 1: control character in the parent name"}),
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
  EXPECT_EQ(collapse_classes(*e.synced, e.class_groups->levels[0]), expected);
  EXPECT_EQ(collapse_counts(e.meta.class_counts, e.class_groups->levels[0]),
            (std::vector<int64_t>{9, 8}));
}

TEST(ClassGroups, TheRowCheckAppliesToGroupsWhereErrorsOfSiblingsCancel) {
  const Evaluation e = grouped();
  const RowCheck groups = check_group_rows(e);
  EXPECT_EQ(groups.wrong, (std::vector<bool>{false, true}));
  EXPECT_EQ(groups.off, (std::vector<double>{0, 2}));
  EXPECT_EQ(e.row_check.wrong_rows, (std::vector<int32_t>{0, 1, 2}));  // three classes wrong
  const std::string text = class_groups_text(e);
  EXPECT_NE(text.find("2 groups of 4 classes; 1 group wrong, 3 classes wrong"), std::string::npos)
      << text;
  EXPECT_NE(text.find("!! vehicle"), std::string::npos) << text;
  EXPECT_NE(text.find("(+2)   1 of 2 classes wrong"), std::string::npos) << text;
  EXPECT_EQ(text.find("!! canine"), std::string::npos) << text;
  EXPECT_EQ(class_groups_text(Evaluation{}), "");
  const nlohmann::json j = class_groups_json(e);
  EXPECT_EQ(j["row_sums"]["observed"], nlohmann::json::parse("[9, 10]"));
  EXPECT_EQ(j["row_sums"]["mismatched"], nlohmann::json::parse("[1]"));
}

// kThreeLevels' classes, 4 true samples each (dog wolf cat sparrow car bus):
//   true \ pred   dog wolf cat spar car bus   row   off
//   dog             4   1    0   0    0   0     5    +1
//   wolf            0   4    0   0    0   0     4
//   cat             0   0    2   0    0   0     2    -2
//   sparrow         0   0    1   4    0   0     5    +1
//   car             0   0    0   0    4   0     4
//   bus             0   0    0   0    2   4     6    +2
// Level 3: canine 9/8 (+1), feline 2/4 (-2), bird 5/4 (+1), vehicle 10/8 (+2): all wrong.
// Level 2: mammal 11/12 (-1: canine's +1 and feline's -2), bird 5/4 (+1), vehicle 10/8 (+2).
// Level 1: animal 16/16, right (mammal's -1 and bird's +1 cancel), vehicle 10/8 (+2).
Evaluation three_levels() {
  Evaluation e;
  e.meta.class_names = {"dog", "wolf", "cat", "sparrow", "car", "bus"};
  e.meta.class_counts = {4, 4, 4, 4, 4, 4};
  Matrix m(6);
  m.cells = {4, 1, 0, 0, 0, 0,  //
             0, 4, 0, 0, 0, 0,  //
             0, 0, 2, 0, 0, 0,  //
             0, 0, 1, 4, 0, 0,  //
             0, 0, 0, 0, 4, 0,  //
             0, 0, 0, 0, 2, 4};
  e.synced = m;
  e.per_rank = {m};
  e.row_check = check_rows(m, e.meta.class_counts);
  e.class_groups =
      std::make_shared<const ClassHierarchy>(parse_class_hierarchy(kThreeLevels, 6, "h.txt"));
  return e;
}

TEST(ClassGroups, EveryLevelIsCheckedAndAGroupWrongBelowARightOneIsShown) {
  const Evaluation e = three_levels();
  const std::vector<RowCheck> levels = check_group_levels(e);
  ASSERT_EQ(levels.size(), 3u);
  EXPECT_EQ(levels[0].off, (std::vector<double>{0, 2}));
  EXPECT_EQ(levels[0].wrong_rows, (std::vector<int32_t>{1}));
  EXPECT_EQ(levels[1].observed, (std::vector<double>{11, 5, 10}));
  EXPECT_EQ(levels[1].truth, (std::vector<int64_t>{12, 4, 8}));
  EXPECT_EQ(levels[1].wrong_rows, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(levels[2].off, (std::vector<double>{1, -2, 1, 2}));
  EXPECT_EQ(levels[2].by_error, (std::vector<int32_t>{1, 3, 0, 2}));
  Matrix level2(3);
  level2.cells = {11, 0, 0,  //
                  1,  4, 0,  //
                  0,  0, 10};
  EXPECT_EQ(collapse_classes(*e.synced, e.class_groups->levels[1]), level2);
  EXPECT_EQ(check_group_rows(e, 1).off, levels[1].off);
  EXPECT_EQ(check_group_rows(e, 3).rows(), 0);  // no fourth level

  const std::string text = class_groups_text(e);
  EXPECT_NE(text.find("Groups (hierarchy, level 1 of 3): 2 groups of 6 classes; 1 group wrong, "
                      "4 classes wrong"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Groups (hierarchy, level 2 of 3): 3 groups of 6 classes; 3 groups wrong"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("!! animal"), std::string::npos) << text;  // right: its errors cancel
  EXPECT_NE(text.find("(-1)   2 of 3 classes wrong, in animal"), std::string::npos) << text;
  EXPECT_NE(text.find("(+1)   1 of 1 classes wrong, in animal"), std::string::npos) << text;
  // Level 3 worst first: feline (-2) and vehicle (+2), then canine and bird (1 each).
  const size_t level3 = text.find("level 3 of 3");
  ASSERT_NE(level3, std::string::npos) << text;
  const size_t feline = text.find("!! feline", level3), vehicle = text.find("!! vehicle", level3),
               canine = text.find("!! canine", level3), bird = text.find("!! bird", level3);
  EXPECT_LT(feline, vehicle);
  EXPECT_LT(vehicle, canine);
  EXPECT_LT(canine, bird);
  EXPECT_NE(bird, std::string::npos) << text;
  // A group whose path ended a level up is in its own parent, never "in" itself.
  EXPECT_EQ(text.find("in vehicle"), std::string::npos) << text;
  EXPECT_NE(text.find("(+1)   1 of 1 classes wrong, in animal", level3), std::string::npos) << text;

  const nlohmann::json j = class_groups_json(e);
  EXPECT_EQ(j["depth"], 3);
  ASSERT_EQ(j["levels"].size(), 3u);
  EXPECT_EQ(j["levels"][1]["names"], nlohmann::json::parse(R"(["mammal", "bird", "vehicle"])"));
  EXPECT_EQ(j["levels"][1]["parents"], nlohmann::json::parse("[0, 0, 1]"));
  EXPECT_EQ(j["levels"][2]["parents"], nlohmann::json::parse("[0, 0, 1, 2]"));
  EXPECT_EQ(j["levels"][2]["row_sums"]["observed"], nlohmann::json::parse("[9, 2, 5, 10]"));
  EXPECT_EQ(j["levels"][0]["row_sums"]["mismatched"], nlohmann::json::parse("[1]"));
  EXPECT_EQ(j["names"], j["levels"][0]["names"]);  // the top level as one-level files had it
}

TEST(ClassGroups, TheTextReportBoundsEachLevelsList) {
  // 30 classes, each its own group under one top group: 30 wrong groups on level 2, 10 listed.
  std::string file;
  for (int c = 0; c < 30; ++c) file += std::to_string(c) + " all > g" + std::to_string(c) + "\n";
  Evaluation e;
  e.meta.class_counts.assign(30, 2);
  Matrix m(30);
  for (int c = 0; c < 30; ++c) m.at(c, c) = 3;
  e.synced = m;
  e.per_rank = {m};
  e.row_check = check_rows(m, e.meta.class_counts);
  e.class_groups = std::make_shared<const ClassHierarchy>(parse_class_hierarchy(file, 30, "h"));
  const std::string text = class_groups_text(e);
  const size_t level2 = text.find("level 2 of 2");
  ASSERT_NE(level2, std::string::npos) << text;
  size_t listed = 0;
  for (size_t at = text.find("!! g", level2); at != std::string::npos;
       at = text.find("!! g", at + 1))
    ++listed;
  EXPECT_EQ(listed, 10u) << text;
  EXPECT_NE(text.find("... 20 more wrong groups"), std::string::npos) << text;
}

TEST(ClassGroups, TheDatasetSpecReadsTheHierarchyAndTheReportShowsTheGroups) {
  TempDir dir;
  const std::string file = dir.path("parents.txt");
  write_bytes(file, "0 even\n1 odd\n2 even\n3 odd\n");
  const std::string spec = "synthetic:classes=4,per-class=5,hierarchy=" + file;
  const Labels labels = load_labels(spec);
  ASSERT_TRUE(labels.hierarchy);
  EXPECT_EQ(labels.hierarchy->levels[0].group_of, (std::vector<int32_t>{0, 1, 0, 1}));
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
