#include "core/diagnosis/framework_patterns.h"

#include <algorithm>
#include <unordered_map>

namespace shardlens {

namespace {

bool has(const Diagnosis& d, Pattern p) {
  return std::any_of(d.findings.begin(), d.findings.end(),
                     [&](const Finding& f) { return f.pattern == p; });
}

// Replaces a generic finding by the framework's own, keeping its samples and classes and the
// run's numbers (the sentence before the generic explanation).
void refine(Diagnosis& d, Pattern from, Pattern to, const std::string& specifics) {
  for (Finding& f : d.findings) {
    if (f.pattern != from) continue;
    const std::string generic = describe_pattern(from).explanation;
    std::string numbers = f.explanation;
    if (numbers.size() >= generic.size() &&
        numbers.compare(numbers.size() - generic.size(), generic.size(), generic) == 0) {
      numbers.resize(numbers.size() - generic.size());
    }
    Finding g = describe_pattern(to);
    g.explanation = numbers + specifics + (specifics.empty() ? "" : " ") + g.explanation;
    g.classes = f.classes;
    g.samples = f.samples;
    g.sample_count = f.sample_count;
    f = std::move(g);
  }
}

bool any_sanity_record(const RecordSource& records) {
  for (int r = 0; r < records.world_size(); ++r) {
    const bool clean = walk_records(
        records, r, [](const Record& rec, int64_t) { return (rec.flags & kSanity) == 0; });
    if (!clean) return true;
  }
  return false;
}

// A rank that evaluates a sample twice without a sanity check: Accelerate's cycled padding
// can land on the rank that had the sample, and a sampler with replacement draws it twice.
// Neither is a sanity leak.
void drop_within_rank_sanity_leak(const DiagnosisInput& in, Diagnosis& d) {
  if (!has(d, Pattern::SanityLeak) || !in.records || any_sanity_record(*in.records)) return;
  std::erase_if(d.findings, [](const Finding& f) { return f.pattern == Pattern::SanityLeak; });
}

// The list Lightning's wrapper dealt out, as the records show it: rank r's k-th record is
// position r + kW of the list its rank drew (sanity records aside), padding positions last.
struct WrapperList {
  int64_t draws = 0;                      // positions of the list evaluated, padding excluded
  int64_t distinct = 0;                   // distinct samples among them
  int64_t repeated = 0;                   // samples drawn more than once
  std::vector<int64_t> repeated_samples;  // the first kMaxListedSamples of them, in order
  // Whether the padding shows one list shared by every rank: a padding position p >= m (m:
  // the list's length) repeats position p mod m, which another rank evaluated. Known only
  // when every rank reached its padding.
  std::optional<bool> shared;
  std::string why;     // the record that tells, in words
  bool whole = false;  // every rank reached its padding: the whole list was evaluated
};

WrapperList read_wrapper_list(const RecordSource& records) {
  WrapperList out;
  const int w = records.world_size();
  std::vector<std::vector<Record>> per_rank(static_cast<size_t>(w));
  for (int r = 0; r < w; ++r)
    for_each_record(records, r, [&](const Record& rec) {
      if ((rec.flags & kSanity) == 0) per_rank[size_t(r)].push_back(rec);
    });
  std::unordered_map<int64_t, int64_t> times;
  for (const auto& rank : per_rank)
    for (const Record& rec : rank)
      if ((rec.flags & kPadding) == 0) ++times[rec.index];
  for (const auto& [index, n] : times) {
    out.draws += n;
    out.repeated += n > 1;
    if (n > 1) out.repeated_samples.push_back(index);
  }
  std::sort(out.repeated_samples.begin(), out.repeated_samples.end());
  if (out.repeated_samples.size() > kMaxListedSamples)
    out.repeated_samples.resize(kMaxListedSamples);
  out.distinct = static_cast<int64_t>(times.size());
  const size_t size = per_rank.empty() ? 0 : per_rank.front().size();
  for (const auto& rank : per_rank)
    if (rank.size() != size) return out;  // a cut shorter than the shares: no padding seen
  const auto total = static_cast<int64_t>(size) * w;
  const int64_t m = out.draws;
  auto at = [&](int64_t p) -> const Record& { return per_rank[size_t(p % w)][size_t(p / w)]; };
  for (int64_t p = 0; p < total; ++p)
    if (((at(p).flags & kPadding) != 0) != (p >= m)) return out;  // not the wrapper's layout
  out.whole = m > 0 && total > m;
  int64_t checked = 0;
  for (int64_t p = m; p < total && m > 0; ++p) {
    if ((p % m) % w == p % w) continue;  // the rank's own position: no evidence
    const Record& head = at(p % m);
    if (head.index != at(p).index) {
      out.shared = false;
      out.why = "Rank " + std::to_string(p % w) + "'s padding record repeats sample " +
                std::to_string(at(p).index) + " as position " + std::to_string(p % m) +
                " of its list, but rank " + std::to_string((p % m) % w) + " evaluated sample " +
                std::to_string(head.index) + " there: the ranks listed different draws.";
      return out;
    }
    ++checked;
  }
  if (checked > 0) {
    out.shared = true;
    out.why = checked == 1
                  ? "its padding record repeats the sample another rank evaluated at its "
                    "position of the list"
                  : "each of the " + std::to_string(checked) +
                        " padding records repeats the sample another rank evaluated at its "
                        "position of the list";
  }
  return out;
}

// Lightning's wrapper: duplicates across ranks are the ranks' own draws (wrapper-overlap) or,
// when every rank listed the same draw, the wrapped sampler's draws with replacement, which
// one process would count alike (sampler-with-replacement).
void explain_wrapper(const DiagnosisInput& in, Diagnosis& d) {
  if (!in.records || (d.duplicated_samples == 0 && d.missing_samples == 0)) return;
  const int w = in.records->world_size();
  WrapperList list = read_wrapper_list(*in.records);
  if (in.ranks_share_list) {
    list.shared = in.ranks_share_list;
    list.why = *list.shared ? "every simulated rank's order is the same list"
                            : "The simulated ranks' generators are seeded differently.";
  } else if (!list.shared && in.seed_everything_seed && *in.seed_everything_seed != 0) {
    // A non-zero seed is PL_GLOBAL_SEED: seed_everything ran on every rank, seeding the
    // global generator an unseeded sampler draws from alike.
    list.shared = true;
    list.why = "seed_everything(" + std::to_string(*in.seed_everything_seed) +
               ") was recorded, which seeds every rank's global generator alike; no padding "
               "record was evaluated to confirm it";
  }
  if (!list.shared.value_or(false)) {
    if (!has(d, Pattern::RankOverlap)) return;
    const std::string why = list.shared ? list.why
                                        : "No padding record or recorded seed_everything tells "
                                          "whether the ranks listed the same draw.";
    refine(d, Pattern::RankOverlap, Pattern::WrapperOverlap, why);
    return;
  }
  if (list.repeated == 0) return;  // a list without repeats: nothing drawn with replacement
  // One shared list: its repeats across ranks and its unordered draws are the sampler's own.
  // Samples it never drew are too, once every rank evaluated its whole share (the padding
  // shows it); otherwise a batch limit may also have cut, and its finding stays.
  auto folded = [&](Pattern p) {
    return p == Pattern::RankOverlap || p == Pattern::ShuffledEval ||
           (list.whole && (p == Pattern::BatchLimitSubset || p == Pattern::SamplerDropLast ||
                           p == Pattern::LoaderDropLast));
  };
  Finding g = describe_pattern(Pattern::SamplerWithReplacement);
  g.explanation = "All " + std::to_string(w) + " ranks took their positions of one list of " +
                  std::to_string(list.draws) + " draws (" + list.why + "): it holds " +
                  std::to_string(list.distinct) + " distinct samples, " +
                  std::to_string(list.repeated) + " of them drawn more than once, and " +
                  std::to_string(d.missing_samples) + " of the " + std::to_string(in.dataset_size) +
                  " dataset samples were never " + (list.whole ? "drawn." : "evaluated.") + " " +
                  g.explanation;
  std::vector<Finding> kept;
  size_t at = d.findings.size();
  for (Finding& f : d.findings) {
    if (!folded(f.pattern)) {
      kept.push_back(std::move(f));
      continue;
    }
    at = std::min(at, kept.size());
    g.classes.insert(g.classes.end(), f.classes.begin(), f.classes.end());
  }
  // The samples the draw holds more than once (padding copies aside).
  g.samples = list.repeated_samples;
  g.sample_count = list.repeated;
  std::sort(g.classes.begin(), g.classes.end());
  g.classes.erase(std::unique(g.classes.begin(), g.classes.end()), g.classes.end());
  kept.insert(kept.begin() + std::ptrdiff_t(std::min(at, kept.size())), std::move(g));
  d.findings = std::move(kept);
}

}  // namespace

Finding describe_framework_pattern(Finding f) {
  switch (f.pattern) {
    case Pattern::PlainGatherPadding:
      f.title = "Accelerate's cycled padding counted";
      f.explanation =
          "Accelerate's BatchSamplerShard (even_batches=True, the default) completes the last "
          "round of batches with samples from the start of the order, so every rank runs the "
          "same number of steps; a plain accelerator.gather (or an all-reduce of per-rank "
          "states) counts those copies, so the dataset size is rounded up to a multiple of "
          "batch_size x world_size (25,000 samples counted as 25,600 on 4 GPUs).";
      f.fixes = {{"Accelerate",
                  "Use accelerator.gather_for_metrics(...) instead of gather(...): it drops the "
                  "cycled samples of the last step."},
                 {"HF Trainer",
                  "Let the Trainer's own evaluation loop gather (it uses gather_for_metrics in "
                  "current transformers); a custom loop or compute_metrics must not gather "
                  "the predictions again with a plain gather."},
                 {"torchmetrics",
                  "A metric updated on every rank counts the cycled samples too: update it with "
                  "the gather_for_metrics output on one process, or make the dataset a multiple "
                  "of batch_size x world_size."}};
      break;
    case Pattern::UnevenSteps:
      f.title = "Ranks run different step counts: the gather hangs";
      f.explanation =
          "With even_batches=False, Accelerate deals the loader's batches round-robin without "
          "completing the last round, so some ranks run one step more (or a shorter last "
          "batch) than others. A collective called at every step (gather, gather_for_metrics) "
          "then waits for ranks that have finished: the real run hangs until its timeout, and "
          "no matrix is reported.";
      f.fixes = {{"Accelerate",
                  "Keep even_batches=True (the default) with gather_for_metrics, or wrap the "
                  "loop in accelerator.join_uneven_inputs([model], even_batches=...)."},
                 {"torchmetrics",
                  "Update a metric on each rank and sync once at compute() (one all_gather of "
                  "every rank's state, summed locally, which every rank reaches): uneven "
                  "shards are then counted exactly once."}};
      break;
    case Pattern::WrapperOverlap:
      f.title = "Lightning's sampler wrapper: every rank drew its own list";
      f.explanation =
          "Lightning wraps a custom sampler in DistributedSamplerWrapper: each rank calls "
          "list(sampler) itself and keeps positions rank, rank + W, ... of its own list. A "
          "random sampler (e.g. WeightedRandomSampler) whose generator is not seeded alike on "
          "every rank gives each rank a different list, so the shards overlap: some samples "
          "are counted twice, others never (a sampler drawing with replacement also repeats "
          "samples on "
          "one process: the reported counts are then those of a resampled set).";
      f.fixes = {{"Lightning",
                  "Give the sampler a generator seeded the same on every rank "
                  "(torch.Generator().manual_seed(seed)), or evaluate with the plain dataset "
                  "order (no custom sampler) so Lightning injects a DistributedSampler."},
                 {"PyTorch",
                  "Shard the index list yourself after drawing it once (rank 0 draws, broadcast "
                  "it), then take positions rank::world_size."}};
      break;
    case Pattern::SamplerWithReplacement:
      f.title = "The evaluation sampler draws with replacement";
      f.explanation =
          "The sampler of the evaluation loader (a WeightedRandomSampler, whose replacement=True "
          "is the default) draws samples with replacement: some come up several times and "
          "others never. That is the sampler's design, not a DDP fault: one process iterating "
          "it would count the same draws. The rows follow the draw, so the expected matrix over "
          "the dataset's class counts is not what this sampler evaluates.";
      f.fixes = {{"Lightning",
                  "To count every sample once, return the validation loader without the "
                  "weighted sampler (keep it for training): Lightning then injects a "
                  "DistributedSampler. To keep the weighted estimate, seed its generator alike "
                  "on every rank (seed_everything, or generator=torch.Generator()"
                  ".manual_seed(seed)) and read the matrix against the drawn list."},
                 {"PyTorch",
                  "WeightedRandomSampler(weights, num_samples, replacement=False) draws each "
                  "sample at most once; weight classes in the metric or the loss rather than "
                  "by resampling the evaluation set."}};
      break;
    case Pattern::RepeatedValidationSubset:
      f.title = "Every validation of the epoch saw the same subset";
      f.explanation =
          "With several validations per epoch (val_check_interval) and a batch limit under "
          "DDP, the DistributedSampler is seeded with seed + epoch, so every validation of one "
          "epoch evaluates the same limited subset (Lightning issue 17843); the samples outside "
          "it are never seen during the epoch.";
      f.fixes = {{"Lightning",
                  "Validate on the full set (limit_val_batches=1.0), or reshuffle per "
                  "validation with a sampler whose set_epoch you call with a validation "
                  "counter; one validation per epoch makes the limit's subset explicit."}};
      break;
    case Pattern::AccelerateDoubleShard:
      f.title = "Accelerate sharded a DistributedSampler's shard again";
      f.explanation =
          "The loader given to accelerator.prepare() already had a DistributedSampler. "
          "Accelerate wraps its batch sampler in BatchSamplerShard all the same (it makes no "
          "exception for it), so each rank keeps batches rank, rank + W, ... of its own "
          "shard: about 1/W of the dataset is evaluated in all (128 of 510 samples on 4 "
          "ranks with batches of 16), and gather_for_metrics, which trims the last step to "
          "len(dataset) % (batch_size x W), can drop real samples too.";
      f.fixes = {{"Accelerate",
                  "Give accelerator.prepare() the plain DataLoader (shuffle=... and no "
                  "sampler): Accelerate shards it once. Or keep the DistributedSampler and do "
                  "not prepare the evaluation loader (then gather with torch.distributed)."}};
      break;
    default:
      break;
  }
  return f;
}

void classify_framework_patterns(const DiagnosisInput& in, Diagnosis& out) {
  const int w = in.per_rank ? static_cast<int>(in.per_rank->size()) : 1;
  if (has(out, Pattern::PaddingDuplicates)) {
    int64_t padding = 0;
    for (const Finding& f : out.findings)
      if (f.pattern == Pattern::PaddingDuplicates) padding = std::max(padding, f.sample_count);
    const bool accelerate = in.sampler ? *in.sampler == SamplerKind::Accelerate : padding >= w;
    if (accelerate) {
      refine(out, Pattern::PaddingDuplicates, Pattern::PlainGatherPadding, "");
      drop_within_rank_sanity_leak(in, out);
    }
  }
  // A DistributedSampler sharded again leaves most samples unseen with no batch limit: the
  // missing samples are the double sharding's (gather_for_metrics' trim, if any, stays).
  if (in.sampler && *in.sampler == SamplerKind::Accelerate && in.accelerate_input &&
      *in.accelerate_input == AccelerateInput::DistributedSampler) {
    refine(out, Pattern::BatchLimitSubset, Pattern::AccelerateDoubleShard, "");
  }
  if (in.sampler && *in.sampler == SamplerKind::LightningWrapper) {
    drop_within_rank_sanity_leak(in, out);
    explain_wrapper(in, out);
  }
}

Diagnosis diagnose_uneven_steps(const RecordSource& records,
                                const std::vector<int64_t>& class_counts,
                                const std::vector<uint8_t>& times_evaluated,
                                const std::vector<int64_t>& steps,
                                const std::vector<int64_t>& sizes, const std::string& sync) {
  Diagnosis d = diagnose_incomplete(records, class_counts, times_evaluated, "uneven steps");
  d.findings.clear();
  std::string per_rank;
  for (size_t r = 0; r < steps.size(); ++r) {
    per_rank += (r ? ", " : "") + std::string("rank ") + std::to_string(r) + ": " +
                std::to_string(steps[r]) + " steps (" + std::to_string(sizes[r]) + " samples)";
  }
  Finding f = describe_pattern(Pattern::UnevenSteps);
  f.explanation = "The ranks run different steps (" + per_rank + "), so the per-step " + sync +
                  " would hang. " + f.explanation;
  d.findings.push_back(std::move(f));
  return d;
}

}  // namespace shardlens
