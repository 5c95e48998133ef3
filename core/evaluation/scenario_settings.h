#pragma once
// The one table of scenario settings. Each row says how one Scenario field is named on the
// command line, in the scenario JSON and in the GUI, what it means (one help text serves
// --help and the tooltip), which values it takes, and how to read and write it. The CLI
// flags, a scenario written back as flags (scenario_flags), scenario_to_json /
// scenario_from_json, the scenario panel's controls and every --help are produced from it,
// so a new setting is one row here (plus its semantics).
//
// validate() owns the rules a scenario must keep on its own (ranges, settings that must
// agree); every front end calls it. Rules that need the dataset stay with the simulation.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/evaluation/scenario.h"

namespace shardlens {

enum class SettingKind {
  Int,         // an integer in [min, max]
  Bool,        // a switch
  Choice,      // one of `choices` (an enum's parse / to_string)
  Text,        // a spec parsed by the engine's own parser (dataset, predictor, version...)
  IntList,     // integers: a JSON list; on the command line npy:PATH, csv:PATH or a,b,c
  NumberList,  // numbers: the same, fractional values allowed
};

struct SettingChoice {
  std::string name;  // as written in files and on the command line
  std::string help;  // what it means
};

struct ScenarioSetting {
  std::string key;  // identifier; the GUI object name is its camelCase (world_size: worldSize)
  std::string json_name;  // the scenario JSON key; "parent.child" for a key inside an object
  // The flag that sets the value (a Bool: that turns it on); empty: not on the command line.
  std::string cli_flag;
  std::string cli_off_flag;  // a Bool: the flag that turns it off ("--no-shuffle")
  std::string gui_group;     // the panel's box; empty: no control in the GUI
  std::string gui_label;     // the form's label (a Bool: the check box's text)
  std::string help;          // one text for --help and the tooltip; setting_help() adds choices
  SettingKind kind = SettingKind::Text;
  int64_t min = 0, max = 0;              // Int
  std::vector<SettingChoice> choices;    // Choice
  std::vector<std::string> suggestions;  // Text: values the GUI offers in an editable list
  std::string gui_placeholder;           // Text / lists: what an empty GUI field stands for
  std::string gui_min_text;              // Int: the GUI's word for the minimum ("none")
  bool json_number_as_text = false;      // Text: a JSON number is read as its text (1 != 1.0)
  // Whether the JSON writes the key for this scenario (keys of an unused inner sampler are not).
  std::function<bool(const Scenario&)> written;
  // Whether scenario_flags() names the setting at its default value too (what defines the
  // simulation: world size, batch size, sampler...); unset: only when it differs from the
  // default Scenario's.
  std::function<bool(const Scenario&)> named_at_default;

  // Accessors; only those of the setting's kind are set. Text and Choice setters parse
  // (throwing InputError that names the flag) and getters format.
  std::function<int64_t(const Scenario&)> get_int;
  std::function<void(Scenario&, int64_t)> set_int;
  std::function<bool(const Scenario&)> get_bool;
  std::function<void(Scenario&, bool)> set_bool;
  std::function<std::string(const Scenario&)> get_text;
  std::function<void(Scenario&, const std::string&)> set_text;
  std::function<std::vector<int64_t>(const Scenario&)> get_ints;
  std::function<void(Scenario&, std::vector<int64_t>)> set_ints;
  std::function<std::vector<double>(const Scenario&)> get_numbers;
  std::function<void(Scenario&, std::vector<double>)> set_numbers;

  // The setting as named to a user: its flag, or its JSON key when it has none.
  std::string name() const;
};

// Every scenario setting, in the order the panel shows them.
const std::vector<ScenarioSetting>& scenario_settings();
// The row for a key; throws std::out_of_range for an unknown one (a programming error).
const ScenarioSetting& scenario_setting(const std::string& key);

// The help text with each choice and what it means, and the range when it is not a type's.
std::string setting_help(const ScenarioSetting& s);

// A setting's value as text (what a GUI field or a command line shows) and back. Lists are
// "a,b,c"; set_setting_text reads npy:PATH and csv:PATH too. Int values are range-checked.
std::string setting_text(const ScenarioSetting& s, const Scenario& scenario);
void set_setting_text(const ScenarioSetting& s, Scenario& scenario, const std::string& text);

// The scenario as shardlens-cli flags, every one from the table: each setting with a flag whose
// value differs from a default Scenario's, and those named at their default too
// ("--world-size 4 --batch-size 8 --sampler distributed --shuffle --seed 42 ..."), so that
// `simulate` given them simulates the same scenario. A value the shell would split is quoted;
// an empty one (a run's own predictions) has no flag and is left out.
std::string scenario_flags(const Scenario& s);

// Every rule a scenario must keep by itself, with messages naming the setting ("--world-size:
// 5000 is out of range (1 to 4096)"). Throws InputError; the first broken rule is reported.
// The CLI and the scenario panel call it before simulating.
void validate(const Scenario& s);
// Only the ranges of the table. The scenario JSON reader calls this one: a file may hold
// settings that disagree (split batches that do not divide), which the simulation refuses
// with the same words when it is run, but the file still loads and saves as it was.
void validate_ranges(const Scenario& s);

// Where a setting's value came from, which decides how a message names the setting: the
// command line by its flag ("--batch-size: must be at least 1"), a scenario file by the file
// and its JSON key ("FILE: batch_size: must be at least 1"), the GUI by its field's label
// ("Batch size: must be at least 1"). Every rule here and in the engine words its message
// with flags; the front end that knows where the values came from rewords it with these.
struct SettingOrigin {
  enum class Kind { Flag, File, Field };
  Kind kind = Kind::Flag;
  std::string file;  // Kind::File: the file, as the user named it
};

// The message with each flag it names in the words of its setting's origin: a leading flag
// becomes the key (after "FILE: ", which starts any message naming a file's setting) or the
// label; a flag inside the text 'key' or the quoted label. Flags of Flag origin stay.
std::string for_origins(const std::string& message,
                        const std::function<SettingOrigin(const ScenarioSetting&)>& origin_of);
// Every setting from the one origin.
std::string for_origin(const std::string& message, const SettingOrigin& origin);

// A message for the GUI: the flags it names become the fields' labels ("--dataset: ..."
// becomes "Dataset: ...", a flag inside the text the quoted label), since the GUI's user
// sees fields, not flags. for_origin with Kind::Field.
std::string with_field_labels(const std::string& message);

// A list of numbers: npy:PATH, csv:PATH (first column) or inline a,b,c (blanks around the
// commas and empty items are skipped). `flag` names the setting in errors.
std::vector<double> parse_number_list(const std::string& spec, const std::string& flag);
std::vector<int64_t> parse_integer_list(const std::string& spec, const std::string& flag);

}  // namespace shardlens
