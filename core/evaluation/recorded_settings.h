#pragma once
// The settings a recorder saw in the user's own run (`settings_json` in a dump): the
// framework, the sampler and loader, the batch limit, the stage and the versions. Every key
// may be absent or null (unknown); keys this version does not know are kept in `text` and
// otherwise ignored. Carried from the dumps into the run file's meta, the reports and the
// GUI's run banner, and read back by `simulate --like` (core/sim/run_scenario.h).
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace shardlens {

struct RecordedSettings {
  std::string text;  // the JSON object as recorded (compact), unknown keys included
  std::optional<std::string> framework;      // "lightning" | "accelerate" | "torch"
  std::optional<std::string> sampler;        // "distributed" | "wrapper" | "unrepeated" | ...
  std::optional<std::string> inner_sampler;  // "sequential" | "weighted_random" | "other"
  std::optional<bool> shuffle;
  std::optional<int64_t> seed;
  std::optional<int64_t> sampler_epoch;
  std::optional<bool> sampler_drop_last;
  std::optional<bool> loader_drop_last;
  std::optional<int64_t> batch_size;
  std::optional<std::string> limit_batches;  // "all", "10" (int) or "0.5" (fraction)
  std::optional<int64_t> sanity_steps;
  std::optional<bool> sanity;
  std::optional<std::string> stage;  // "validate" | "test"
  std::optional<int64_t> dataloader_idx;
  std::optional<int64_t> validation_in_epoch;
  std::optional<std::string> val_check_interval;
  std::optional<int64_t> world_size;
  std::optional<int64_t> rank;
  std::optional<int64_t> dataset_size;
  std::optional<int64_t> num_classes;
  std::optional<int64_t> epoch;
  std::optional<int64_t> global_step;
  // Accelerate's prepared loader: BatchSamplerShard's even_batches and split_batches, what the
  // prepared loader sampled with ("loader" | "distributed-sampler") and how it shuffled
  // ("global-rng" | "seedable"), as `--accelerate-input` / `--accelerate-shuffle` name them.
  std::optional<bool> even_batches;
  std::optional<bool> split_batches;
  std::optional<std::string> accelerate_input;
  std::optional<std::string> accelerate_shuffle;
  std::map<std::string, std::string> versions;  // "torch", "lightning", "torchmetrics", ...
};

// Parses the recorded JSON object. Throws InputError "ORIGIN: settings_json: ..." naming the
// key whose value has the wrong type, or when the text is not a JSON object.
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
