#include "core/evaluation/scenario.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/evaluation/scenario_settings.h"
#include "core/io/files.h"
#include "core/model/types.h"

namespace shardlens {

using nlohmann::json;

namespace {

// A file's value, shown in an error message. Lists and objects are not dump()ed: dump()
// recurses once per nesting level, and [[[...]]] a million deep overflowed the stack.
std::string describe(const json& v) {
  if (v.is_array()) return "a list";
  if (v.is_object()) return "an object";
  if (v.is_string() && v.get_ref<const std::string&>().size() > 40)
    return "a string of " + std::to_string(v.get_ref<const std::string&>().size()) + " bytes";
  return v.dump();
}

InputError wrong_type(const std::string& where, const std::string& key, const json& v) {
  return InputError(where + ": '" + key + "' has the wrong type (" + describe(v) + ")");
}

// An integer in [min, max]. nlohmann's get<int>() would convert 1e300 (undefined behaviour)
// or wrap 4294967297 to 1 without a word, so a fractional or oversized value is an error.
int64_t integer(const json& v, const std::string& key, const std::string& where, int64_t min,
                int64_t max) {
  if (!v.is_number_integer()) throw wrong_type(where, key, v);
  const bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= uint64_t(max) && max >= 0
                                           : v.get<int64_t>() >= min && v.get<int64_t>() <= max;
  if (!fits)
    throw InputError(where + ": '" + key + "' = " + v.dump() + " is out of range [" +
                     std::to_string(min) + ", " + std::to_string(max) + "]");
  return v.is_number_unsigned() ? int64_t(v.get<uint64_t>()) : v.get<int64_t>();
}

// The value parsers name the command-line flag ("--sampler: ..."); in a file the file
// comes first, so the user knows where the bad value is.
template <class F>
auto in_file(const std::string& origin, F&& parse) {
  try {
    return parse();
  } catch (const InputError& e) {
    throw InputError(origin + ": " + e.what());
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

// Reads one setting's value `v` (key `key` of the object `where` names) into `s`.
void read_value(const ScenarioSetting& row, const json& v, const std::string& key,
                const std::string& where, const std::string& origin, Scenario& s) {
  switch (row.kind) {
    case SettingKind::Int:
      row.set_int(s, integer(v, key, where, row.min, row.max));
      return;
    case SettingKind::Bool:
      if (!v.is_boolean()) throw wrong_type(where, key, v);
      row.set_bool(s, v.get<bool>());
      return;
    case SettingKind::Choice:
    case SettingKind::Text: {
      const bool scalar = row.json_number_as_text && (v.is_number() || v.is_boolean());
      if (!v.is_string() && !scalar) throw wrong_type(where, key, v);
      const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
      in_file(origin, [&] {
        row.set_text(s, text);
        return 0;
      });
      return;
    }
    case SettingKind::IntList: {
      if (!v.is_array()) throw wrong_type(where, key, v);
      std::vector<int64_t> out;
      for (const json& e : v)
        out.push_back(integer(e, key, where, std::numeric_limits<int64_t>::min(),
                              std::numeric_limits<int64_t>::max()));
      row.set_ints(s, std::move(out));
      return;
    }
    case SettingKind::NumberList: {
      if (!v.is_array()) throw wrong_type(where, key, v);
      std::vector<double> out;
      for (const json& e : v) {
        if (!e.is_number()) throw wrong_type(where, key, v);
        out.push_back(e.get<double>());
      }
      row.set_numbers(s, std::move(out));
      return;
    }
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
    read_value(row, value_json(row, defaults), child_of(row), origin, origin, s);
  }
  for (const ScenarioSetting& row : rows) {
    const std::string parent = parent_of(row);
    // A pointer, not a conditional expression: that would copy the document (recursively,
    // so a value nested a million deep overflowed the stack).
    const json* object = parent.empty() ? &j : j.contains(parent) ? &j.at(parent) : nullptr;
    const std::string key = child_of(row);
    if (!object || !object->contains(key)) continue;
    read_value(row, object->at(key), key, parent.empty() ? origin : origin + ": '" + parent + "'",
               origin, s);
  }
  in_file(origin, [&] {
    validate_ranges(s);
    return 0;
  });
  return s;
}

Scenario load_scenario_file(const std::string& path) {
  const std::string text = read_file_bytes(path, size_t(1) << 24);
  json j;
  try {
    j = json::parse(text);
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
  return scenario_from_json(j, path);
}

void save_scenario_file(const Scenario& s, const std::string& path) {
  write_file_atomic(path, to_json(s).dump(2) + "\n");
}

}  // namespace shardlens
