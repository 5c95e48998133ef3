#include "core/io/json_fields.h"

#include "core/vocabulary/limits.h"
#include "core/vocabulary/memory_budget.h"
#include "core/vocabulary/types.h"

namespace shardlens {

using nlohmann::json;

namespace {

[[noreturn]] void must_be(const std::string& origin, const char* key, const std::string& what,
                          const std::string& actual) {
  throw InputError(origin + ": '" + key + "' must be " + what + " (" + actual + ")");
}

std::string range(int64_t lo, int64_t hi) {
  std::string out = "[";  // appended piece by piece: GCC 12 warns wrongly on "[" + to_string
  out += std::to_string(lo);
  out += ", ";
  out += std::to_string(hi);
  out += "]";
  return out;
}

// Whether v is an integer within [lo, hi]; types other than integers are not.
bool integer_within(const json& v, int64_t lo, int64_t hi) {
  if (v.is_number_unsigned()) {
    const uint64_t x = v.get<uint64_t>();
    return hi >= 0 && x <= uint64_t(hi) && (lo <= 0 || x >= uint64_t(lo));
  }
  if (!v.is_number_integer()) return false;
  const int64_t x = v.get<int64_t>();
  return x >= lo && x <= hi;
}

// What a document will cost the parser, told from its bytes: how deep its lists and objects
// nest, how many values (and object keys) it holds and how many bytes its strings carry. One
// pass, brackets inside strings skipped. (A parser callback could tell the same, but
// nlohmann's callback parser walks a parent's members each time a child object ends: a
// meta.json of 4,096 ranks took 110 s to parse instead of 0.1 s.) Text that is not JSON may
// count wrongly; the parser then says what is wrong with it.
struct JsonShape {
  bool too_deep = false;
  uint64_t values = 0;
  uint64_t string_bytes = 0;
};

JsonShape json_shape(const std::string& text, size_t depth_limit) {
  JsonShape shape;
  size_t depth = 0;
  bool in_string = false, escaped = false, in_scalar = false;
  for (const char c : text) {
    if (in_string) {
      ++shape.string_bytes;
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    const bool scalar_byte = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' ||
                             c == '+' || c == '.' || (c >= 'A' && c <= 'Z');
    if (scalar_byte) {
      if (!in_scalar) ++shape.values;  // a number, true, false or null begins
      in_scalar = true;
      continue;
    }
    in_scalar = false;
    if (c == '"') {
      in_string = true;
      ++shape.values;  // a string value or an object's key: both cost a node
    } else if (c == '[' || c == '{') {
      ++shape.values;
      if (++depth > depth_limit) {
        shape.too_deep = true;
        return shape;
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return shape;
}

}  // namespace

json parse_json(const std::string& text, const std::string& origin) {
  const JsonShape shape = json_shape(text, kMaxJsonDepth);
  if (shape.too_deep)
    throw InputError(origin + ": nests lists or objects deeper than " +
                     std::to_string(kMaxJsonDepth) + " levels");
  // The tree is charged before it is built: twenty million {} under an unknown key of a
  // 63 KB run file took 3.4 GB and ended in std::bad_alloc.
  check_load_budget(origin, shape.values * kJsonBytesPerValue + shape.string_bytes,
                    "the parsed JSON: " + std::to_string(shape.values) + " values");
  return json::parse(text);
}

std::string describe_json(const json& v) {
  if (v.is_array()) return "a list";
  if (v.is_object()) return "an object";
  if (v.is_string() && v.get_ref<const std::string&>().size() > 40)
    return "a string of " + std::to_string(v.get_ref<const std::string&>().size()) + " bytes";
  return v.dump();
}

const json& json_value(const json& j, const char* key, const std::string& origin) {
  auto it = j.find(key);
  if (it == j.end()) throw InputError(origin + ": '" + key + "' must be given");
  return *it;
}

int64_t json_integer(const json& j, const char* key, const std::string& origin, int64_t lo,
                     int64_t hi) {
  const json& v = json_value(j, key, origin);
  if (!v.is_number_integer()) must_be(origin, key, "an integer", "is " + describe_json(v));
  if (!integer_within(v, lo, hi))
    must_be(origin, key, "an integer in " + range(lo, hi), "is " + v.dump());
  return v.get<int64_t>();
}

std::string json_string(const json& j, const char* key, const std::string& origin) {
  const json& v = json_value(j, key, origin);
  if (!v.is_string()) must_be(origin, key, "a string", "is " + describe_json(v));
  return v.get<std::string>();
}

bool json_bool(const json& j, const char* key, const std::string& origin) {
  const json& v = json_value(j, key, origin);
  if (!v.is_boolean()) must_be(origin, key, "true or false", "is " + describe_json(v));
  return v.get<bool>();
}

const json& json_object(const json& j, const char* key, const std::string& origin) {
  const json& v = json_value(j, key, origin);
  if (!v.is_object()) must_be(origin, key, "an object", "is " + describe_json(v));
  return v;
}

const json& json_list(const json& j, const char* key, const std::string& origin, size_t max_size) {
  const json& v = json_value(j, key, origin);
  if (!v.is_array()) must_be(origin, key, "a list", "is " + describe_json(v));
  if (v.size() > max_size)
    must_be(origin, key, "a list of at most " + std::to_string(max_size) + " entries",
            "has " + std::to_string(v.size()));
  return v;
}

std::vector<int64_t> json_integers(const json& j, const char* key, const std::string& origin,
                                   size_t max_size, int64_t lo, int64_t hi) {
  std::vector<int64_t> out;
  for (const json& e : json_list(j, key, origin, max_size)) {
    if (!e.is_number_integer())
      must_be(origin, key, "a list of integers", "holds " + describe_json(e));
    if (!integer_within(e, lo, hi))
      must_be(origin, key, "a list of integers in " + range(lo, hi), "holds " + e.dump());
    out.push_back(e.get<int64_t>());
  }
  return out;
}

std::vector<std::string> json_strings(const json& j, const char* key, const std::string& origin,
                                      size_t max_size) {
  std::vector<std::string> out;
  for (const json& e : json_list(j, key, origin, max_size)) {
    if (!e.is_string()) must_be(origin, key, "a list of strings", "holds " + describe_json(e));
    out.push_back(e.get<std::string>());
  }
  return out;
}

std::vector<double> json_numbers(const json& j, const char* key, const std::string& origin) {
  std::vector<double> out;
  for (const json& e : json_list(j, key, origin)) {
    if (!e.is_number()) must_be(origin, key, "a list of numbers", "holds " + describe_json(e));
    out.push_back(e.get<double>());
  }
  return out;
}

}  // namespace shardlens
