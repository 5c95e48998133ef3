#include "core/evaluation/scenario_settings.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

#include "core/io/csv.h"
#include "core/io/npy.h"
#include "core/vocabulary/limits.h"
#include "core/vocabulary/types.h"

namespace shardlens {
namespace {

constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kIntMax = std::numeric_limits<int>::max();

// The panel's boxes.
const char* const kData = "Data";
const char* const kSampler = "Sampler and loader";
const char* const kMetric = "Metric and sync";

// Row builders: each fills what its kind needs; the table below reads as a list of settings.
struct Names {
  const char* key;
  const char* json;
  const char* flag;
  const char* group;
  const char* label;
};

ScenarioSetting row(const Names& n, SettingKind kind, std::string help) {
  ScenarioSetting s;
  s.key = n.key;
  s.json_name = n.json;
  s.cli_flag = n.flag;
  s.gui_group = n.group;
  s.gui_label = n.label;
  s.kind = kind;
  s.help = std::move(help);
  return s;
}

template <class T>
ScenarioSetting int_row(const Names& n, int64_t min, int64_t max, T Scenario::*outer, auto member,
                        std::string help) {
  ScenarioSetting s = row(n, SettingKind::Int, std::move(help));
  s.min = min;
  s.max = max;
  s.get_int = [=](const Scenario& x) { return int64_t((x.*outer).*member); };
  s.set_int = [=](Scenario& x, int64_t v) {
    (x.*outer).*member = static_cast<std::remove_reference_t<decltype((x.*outer).*member)>>(v);
  };
  return s;
}

template <class T>
ScenarioSetting bool_row(const Names& n, const char* off_flag, T Scenario::*outer, bool T::*member,
                         std::string help) {
  ScenarioSetting s = row(n, SettingKind::Bool, std::move(help));
  s.cli_off_flag = off_flag;
  s.get_bool = [=](const Scenario& x) { return (x.*outer).*member; };
  s.set_bool = [=](Scenario& x, bool v) { (x.*outer).*member = v; };
  return s;
}

// A switch of the Scenario itself rather than of its sampler or loader.
ScenarioSetting bool_row(const Names& n, const char* off_flag, bool Scenario::*member,
                         std::string help) {
  ScenarioSetting s = row(n, SettingKind::Bool, std::move(help));
  s.cli_off_flag = off_flag;
  s.get_bool = [=](const Scenario& x) { return x.*member; };
  s.set_bool = [=](Scenario& x, bool v) { x.*member = v; };
  return s;
}

// An int of the Scenario itself.
ScenarioSetting int_row(const Names& n, int64_t min, int64_t max, int Scenario::*member,
                        std::string help) {
  ScenarioSetting s = row(n, SettingKind::Int, std::move(help));
  s.min = min;
  s.max = max;
  s.get_int = [=](const Scenario& x) { return int64_t(x.*member); };
  s.set_int = [=](Scenario& x, int64_t v) { x.*member = int(v); };
  return s;
}

ScenarioSetting text_row(const Names& n, std::string Scenario::*member, std::string help,
                         std::vector<std::string> suggestions = {}) {
  ScenarioSetting s = row(n, SettingKind::Text, std::move(help));
  s.suggestions = std::move(suggestions);
  s.get_text = [=](const Scenario& x) { return x.*member; };
  s.set_text = [=](Scenario& x, const std::string& v) { x.*member = v; };
  return s;
}

// An enum setting: `field` reaches the value, parse / to_string name it.
template <class E, class Field, class Parse>
ScenarioSetting choice_row(const Names& n, Field field, Parse parse,
                           std::vector<SettingChoice> choices, std::string help) {
  ScenarioSetting s = row(n, SettingKind::Choice, std::move(help));
  s.choices = std::move(choices);
  s.get_text = [=](const Scenario& x) { return to_string(field(x)); };
  s.set_text = [=](Scenario& x, const std::string& v) { field(x) = parse(v); };
  return s;
}

// A setting scenario_flags() names at its default value too: one that defines the simulation.
ScenarioSetting named_at_default(ScenarioSetting s) {
  s.named_at_default = [](const Scenario&) { return true; };
  return s;
}

// What each sync strategy does (a switch, so a new strategy cannot go without words).
std::string sync_help(SyncStrategy v) {
  switch (v) {
    case SyncStrategy::AllReduce:
      return "the ranks' sum, as torchmetrics' compute() all_gathers the states and sums them "
             "(correct)";
    case SyncStrategy::Local:
      return "no sync: rank 0's own matrix";
    case SyncStrategy::Double:
      return "all-reduce applied twice";
    case SyncStrategy::GatherZeroPad:
      return "uneven (target, pred) tensors gathered padded with zeros, untrimmed";
    case SyncStrategy::GatherTrim:
      return "gathered with trimming (correct)";
    case SyncStrategy::GatherForMetrics:
      return "Accelerate's gather_for_metrics: the duplicated tail trimmed";
    case SyncStrategy::NormalizeThenSum:
      return "per-rank row-normalized matrices summed";
    case SyncStrategy::Gather:
      return "Accelerate's plain accelerator.gather: every gathered record, untrimmed";
    case SyncStrategy::CollectResults:
      return "mmengine's collect_results, one result per sample: the ranks' results "
             "interleaved and cut to len(dataset) (correct under a round_up sampler; a batch "
             "limit or drop_last leaves samples out)";
    case SyncStrategy::CollectBatchResults:
      return "mmengine's collect_results, one result per batch: the cut to len(dataset) "
             "results keeps every batch, padding included";
  }
  return {};
}

// What the scenario is and what it evaluates: names, dataset, predictor.
void add_data_settings(std::vector<ScenarioSetting>& t) {
  t.push_back(text_row({"name", "name", "", "", ""}, &Scenario::name,
                       "The scenario's name (a lesson's file name)"));
  t.push_back(text_row({"title", "title", "", "", ""}, &Scenario::title, "The scenario's title"));
  t.push_back(text_row({"description", "description", "", "", ""}, &Scenario::description,
                       "What the scenario shows (a lesson's explanation)"));

  t.push_back(named_at_default(
      text_row({"dataset", "dataset", "--dataset", kData, "Dataset"}, &Scenario::dataset,
               "Dataset spec: synthetic:classes=10,per-class=50 | synthetic:counts=3,5,7 | "
               "synthetic:classes=C,n=N,zipf=S | fashion-mnist:test | fashion-mnist:train | "
               "idx:PATH | npy:PATH | csv:PATH",
               {"synthetic:classes=10,per-class=50", "synthetic:classes=10,per-class=1000",
                "synthetic:classes=10,n=1000,zipf=1.2", "synthetic:classes=100,per-class=100",
                "synthetic:classes=1000,per-class=100", "fashion-mnist:test"})));
  t.push_back(named_at_default(text_row(
      {"predictor", "predictor", "--predictor", kData, "Predictor"}, &Scenario::predictor,
      "Predictor spec: perfect | noisy:accuracy=0.9,seed=1[,structure=adjacent] | "
      "npy:PATH | csv:PATH | model:PATH[,device=cuda:N] (a TorchScript model; "
      "model:reference for Fashion-MNIST)",
      {"noisy:accuracy=0.9,seed=1", "perfect", "noisy:accuracy=0.7,seed=1,structure=adjacent"})));
}

// The sampler and the loader, as torch, Lightning and Accelerate take them.
void add_sampler_settings(std::vector<ScenarioSetting>& t) {
  using SC = SamplerConfig;
  using LC = LoaderConfig;
  t.push_back(
      named_at_default(int_row({"world_size", "world_size", "--world-size", kSampler, "World size"},
                               1, kMaxSimulatedWorldSize, &Scenario::sampler, &SC::world_size,
                               "Number of ranks (processes), WORLD_SIZE")));
  t.push_back(named_at_default(
      int_row({"batch_size", "batch_size", "--batch-size", kSampler, "Batch size"}, 1, kMaxSamples,
              &Scenario::loader, &LC::batch_size, "DataLoader batch_size per rank")));
  t.push_back(named_at_default(choice_row<SamplerKind>(
      {"sampler", "sampler", "--sampler", kSampler, "Sampler"},
      [](auto& x) -> auto& { return x.sampler.kind; }, parse_sampler_kind,
      {{"distributed", "torch DistributedSampler (pads to a multiple of W)"},
       {"unrepeated", "Lightning's predict sampler (no padding)"},
       {"sequential", "contiguous blocks"},
       {"none", "every rank iterates the whole dataset"},
       {"accelerate", "Hugging Face Accelerate's BatchSamplerShard (whole batches round-robin)"},
       {"lightning-wrapper",
        "Lightning's DistributedSamplerWrapper over the inner sampler (--inner-sampler)"},
       {"mmengine-default",
        "mmengine's DefaultSampler: rank::W shards, padded as distributed unless "
        "--no-round-up"},
       {"detectron2-inference",
        "detectron2's InferenceSampler: contiguous unpadded shards, the first n % W ranks one "
        "sample more; never shuffled"}},
      "The distributed sampler")));
  ScenarioSetting shuffle =
      bool_row({"shuffle", "shuffle", "--shuffle", kSampler, "shuffle"}, "--no-shuffle",
               &Scenario::sampler, &SC::shuffle,
               "Shuffle the evaluation order with randperm(seed + epoch); Accelerate's loader as "
               "--accelerate-shuffle says. Off: dataset order (the default, as a val loader)");
  t.push_back(named_at_default(shuffle));
  t.push_back(named_at_default(int_row({"seed", "seed", "--seed", kSampler, "Seed"}, kInt64Min,
                                       kInt64Max, &Scenario::sampler, &SC::seed,
                                       "Sampler seed (PL_GLOBAL_SEED or 0); Accelerate's default "
                                       "shuffle: the global torch.manual_seed")));
  t.push_back(named_at_default(
      int_row({"epoch", "epoch", "--epoch", kSampler, "Epoch"}, 0, kInt64Max, &Scenario::sampler,
              &SC::epoch,
              "Epoch passed to set_epoch(): the shuffled order changes with it; with "
              "--run, the epoch of the run to report")));
  t.push_back(bool_row({"sampler_drop_last", "sampler_drop_last", "--sampler-drop-last", kSampler,
                        "sampler drop_last"},
                       "", &Scenario::sampler, &SC::drop_last,
                       "DistributedSampler(drop_last=True): cut the tail instead of padding; up "
                       "to W-1 samples are never evaluated"));
  t.push_back(bool_row({"round_up", "round_up", "", kSampler, "round_up (mmengine)"},
                       "--no-round-up", &Scenario::sampler, &SC::round_up,
                       "mmengine DefaultSampler(round_up=True), its default: pad to a multiple "
                       "of W by repeating the head; off: unpadded, the first n % W ranks one "
                       "sample more"));
  t.push_back(bool_row(
      {"loader_drop_last", "loader_drop_last", "--loader-drop-last", kSampler, "loader drop_last"},
      "", &Scenario::loader, &LC::drop_last,
      "DataLoader(drop_last=True): each rank's partial last batch is dropped"));
  {
    ScenarioSetting s =
        row({"limit_batches", "limit_batches", "--limit-batches", kSampler, "Limit batches"},
            SettingKind::Text,
            "Lightning limit_val_batches: an int k (k batches per rank) or a "
            "float fraction (1.0 = all); 1 != 1.0");
    s.gui_placeholder = "all";
    s.json_number_as_text = true;
    s.get_text = [](const Scenario& x) { return x.loader.limit.to_string(); };
    s.set_text = [](Scenario& x, const std::string& v) { x.loader.limit = BatchLimit::parse(v); };
    t.push_back(named_at_default(s));
  }
  {
    ScenarioSetting s = row({"rank_seeds", "rank_seeds", "--rank-seeds", kSampler, "Rank seeds"},
                            SettingKind::IntList,
                            "One sampler seed per rank, comma separated (models ranks whose "
                            "seeds diverge)");
    s.gui_placeholder = "same seed on every rank";
    s.get_ints = [](const Scenario& x) { return x.sampler.rank_seeds; };
    s.set_ints = [](Scenario& x, std::vector<int64_t> v) { x.sampler.rank_seeds = std::move(v); };
    t.push_back(s);
  }
  t.push_back(
      bool_row({"sanity_leak", "sanity_leak", "--sanity-leak", kSampler, "sanity batches leak"}, "",
               &Scenario::loader, &LC::sanity_leak,
               "Count the sanity-check batches into the metric (state not reset before epoch 0)"));
  t.push_back(named_at_default(
      int_row({"sanity_steps", "sanity_steps", "--sanity-steps", kSampler, "Sanity steps"}, 0,
              kIntMax, &Scenario::loader, &LC::sanity_steps, "num_sanity_val_steps (default 2)")));
  t.push_back(bool_row(
      {"split_batches", "split_batches", "--split-batches", kSampler, "split batches (Accelerate)"},
      "", &Scenario::sampler, &SC::split_batches,
      "Accelerate split_batches=True: each batch of B is split into W slices of "
      "B / W"));
  t.push_back(bool_row({"even_batches", "even_batches", "", kSampler, "even batches (Accelerate)"},
                       "--no-even-batches", &Scenario::sampler, &SC::even_batches,
                       "Accelerate even_batches (on by default): the last round is completed "
                       "with samples from the start, so every rank runs the same steps"));
  t.push_back(choice_row<AccelerateInput>(
      {"accelerate_input", "accelerate_input", "--accelerate-input", kSampler, "Prepared loader"},
      [](auto& x) -> auto& { return x.sampler.accelerate_input; }, parse_accelerate_input,
      {{"loader", "its own sampler, sharded once by Accelerate (default)"},
       {"distributed-sampler",
        "it already had a DistributedSampler (a common mistake): Accelerate shards each rank's "
        "shard again, so each rank keeps 1/W of it; shuffle, seed and the sampler's drop_last "
        "are then the DistributedSampler's"},
       {"iterable-dispatch",
        "an IterableDataset's DataLoaderDispatcher (dispatch_batches, the default for one): "
        "rank 0 reads W batches a step and deals each rank a slice; a last round that does "
        "not fill W batches is split evenly, completed from the stream's first items"}},
      "What the loader given to accelerator.prepare() samples with"));
  t.push_back(choice_row<AccelerateShuffle>(
      {"accelerate_shuffle", "accelerate_shuffle", "--accelerate-shuffle", kSampler,
       "Accelerate shuffle"},
      [](auto& x) -> auto& { return x.sampler.accelerate_shuffle; }, parse_accelerate_shuffle,
      {{"global-rng",
        "Accelerate's default (use_seedable_sampler=False): prepare() seeds the sampler's "
        "generator from the global RNG; the seed is torch.manual_seed's, exact only when nothing "
        "drew from the RNG before prepare() (a recorded run is exact)"},
       {"seedable",
        "use_seedable_sampler=True (the HF Trainer's default): randperm(seed + epoch)"}},
      "How a shuffled Accelerate loader (--shuffle) draws its order"));
}

// The sampler Lightning wraps: one JSON object, four settings.
void add_inner_sampler_settings(std::vector<ScenarioSetting>& t) {
  const auto weighted = [](const Scenario& x) {
    return x.sampler.inner.kind == InnerSampler::Kind::WeightedRandom;
  };
  ScenarioSetting inner = choice_row<InnerSampler::Kind>(
      {"inner_sampler", "inner_sampler.kind", "--inner-sampler", kSampler, "Inner sampler"},
      [](auto& x) -> auto& { return x.sampler.inner.kind; }, parse_inner_sampler_kind,
      {{"sequential", "SequentialSampler-like: 0, 1, ..., n-1"},
       {"weighted-random",
        "a WeightedRandomSampler with replacement (uniform weights unless --inner-weights), its "
        "generator seeded with the rank seed (or the seed)"},
       {"recorded", "a fixed list of dataset indices a custom sampler yielded (--inner-indices)"}},
      "The sampler Lightning wraps (--sampler lightning-wrapper)");
  inner.named_at_default = [](const Scenario& x) {
    return x.sampler.kind == SamplerKind::LightningWrapper;
  };
  t.push_back(inner);
  {
    ScenarioSetting s = row({"inner_weights", "inner_sampler.weights", "--inner-weights", "", ""},
                            SettingKind::NumberList,
                            "weighted-random weights: npy:PATH, csv:PATH or w0,w1,... (default "
                            "uniform)");
    s.written = weighted;
    s.get_numbers = [](const Scenario& x) { return x.sampler.inner.weights; };
    s.set_numbers = [](Scenario& x, std::vector<double> v) {
      x.sampler.inner.weights = std::move(v);
    };
    t.push_back(s);
  }
  {
    ScenarioSetting s =
        row({"inner_num_samples", "inner_sampler.num_samples", "--inner-num-samples", "", ""},
            SettingKind::Int, "weighted-random num_samples (default 0: the number of weights)");
    s.min = 0;
    s.max = kInt64Max;
    s.get_int = [](const Scenario& x) { return x.sampler.inner.num_samples; };
    s.set_int = [](Scenario& x, int64_t v) { x.sampler.inner.num_samples = v; };
    s.written = weighted;
    t.push_back(s);
  }
  {
    ScenarioSetting s =
        row({"inner_indices", "inner_sampler.indices", "--inner-indices", "", ""},
            SettingKind::IntList, "recorded index list: npy:PATH, csv:PATH or i0,i1,...");
    s.written = [](const Scenario& x) {
      return x.sampler.inner.kind == InnerSampler::Kind::Recorded;
    };
    s.get_ints = [](const Scenario& x) { return x.sampler.inner.indices; };
    s.set_ints = [](Scenario& x, std::vector<int64_t> v) {
      x.sampler.inner.indices = std::move(v);
    };
    t.push_back(s);
  }
}

// Lightning's validation loop.
void add_loop_settings(std::vector<ScenarioSetting>& t) {
  t.push_back(int_row({"validations_per_epoch", "validations_per_epoch", "--validations-per-epoch",
                       kSampler, "Validations/epoch"},
                      1, kMaxValidationsPerEpoch, &Scenario::validations_per_epoch,
                      "Lightning val_check_interval: validations in the epoch (each one "
                      "reported; the GUI shows the last; with a batch limit they all see the "
                      "same subset)"));
}

// The metric: how the ranks sync, its counters, the torch semantics, ignore_index.
void add_metric_settings(std::vector<ScenarioSetting>& t) {
  std::vector<SettingChoice> syncs;
  for (SyncStrategy v : kSyncStrategies) syncs.push_back({to_string(v), sync_help(v)});
  t.push_back(named_at_default(choice_row<SyncStrategy>(
      {"sync", "sync", "--sync", kMetric, "Sync"}, [](auto& x) -> auto& { return x.sync; },
      parse_sync_strategy, syncs, "How per-rank matrices become the reported one")));
  t.push_back(bool_row({"pad_across_processes", "pad_across_processes", "--pad-across-processes",
                        kMetric, "pad across processes (Accelerate)"},
                       "", &Scenario::pad_across_processes,
                       "accelerator.pad_across_processes(t, dim=0) before each gather "
                       "(Accelerate's sampler): unequal last batches (even_batches=False) are "
                       "padded to the longest so the gather runs; gather_for_metrics drops the "
                       "padded rows"));
  t.push_back(choice_row<CounterDtype>(
      {"counter_dtype", "counter_dtype", "--counter-dtype", kMetric, "Counter dtype"},
      [](auto& x) -> auto& { return x.dtype; }, parse_counter_dtype,
      {{"int64", "torchmetrics' state (precision='16-mixed' does not change it)"},
       {"float32", "a hand-made float buffer: exact up to 2^24"},
       {"float16",
        "a hand-made half buffer: exact up to 2048, then each addition rounds up or down"},
       {"bfloat16",
        "a hand-made bfloat16 buffer: exact up to 256, then each addition rounds up or down"}},
      "Counter dtype of the metric state"));
  {
    // Written only when the run logs something: scenarios that log nothing keep their JSON.
    ScenarioSetting s = choice_row<LoggedAccuracy>(
        {"logged_accuracy", "logged_accuracy", "--logged-accuracy", kMetric, "Logged accuracy"},
        [](auto& x) -> auto& { return x.logged_accuracy; }, parse_logged_accuracy,
        {{"none", "the run logs no accuracy of its own (the matrix only)"},
         {"rank-mean",
          "self.log(\"val_acc\", acc, sync_dist=True) of each rank's epoch accuracy (of a "
          "dense task its mIoU, token accuracy or macro F1): the ranks' mean, equal weights"},
         {"per-batch",
          "self.log(\"val_acc\", batch_acc, sync_dist=True, batch_size=len(y)) in "
          "validation_step: the ranks' weighted sums over their truncated mean batch count "
          "(classification only)"},
         {"both", "rank-mean and per-batch, under two names"}},
        "What the run logs of the accuracy with Lightning's self.log(..., sync_dist=True), "
        "checked against the accuracy of the expected matrix");
    s.written = [](const Scenario& x) { return x.logged_accuracy != LoggedAccuracy::None; };
    t.push_back(s);
  }
  {
    ScenarioSetting s =
        row({"torch_version", "torch_version", "--torch-version", kMetric, "Torch version"},
            SettingKind::Text,
            "PyTorch semantics to imitate: 1.13, 2.7, 2.15.0+cu130... (default " +
                TorchVersion{}.to_string() +
                ", a current torch from pip; they differ only for randperm at "
                "n >= 214,748,364, where torch >= 2.7 shuffles differently)");
    s.suggestions = {"1.13", "2.0", "2.7", TorchVersion{}.to_string()};
    s.get_text = [](const Scenario& x) { return x.sampler.torch.to_string(); };
    s.set_text = [](Scenario& x, const std::string& v) {
      x.sampler.torch = TorchVersion::parse(v);
    };
    t.push_back(named_at_default(s));
  }
  ScenarioSetting ignore =
      int_row({"ignore_index", "ignore_index", "--ignore-index", kMetric, "Ignore index"}, -1,
              kMaxClasses - 1, &Scenario::ignore_index, "torchmetrics ignore_index (-1: none)");
  ignore.gui_min_text = "none";
  t.push_back(ignore);
}

std::vector<ScenarioSetting> make_table() {
  std::vector<ScenarioSetting> t;
  add_data_settings(t);
  add_sampler_settings(t);
  add_inner_sampler_settings(t);
  add_loop_settings(t);
  add_metric_settings(t);
  return t;
}

std::string join_choices(const ScenarioSetting& s, const char* separator) {
  std::string out;
  for (const SettingChoice& c : s.choices) out += (out.empty() ? "" : separator) + c.name;
  return out;
}

bool has_type_range(const ScenarioSetting& s) {
  return (s.min == kInt64Min && s.max == kInt64Max) || (s.min == 0 && s.max == kInt64Max) ||
         (s.min == 0 && s.max == kIntMax);
}

template <class T>
std::vector<T> parse_list(const std::string& spec, const std::string& flag) {
  std::vector<T> out;
  if (spec.rfind("npy:", 0) == 0) {
    if constexpr (std::is_same_v<T, double>)
      return read_npy_doubles(spec.substr(4));
    else
      return read_npy_integers(spec.substr(4));
  }
  if (spec.rfind("csv:", 0) == 0) {
    const CsvTable table = read_csv(spec.substr(4));
    for (const auto& r : table.rows) {
      if (r.empty()) continue;
      try {
        out.push_back(static_cast<T>(std::stod(r.front())));
      } catch (const std::exception&) {
        throw InputError(spec + ": '" + r.front() + "' is not a number");
      }
    }
    return out;
  }
  size_t begin = 0;
  while (begin <= spec.size()) {
    const size_t end = std::min(spec.find(',', begin), spec.size());
    std::string item = spec.substr(begin, end - begin);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    begin = end + 1;
    if (item.empty()) continue;
    size_t used = 0;
    try {
      if constexpr (std::is_same_v<T, double>)
        out.push_back(std::stod(item, &used));
      else
        out.push_back(std::stoll(item, &used));
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size())
      throw InputError(flag + ": '" + item +
                       "' is not a number (give npy:PATH, csv:PATH or a comma-separated list)");
  }
  return out;
}

// The text as one shell word: as it is when the shell keeps it whole, else single-quoted.
std::string shell_word(const std::string& text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("%+,-./:=@_").find(c) != std::string_view::npos;
  });
  if (plain) return text;
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

template <class T>
std::string join_list(const std::vector<T>& values) {
  std::string out;
  for (const T& v : values) {
    if (!out.empty()) out += ",";
    if constexpr (std::is_same_v<T, double>) {
      nlohmann::json j = v;  // shortest text that reads back as the same double
      out += j.dump();
    } else {
      out += std::to_string(v);
    }
  }
  return out;
}

}  // namespace

std::string for_origins(const std::string& message,
                        const std::function<SettingOrigin(const ScenarioSetting&)>& origin_of) {
  using Kind = SettingOrigin::Kind;
  std::string out = message;
  std::string file;  // the file of the first file setting named
  const auto isFlagChar = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-';
  };
  for (const ScenarioSetting& s : scenario_settings()) {
    const SettingOrigin origin = origin_of(s);
    if (origin.kind == Kind::Flag || (origin.kind == Kind::Field && s.gui_label.empty())) continue;
    for (const std::string& flag : {s.cli_flag, s.cli_off_flag}) {
      if (flag.empty()) continue;
      for (size_t at = out.find(flag); at != std::string::npos; at = out.find(flag, at)) {
        const size_t end = at + flag.size();
        // Part of a longer word or flag (--seed in --seeds): not this flag.
        if ((end < out.size() && isFlagChar(out[end])) || (at > 0 && isFlagChar(out[at - 1]))) {
          at = end;
          continue;
        }
        std::string name;
        if (origin.kind == Kind::Field) {
          const bool leads = at == 0 && end < out.size() && out[end] == ':';
          name = leads ? s.gui_label : "\u201c" + s.gui_label + "\u201d";
        } else {
          if (file.empty()) file = origin.file;
          name = at == 0 ? s.json_name : "'" + s.json_name + "'";
        }
        out.replace(at, flag.size(), name);
        at += name.size();
      }
    }
  }
  if (!file.empty() && out.rfind(file + ": ", 0) != 0) out = file + ": " + out;
  return out;
}

std::string for_origin(const std::string& message, const SettingOrigin& origin) {
  return for_origins(message, [&](const ScenarioSetting&) { return origin; });
}

std::string with_field_labels(const std::string& message) {
  return for_origin(message, {SettingOrigin::Kind::Field, {}});
}

std::string ScenarioSetting::name() const {
  if (!cli_flag.empty()) return cli_flag;
  if (!cli_off_flag.empty()) return cli_off_flag;
  return "'" + json_name + "'";
}

const std::vector<ScenarioSetting>& scenario_settings() {
  static const std::vector<ScenarioSetting> table = make_table();
  return table;
}

const ScenarioSetting& scenario_setting(const std::string& key) {
  for (const ScenarioSetting& s : scenario_settings())
    if (s.key == key) return s;
  throw std::out_of_range("no scenario setting '" + key + "'");
}

std::string setting_help(const ScenarioSetting& s) {
  std::string out = s.help;
  if (s.kind == SettingKind::Int && !has_type_range(s))
    out += " (" + std::to_string(s.min) + " to " + std::to_string(s.max) + ")";
  if (s.kind == SettingKind::Choice) {
    out += ": " + join_choices(s, " | ") + ".";
    for (const SettingChoice& c : s.choices) out += "\n" + c.name + ": " + c.help;
  }
  return out;
}

std::string setting_text(const ScenarioSetting& s, const Scenario& scenario) {
  switch (s.kind) {
    case SettingKind::Int:
      return std::to_string(s.get_int(scenario));
    case SettingKind::Bool:
      return s.get_bool(scenario) ? "true" : "false";
    case SettingKind::Choice:
    case SettingKind::Text:
      return s.get_text(scenario);
    case SettingKind::IntList:
      return join_list(s.get_ints(scenario));
    case SettingKind::NumberList:
      return join_list(s.get_numbers(scenario));
  }
  return {};
}

std::string scenario_flags(const Scenario& s) {
  static const Scenario defaults;
  std::string out;
  const auto add = [&out](const std::string& word) { out += (out.empty() ? "" : " ") + word; };
  for (const ScenarioSetting& row : scenario_settings()) {
    if ((row.cli_flag.empty() && row.cli_off_flag.empty()) || (row.written && !row.written(s)))
      continue;
    const std::string text = setting_text(row, s);
    const bool named = row.named_at_default && row.named_at_default(s);
    if (!named && text == setting_text(row, defaults)) continue;
    if (row.kind == SettingKind::Bool) {
      const std::string& flag = row.get_bool(s) ? row.cli_flag : row.cli_off_flag;
      if (!flag.empty()) add(flag);
    } else if (!text.empty()) {
      add(row.cli_flag);
      add(shell_word(text));
    }
  }
  return out;
}

void set_setting_text(const ScenarioSetting& s, Scenario& scenario, const std::string& text) {
  switch (s.kind) {
    case SettingKind::Int: {
      size_t used = 0;
      int64_t v = 0;
      try {
        v = std::stoll(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != text.size())
        throw InputError(s.name() + ": '" + text + "' is not an integer");
      if (v < s.min || v > s.max) throw range_error(s.name(), v, s.min, s.max);
      s.set_int(scenario, v);
      return;
    }
    case SettingKind::Bool:
      if (text != "true" && text != "false")
        throw InputError(s.name() + ": '" + text + "' is not true or false");
      s.set_bool(scenario, text == "true");
      return;
    case SettingKind::Choice:
    case SettingKind::Text:
      s.set_text(scenario, text);
      return;
    case SettingKind::IntList:
      s.set_ints(scenario, parse_integer_list(text, s.name()));
      return;
    case SettingKind::NumberList:
      s.set_numbers(scenario, parse_number_list(text, s.name()));
      return;
  }
}

std::vector<double> parse_number_list(const std::string& spec, const std::string& flag) {
  return parse_list<double>(spec, flag);
}

std::vector<int64_t> parse_integer_list(const std::string& spec, const std::string& flag) {
  return parse_list<int64_t>(spec, flag);
}

void validate_ranges(const Scenario& s) {
  for (const ScenarioSetting& row : scenario_settings()) {
    if (row.kind != SettingKind::Int) continue;
    const int64_t v = row.get_int(s);
    if (v < row.min || v > row.max) throw range_error(row.name(), v, row.min, row.max);
  }
}

void validate(const Scenario& s) {
  validate_ranges(s);
  const SamplerConfig& c = s.sampler;
  if (!c.rank_seeds.empty() && static_cast<int64_t>(c.rank_seeds.size()) != c.world_size) {
    throw InputError("--rank-seeds: " + std::to_string(c.rank_seeds.size()) +
                     " seeds given for world size " + std::to_string(c.world_size));
  }
  if (c.kind == SamplerKind::Accelerate && c.split_batches &&
      s.loader.batch_size % c.world_size != 0) {
    throw InputError("--split-batches: the batch size (" + std::to_string(s.loader.batch_size) +
                     ") must be a round multiple of the number of processes (" +
                     std::to_string(c.world_size) + "), as Accelerate requires");
  }
}

}  // namespace shardlens
