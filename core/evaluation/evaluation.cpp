#include "core/evaluation/evaluation.h"

#include "core/evaluation/caption.h"

#include <algorithm>
#include <future>
#include <tuple>
#include <utility>

#include "core/evaluation/counts_reuse.h"

namespace shardlens {
namespace {

// The whole dataset's matrix and the distinct evaluated samples' matrix in one pass over
// the keys; when every sample was evaluated they are the same.
void bincount_inputs(const DatasetInputs& in, const Coverage& times, int64_t never,
                     std::optional<Matrix>& whole, Matrix& distinct) {
  const int32_t c = in.classes();
  if (in.cells) {  // samples of many cells: each sample's row, once
    const bool keep_whole = whole.has_value();
    if (!keep_whole) whole.emplace(c);
    distinct = Matrix(c);
    for (int64_t i = 0; i < in.size(); ++i) {
      if (!keep_whole) count_sample_cells(*whole, *in.cells, i, -1);
      if (times[size_t(i)] > 0) count_sample_cells(distinct, *in.cells, i, -1);
    }
    return;
  }
  const uint32_t* keys = in.unsigned_keys();
  const size_t n = in.keys.size();
  std::vector<uint32_t> all(whole ? 0 : size_t(c) * size_t(c), 0);
  std::vector<uint32_t> seen(never > 0 ? size_t(c) * size_t(c) : 0, 0);
  if (!whole && never > 0) {
    for (size_t i = 0; i < n; ++i) {
      ++all[keys[i]];
      seen[keys[i]] += times[i] > 0;
    }
  } else if (!whole) {
    for (size_t i = 0; i < n; ++i) ++all[keys[i]];
  } else if (never > 0) {
    for (size_t i = 0; i < n; ++i) seen[keys[i]] += times[i] > 0;
  }
  if (!whole) {
    whole.emplace(c);
    std::copy(all.begin(), all.end(), whole->cells.begin());
  }
  if (never == 0 && !all.empty()) {
    distinct = *whole;
  } else if (never == 0) {
    // A stored expected matrix is kept as it is; the distinct samples are all of them.
    distinct = Matrix(c);
    for (size_t i = 0; i < n; ++i) distinct.cells[keys[i]] += 1;
  } else {
    distinct = Matrix(c);
    std::copy(seen.begin(), seen.end(), distinct.cells.begin());
  }
}

// A per-rank matrix's total, in eight running sums: its cells are whole counts (in every
// counter dtype) whose total is below 2^53, or a float counter's +inf, so every order of
// addition gives Matrix::total()'s value exactly, here without one addition waiting on the
// last (at 64 ranks and 1000 classes, 64 x 10^6 cells a result).
double count_total(const Matrix& m) {
  constexpr size_t kLanes = 8;
  double lane[kLanes] = {};
  const double* v = m.cells.data();
  const size_t n = m.cells.size(), whole = n - n % kLanes;
  for (size_t i = 0; i < whole; i += kLanes)
    for (size_t k = 0; k < kLanes; ++k) lane[k] += v[i + k];
  double total = 0;
  for (size_t i = whole; i < n; ++i) total += v[i];
  for (double s : lane) total += s;
  return total;
}

// What the sampler tells the diagnosis: a simulation's own scenario and plan, or the settings
// a recorder saw in the user's run (imported dumps), whose names are the recorder's.
void describe_sampler(const Evaluation& e, DiagnosisInput& d) {
  if (e.scenario_recorded()) {
    const SamplerConfig& s = e.scenario().sampler;
    d.sampler = s.kind;
    // A simulated sampler whose order depends on the epoch draws it anew each epoch (seed +
    // epoch, or the loader's next iteration); a run's one evaluation cannot show that. The
    // captions ask the same question (caption.h).
    d.reshuffled_each_epoch = order_depends_on_epoch(s);
    d.accelerate_input = s.accelerate_input;
    if (s.kind != SamplerKind::LightningWrapper) return;
    if (s.inner.kind != InnerSampler::Kind::Recorded)
      d.inner_with_replacement = s.inner.kind == InnerSampler::Kind::WeightedRandom;
    if (e.plan && !e.plan->sampler.empty()) {
      // Every rank walks the same order when its generator is seeded alike.
      const auto& first = e.plan->sampler.front().segments;
      d.ranks_share_list =
          std::all_of(e.plan->sampler.begin(), e.plan->sampler.end(), [&](const RankSequence& r) {
            return !r.segments.empty() && !first.empty() &&
                   r.segments.front().order == first.front().order;
          });
    }
    return;
  }
  if (!e.meta.recorded || !e.meta.recorded->sampler) return;
  const RecordedSettings& r = *e.meta.recorded;
  const std::string& kind = *r.sampler;
  if (kind == "distributed") {
    d.sampler = SamplerKind::Distributed;
  } else if (kind == "unrepeated") {
    d.sampler = SamplerKind::Unrepeated;
  } else if (kind == "none") {
    d.sampler = SamplerKind::None;
  } else if (kind == "accelerate") {
    d.sampler = SamplerKind::Accelerate;
  } else if (kind == "wrapper") {
    d.sampler = SamplerKind::LightningWrapper;
    // WeightedRandomSampler draws with replacement unless told otherwise, which the recorder
    // does not see; a sequential inner sampler never repeats.
    if (r.inner_sampler == "weighted_random") d.inner_with_replacement = true;
    if (r.inner_sampler == "sequential") d.inner_with_replacement = false;
    // Lightning gives its wrapper PL_GLOBAL_SEED (0 when seed_everything never ran).
    d.seed_everything_seed = r.seed;
  }
}

// Whether the evaluation DataLoader dropped its last incomplete batch, when known: the
// scenario's loader, or the drop_last a recorder saw.
std::optional<bool> loader_drop_last(const Evaluation& e) {
  if (e.scenario_recorded()) return e.scenario().loader.drop_last;
  if (!e.meta.recorded) return std::nullopt;
  return e.meta.recorded->loader_drop_last;
}

// Whether a batch limit cut the evaluation, when known: the scenario's limit, or the one a
// recorder saw (1.0 and "all" evaluate every batch).
std::optional<bool> batch_limited(const Evaluation& e) {
  const auto limits = [](const BatchLimit& l) {
    return l.kind == BatchLimit::Kind::Count ||
           (l.kind == BatchLimit::Kind::Fraction && l.fraction < 1.0);
  };
  if (e.scenario_recorded()) return limits(e.scenario().loader.limit);
  if (!e.meta.recorded || !e.meta.recorded->limit_batches) return std::nullopt;
  try {
    return limits(BatchLimit::parse(*e.meta.recorded->limit_batches));
  } catch (const InputError&) {
    return std::nullopt;  // a limit this version cannot read tells nothing
  }
}

// The first cause only: a launcher lists the failed rank first and then every rank that
// failed because of it, which the run banner shows in full.
std::string first_cause(const std::string& reason) {
  if (reason.empty()) return "no reason recorded";
  const size_t end = reason.find("; ");
  return end == std::string::npos ? reason : reason.substr(0, end) + "; …";
}

}  // namespace

RowCheck check_evaluation_rows(const Evaluation& e) {
  if (e.synced) return check_rows(*e.synced, e.meta.class_counts);
  std::vector<const Matrix*> ranks;
  for (const Matrix& m : e.per_rank) ranks.push_back(&m);
  return check_rows(ranks, e.meta.class_counts, e.classes());
}

std::vector<std::string> class_names_or_numbers(const std::vector<std::string>& names,
                                                int32_t classes) {
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(classes));
  for (int32_t c = 0; c < classes; ++c)
    out.push_back(static_cast<size_t>(c) < names.size() ? names[size_t(c)] : std::to_string(c));
  return out;
}

std::string evaluation_label(const Evaluation& e) {
  std::string label =
      !e.meta.stage.empty() && e.meta.stage != "validate" ? e.meta.stage + ", " : "";
  label += "epoch " + std::to_string(e.epoch());
  if (e.validation() >= 0) label += ", validation " + std::to_string(e.validation());
  if (e.dataloader() >= 0) label += ", dataloader " + std::to_string(e.dataloader());
  return label;
}

LoggedAccuracy logged_accuracy(const Evaluation& e) {
  return e.scenario_recorded() ? e.scenario().logged_accuracy : LoggedAccuracy::None;
}

void release_samples(Evaluation& e) {
  e.records.reset();
  e.plan.reset();
  e.inputs.reset();
  e.labels.reset();
  e.times_evaluated = Coverage();
}

std::optional<Matrix> Evaluation::difference() const {
  if (!synced || !expected) return std::nullopt;
  Matrix d = *synced;
  for (size_t i = 0; i < d.cells.size(); ++i) d.cells[i] -= expected->cells[i];
  return d;
}

namespace {

// complete_evaluation, taking each rank's total and diagonal from `same_counts` (an
// evaluation whose per-rank matrices these are) when given.
void complete(Evaluation& e, Progress* progress, std::optional<RecordStats> stats,
              const Evaluation* same_counts) {
  const size_t world = e.per_rank.size();
  const bool taken = same_counts && same_counts->per_rank.size() == world &&
                     same_counts->rank_totals.size() == world &&
                     same_counts->rank_correct.size() == world;
  // Each rank's total and diagonal, unless taken over: at 1000 classes read on a second core
  // while the expected matrices, the row check and the diagnosis are made (which only read
  // the per-rank matrices too); a throw below waits for it in the future's destructor.
  const auto tally = [&e] {
    std::pair<std::vector<double>, std::vector<double>> out;
    for (const Matrix& m : e.per_rank) {
      out.first.push_back(count_total(m));
      out.second.push_back(m.diagonal_sum());
    }
    return out;
  };
  constexpr double kTallyAsideCells = double(1 << 20);
  std::future<std::pair<std::vector<double>, std::vector<double>>> tallies;
  if (!taken && double(world) * double(e.classes()) * double(e.classes()) >= kTallyAsideCells)
    tallies = std::async(std::launch::async, tally);
  if (!stats) stats = collect_stats(*e.records, e.meta.dataset_size, e.classes(), progress);
  step(progress, "expected", 0.0);
  const Coverage& times = stats->times;
  const int64_t never = times.count_equal(0);
  if (e.inputs) {
    bincount_inputs(*e.inputs, times, never, e.expected, e.expected_distinct);
  } else {
    e.expected_distinct = stats->distinct ? std::move(*stats->distinct) : Matrix(e.classes());
    if (!e.expected && never == 0 && e.meta.dataset_size > 0) {
      // Every sample was evaluated, so every prediction is known.
      e.expected = e.expected_distinct;
    } else if (!e.expected) {
      e.expected_missing =
          std::to_string(never) + " of " + std::to_string(e.meta.dataset_size) +
          " samples were never evaluated, so their predictions are unknown (import with "
          "--predictions FILE, one prediction per dataset index, to give them)";
    }
  }
  step(progress, "diagnosing", 0.9);
  e.row_check = check_evaluation_rows(e);
  if (!e.synced) {
    const std::string why = first_cause(e.meta.incomplete_reason);
    e.synced_missing = "the run ended before its sync (" + why + ")";
    e.diagnosis = diagnose_incomplete(*e.records, e.meta.class_counts, times, why);
  } else {
    DiagnosisInput d;
    d.records = e.records.get();
    d.per_rank = &e.per_rank;
    d.reported = &*e.synced;
    d.class_counts = e.meta.class_counts;
    d.rows = &e.row_check;
    d.dataset_size = e.meta.dataset_size;
    d.expected = e.expected ? &*e.expected : nullptr;
    d.inputs = e.inputs.get();
    d.targets = e.labels && !e.labels->targets.empty() ? &e.labels->targets : nullptr;
    d.distinct = &e.expected_distinct;
    d.batch_size = e.meta.batch_size;
    d.batch_limited = batch_limited(e);
    d.loader_drop_last = loader_drop_last(e);
    d.logged_accuracy = logged_accuracy(e);
    d.task = e.meta.task;
    d.reported_per_rank = e.reported_per_rank.empty() ? nullptr : &e.reported_per_rank;
    d.ignore_index = e.meta.ignore_index;
    d.stats = &*stats;
    describe_sampler(e, d);
    e.diagnosis = diagnose(d);
  }
  int64_t records = 0;
  for (int r = 0; r < e.records->world_size(); ++r) records += e.records->rank_size(r);
  if (records == 0) e.diagnosis = diagnose_nothing_recorded(e.meta.class_counts);
  e.times_evaluated = std::move(stats->times);
  if (taken) {
    e.rank_totals = same_counts->rank_totals;
    e.rank_correct = same_counts->rank_correct;
    return;
  }
  std::tie(e.rank_totals, e.rank_correct) = tallies.valid() ? tallies.get() : tally();
}

}  // namespace

void complete_evaluation(Evaluation& e, Progress* progress, std::optional<RecordStats> stats) {
  complete(e, progress, std::move(stats), nullptr);
}

void complete_evaluation_with_counts_of(Evaluation& e, const Evaluation& same_counts,
                                        Progress* progress, std::optional<RecordStats> stats) {
  complete(e, progress, std::move(stats), &same_counts);
}

}  // namespace shardlens
