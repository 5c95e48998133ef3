#include "core/evaluation/recorded_settings.h"

#include <nlohmann/json.hpp>

#include "core/io/json_fields.h"
#include "core/vocabulary/types.h"

namespace shardlens {
namespace {

using nlohmann::json;

// The recorder's keys (dump_format.json's settings), through the checked reader of
// core/io/json_fields.h, one overload per kind; absent and null both mean unknown.
class Reader {
 public:
  Reader(const json& j, const std::string& origin) : m_j(j), m_where(origin + ": settings_json") {}

  bool given(const char* key) const {
    auto it = m_j.find(key);
    return it != m_j.end() && !it->is_null();
  }
  void read(const char* key, std::optional<int64_t>& out, int64_t minimum) const {
    if (!given(key)) return;
    out = json_integer(m_j, key, m_where);
    if (*out < minimum)
      throw InputError(m_where + ": '" + key + "' must be at least " + std::to_string(minimum) +
                       " (is " + std::to_string(*out) + ")");
  }
  void read(const char* key, std::optional<bool>& out, int64_t) const {
    if (given(key)) out = json_bool(m_j, key, m_where);
  }
  void read(const char* key, std::optional<std::string>& out, int64_t) const {
    if (given(key)) out = json_string(m_j, key, m_where);
  }
  void read(const char* key, std::map<std::string, std::string>& out, int64_t) const {
    if (!given(key)) return;
    for (const auto& [name, version] : json_object(m_j, key, m_where).items()) {
      if (version.is_null()) continue;
      if (!version.is_string())
        throw InputError(m_where + ": '" + key + "' must be an object of version strings (holds " +
                         describe_json(version) + ")");
      out[name] = version.get<std::string>();
    }
  }

 private:
  const json& m_j;
  const std::string m_where;
};

std::string yes_no(bool b) {
  return b ? "True" : "False";
}

}  // namespace

RecordedSettings parse_recorded_settings(const std::string& text, const std::string& origin) {
  json j;
  try {
    j = parse_json(text, origin + ": settings_json");
  } catch (const json::exception&) {
    throw InputError(origin + ": settings_json is not valid UTF-8 JSON");
  }
  if (!j.is_object()) throw InputError(origin + ": settings_json is not a JSON object");
  RecordedSettings s;
  s.text = j.dump();
  const Reader r(j, origin);
  using dump_format::kNoMinimum;
#define SHARDLENS_READ_SETTING(key, kind, minimum) r.read(#key, s.key, minimum);
  SHARDLENS_RECORDED_SETTINGS(SHARDLENS_READ_SETTING)
#undef SHARDLENS_READ_SETTING
  return s;
}

bool same_evaluation_settings(const RecordedSettings& a, const RecordedSettings& b,
                              std::string* differing) {
  json ja = json::parse(a.text), jb = json::parse(b.text);
  ja.erase("rank");
  jb.erase("rank");
  // A batch size read off each rank's first batch is shorter on a rank whose whole shard is
  // one short batch: the ranks still ran one loader (the lowest rank's is the longest).
  if (a.batch_size_source == "first-batch" && b.batch_size_source == "first-batch") {
    ja.erase("batch_size");
    jb.erase("batch_size");
  }
  if (ja == jb) return true;
  if (differing) {
    for (const auto& [key, value] : ja.items())
      if (!jb.contains(key) || jb[key] != value) {
        *differing = key;
        return false;
      }
    for (const auto& [key, value] : jb.items())
      if (!ja.contains(key)) {
        *differing = key;
        return false;
      }
  }
  return false;
}

std::string recorded_settings_text(const RecordedSettings& s) {
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  if (s.framework) add(*s.framework);
  if (s.sampler) {
    std::string sampler = *s.sampler;
    if (s.inner_sampler) sampler += " over " + *s.inner_sampler;
    std::string args;
    auto arg = [&](const std::string& a) { args += (args.empty() ? "" : ", ") + a; };
    if (s.shuffle) arg("shuffle=" + yes_no(*s.shuffle));
    if (s.seed) arg("seed=" + std::to_string(*s.seed));
    if (s.sampler_epoch) arg("epoch=" + std::to_string(*s.sampler_epoch));
    if (s.sampler_drop_last) arg("drop_last=" + yes_no(*s.sampler_drop_last));
    add("sampler " + sampler + (args.empty() ? "" : "(" + args + ")"));
  }
  if (s.batch_size)
    add("batch_size " + std::to_string(*s.batch_size) +
        (s.batch_size_source == "first-batch" ? " (its first batch)" : ""));
  if (s.loader_drop_last) add("loader drop_last " + yes_no(*s.loader_drop_last));
  if (s.limit_batches) add("limit " + *s.limit_batches);
  if (s.sanity_steps)
    add("sanity steps " + (*s.sanity_steps < 0 ? "every batch" : std::to_string(*s.sanity_steps)));
  if (s.val_check_interval) add("val_check_interval " + *s.val_check_interval);
  if (s.even_batches) add("even_batches " + yes_no(*s.even_batches));
  if (s.split_batches) add("split_batches " + yes_no(*s.split_batches));
  if (s.pad_across_processes && *s.pad_across_processes)
    add("pad_across_processes (padded rows not counted)");
  if (s.accelerate_input) add("prepared loader " + *s.accelerate_input);
  if (s.accelerate_shuffle) add("shuffle " + *s.accelerate_shuffle);
  if (s.sync) add("sync " + *s.sync);
  if (s.stage) add("stage " + *s.stage);
  for (const auto& [name, version] : s.versions) add(name + " " + version);
  return out.empty() ? std::string("(nothing recorded)") : out;
}

}  // namespace shardlens
