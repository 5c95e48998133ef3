#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_set>

#include "core/diagnosis/diagnosis.h"
#include "core/diagnosis/framework_patterns.h"
#include "core/diagnosis/precision.h"
#include "core/torchsem/sampler.h"
#include "core/torchsem/sync.h"
#include "core/torchsem/task_scores.h"

namespace shardlens {

namespace {

using detail::CellDifference;

bool nearly_equal(const Matrix& a, const Matrix& b) {
  if (a.classes != b.classes) return false;
  for (size_t i = 0; i < a.cells.size(); ++i) {
    if (std::abs(a.cells[i] - b.cells[i]) >
        kFractionTolerance * std::max(1.0, std::abs(b.cells[i]))) {
      return false;
    }
  }
  return true;
}

bool all_zero(const Matrix& m) {
  for (double v : m.cells)
    if (v != 0) return false;
  return true;
}

Matrix sum_of(const std::vector<Matrix>& ms, int32_t classes) {
  Matrix sum(classes);
  for (const Matrix& m : ms) sum += m;
  return sum;
}

// Builds findings from the facts measured here; the catalogue words them when shown.
class Classifier {
 public:
  Classifier(const DiagnosisInput& in, Diagnosis& out) : m_in(in), m_out(out) {}

  Finding& add(Pattern pattern, Facts facts, const SampleSet* samples = nullptr,
               std::vector<int32_t> classes = {}) {
    Finding f(pattern, std::move(facts));
    if (samples) {
      f.samples = samples->samples;
      f.sample_count = samples->count;
      classes.insert(classes.end(), samples->classes.begin(), samples->classes.end());
      for (int32_t c : classes_in_cells(samples->samples)) classes.push_back(c);
    }
    std::sort(classes.begin(), classes.end());
    classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
    f.classes = classes;
    m_out.findings.push_back(std::move(f));
    return m_out.findings.back();
  }

  const DiagnosisInput& in() const { return m_in; }
  // A sample of many cells touches every class its pixels (tokens) are in, not only the
  // largest one its record shows: the true classes of the listed samples' cells.
  std::vector<int32_t> classes_in_cells(const std::vector<int64_t>& samples) const {
    std::vector<int32_t> out;
    auto add_row = [&](const CellTable& cells, int64_t row) {
      for (uint32_t key : cells.keys_of(row)) out.push_back(int32_t(key / uint32_t(cells.classes)));
    };
    if (m_in.inputs && m_in.inputs->cells) {
      for (int64_t i : samples)
        if (i >= 0 && i < m_in.inputs->cells->rows()) add_row(*m_in.inputs->cells, i);
      return out;
    }
    const CellTable* cells = m_in.records ? m_in.records->cell_table() : nullptr;
    if (!cells || samples.empty()) return out;
    // A run's rows are its records': the first record of each listed sample names its row.
    std::vector<int64_t> wanted = samples;
    std::sort(wanted.begin(), wanted.end());
    std::vector<bool> found(wanted.size(), false);
    for (int r = 0; r < m_in.records->world_size(); ++r)
      for_each_record(*m_in.records, r, [&](const Record& rec) {
        if (rec.cells == kOneCell || rec.cells >= uint64_t(cells->rows())) return;
        const auto at = std::lower_bound(wanted.begin(), wanted.end(), rec.index);
        if (at == wanted.end() || *at != rec.index || found[size_t(at - wanted.begin())]) return;
        found[size_t(at - wanted.begin())] = true;
        add_row(*cells, rec.cells);
      });
    return out;
  }
  Finding* existing(Pattern pattern) {
    for (Finding& f : m_out.findings)
      if (f.pattern == pattern) return &f;
    return nullptr;
  }

 private:
  const DiagnosisInput& m_in;
  Diagnosis& m_out;
};

// The rows whose sums differ between two matrices (the classes a reduction finding names).
std::vector<int32_t> differing_rows(const Matrix& a, const Matrix& b) {
  std::vector<int32_t> rows;
  const auto ra = a.row_sums();
  const auto rb = b.row_sums();
  for (int32_t r = 0; r < a.classes; ++r) {
    if (sum_differs(ra[r], rb[r])) rows.push_back(r);
  }
  return rows;
}

// Cells that differ from their exact count, in either direction, as counter precision when
// a float dtype's spacing explains every one (`steps`: roundings each cell went through;
// `synced`: the cells are the synced matrix's, else the ranks' own).
// Returns false when the differences have no such explanation.
bool add_precision_finding(Classifier& c, const std::vector<CellDifference>& diffs,
                           const std::vector<const Matrix*>& observed, double steps, bool synced) {
  if (diffs.empty()) return true;
  const auto dtype = detail::explaining_dtype(observed, diffs, steps);
  if (!dtype) return false;
  RoundedCells rounded;
  rounded.synced = synced;
  rounded.cells = int64_t(diffs.size());
  rounded.dtype = *dtype;
  std::set<int32_t> rows;
  const CellDifference* largest = &diffs.front();
  for (const CellDifference& d : diffs) {
    rounded.too_high += d.observed > d.exact;
    rows.insert(d.row);
    if (std::abs(d.observed - d.exact) > std::abs(largest->observed - largest->exact)) largest = &d;
  }
  rounded.too_low = rounded.cells - rounded.too_high;
  rounded.largest = *largest;
  rounded.spacing = detail::dtype_spacing(largest->observed, *dtype);
  if (Finding* f = c.existing(Pattern::CounterPrecision)) {
    // The ranks' counters and the all_reduce both rounded: one finding tells both, the
    // ranks' first.
    f->facts.rounded.insert(f->facts.rounded.begin(), rounded);
    f->classes.insert(f->classes.end(), rows.begin(), rows.end());
    std::sort(f->classes.begin(), f->classes.end());
    f->classes.erase(std::unique(f->classes.begin(), f->classes.end()), f->classes.end());
    return true;
  }
  Facts facts;
  facts.rounded = {rounded};
  c.add(Pattern::CounterPrecision, std::move(facts), nullptr,
        std::vector<int32_t>(rows.begin(), rows.end()));
  return true;
}

// Reduction patterns: how the reported matrix relates to the ranks' own matrices. Each check
// returns true when it explains the reported matrix, having added its finding.

// Ranks that reported different matrices never synchronized.
bool ranks_disagree(Classifier& c, const Matrix& reported, const Matrix& rank_sum) {
  const DiagnosisInput& in = c.in();
  if (!in.reported_per_rank) return false;
  Facts facts;
  const Matrix* first = nullptr;
  for (size_t r = 0; r < in.reported_per_rank->size(); ++r) {
    const auto& m = (*in.reported_per_rank)[r];
    if (!m) continue;
    if (!first) {
      first = &*m;
      facts.reporting_rank = int(r);
      facts.reported_total = first->total();
    } else if (!nearly_equal(*m, *first)) {
      facts.disagreeing_ranks.push_back(int(r));
    }
  }
  if (facts.disagreeing_ranks.empty()) return false;
  c.add(Pattern::Unsynced, std::move(facts), nullptr, differing_rows(reported, rank_sum));
  return true;
}

bool normalized_then_summed(Classifier& c, const Matrix& reported, const Matrix& rank_sum) {
  const auto& per_rank = *c.in().per_rank;
  // W fractions of at most 1 sum to at most W in any cell: a larger cell rules it out
  // before W matrices of C x C cells are normalized (a double sync at 64 ranks).
  const double most = double(per_rank.size()) * (1 + kFractionTolerance) + kFractionTolerance;
  if (std::any_of(reported.cells.begin(), reported.cells.end(),
                  [most](double v) { return v > most; }))
    return false;
  Matrix normalized_sum(reported.classes);
  for (const Matrix& m : per_rank) normalized_sum += normalize(m, Normalization::True);
  if (!nearly_equal(reported, normalized_sum)) return false;
  Facts facts;
  facts.world_size = int(per_rank.size());
  c.add(Pattern::NormalizeThenSum, std::move(facts), nullptr,
        differing_rows(reported, normalize(rank_sum, Normalization::True)));
  return true;
}

bool summed_twice(Classifier& c, const Matrix& reported, const Matrix& rank_sum) {
  const int w = int(c.in().per_rank->size());
  if (w < 2 || all_zero(rank_sum) || !nearly_equal(reported, rank_sum.scaled(w))) return false;
  Facts facts;
  facts.world_size = w;
  c.add(Pattern::DoubleSync, std::move(facts), nullptr, differing_rows(reported, rank_sum));
  return true;
}

// The totals the reduction checks below name.
Facts totals(const Matrix& reported, const Matrix& rank_sum) {
  Facts facts;
  facts.reported_total = reported.total();
  facts.rank_sum_total = rank_sum.total();
  return facts;
}

bool one_rank_alone(Classifier& c, const Matrix& reported, const Matrix& rank_sum) {
  const auto& per_rank = *c.in().per_rank;
  const int w = int(per_rank.size());
  for (int r = 0; w > 1 && r < w; ++r) {
    if (!nearly_equal(reported, per_rank[size_t(r)])) continue;
    Facts facts = totals(reported, rank_sum);
    facts.only_rank = r;
    c.add(Pattern::Unsynced, std::move(facts), nullptr, differing_rows(reported, rank_sum));
    return true;
  }
  return false;
}

// One rank too few or too many in the sum: a rank that never joined the reduction (too
// low), or one whose counts were added again after it (too high).
bool one_rank_left_out_or_twice(Classifier& c, const Matrix& reported, const Matrix& rank_sum) {
  const auto& per_rank = *c.in().per_rank;
  const int w = int(per_rank.size());
  for (int r = 0; w > 2 && r < w; ++r) {
    const Matrix& own = per_rank[size_t(r)];
    if (all_zero(own)) continue;
    Matrix without = rank_sum, twice = rank_sum;
    for (size_t i = 0; i < own.cells.size(); ++i) {
      without.cells[i] -= own.cells[i];
      twice.cells[i] += own.cells[i];
    }
    const bool left_out = nearly_equal(reported, without);
    if (!left_out && !nearly_equal(reported, twice)) continue;
    Facts facts = totals(reported, rank_sum);
    (left_out ? facts.left_out_rank : facts.added_twice_rank) = r;
    c.add(left_out ? Pattern::Unsynced : Pattern::DoubleSync, std::move(facts), nullptr,
          differing_rows(reported, rank_sum));
    return true;
  }
  return false;
}

// The padding a zero-padded gather adds: every rank is padded up to the longest one.
bool zero_padded_gather(Classifier& c, const RecordStats& st, const Matrix& reported,
                        const Matrix& rank_sum) {
  Matrix extra = reported;
  for (size_t i = 0; i < extra.cells.size(); ++i) extra.cells[i] -= rank_sum.cells[i];
  const double extra00 = extra.cells[0];
  extra.cells[0] = 0;
  const int64_t longest = *std::max_element(st.rank_sizes.begin(), st.rank_sizes.end());
  double padded_slots = 0;
  for (int64_t size : st.rank_sizes) padded_slots += static_cast<double>(longest - size);
  if (extra00 <= 0 || extra00 != padded_slots || !all_zero(extra)) return false;
  Facts facts;
  facts.zero_pairs = extra00;
  c.add(Pattern::GatherZeroPad, std::move(facts), nullptr, {0});
  return true;
}

// Replays gather_for_metrics on the records, exhausted or not, and compares.
bool gather_for_metrics_trimmed(Classifier& c, const Matrix& reported, const Matrix& rank_sum) {
  const DiagnosisInput& in = c.in();
  if (!in.batch_size || *in.batch_size <= 0) return false;
  const int32_t classes = reported.classes;
  for (bool exhausted : {true, false}) {
    const auto kept =
        gather_for_metrics_records(*in.records, in.dataset_size, *in.batch_size, exhausted);
    Matrix g(classes);
    count_records(g, kept, in.ignore_index, in.records->cell_table());
    SampleSet padding_kept;
    for (const Record& r : kept)
      if (r.flags & kPadding) padding_kept.add(r.index, r.target);
    if (!nearly_equal(reported, g)) continue;
    Facts facts;
    facts.trimmed = rank_sum.total() - g.total();
    facts.padding_kept = padding_kept.count;
    c.add(Pattern::GatherForMetricsMismatch, std::move(facts), &padding_kept,
          differing_rows(g, rank_sum));
    return true;
  }
  return false;
}

// A float all_reduce rounds at each of its W - 1 additions: every cell stays within W - 1
// spacings of the exact sum.
void rounded_by_float_all_reduce(Classifier& c, const Matrix& reported, const Matrix& rank_sum) {
  const int w = int(c.in().per_rank->size());
  const auto classes = size_t(reported.classes);
  std::vector<CellDifference> diffs;
  for (size_t i = 0; i < reported.cells.size(); ++i)
    if (reported.cells[i] != rank_sum.cells[i])
      diffs.push_back(
          {-1, int32_t(i / classes), int32_t(i % classes), reported.cells[i], rank_sum.cells[i]});
  if (w > 1) add_precision_finding(c, diffs, {&reported}, double(w - 1), true);
}

void classify_reduction(Classifier& c, const RecordStats& st, const Matrix& reported,
                        const Matrix& rank_sum) {
  if (ranks_disagree(c, reported, rank_sum) || nearly_equal(reported, rank_sum)) return;
  const bool explained =
      normalized_then_summed(c, reported, rank_sum) || summed_twice(c, reported, rank_sum) ||
      one_rank_alone(c, reported, rank_sum) || one_rank_left_out_or_twice(c, reported, rank_sum) ||
      zero_padded_gather(c, st, reported, rank_sum) ||
      gather_for_metrics_trimmed(c, reported, rank_sum);
  if (!explained) rounded_by_float_all_reduce(c, reported, rank_sum);
}

// Counting patterns: each rank's matrix against the exact count of its records.
void classify_counting(Classifier& c, const RecordStats& st, const std::vector<Matrix>& exact,
                       const Matrix& record_sum, const Matrix& rank_sum) {
  const DiagnosisInput& in = c.in();
  const int32_t classes = record_sum.classes;
  // An exact counter's own matrices are the exact counts (the stats hold no separate exact
  // ones): no row was ignored and no cell differs, which W x C x C comparisons (64 x 10^6 at
  // 64 ranks and 1000 classes, every setting change) would only confirm.
  const bool counted_exactly = st.exact_per_rank.empty();
  std::vector<int32_t> ignored;
  if (!counted_exactly) {
    const auto record_rows = record_sum.row_sums();
    const auto rank_rows = rank_sum.row_sums();
    for (int32_t k = 0; k < classes; ++k) {
      if (record_rows[k] > 0 && rank_rows[k] == 0) ignored.push_back(k);
    }
  }
  if (!ignored.empty() || st.invalid > 0) {
    Facts facts;
    facts.ignored_classes = int64_t(ignored.size());
    if (in.ignore_index >= 0) facts.ignore_index = in.ignore_index;
    if (st.invalid > 0) facts.invalid_records = st.invalid;
    c.add(Pattern::IgnoredTargets, std::move(facts), nullptr, ignored);
  }
  // Any other cell that differs from its records' exact count, too high or too low.
  std::vector<CellDifference> diffs;
  std::vector<const Matrix*> observed;
  int64_t most_records = 1;
  for (size_t r = 0; r < in.per_rank->size() && r < exact.size(); ++r) {
    const Matrix& got = (*in.per_rank)[r];
    const Matrix& want = exact[r];
    observed.push_back(&got);
    most_records = std::max(most_records, r < st.rank_sizes.size() ? st.rank_sizes[r] : 0);
    for (int32_t i = 0; i < classes && !counted_exactly; ++i) {
      if (std::binary_search(ignored.begin(), ignored.end(), i)) continue;
      for (int32_t j = 0; j < classes; ++j)
        if (got.at(i, j) != want.at(i, j))
          diffs.push_back({int(r), i, j, got.at(i, j), want.at(i, j)});
    }
  }
  // Each batch rounds a cell at most once, so a rank's records bound the roundings.
  if (!add_precision_finding(c, diffs, observed, double(most_records), false)) {
    std::set<int32_t> rows;
    for (const CellDifference& d : diffs) rows.insert(d.row);
    Facts facts;
    facts.unexplained_cells = int64_t(diffs.size());
    facts.first_unexplained = diffs.front();
    c.add(Pattern::UnexplainedDifference, std::move(facts), nullptr,
          std::vector<int32_t>(rows.begin(), rows.end()));
  }
}

bool every_rank_has(const RecordStats& st, int64_t size) {
  for (int64_t s : st.rank_sizes)
    if (s != size) return false;
  return true;
}

// Whether the `count` samples never evaluated are the dataset's last indices.
bool missing_at_end(const Coverage& times, int64_t count) {
  const auto n = static_cast<int64_t>(times.size());
  if (count <= 0 || count > n) return false;
  for (int64_t i = 0; i < n; ++i)
    if ((times[size_t(i)] == 0) != (i >= n - count)) return false;
  return true;
}

// Why samples are missing when no overlap explains it: which drop or limit cut them.
void classify_missing(Classifier& c, const RecordStats& st, const SampleSet& missing) {
  const DiagnosisInput& in = c.in();
  const auto w = static_cast<int64_t>(st.rank_sizes.size());
  const int64_t n = in.dataset_size;
  const int64_t padded_share = (n + w - 1) / w;
  const int64_t dropped_share = distributed_num_samples(n, static_cast<int>(w), true);
  const int64_t b = in.batch_size.value_or(0);
  Facts facts;
  facts.dataset_size = n;
  facts.world_size = int(w);
  facts.missing = missing.count;
  // Records cannot tell a drop from a batch limit that stops at the same sample; say so,
  // unless the run's settings tell there was no limit.
  const bool maybe_limited = in.batch_limited.value_or(true);
  const auto or_a_limit = [b, maybe_limited, &facts](int64_t per_rank) {
    if (maybe_limited && b >= 1 && per_rank % b == 0) facts.limit_batches = per_rank / b;
    return facts;
  };
  if (n % w != 0 && every_rank_has(st, dropped_share) && missing.count == n - w * dropped_share) {
    c.add(Pattern::SamplerDropLast, or_a_limit(dropped_share), &missing);
    return;
  }
  if (b > 1 && missing.count < w * b &&
      (every_rank_has(st, padded_share / b * b) || every_rank_has(st, dropped_share / b * b))) {
    facts.batch_size = b;
    c.add(Pattern::LoaderDropLast, or_a_limit(st.rank_sizes.front()), &missing);
    return;
  }
  if (b > 0) facts.batch_size = b;  // the double sharding this may turn out to be names it
  // Only settings that tell of a limit make the limit the cause; without them the records are
  // consistent with a limit, the loader's drop_last and a subset alike.
  if (in.batch_limited == true) {
    c.add(Pattern::BatchLimitSubset, std::move(facts), &missing);
    return;
  }
  facts.batch_limited = in.batch_limited;
  facts.loader_drop_last = in.loader_drop_last;
  if (w > 0 && every_rank_has(st, st.rank_sizes.front()))
    facts.samples_per_rank = st.rank_sizes.front();
  facts.missing_at_end = missing_at_end(st.times, missing.count);
  c.add(Pattern::NeverEvaluated, std::move(facts), &missing);
}

// Whether unflagged repeats within ranks are what a leaked sanity check leaves: the check
// evaluated the first batches of epoch 0's order and the epoch evaluated them again from its
// start, so every rank that repeats a sample begins with k records repeated at once
// (x[0, k) == x[k, 2k)) and repeats nothing else (flagged padding aside). Repeats scattered
// through a rank (a sampler drawing with replacement, Accelerate's cycled padding) are no such
// evidence.
bool repeats_are_a_leaked_prefix(const RecordSource& records) {
  bool any = false;
  for (int r = 0; r < records.world_size(); ++r) {
    std::vector<int64_t> x;
    for_each_record(records, r, [&](const Record& rec) {
      if ((rec.flags & (kSanity | kPadding)) == 0) x.push_back(rec.index);
    });
    std::unordered_set<int64_t> seen;
    size_t repeats = 0;
    for (int64_t i : x) repeats += !seen.insert(i).second;
    if (repeats == 0) continue;
    if (2 * repeats > x.size() || !std::equal(x.begin(), x.begin() + std::ptrdiff_t(repeats),
                                              x.begin() + std::ptrdiff_t(repeats)))
      return false;
    any = true;
  }
  return any;
}

void classify_sampling(Classifier& c, const RecordStats& st, const SampleSet& missing) {
  const DiagnosisInput& in = c.in();
  const auto w = static_cast<int64_t>(st.rank_sizes.size());
  // Flagged records are evidence of a sanity check; unflagged repeats only when they have its
  // shape and no sampler drawing with replacement explains them.
  if (st.flagged_sanity.count > 0) {
    Facts facts;
    facts.sanity_records = st.flagged_sanity.count;
    c.add(Pattern::SanityLeak, std::move(facts), &st.flagged_sanity);
  } else if (st.within_rank_duplicates.count > 0 && !in.inner_with_replacement.value_or(false) &&
             in.records && repeats_are_a_leaked_prefix(*in.records)) {
    Facts facts;
    facts.repeated_prefix = st.within_rank_duplicates.count;
    c.add(Pattern::SanityLeak, std::move(facts), &st.within_rank_duplicates);
  }
  const SampleSet& cross = st.cross_rank_duplicates;
  if (w > 1 && every_rank_has(st, st.rank_sizes.front()) && st.rank_sizes.front() > 0 &&
      cross.count >= (w - 1) * st.rank_sizes.front()) {
    Facts facts;
    facts.world_size = int(w);
    facts.samples_per_rank = st.rank_sizes.front();
    c.add(Pattern::NoDistributedSampler, std::move(facts));
    return;
  }
  // Padding: flagged, or (unflagged) fewer than W samples repeated as ranks' last records.
  Facts padding;
  padding.dataset_size = in.dataset_size;
  padding.world_size = int(w);
  if (st.flagged_padding.count > 0) {
    padding.padding_records = st.flagged_padding.count;
    c.add(Pattern::PaddingDuplicates, padding, &st.flagged_padding);
  } else if (cross.count > 0 && cross.count < w && cross.count == st.cross_rank_at_rank_end) {
    padding.tail_repeats = cross.count;
    c.add(Pattern::PaddingDuplicates, padding, &cross);
  }
  const bool padded = padding.padding_records || padding.tail_repeats;
  const bool overlap = st.flagged_padding.count > 0 ? cross.count > st.flagged_padding.count
                                                    : cross.count > 0 && !padded;
  if (overlap) {
    Facts facts;
    facts.missing = missing.count;
    facts.overlap = cross.count;
    c.add(Pattern::RankOverlap, std::move(facts), &cross,
          std::vector<int32_t>(missing.classes.begin(), missing.classes.end()));
  } else if (missing.count > 0) {
    classify_missing(c, st, missing);
  }
  if (st.shuffled_order && !overlap && (missing.count > 0 || padded)) {
    // What the order decides: the samples left out, or those padded.
    Facts order = padding;
    if (missing.count > 0) order.missing = missing.count;
    order.reshuffled_each_epoch = in.reshuffled_each_epoch;
    // A limit the settings tell of, and the batches every rank stopped after.
    const int64_t b = in.batch_size.value_or(0);
    if (missing.count > 0 && in.batch_limited.value_or(false) && b >= 1 && w > 0 &&
        every_rank_has(st, st.rank_sizes.front()) && st.rank_sizes.front() % b == 0)
      order.limit_batches = st.rank_sizes.front() / b;
    c.add(Pattern::ShuffledEval, std::move(order),
          missing.count > 0 ? &missing : &st.flagged_padding);
  }
}

// The samples never evaluated, with their classes when known.
SampleSet never_evaluated(const DiagnosisInput& in, const RecordStats& st) {
  SampleSet missing;
  // Uniform coverage of at least one evaluation (the usual case) misses nothing.
  const bool none_missing = st.times.is_uniform() && !st.times.empty() && st.times[0] > 0;
  for (size_t i = 0; i < st.times.size() && !none_missing; ++i) {
    if (st.times[i] == 0) {
      const int32_t cls = in.inputs    ? in.inputs->target(int64_t(i))
                          : in.targets ? (*in.targets)[i]
                                       : -1;
      missing.add(static_cast<int64_t>(i), cls);
    }
  }
  if (!in.inputs && !in.targets && in.distinct && missing.count > 0) {
    // A run knows no label of a sample it never evaluated, but a class whose distinct
    // evaluated samples fall short of its true count lost some.
    const auto rows = in.distinct->row_sums();
    for (size_t c = 0; c < rows.size() && c < in.class_counts.size(); ++c)
      if (rows[c] < double(in.class_counts[c])) missing.classes.insert(int32_t(c));
  }
  return missing;
}

// The summary counts, the rows that miss their class count, and whether the reported matrix
// is correct (`record_sum`: the exact count of the records, for when no expected matrix is
// known).
void summarize(const DiagnosisInput& in, const RecordStats& st, const SampleSet& missing,
               const Matrix& record_sum, Diagnosis& out) {
  const Matrix& reported = *in.reported;
  out.distinct_evaluated = st.times.count_at_least(1);
  out.duplicated_samples = st.times.count_at_least(2);
  out.reported_total = reported.total();
  for (int64_t k : in.class_counts) out.expected_total += k;
  out.evaluated_records = st.records;
  out.missing_samples = missing.count;
  out.mismatched_rows =
      in.rows ? in.rows->wrong_rows : check_rows(reported, in.class_counts).wrong_rows;
  if (in.expected) {
    // A row that misses its class count is wrong whatever the expected matrix says: one
    // that disagrees with the class counts (a damaged or doctored file) proves nothing.
    out.correct = reported == *in.expected && out.mismatched_rows.empty();
  } else {
    out.correct = missing.count == 0 && out.duplicated_samples == 0 && reported == record_sum &&
                  out.mismatched_rows.empty();
  }
}

// What the run logged of its metric (the task's headline: accuracy, mIoU, token accuracy,
// macro F1), where it is not the expected matrix's value: one finding for each way it logged
// (each rank's epoch value; the batches' values, for a classification's accuracy only: a
// dense metric's per-batch value depends on each batch's matrix, which no record keeps).
std::vector<Finding> logged_metric_findings(const DiagnosisInput& in,
                                            const std::vector<Matrix>& exact) {
  std::vector<Finding> out;
  if (in.logged_accuracy == LoggedAccuracy::None || !in.expected) return out;
  if (in.expected->total() <= 0) return out;
  const double truth = headline_metric(*in.expected, in.task, in.ignore_index);
  if (std::isnan(truth)) return out;
  std::vector<RankTally> ranks;
  std::vector<int64_t> rank_samples;
  std::vector<double> rank_values;  // of the ranks that evaluated something: they log
  for (const Matrix& m : exact) {
    ranks.push_back({m.total(), m.diagonal_sum()});
    rank_samples.push_back(int64_t(m.total()));
    if (m.total() > 0) rank_values.push_back(headline_metric(m, in.task, in.ignore_index));
  }
  const auto check = [&](bool per_batch, std::optional<double> logged) {
    if (!logged || std::abs(*logged - truth) <= kFractionTolerance) return;
    Finding f(Pattern::LoggedAccuracy);
    f.facts.logged_metric = headline_metric_name(in.task);
    f.facts.logged_value = logged;
    f.facts.true_value = truth;
    f.facts.logged_per_batch = per_batch;
    f.facts.world_size = int(exact.size());
    f.facts.rank_samples = rank_samples;
    if (!per_batch && !rank_values.empty()) {
      const auto [low, high] = std::minmax_element(rank_values.begin(), rank_values.end());
      f.facts.rank_value_range = std::make_pair(*low, *high);
    }
    out.push_back(std::move(f));
  };
  if (logs_rank_mean(in.logged_accuracy)) check(false, logged_rank_mean_of(rank_values));
  if (logs_per_batch(in.logged_accuracy) && in.task == Task::Classification)
    check(true, logged_per_batch(ranks));
  return out;
}

}  // namespace

std::optional<double> logged_rank_mean_of(const std::vector<double>& rank_values) {
  if (rank_values.size() < 2) return std::nullopt;
  double sum = 0;
  for (double v : rank_values) sum += v;
  return sum / double(rank_values.size());
}

std::optional<double> logged_rank_mean(const std::vector<RankTally>& ranks) {
  std::vector<double> values;
  for (const RankTally& r : ranks)
    if (r.records > 0)
      values.push_back(r.correct / r.records);  // a rank with no batch logs nothing
  return logged_rank_mean_of(values);
}

std::optional<double> logged_per_batch(const std::vector<RankTally>& ranks) {
  const double w = double(ranks.size());
  double correct = 0, records = 0;
  for (const RankTally& r : ranks) {
    records += r.records;
    correct += r.correct;
  }
  if (w < 2) return std::nullopt;
  const double mean_size = std::floor(records / w);  // truncated in its int64 tensor
  if (mean_size < 1) return std::nullopt;
  return (correct / w) / mean_size;
}

Diagnosis diagnose(const DiagnosisInput& in) {
  Diagnosis out;
  const Matrix& reported = *in.reported;
  const int32_t classes = reported.classes;
  std::optional<RecordStats> walked;
  if (!in.stats) walked = collect_stats(*in.records, in.dataset_size, classes);
  const RecordStats& st = in.stats ? *in.stats : *walked;
  std::optional<Matrix> summed;  // only when the caller has not summed them
  if (!st.per_rank_sum) summed = sum_of(*in.per_rank, classes);
  const Matrix& rank_sum = st.per_rank_sum ? *st.per_rank_sum : *summed;
  const std::vector<Matrix>& exact = st.exact_per_rank.empty() ? *in.per_rank : st.exact_per_rank;
  std::optional<Matrix> exact_sum;  // only when the counter was not exact
  if (!st.exact_per_rank.empty()) exact_sum = sum_of(exact, classes);
  const Matrix& record_sum = exact_sum ? *exact_sum : rank_sum;
  const SampleSet missing = never_evaluated(in, st);
  summarize(in, st, missing, record_sum, out);
  std::vector<Finding> logged = logged_metric_findings(in, exact);
  if (out.correct) {
    // The matrix is right; a value the run logged of it may still not be.
    out.correct = logged.empty();
    out.findings = std::move(logged);
    return out;
  }

  Classifier c(in, out);
  classify_reduction(c, st, reported, rank_sum);
  classify_counting(c, st, exact, record_sum, rank_sum);
  classify_sampling(c, st, missing);
  // gather_for_metrics already accounts for the padding it kept; one finding says it all.
  auto has = [&](Pattern id) {
    return std::any_of(out.findings.begin(), out.findings.end(),
                       [&](const Finding& f) { return f.pattern == id; });
  };
  if (has(Pattern::GatherForMetricsMismatch)) {
    std::erase_if(out.findings,
                  [](const Finding& f) { return f.pattern == Pattern::PaddingDuplicates; });
  }
  classify_framework_patterns(in, out);  // Accelerate's cycled padding, Lightning's wrapper
  if (out.findings.empty()) {
    c.add(Pattern::UnexplainedDifference, Facts{}, nullptr, out.mismatched_rows);
  }
  for (Finding& f : logged) out.findings.push_back(std::move(f));
  return out;
}

Diagnosis diagnose_incomplete(const RecordSource& records, const std::vector<int64_t>& class_counts,
                              const Coverage& times_evaluated, const std::string& why) {
  Diagnosis d;
  d.correct = false;
  for (int64_t c : class_counts) d.expected_total += c;
  for (int r = 0; r < records.world_size(); ++r) d.evaluated_records += records.rank_size(r);
  d.distinct_evaluated = times_evaluated.count_at_least(1);
  d.duplicated_samples = times_evaluated.count_at_least(2);
  d.missing_samples = times_evaluated.count_equal(0);
  Finding f(Pattern::IncompleteRun);
  f.facts.stopped_by = why;
  d.findings.push_back(std::move(f));
  return d;
}

Diagnosis diagnose_nothing_recorded(const std::vector<int64_t>& class_counts) {
  Diagnosis d;
  d.correct = false;
  for (int64_t c : class_counts) d.expected_total += c;
  d.findings.emplace_back(Pattern::NothingRecorded);
  return d;
}

}  // namespace shardlens
