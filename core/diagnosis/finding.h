#pragma once
// A finding is a pattern of the catalogue and the facts measured from the evaluation at hand
// that show it. No words are stored: the catalogue turns a finding into its title,
// explanation and fixes (describe(), catalogue.h) only where it is shown, so every number a
// finding states is one of its facts, and refining a finding changes its pattern or facts,
// never its text.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/vocabulary/counter.h"

namespace shardlens {

// The catalogue of patterns (the pitfalls of docs/ARCHITECTURE.md, plus what no pattern explains).
// Adding one: its value here and its row (id, words, headline) in a catalogue_*.cpp; kept last:
// UnexplainedDifference.
enum class Pattern : uint8_t {
  PaddingDuplicates,         // padding-duplicates
  SamplerDropLast,           // sampler-drop-last
  LoaderDropLast,            // loader-drop-last
  BatchLimitSubset,          // batch-limit-subset
  ShuffledEval,              // shuffled-eval
  RankOverlap,               // rank-overlap
  NoDistributedSampler,      // no-distributed-sampler
  Unsynced,                  // unsynced
  DoubleSync,                // double-sync
  GatherZeroPad,             // gather-zero-pad
  CounterPrecision,          // counter-precision
  NormalizeThenSum,          // normalize-then-sum
  IgnoredTargets,            // ignored-targets
  SanityLeak,                // sanity-leak
  GatherForMetricsMismatch,  // gather-for-metrics-mismatch
  IncompleteRun,             // incomplete-run
  PlainGatherPadding,        // plain-gather-padding
  UnevenSteps,               // uneven-steps
  WrapperOverlap,            // wrapper-overlap
  RepeatedValidationSubset,  // repeated-validation-subset
  SamplerWithReplacement,    // sampler-with-replacement
  NothingRecorded,           // nothing-recorded
  AccelerateDoubleShard,     // accelerate-double-shard
  UnequalLastBatches,        // unequal-last-batches
  NeverEvaluated,            // never-evaluated: samples missing, the settings unknown
  LoggedAccuracy,            // logged-accuracy: a sync_dist-logged metric that is not it
  UnexplainedDifference,     // unexplained-difference
};

// One cell whose observed value differs from its exact count.
struct CellFact {
  int rank = -1;  // -1: the synced matrix
  int32_t row = 0, col = 0;
  double observed = 0, exact = 0;
};

// Cells of one matrix (the synced one, or the ranks' own) that a float counter rounded.
struct RoundedCells {
  bool synced = false;  // the synced matrix against the exact sum; else the ranks' matrices
  int64_t cells = 0, too_high = 0, too_low = 0;
  CellFact largest;  // the cell furthest from its exact count
  CounterDtype dtype = CounterDtype::Float32;
  double spacing = 0;  // distance between the dtype's integers at largest.observed
};

// How Lightning's wrapper's lists were told alike or apart.
enum class ListEvidence {
  None,              // neither padding nor a recorded seed tells
  SimulatedSame,     // a simulation's plan: every rank's order is the same list
  SimulatedApart,    // a simulation's plan: the ranks' generators are seeded differently
  SeedEverything,    // a recorded seed_everything seeds every rank's generator alike
  PaddingAgrees,     // padding records repeat what other ranks evaluated at their position
  PaddingDisagrees,  // a padding record repeats a sample another rank did not evaluate there
};

struct ListFacts {
  ListEvidence evidence = ListEvidence::None;
  int64_t seed = 0;             // SeedEverything
  int64_t padding_checked = 0;  // PaddingAgrees: padding records that confirm it
  int padding_rank = 0;         // PaddingDisagrees: rank `padding_rank`'s padding record
  int64_t padding_sample = 0;   //   repeats `padding_sample` as `position` of its list,
  int64_t position = 0;         //   where rank `other_rank` evaluated `other_sample`
  int other_rank = 0;
  int64_t other_sample = 0;
};

// One list of draws every rank took its positions of (a sampler with replacement).
struct DrawFacts {
  int64_t draws = 0, distinct = 0, repeated = 0;
  bool whole = false;  // every rank evaluated its whole share (the padding shows it)
};

// What was measured. Each pattern reads the facts its words need; absent ones are unknown
// (describe() then falls back to the catalogue's general text).
struct Facts {
  // The evaluation.
  std::optional<int64_t> dataset_size;
  std::optional<int> world_size;
  std::optional<int64_t> batch_size;
  // Coverage: what the records show.
  std::optional<int64_t> missing;           // samples never evaluated
  std::optional<int64_t> padding_records;   // records flagged as padding, counted
  std::optional<int64_t> tail_repeats;      // unflagged: a rank's last record repeats another's
  std::optional<int64_t> overlap;           // evaluations repeating another rank's sample
  std::optional<int64_t> limit_batches;     // a batch limit that would cut the same samples
  std::optional<int64_t> sanity_records;    // records flagged as the sanity check's
  std::optional<int64_t> repeated_prefix;   // unflagged: samples a rank evaluated again at once
  std::optional<int64_t> samples_per_rank;  // every rank evaluated the same this many
  // The samples never evaluated are the dataset's last indices [n - missing, n): where an
  // unshuffled sampler deals them, each rank's stop before the end of its share leaves them.
  std::optional<bool> missing_at_end;
  // Whether the settings say a batch limit was in force (a simulation's scenario, the limit
  // a recorder saw); unknown for dumps imported without settings.
  std::optional<bool> batch_limited;
  // Whether the settings say the loader dropped its last incomplete batch; unknown likewise.
  std::optional<bool> loader_drop_last;
  // Whether the shuffled order changes from epoch to epoch is known (a simulation's sampler
  // seeds it with seed + epoch); one imported evaluation shows one order only.
  std::optional<bool> reshuffled_each_epoch;
  // Reduction: how the reported matrix relates to the ranks' own.
  std::optional<double> reported_total;
  std::optional<double> rank_sum_total;
  std::optional<int> reporting_rank;    // the first rank that reported a matrix ...
  std::vector<int> disagreeing_ranks;   // ... and those that reported another
  std::optional<int> only_rank;         // the reported matrix is this rank's own
  std::optional<int> left_out_rank;     // the sum of every rank but this one
  std::optional<int> added_twice_rank;  // the sum with this rank's counts added again
  std::optional<double> zero_pairs;     // extra (0, 0) pairs of a zero-padded gather
  std::optional<double> trimmed;        // records gather_for_metrics trimmed ...
  std::optional<int64_t> padding_kept;  // ... and padding records it kept
  std::vector<RoundedCells> rounded;    // counter precision, ranks' matrices first
  std::optional<int64_t> unexplained_cells;
  std::optional<CellFact> first_unexplained;
  // Counting.
  std::optional<int64_t> ignored_classes;  // evaluated but absent from the matrix
  std::optional<int> ignore_index;
  std::optional<int64_t> invalid_records;  // index, target or prediction out of range
  // Runs and frameworks.
  std::optional<std::string> stopped_by;  // what stopped an incomplete run before its sync
  std::vector<int64_t> rank_steps;        // uneven steps: each rank's steps ...
  std::vector<int64_t> rank_samples;      // ... and samples
  std::vector<int64_t> rank_last_batch;   // unequal last batches: each rank's last batch
  std::optional<std::string> sync;        // the per-step collective
  std::optional<int64_t> validations;     // repeated validations of one epoch
  std::optional<int64_t> epoch;
  std::optional<int64_t> distinct_evaluated;
  // A logged metric (self.log with sync_dist) against the expected matrix's value of it: the
  // metric's name ("accuracy", "mIoU", ...), both values, and the ranks' lowest and highest own
  // values where each rank's was logged.
  std::optional<std::string> logged_metric;
  std::optional<double> logged_value;
  std::optional<double> true_value;
  std::optional<std::pair<double, double>> rank_value_range;
  std::optional<bool> logged_per_batch;  // logged per batch; else each rank's epoch value
  std::optional<ListFacts> lists;        // Lightning's wrapper: were the ranks' lists one?
  std::optional<DrawFacts> draw;         // the one list drawn with replacement
};

struct Finding {
  Finding() = default;
  explicit Finding(Pattern p, Facts f = {}) : pattern(p), facts(std::move(f)) {}

  Pattern pattern = Pattern::UnexplainedDifference;
  Facts facts;
  std::vector<int32_t> classes;  // affected classes
  std::vector<int64_t> samples;  // affected dataset indices (at most kMaxListedSamples)
  int64_t sample_count = 0;      // how many affected in all
};

}  // namespace shardlens
