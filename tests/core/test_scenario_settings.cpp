// The scenario setting table (core/evaluation/scenario_settings.h), one row a case: every
// setting round-trips through the scenario JSON and through the command line, and its
// flag and every choice appear in --help. The GUI side is tests/ui/test_scenario_panel.cpp.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "app/cli/engine_flags.h"
#include "core/evaluation/scenario_settings.h"
#include "core/vocabulary/types.h"
#include "tests/core/test_io_util.h"

namespace shardlens {

// A row's name in test output, not its address.
void PrintTo(const ScenarioSetting* row, std::ostream* os) {
  *os << row->key;
}

namespace {

// A scenario whose JSON holds the setting. A key inside an object is written only for some
// of its parent's kinds (the inner sampler's weights with weighted-random): pick such a kind.
Scenario written_with(const ScenarioSetting& row) {
  Scenario s;
  const size_t dot = row.json_name.find('.');
  if (!row.written || dot == std::string::npos) return s;
  for (const ScenarioSetting& kind : scenario_settings()) {
    if (kind.json_name != row.json_name.substr(0, dot) + ".kind") continue;
    for (const SettingChoice& c : kind.choices) {
      kind.set_text(s, c.name);
      if (row.written(s)) break;
    }
  }
  EXPECT_TRUE(row.written(s)) << row.key;
  return s;
}

// A value of the setting other than the default, kept valid for the rest of the scenario.
Scenario with_other_value(const ScenarioSetting& row) {
  Scenario s = written_with(row);
  switch (row.kind) {
    case SettingKind::Int: {
      const int64_t v = row.get_int(s);
      row.set_int(s, v == row.min ? row.min + 1 : row.min);
      break;
    }
    case SettingKind::Bool:
      row.set_bool(s, !row.get_bool(s));
      break;
    case SettingKind::Choice:
      row.set_text(s, row.choices.back().name != row.get_text(s) ? row.choices.back().name
                                                                 : row.choices.front().name);
      break;
    case SettingKind::Text: {
      const std::map<std::string, std::string> samples = {{"name", "my-scenario"},
                                                          {"title", "A title"},
                                                          {"description", "What it shows"},
                                                          {"limit_batches", "0.25"}};
      std::string text = samples.count(row.key) ? samples.at(row.key) : "";
      for (const std::string& v : row.suggestions)
        if (text.empty() && v != row.get_text(s)) text = v;
      set_setting_text(row, s, text);
      break;
    }
    case SettingKind::IntList:
      row.set_ints(s, row.key == "rank_seeds" ? std::vector<int64_t>{5, -1, 7, 0}
                                              : std::vector<int64_t>{3, 1, 2});
      break;
    case SettingKind::NumberList:
      row.set_numbers(s, {0.5, 2.25, 1e-3});
      break;
  }
  EXPECT_NE(setting_text(row, s), setting_text(row, Scenario{})) << row.key;
  return s;
}

class SettingRow : public ::testing::TestWithParam<const ScenarioSetting*> {};
// The rows a command-line flag sets from the value with_other_value() picks (a switch whose
// other value is its default has no flag in that direction).
class FlagRow : public SettingRow {};
// The integer rows whose value one below the range a Scenario can hold.
class RangedRow : public SettingRow {};

TEST_P(SettingRow, RoundTripsThroughTheScenarioJson) {
  const ScenarioSetting& row = *GetParam();
  const Scenario s = with_other_value(row);
  const nlohmann::json j = to_json(s);
  const Scenario back = scenario_from_json(j, "t.json");
  EXPECT_EQ(setting_text(row, back), setting_text(row, s));
  EXPECT_EQ(to_json(back), j);
}

// The value a user types: the setting's text, or the flag alone for a switch.
std::vector<std::string> command_line(const ScenarioSetting& row, const Scenario& s) {
  if (row.kind == SettingKind::Bool) return {row.get_bool(s) ? row.cli_flag : row.cli_off_flag};
  return {row.cli_flag, setting_text(row, s)};
}

TEST_P(FlagRow, RoundTripsThroughTheCommandLine) {
  const ScenarioSetting& row = *GetParam();
  const Scenario s = with_other_value(row);
  std::vector<std::string> args = command_line(row, s);
  ASSERT_FALSE(args.front().empty());
  CLI::App app;
  cli::EngineFlags flags;
  cli::add_engine_flags(app, flags);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 pops from the back
  app.parse(reversed);
  const Scenario parsed = cli::apply_engine_flags(app, flags, Scenario{});
  EXPECT_EQ(setting_text(row, parsed), setting_text(row, s));
  // Only this setting changed.
  Scenario expected;
  set_setting_text(row, expected, setting_text(row, s));
  EXPECT_EQ(to_json(parsed), to_json(expected));
}

// What `simulate` makes of a command line (CLI11 splits it as a shell would).
Scenario parsed_command_line(const std::string& line) {
  CLI::App app;
  cli::EngineFlags flags;
  cli::add_engine_flags(app, flags);
  app.parse(line, false);
  return cli::apply_engine_flags(app, flags, Scenario{});
}

// scenario_flags() names every setting that differs from the default, with the flag the
// table gives it, and `simulate` given those flags simulates the same scenario.
TEST_P(FlagRow, ScenarioFlagsNameItAndReproduceTheScenario) {
  const ScenarioSetting& row = *GetParam();
  const Scenario s = with_other_value(row);
  const std::string line = scenario_flags(s);
  const std::string flag = command_line(row, s).front();
  EXPECT_NE((" " + line + " ").find(" " + flag + " "), std::string::npos) << line;
  EXPECT_EQ(to_json(parsed_command_line(line)), to_json(s)) << line;
}

TEST(ScenarioSettings, ScenarioFlagsNameWhatDefinesASimulationAtItsDefault) {
  EXPECT_EQ(scenario_flags(Scenario{}),
            "--dataset synthetic:classes=10,per-class=50 --predictor noisy:accuracy=0.9,seed=1 "
            "--world-size 4 --batch-size 1 --sampler distributed --no-shuffle --seed 0 --epoch 0 "
            "--limit-batches all --sanity-steps 2 --sync all-reduce --torch-version " +
                TorchVersion{}.to_string());
  EXPECT_EQ(to_json(parsed_command_line(scenario_flags(Scenario{}))), to_json(Scenario{}));
  // The sampler Lightning wraps is named whenever the wrapper is the sampler.
  Scenario wrapped;
  wrapped.sampler.kind = SamplerKind::LightningWrapper;
  EXPECT_NE(scenario_flags(wrapped).find("--inner-sampler sequential"), std::string::npos);
}

TEST(ScenarioSettings, ScenarioFlagsQuoteWhatTheShellWouldSplit) {
  Scenario s;
  s.dataset = "npy:my labels/it's.npy";
  s.predictor.clear();  // a run's own predictions: no flag gives them
  const std::string line = scenario_flags(s);
  EXPECT_EQ(line.rfind("--dataset 'npy:my labels/it'\\''s.npy' --world-size ", 0), 0u) << line;
  s.dataset = "npy:my labels/run.npy";
  EXPECT_EQ(parsed_command_line(scenario_flags(s)).dataset, s.dataset);
}

TEST_P(SettingRow, FlagAndEveryChoiceAreInTheHelp) {
  const ScenarioSetting& row = *GetParam();
  CLI::App app;
  cli::EngineFlags flags;
  cli::add_engine_flags(app, flags);
  const std::string help = app.help();
  for (const std::string& flag : {row.cli_flag, row.cli_off_flag})
    if (!flag.empty()) {
      EXPECT_NE(help.find(flag + " "), std::string::npos) << flag;
    }
  const std::string text = setting_help(row);
  for (const SettingChoice& c : row.choices) {
    EXPECT_NE(text.find(c.name + ":"), std::string::npos) << c.name;
    if (!row.cli_flag.empty()) {
      EXPECT_NE(help.find(c.name + ":"), std::string::npos) << c.name;
    }
    // Each choice is a value the setting's parser takes and prints back the same.
    Scenario s;
    row.set_text(s, c.name);
    EXPECT_EQ(row.get_text(s), c.name);
  }
}

TEST_P(RangedRow, OutOfRangeIsRefusedNamingTheSetting) {
  const ScenarioSetting& row = *GetParam();
  Scenario s = written_with(row);
  row.set_int(s, row.min - 1);
  ASSERT_EQ(row.get_int(s), row.min - 1);
  EXPECT_INPUT_ERROR(validate(s), row.name(), "out of range");
  EXPECT_INPUT_ERROR(scenario_from_json(to_json(s), "f.json"), "f.json",
                     "'" + row.json_name.substr(row.json_name.find('.') + 1) +
                         "' must be an integer in [" + std::to_string(row.min) + ", " +
                         std::to_string(row.max) + "]");
}

std::vector<const ScenarioSetting*> rows() {
  std::vector<const ScenarioSetting*> out;
  for (const ScenarioSetting& s : scenario_settings()) out.push_back(&s);
  return out;
}

std::vector<const ScenarioSetting*> flag_rows() {
  std::vector<const ScenarioSetting*> out;
  for (const ScenarioSetting* row : rows()) {
    if (row->cli_flag.empty() && row->cli_off_flag.empty()) continue;
    if (!command_line(*row, with_other_value(*row)).front().empty()) out.push_back(row);
  }
  return out;
}

std::vector<const ScenarioSetting*> ranged_rows() {
  std::vector<const ScenarioSetting*> out;
  for (const ScenarioSetting* row : rows()) {
    if (row->kind != SettingKind::Int || row->min == std::numeric_limits<int64_t>::min()) continue;
    Scenario s = written_with(*row);
    row->set_int(s, row->min - 1);
    if (row->get_int(s) == row->min - 1) out.push_back(row);
  }
  return out;
}

const auto row_key = [](const auto& info) { return info.param->key; };
INSTANTIATE_TEST_SUITE_P(Table, SettingRow, ::testing::ValuesIn(rows()), row_key);
INSTANTIATE_TEST_SUITE_P(Table, FlagRow, ::testing::ValuesIn(flag_rows()), row_key);
INSTANTIATE_TEST_SUITE_P(Table, RangedRow, ::testing::ValuesIn(ranged_rows()), row_key);

TEST(ScenarioSettings, TheRowTablesCoverTheSettings) {
  // Every row with a flag and every integer row with a lower bound is a row above.
  EXPECT_GE(flag_rows().size(), 20u);
  EXPECT_GE(ranged_rows().size(), 7u);
}

TEST(ScenarioSettings, KeysFlagsAndJsonNamesAreUnique) {
  std::set<std::string> keys, flags, json_names;
  for (const ScenarioSetting& s : scenario_settings()) {
    EXPECT_TRUE(keys.insert(s.key).second) << s.key;
    EXPECT_TRUE(json_names.insert(s.json_name).second) << s.json_name;
    for (const std::string& f : {s.cli_flag, s.cli_off_flag})
      if (!f.empty()) {
        EXPECT_TRUE(flags.insert(f).second) << f;
      }
  }
}

TEST(ScenarioSettings, ValidateChecksSettingsThatMustAgree) {
  Scenario s;
  s.sampler.rank_seeds = {1, 2};
  EXPECT_INPUT_ERROR(validate(s), "--rank-seeds", "2 seeds given for world size 4");
  s = Scenario{};
  s.sampler.kind = SamplerKind::Accelerate;
  s.sampler.split_batches = true;
  s.loader.batch_size = 6;
  EXPECT_INPUT_ERROR(validate(s), "--split-batches", "round multiple");
  s.loader.batch_size = 8;
  EXPECT_NO_THROW(validate(s));
}

TEST(ScenarioSettings, ShuffleAndNoShuffleContradict) {
  CLI::App app;
  cli::EngineFlags flags;
  cli::add_engine_flags(app, flags);
  app.parse(std::vector<std::string>{"--no-shuffle", "--shuffle"});
  EXPECT_INPUT_ERROR(cli::apply_engine_flags(app, flags, Scenario{}), "--shuffle", "contradict");
}

// The GUI's words for a message: every setting's flag becomes its field's label, leading
// ("--world-size: ..." -> "World size: ...") or quoted inside the text.
TEST_P(FlagRow, MessagesForTheGuiNameTheField) {
  const ScenarioSetting& s = *GetParam();
  for (const std::string& flag : {s.cli_flag, s.cli_off_flag}) {
    if (flag.empty()) continue;
    if (s.gui_label.empty()) {  // not in the panel: the message keeps its words
      EXPECT_EQ(with_field_labels(flag + ": out of range"), flag + ": out of range");
      continue;
    }
    EXPECT_EQ(with_field_labels(flag + ": out of range"), s.gui_label + ": out of range");
    EXPECT_EQ(with_field_labels("give " + flag + " again"),
              "give \u201c" + s.gui_label + "\u201d again");
    // A longer word that begins with the flag is not the flag.
    EXPECT_EQ(with_field_labels(flag + "x: y"), flag + "x: y");
  }
}

TEST(ScenarioSettings, ValidationMessagesReadInTheGuiWithoutFlags) {
  Scenario s;
  s.sampler.rank_seeds = {1, 2};
  try {
    validate(s);
    FAIL() << "two seeds for four ranks were accepted";
  } catch (const InputError& e) {
    const std::string shown = with_field_labels(e.what());
    EXPECT_EQ(shown.find("--"), std::string::npos) << shown;
    EXPECT_EQ(shown.rfind(scenario_setting("rank_seeds").gui_label + ":", 0), 0u) << shown;
  }
}

// A scenario file's words for a message: the file, then the setting's JSON key,
// leading ("--batch-size: ..." -> "f.json: batch_size: ...") or quoted inside the text.
TEST_P(FlagRow, MessagesForAFileNameTheFileAndTheKey) {
  const ScenarioSetting& s = *GetParam();
  const SettingOrigin file{SettingOrigin::Kind::File, "dir/f.json"};
  for (const std::string& flag : {s.cli_flag, s.cli_off_flag}) {
    if (flag.empty()) continue;
    EXPECT_EQ(for_origin(flag + ": must be at least 1", file),
              "dir/f.json: " + s.json_name + ": must be at least 1");
    EXPECT_EQ(for_origin("give " + flag + " again", file),
              "dir/f.json: give '" + s.json_name + "' again");
    EXPECT_EQ(for_origin(flag + "x: y", file), flag + "x: y");
    // From the command line the flag stays.
    EXPECT_EQ(for_origin(flag + ": must be at least 1", SettingOrigin{}),
              flag + ": must be at least 1");
  }
}

TEST(ScenarioSettings, MessagesNameEachSettingAsItsOriginDoes) {
  const auto origin_of = [](const ScenarioSetting& s) {
    return s.key == "world_size" ? SettingOrigin{}
                                 : SettingOrigin{SettingOrigin::Kind::File, "s.json"};
  };
  EXPECT_EQ(for_origins("--rank-seeds: 2 seeds given for world size 3 (--world-size)", origin_of),
            "s.json: rank_seeds: 2 seeds given for world size 3 (--world-size)");
  EXPECT_EQ(for_origins("--world-size: 0 is out of range", origin_of),
            "--world-size: 0 is out of range");
  // A message that already starts with the file is not prefixed twice; one naming no setting
  // is left alone.
  EXPECT_EQ(for_origin("s.json: --dataset: bad", {SettingOrigin::Kind::File, "s.json"}),
            "s.json: 'dataset': bad");
  EXPECT_EQ(for_origin("preds.npy: not an npy file", {SettingOrigin::Kind::File, "s.json"}),
            "preds.npy: not an npy file");
}

// A value a scenario file holds that the table's parser refuses is named by the file and the
// key, not by the flag the parser words it with.
TEST(ScenarioSettings, AScenarioFileRefusalNamesTheFileAndTheKey) {
  for (const auto& [key, value] :
       {std::pair{"torch_version", "banana"}, std::pair{"limit_batches", "1.5"}}) {
    const nlohmann::json j = {{key, value}};
    const std::string msg = io_test::input_error_of([&] { scenario_from_json(j, "my.json"); });
    EXPECT_EQ(msg.rfind("my.json: " + std::string(key) + ": ", 0), 0u) << msg;
    EXPECT_EQ(msg.find("--"), std::string::npos) << msg;
  }
}

// The command line: a setting the --preset file gives and the flags do not is named by the
// file and its key; one given as a flag by the flag; a lesson's settings by their flags.
class PresetMessages : public ::testing::Test {
 protected:
  io_test::TempDir dir;
  std::string preset(const nlohmann::json& j) {
    const std::string path = dir.path("scenario.json");
    std::ofstream(path) << j.dump();
    return path;
  }
  std::string resolve_error(const std::vector<std::string>& args) {
    CLI::App app;
    cli::EngineFlags flags;
    cli::add_engine_flags(app, flags);
    app.parse(std::vector<std::string>(args.rbegin(), args.rend()));
    return io_test::input_error_of([&] { cli::resolve_scenario(app, flags); });
  }
  std::string simulate_error(const std::vector<std::string>& args) {
    CLI::App app;
    cli::EngineFlags flags;
    cli::add_engine_flags(app, flags);
    app.parse(std::vector<std::string>(args.rbegin(), args.rend()));
    return io_test::input_error_of([&] { cli::evaluations_for(app, flags, ""); });
  }
};

TEST_F(PresetMessages, ARuleBrokenByTheFileNamesTheFileAndKey) {
  const std::string path = preset({{"world_size", 3}, {"rank_seeds", {1, 2}}});
  EXPECT_EQ(resolve_error({"--preset", path}),
            path + ": rank_seeds: 2 seeds given for world size 3");
  // The world size from the command line, the seeds still from the file.
  EXPECT_EQ(resolve_error({"--preset", path, "--world-size", "4"}),
            path + ": rank_seeds: 2 seeds given for world size 4");
}

TEST_F(PresetMessages, ARuleBrokenByAFlagNamesTheFlag) {
  const std::string path = preset({{"world_size", 3}});
  EXPECT_EQ(resolve_error({"--preset", path, "--rank-seeds", "1,2"}),
            "--rank-seeds: 2 seeds given for world size 3");
  EXPECT_EQ(resolve_error({"--rank-seeds", "1,2"}), "--rank-seeds: 2 seeds given for world size 4");
}

TEST_F(PresetMessages, TheSimulationsRefusalNamesTheFileAndKey) {
  // Ten classes: ignore_index 12 is no class, which only the simulation can tell.
  const std::string path =
      preset({{"dataset", "synthetic:classes=10,per-class=5"}, {"ignore_index", 12}});
  const std::string msg = simulate_error({"--preset", path});
  EXPECT_EQ(msg.rfind(path + ": ignore_index: 12 ", 0), 0u) << msg;
  EXPECT_EQ(msg.find("--ignore-index"), std::string::npos) << msg;
  const std::string flag = simulate_error({"--preset", path, "--ignore-index", "11"});
  EXPECT_EQ(flag.rfind("--ignore-index: 11 ", 0), 0u) << flag;
}

}  // namespace
}  // namespace shardlens
