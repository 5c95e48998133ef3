#pragma once
// Checked reads of a JSON object's keys: the one reader behind the JSON ShardLens reads (a run
// file's meta.json, scenario files). Each getter checks that the key is there, its type and
// its range, and says what is wrong as "ORIGIN: 'key' must be ... (is VALUE)", so the files'
// errors read alike, and a value beyond its type (1e300 or 2^32 + 1 for an int) is refused
// instead of converted (nlohmann's get<int>() wraps or is undefined behaviour).
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace shardlens {

// json::parse with the nesting bounded (kMaxJsonDepth of core/vocabulary/limits.h): a document that
// nests deeper is refused by a scan of its bytes, before the parser builds anything (five
// million nested lists under one key of a 10 MB meta.json took 709 MB), and the tree it would
// build is charged against the load budget first (kJsonBytesPerValue a value). Throws
// InputError "ORIGIN: nests lists or objects deeper than 256 levels" or the budget's
// "ORIGIN: needs ... of memory (the parsed JSON: N values) ..."; syntax errors stay
// nlohmann::json::exception, for the caller to word.
nlohmann::json parse_json(const std::string& text, const std::string& origin);

// A value as an error message shows it: short, and without recursing into lists and objects
// (dump() recurses once per nesting level, and [[[...]]] a million deep overflowed the stack).
std::string describe_json(const nlohmann::json& v);

// The value of `key` of object j: "ORIGIN: 'key' must be given" when it is absent.
const nlohmann::json& json_value(const nlohmann::json& j, const char* key,
                                 const std::string& origin);

// An integer in [lo, hi].
int64_t json_integer(const nlohmann::json& j, const char* key, const std::string& origin,
                     int64_t lo = std::numeric_limits<int64_t>::min(),
                     int64_t hi = std::numeric_limits<int64_t>::max());

// An integer that fits T.
template <class T>
T json_integer_of(const nlohmann::json& j, const char* key, const std::string& origin) {
  return static_cast<T>(json_integer(j, key, origin, int64_t(std::numeric_limits<T>::min()),
                                     int64_t(std::numeric_limits<T>::max())));
}

std::string json_string(const nlohmann::json& j, const char* key, const std::string& origin);
bool json_bool(const nlohmann::json& j, const char* key, const std::string& origin);

// An object, or a list of at most max_size entries, for the caller to read.
const nlohmann::json& json_object(const nlohmann::json& j, const char* key,
                                  const std::string& origin);
const nlohmann::json& json_list(const nlohmann::json& j, const char* key, const std::string& origin,
                                size_t max_size = std::numeric_limits<size_t>::max());

// Lists of at most max_size integers (each in [lo, hi]), strings or numbers.
std::vector<int64_t> json_integers(const nlohmann::json& j, const char* key,
                                   const std::string& origin,
                                   size_t max_size = std::numeric_limits<size_t>::max(),
                                   int64_t lo = std::numeric_limits<int64_t>::min(),
                                   int64_t hi = std::numeric_limits<int64_t>::max());
std::vector<std::string> json_strings(const nlohmann::json& j, const char* key,
                                      const std::string& origin,
                                      size_t max_size = std::numeric_limits<size_t>::max());
std::vector<double> json_numbers(const nlohmann::json& j, const char* key,
                                 const std::string& origin);

}  // namespace shardlens
