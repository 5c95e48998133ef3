#include "core/evaluation/scenario.h"
#include "core/io/output_text.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/evaluation/caption.h"
#include "core/evaluation/scenario_settings.h"
#include "core/io/files.h"
#include "core/io/json_fields.h"
#include "core/vocabulary/limits.h"
#include "core/vocabulary/types.h"

namespace shardlens {

using nlohmann::json;

namespace {

// Runs `parse`, its error naming the file and, for the setting it names by flag, the file's
// key ("FILE: batch_size: ...", not "--batch-size: ...").
template <class F>
auto in_file(const std::string& origin, F&& parse) {
  try {
    return parse();
  } catch (const InputError& e) {
    const std::string what = for_origin(e.what(), {SettingOrigin::Kind::File, origin});
    throw InputError(what.rfind(origin + ": ", 0) == 0 ? what : origin + ": " + what);
  }
}

// The JSON key of a setting inside its object ("inner_sampler.kind": "kind"), and the object.
std::string parent_of(const ScenarioSetting& s) {
  const size_t dot = s.json_name.find('.');
  return dot == std::string::npos ? std::string() : s.json_name.substr(0, dot);
}

std::string child_of(const ScenarioSetting& s) {
  const size_t dot = s.json_name.find('.');
  return dot == std::string::npos ? s.json_name : s.json_name.substr(dot + 1);
}

json value_json(const ScenarioSetting& row, const Scenario& s) {
  switch (row.kind) {
    case SettingKind::Int:
      return row.get_int(s);
    case SettingKind::Bool:
      return row.get_bool(s);
    case SettingKind::Choice:
    case SettingKind::Text:
      return row.get_text(s);
    case SettingKind::IntList:
      return row.get_ints(s);
    case SettingKind::NumberList:
      return row.get_numbers(s);
  }
  return nullptr;
}

// Reads the setting `row` from key `key` of `object` (`where` names the object) into `s`.
void read_value(const ScenarioSetting& row, const json& object, const std::string& key,
                const std::string& where, const std::string& origin, Scenario& s) {
  const char* k = key.c_str();
  switch (row.kind) {
    case SettingKind::Int:
      row.set_int(s, json_integer(object, k, where, row.min, row.max));
      return;
    case SettingKind::Bool:
      row.set_bool(s, json_bool(object, k, where));
      return;
    case SettingKind::Choice:
    case SettingKind::Text: {
      const json& v = json_value(object, k, where);
      // Some texts are numbers in files people write ("limit_batches": 0.25).
      const bool scalar = row.json_number_as_text && (v.is_number() || v.is_boolean());
      const std::string text = scalar ? v.dump() : json_string(object, k, where);
      in_file(origin, [&] {
        row.set_text(s, text);
        return 0;
      });
      return;
    }
    case SettingKind::IntList:
      row.set_ints(s, json_integers(object, k, where));
      return;
    case SettingKind::NumberList:
      row.set_numbers(s, json_numbers(object, k, where));
      return;
  }
}

// Keys a scenario file may hold that are no setting: a lesson's notes.
const char* const kIgnoredKeys[] = {"lesson"};

}  // namespace

json to_json(const Scenario& s) {
  json j = json::object();
  for (const ScenarioSetting& row : scenario_settings()) {
    if (row.written && !row.written(s)) continue;
    const std::string parent = parent_of(row);
    (parent.empty() ? j : j[parent])[child_of(row)] = value_json(row, s);
  }
  return j;
}

Scenario scenario_from_json(const json& j, const std::string& origin, const Scenario& base) {
  if (!j.is_object()) throw InputError(origin + ": a scenario must be a JSON object");
  const auto& rows = scenario_settings();
  // Whether `key` is a setting's key inside `parent` ("" for the top level), or an object.
  const auto known = [&](const std::string& parent, const std::string& key) {
    return std::any_of(rows.begin(), rows.end(), [&](const ScenarioSetting& r) {
      return parent.empty() ? r.json_name == key || parent_of(r) == key
                            : parent_of(r) == parent && child_of(r) == key;
    });
  };
  const auto is_object = [&](const std::string& key) {
    return std::any_of(rows.begin(), rows.end(),
                       [&](const ScenarioSetting& r) { return parent_of(r) == key; });
  };
  for (const auto& item : j.items()) {
    const bool ignored = std::any_of(std::begin(kIgnoredKeys), std::end(kIgnoredKeys),
                                     [&](const char* k) { return item.key() == k; });
    if (!ignored && !known("", item.key()))
      throw InputError(origin + ": unknown key '" + item.key() + "'");
    if (!is_object(item.key())) continue;
    const std::string where = origin + ": '" + item.key() + "'";
    if (!item.value().is_object()) throw InputError(where + " must be an object with a 'kind'");
    for (const auto& child : item.value().items())
      if (!known(item.key(), child.key()))
        throw InputError(where + " has an unknown key '" + child.key() + "'");
  }
  Scenario s = base;
  // An object given (the inner sampler) replaces the whole of it: keys it leaves out take
  // their defaults, not base's.
  const Scenario defaults;
  for (const ScenarioSetting& row : rows) {
    const std::string parent = parent_of(row);
    if (parent.empty() || !j.contains(parent)) continue;
    const json one = {{child_of(row), value_json(row, defaults)}};
    read_value(row, one, child_of(row), origin, origin, s);
  }
  for (const ScenarioSetting& row : rows) {
    const std::string parent = parent_of(row);
    // A pointer, not a conditional expression: that would copy the document (recursively,
    // so a value nested a million deep overflowed the stack).
    const json* object = parent.empty() ? &j : j.contains(parent) ? &j.at(parent) : nullptr;
    const std::string key = child_of(row);
    if (!object || !object->contains(key)) continue;
    read_value(row, *object, key, parent.empty() ? origin : origin + ": '" + parent + "'", origin,
               s);
  }
  in_file(origin, [&] {
    validate_ranges(s);
    return 0;
  });
  return s;
}

Scenario load_scenario_file(const std::string& path) {
  const std::string text = read_file_bytes(path, kMaxScenarioFileBytes);
  json j;
  try {
    j = parse_json(text, path);
  } catch (const json::exception& e) {
    // parse_error, and out_of_range for a number too large for a double (1e400). The
    // library's "[json.exception.parse_error.101] parse error at line 1, ..." is said plainly:
    // "not valid JSON at line 1, column 18: ...".
    std::string what = e.what();
    if (what.rfind("[json.exception.", 0) == 0 && what.find("] ") != std::string::npos)
      what.erase(0, what.find("] ") + 2);
    if (what.rfind("parse error ", 0) == 0) what.erase(0, 12);
    if (what.rfind("syntax error while parsing value - ", 0) == 0) what.erase(0, 35);
    throw InputError(path + ": not valid JSON " +
                     (what.rfind("at ", 0) == 0 ? what : "(" + what + ")"));
  }
  Scenario s = scenario_from_json(j, path);
  s.titled = std::make_shared<const Scenario>(s);  // what its title and description describe
  return s;
}

void save_scenario_file(const Scenario& s, const std::string& path) {
  // An edited lesson is saved under what it is now, not under the lesson's title.
  write_file_atomic(path, json_text(to_json(retitled(s)), 2) + "\n");
}

}  // namespace shardlens
