#pragma once
// The settings a recorder saw in the user's own run (`settings_json` in a dump): the
// framework, the sampler and loader, the batch limit, the stage and the versions. Every key
// may be absent or null (unknown); keys this version does not know are kept in `text` and
// otherwise ignored. Carried from the dumps into the run file's meta, the reports and the
// GUI's run banner, and read back by `simulate --like` (core/sim/recorded_run_simulation.h).
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "shardlens/dump_format.h"

namespace shardlens {

// The C++ type of a settings_json value of each kind the schema names.
enum class RecordedKind { Text, Bool, Integer, Versions };
template <RecordedKind>
struct RecordedValue;
template <>
struct RecordedValue<RecordedKind::Text> {
  using type = std::optional<std::string>;
};
template <>
struct RecordedValue<RecordedKind::Bool> {
  using type = std::optional<bool>;
};
template <>
struct RecordedValue<RecordedKind::Integer> {
  using type = std::optional<int64_t>;
};
template <>
struct RecordedValue<RecordedKind::Versions> {
  using type = std::map<std::string, std::string>;  // "torch" -> "2.15.0", ...
};

// One member per key of dump_format.json's settings (their meanings: docs/FORMATS.md), e.g.
// framework "lightning" | "accelerate" | "torch", sampler "distributed" | "wrapper" | ...,
// limit_batches "all" | "10" | "0.5"; absent or null: nullopt.
struct RecordedSettings {
  std::string text;  // the JSON object as recorded (compact), unknown keys included
#define SHARDLENS_SETTING_MEMBER(key, kind, minimum) RecordedValue<RecordedKind::kind>::type key;
  SHARDLENS_RECORDED_SETTINGS(SHARDLENS_SETTING_MEMBER)
#undef SHARDLENS_SETTING_MEMBER
};

// Parses the recorded JSON object. Throws InputError "ORIGIN: settings_json: ..." naming the
// key whose value has the wrong type or lies below the schema's minimum, or when the text is
// not a JSON object.
RecordedSettings parse_recorded_settings(const std::string& text, const std::string& origin);

// Whether two ranks' settings describe the same evaluation (every key but "rank" equal);
// when not, `differing` names the first key that differs.
bool same_evaluation_settings(const RecordedSettings& a, const RecordedSettings& b,
                              std::string* differing = nullptr);

// "lightning, DistributedSampler(shuffle=True, seed=42, epoch=1, drop_last=False), batch_size 8,
// loader drop_last False, limit 10, sanity steps 2, stage validate, torch 2.15.0, lightning
// 2.6.6": the settings in one line, as the reports and the GUI's banner say them.
std::string recorded_settings_text(const RecordedSettings& s);

}  // namespace shardlens
