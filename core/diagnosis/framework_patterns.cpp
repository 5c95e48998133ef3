#include "core/diagnosis/framework_patterns.h"

#include <algorithm>
#include <unordered_map>

namespace shardlens {

namespace {

bool has(const Diagnosis& d, Pattern p) {
  return std::any_of(d.findings.begin(), d.findings.end(),
                     [&](const Finding& f) { return f.pattern == p; });
}

// Turns a generic finding into the framework's own: the pattern changes, its samples,
// classes and facts stay (the words are the new pattern's, made from the same facts).
void refine(Diagnosis& d, Pattern from, Pattern to, const std::optional<ListFacts>& lists = {}) {
  for (Finding& f : d.findings) {
    if (f.pattern != from) continue;
    f.pattern = to;
    if (lists) f.facts.lists = lists;
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
  ListFacts evidence;  // the record that tells
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
      out.evidence.evidence = ListEvidence::PaddingDisagrees;
      out.evidence.padding_rank = int(p % w);
      out.evidence.padding_sample = at(p).index;
      out.evidence.position = p % m;
      out.evidence.other_rank = int((p % m) % w);
      out.evidence.other_sample = head.index;
      return out;
    }
    ++checked;
  }
  if (checked > 0) {
    out.shared = true;
    out.evidence.evidence = ListEvidence::PaddingAgrees;
    out.evidence.padding_checked = checked;
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
    list.evidence.evidence =
        *list.shared ? ListEvidence::SimulatedSame : ListEvidence::SimulatedApart;
  } else if (!list.shared && in.seed_everything_seed && *in.seed_everything_seed != 0) {
    // A non-zero seed is PL_GLOBAL_SEED: seed_everything ran on every rank, seeding the
    // global generator an unseeded sampler draws from alike.
    list.shared = true;
    list.evidence.evidence = ListEvidence::SeedEverything;
    list.evidence.seed = *in.seed_everything_seed;
  }
  if (!list.shared.value_or(false)) {
    if (!has(d, Pattern::RankOverlap)) return;
    refine(d, Pattern::RankOverlap, Pattern::WrapperOverlap,
           list.shared ? list.evidence : ListFacts{});
    return;
  }
  if (list.repeated == 0) return;  // a list without repeats: nothing drawn with replacement
  // One shared list: its repeats across ranks and its unordered draws are the sampler's own.
  // Samples it never drew are too, once every rank evaluated its whole share (the padding
  // shows it); otherwise a batch limit may also have cut, and its finding stays.
  auto folded = [&](Pattern p) {
    return p == Pattern::RankOverlap || p == Pattern::ShuffledEval ||
           (list.whole && (p == Pattern::BatchLimitSubset || p == Pattern::NeverEvaluated ||
                           p == Pattern::SamplerDropLast || p == Pattern::LoaderDropLast));
  };
  Finding g(Pattern::SamplerWithReplacement);
  g.facts.world_size = w;
  g.facts.dataset_size = in.dataset_size;
  g.facts.missing = d.missing_samples;
  g.facts.lists = list.evidence;
  g.facts.draw = DrawFacts{list.draws, list.distinct, list.repeated, list.whole};
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

void classify_framework_patterns(const DiagnosisInput& in, Diagnosis& out) {
  const int w = in.per_rank ? static_cast<int>(in.per_rank->size()) : 1;
  if (has(out, Pattern::PaddingDuplicates)) {
    int64_t padding = 0;
    for (const Finding& f : out.findings)
      if (f.pattern == Pattern::PaddingDuplicates) padding = std::max(padding, f.sample_count);
    const bool accelerate = in.sampler ? *in.sampler == SamplerKind::Accelerate : padding >= w;
    if (accelerate) {
      refine(out, Pattern::PaddingDuplicates, Pattern::PlainGatherPadding);
      drop_within_rank_sanity_leak(in, out);
    }
  }
  // A DistributedSampler sharded again leaves most samples unseen with no batch limit: the
  // missing samples are the double sharding's (gather_for_metrics' trim, if any, stays).
  if (in.sampler && *in.sampler == SamplerKind::Accelerate && in.accelerate_input &&
      *in.accelerate_input == AccelerateInput::DistributedSampler) {
    refine(out, Pattern::BatchLimitSubset, Pattern::AccelerateDoubleShard);
    refine(out, Pattern::NeverEvaluated, Pattern::AccelerateDoubleShard);
  }
  if (in.sampler && *in.sampler == SamplerKind::LightningWrapper) {
    drop_within_rank_sanity_leak(in, out);
    explain_wrapper(in, out);
  }
}

Diagnosis diagnose_step_hazard(const RecordSource& records,
                               const std::vector<int64_t>& class_counts,
                               const Coverage& times_evaluated, const StepHazard& hazard) {
  const bool hangs = hazard.pattern == Pattern::UnevenSteps;
  Diagnosis d = diagnose_incomplete(records, class_counts, times_evaluated,
                                    hangs ? "uneven steps" : "unequal last batches");
  d.findings.clear();
  Finding f(hazard.pattern);
  f.facts.rank_steps = hazard.steps;
  f.facts.rank_samples = hazard.samples;
  if (!hangs) f.facts.rank_last_batch = hazard.last_batch;
  f.facts.sync = hazard.sync;
  d.findings.push_back(std::move(f));
  return d;
}

}  // namespace shardlens
