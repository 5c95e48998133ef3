#include <algorithm>
#include <cmath>
#include <sstream>
#include <unordered_set>

#include "core/diagnosis/diagnosis.h"
#include "core/diagnosis/framework_patterns.h"
#include "core/diagnosis/precision.h"
#include "core/torchsem/sampler.h"
#include "core/torchsem/sync.h"

namespace shardlens {

namespace {

using detail::CellDifference;

bool nearly_equal(const Matrix& a, const Matrix& b, double tolerance = 1e-9) {
  if (a.classes != b.classes) return false;
  for (size_t i = 0; i < a.cells.size(); ++i) {
    if (std::abs(a.cells[i] - b.cells[i]) > tolerance * std::max(1.0, std::abs(b.cells[i]))) {
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

// "1 sample was" / "3 samples were": findings read as sentences.
std::string counted(int64_t n, const std::string& noun, const std::string& verb_phrase = "") {
  std::string out = std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
  if (!verb_phrase.empty()) out += (n == 1 ? " was " : " were ") + verb_phrase;
  return out;
}

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// Builds findings and keeps them in catalogue wording with the run's own numbers added.
class Classifier {
 public:
  Classifier(const DiagnosisInput& in, Diagnosis& out) : m_in(in), m_out(out) {}

  Finding& add(Pattern pattern, const std::string& specifics, const SampleSet* samples = nullptr,
               std::vector<int32_t> classes = {}) {
    Finding f = describe_pattern(pattern);
    if (!specifics.empty()) f.explanation = specifics + " " + f.explanation;
    if (samples) {
      f.samples = samples->samples;
      f.sample_count = samples->count;
      classes.insert(classes.end(), samples->classes.begin(), samples->classes.end());
    }
    std::sort(classes.begin(), classes.end());
    classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
    f.classes = classes;
    m_out.findings.push_back(std::move(f));
    return m_out.findings.back();
  }

  const DiagnosisInput& in() const { return m_in; }
  Finding* existing(Pattern pattern) {
    for (Finding& f : m_out.findings)
      if (f.pattern == pattern) return &f;
    return nullptr;
  }

 private:
  const DiagnosisInput& m_in;
  Diagnosis& m_out;
};

std::vector<int32_t> differing_rows(const Matrix& a, const Matrix& b) {
  std::vector<int32_t> rows;
  const auto ra = a.row_sums();
  const auto rb = b.row_sums();
  for (int32_t r = 0; r < a.classes; ++r) {
    if (std::abs(ra[r] - rb[r]) > 1e-9) rows.push_back(r);
  }
  return rows;
}

// Reduction patterns: how the reported matrix relates to the ranks' own matrices.
// Returns true when the reported matrix is the plain sum (reduction correct).
// "rank 0, row 0 column 0: 8096 counted for 8093 records"
std::string describe_cell(const CellDifference& d, const std::string& exact_noun) {
  const std::string where =
      (d.rank < 0 ? std::string("synced") : "rank " + std::to_string(d.rank)) + ", row " +
      std::to_string(d.row) + " column " + std::to_string(d.col);
  return where + ": " + num(d.observed) + " where " + exact_noun + " is " + num(d.exact);
}

// Cells that differ from their exact count, in either direction, as counter precision when
// a float dtype's spacing explains every one (`steps`: roundings each cell went through).
// Returns false when the differences have no such explanation.
bool add_precision_finding(Classifier& c, const std::vector<CellDifference>& diffs,
                           const std::vector<const Matrix*>& observed, double steps,
                           const std::string& what, const std::string& exact_noun) {
  if (diffs.empty()) return true;
  const auto dtype = detail::explaining_dtype(observed, diffs, steps);
  if (!dtype) return false;
  int64_t high = 0;
  std::set<int32_t> rows;
  const CellDifference* largest = &diffs.front();
  for (const CellDifference& d : diffs) {
    high += d.observed > d.exact;
    rows.insert(d.row);
    if (std::abs(d.observed - d.exact) > std::abs(largest->observed - largest->exact)) largest = &d;
  }
  const auto low = static_cast<int64_t>(diffs.size()) - high;
  const std::string name = to_string(*dtype);
  const std::string specifics =
      counted(static_cast<int64_t>(diffs.size()), "cell") + " of " + what + " " +
      (diffs.size() == 1 ? "differs" : "differ") + " from " + exact_noun + " (" +
      std::to_string(high) + " too high, " + std::to_string(low) +
      " too low; largest: " + describe_cell(*largest, exact_noun) + "). Every value is a " + name +
      " number and every such cell lies past " + num(stall_count(*dtype)) + ", where " + name +
      " integers are " + num(detail::dtype_spacing(largest->observed, *dtype)) + " apart at " +
      num(largest->observed) + ": each addition rounds to the nearest of them, up or down.";
  if (Finding* f = c.existing(Pattern::CounterPrecision)) {
    // The ranks' counters and the all_reduce both rounded: one finding tells both.
    f->explanation = specifics + " " + f->explanation;
    f->classes.insert(f->classes.end(), rows.begin(), rows.end());
    std::sort(f->classes.begin(), f->classes.end());
    f->classes.erase(std::unique(f->classes.begin(), f->classes.end()), f->classes.end());
    return true;
  }
  c.add(Pattern::CounterPrecision, specifics, nullptr,
        std::vector<int32_t>(rows.begin(), rows.end()));
  return true;
}

bool classify_reduction(Classifier& c, const RecordStats& st, const Matrix& reported,
                        const Matrix& rank_sum) {
  const DiagnosisInput& in = c.in();
  const auto& per_rank = *in.per_rank;
  const int w = static_cast<int>(per_rank.size());
  const int32_t classes = reported.classes;
  if (in.reported_per_rank) {
    std::vector<int> disagree;  // ranks whose report differs from the first rank's that said
    const Matrix* first = nullptr;
    int first_rank = -1;
    for (size_t r = 0; r < in.reported_per_rank->size(); ++r) {
      const auto& m = (*in.reported_per_rank)[r];
      if (!m) continue;
      if (!first) {
        first = &*m;
        first_rank = int(r);
      } else if (!nearly_equal(*m, *first)) {
        disagree.push_back(int(r));
      }
    }
    if (!disagree.empty()) {
      std::string list;
      for (int r : disagree) list += (list.empty() ? "" : ", ") + std::to_string(r);
      c.add(Pattern::Unsynced,
            "The ranks disagree on the reported matrix: rank " + std::to_string(first_rank) +
                " reported " + num(first->total()) + " counts, rank" +
                (disagree.size() == 1 ? " " : "s ") + list +
                " something else; a synchronized metric reports the same matrix on every rank.",
            nullptr, differing_rows(reported, rank_sum));
      return false;
    }
  }
  if (nearly_equal(reported, rank_sum)) return true;
  Matrix normalized_sum(classes);
  for (const Matrix& m : per_rank) normalized_sum += normalize(m, Normalization::True);
  if (nearly_equal(reported, normalized_sum)) {
    c.add(Pattern::NormalizeThenSum,
          "Rows of the reported matrix sum to the number of ranks that "
          "saw the class (up to " +
              std::to_string(w) + "), not to 1.",
          nullptr, differing_rows(reported, normalize(rank_sum, Normalization::True)));
    return false;
  }
  if (w > 1 && !all_zero(rank_sum) && nearly_equal(reported, rank_sum.scaled(w))) {
    c.add(Pattern::DoubleSync,
          "Every cell is exactly " + std::to_string(w) + " times the sum over ranks.", nullptr,
          differing_rows(reported, rank_sum));
    return false;
  }
  for (int r = 0; w > 1 && r < w; ++r) {
    if (nearly_equal(reported, per_rank[static_cast<size_t>(r)])) {
      c.add(Pattern::Unsynced,
            "The reported matrix equals rank " + std::to_string(r) + "'s own matrix (" +
                num(reported.total()) + " of " + num(rank_sum.total()) + " counts).",
            nullptr, differing_rows(reported, rank_sum));
      return false;
    }
  }
  // One rank too few or too many in the sum: a rank that never joined the reduction (too
  // low), or one whose counts were added again after it (too high).
  for (int r = 0; w > 2 && r < w; ++r) {
    const Matrix& own = per_rank[static_cast<size_t>(r)];
    if (all_zero(own)) continue;
    Matrix without = rank_sum, twice = rank_sum;
    for (size_t i = 0; i < own.cells.size(); ++i) {
      without.cells[i] -= own.cells[i];
      twice.cells[i] += own.cells[i];
    }
    if (nearly_equal(reported, without)) {
      c.add(Pattern::Unsynced,
            "The reported matrix is the sum of every rank but rank " + std::to_string(r) + " (" +
                num(reported.total()) + " of " + num(rank_sum.total()) +
                " counts): that rank's counts never reached the reduction.",
            nullptr, differing_rows(reported, rank_sum));
      return false;
    }
    if (nearly_equal(reported, twice)) {
      c.add(Pattern::DoubleSync,
            "The reported matrix is the sum over ranks with rank " + std::to_string(r) +
                "'s counts added a second time (" + num(reported.total()) + " for " +
                num(rank_sum.total()) + " counts).",
            nullptr, differing_rows(reported, rank_sum));
      return false;
    }
  }
  Matrix extra = reported;
  for (size_t i = 0; i < extra.cells.size(); ++i) extra.cells[i] -= rank_sum.cells[i];
  const double extra00 = extra.cells[0];
  extra.cells[0] = 0;
  // The padding a zero-padded gather adds: every rank is padded up to the longest one.
  const int64_t longest = *std::max_element(st.rank_sizes.begin(), st.rank_sizes.end());
  double padded_slots = 0;
  for (int64_t size : st.rank_sizes) padded_slots += static_cast<double>(longest - size);
  if (extra00 > 0 && extra00 == padded_slots && all_zero(extra)) {
    c.add(Pattern::GatherZeroPad,
          num(extra00) +
              " extra (0, 0) pairs: the zero padding of uneven "
              "rank tensors was counted.",
          nullptr, {0});
    return false;
  }
  if (in.batch_size && *in.batch_size > 0) {
    // Replay gather_for_metrics on the records, exhausted or not, and compare.
    for (bool exhausted : {true, false}) {
      const auto kept =
          gather_for_metrics_records(*in.records, in.dataset_size, *in.batch_size, exhausted);
      Matrix g(classes);
      SampleSet padding_kept;
      for (const Record& r : kept) {
        if (r.target >= 0 && r.target < classes && r.prediction >= 0 && r.prediction < classes) {
          g.at(r.target, r.prediction) += 1;
        }
        if (r.flags & kPadding) padding_kept.add(r.index, r.target);
      }
      if (nearly_equal(reported, g)) {
        c.add(Pattern::GatherForMetricsMismatch,
              num(rank_sum.total() - g.total()) +
                  " records were trimmed from the last gathered "
                  "batch while " +
                  std::to_string(padding_kept.count) + " padding duplicates were kept.",
              &padding_kept, differing_rows(g, rank_sum));
        return false;
      }
    }
  }
  // A float all_reduce rounds at each of its W - 1 additions: every cell stays within
  // W - 1 spacings of the exact sum.
  std::vector<CellDifference> diffs;
  for (size_t i = 0; i < reported.cells.size(); ++i)
    if (reported.cells[i] != rank_sum.cells[i])
      diffs.push_back({-1, int32_t(i / size_t(classes)), int32_t(i % size_t(classes)),
                       reported.cells[i], rank_sum.cells[i]});
  if (w > 1)
    add_precision_finding(c, diffs, {&reported}, double(w - 1), "the synced matrix",
                          "the exact sum of the ranks' matrices");
  return false;
}

// Counting patterns: each rank's matrix against the exact count of its records.
void classify_counting(Classifier& c, const RecordStats& st, const std::vector<Matrix>& exact,
                       const Matrix& record_sum, const Matrix& rank_sum) {
  const DiagnosisInput& in = c.in();
  const int32_t classes = record_sum.classes;
  const auto record_rows = record_sum.row_sums();
  const auto rank_rows = rank_sum.row_sums();
  std::vector<int32_t> ignored;
  for (int32_t k = 0; k < classes; ++k) {
    if (record_rows[k] > 0 && rank_rows[k] == 0) ignored.push_back(k);
  }
  if (!ignored.empty() || st.invalid > 0) {
    std::string what = std::to_string(ignored.size()) +
                       " class(es) evaluated but absent from the "
                       "matrix";
    if (in.ignore_index >= 0) what += " (ignore_index=" + std::to_string(in.ignore_index) + ")";
    if (st.invalid > 0) what += "; " + std::to_string(st.invalid) + " records out of range";
    c.add(Pattern::IgnoredTargets, what + ".", nullptr, ignored);
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
    for (int32_t i = 0; i < classes; ++i) {
      if (std::binary_search(ignored.begin(), ignored.end(), i)) continue;
      for (int32_t j = 0; j < classes; ++j)
        if (got.at(i, j) != want.at(i, j))
          diffs.push_back({int(r), i, j, got.at(i, j), want.at(i, j)});
    }
  }
  // Each batch rounds a cell at most once, so a rank's records bound the roundings.
  if (!add_precision_finding(c, diffs, observed, double(most_records), "the ranks' matrices",
                             "the records' exact count")) {
    std::set<int32_t> rows;
    for (const CellDifference& d : diffs) rows.insert(d.row);
    c.add(Pattern::UnexplainedDifference,
          counted(static_cast<int64_t>(diffs.size()), "cell") +
              " of the ranks' matrices differ from their records' exact count, which no float "
              "counter's rounding explains (" +
              describe_cell(diffs.front(), "the records' exact count") + ").",
          nullptr, std::vector<int32_t>(rows.begin(), rows.end()));
  }
}

bool every_rank_has(const RecordStats& st, int64_t size) {
  for (int64_t s : st.rank_sizes)
    if (s != size) return false;
  return true;
}

// Why samples are missing when no overlap explains it: which drop or limit cut them.
void classify_missing(Classifier& c, const RecordStats& st, const SampleSet& missing) {
  const DiagnosisInput& in = c.in();
  const auto w = static_cast<int64_t>(st.rank_sizes.size());
  const int64_t n = in.dataset_size;
  const int64_t padded_share = (n + w - 1) / w;
  const int64_t dropped_share = distributed_num_samples(n, static_cast<int>(w), true);
  const std::string counts =
      counted(missing.count, "sample", "never evaluated") + " (of " + std::to_string(n) + ").";
  const int64_t b = in.batch_size.value_or(0);
  // Records cannot tell a drop from a batch limit that stops at the same sample; say so.
  const auto or_a_limit = [b](int64_t per_rank) {
    if (b < 1 || per_rank % b != 0) return std::string();
    return " A batch limit of " + std::to_string(per_rank / b) +
           " batch(es) would cut the same samples: if drop_last is off, look at the limit.";
  };
  if (n % w != 0 && every_rank_has(st, dropped_share) && missing.count == n - w * dropped_share) {
    c.add(Pattern::SamplerDropLast, counts + or_a_limit(dropped_share), &missing);
    return;
  }
  if (b > 1 && missing.count < w * b &&
      (every_rank_has(st, padded_share / b * b) || every_rank_has(st, dropped_share / b * b))) {
    c.add(Pattern::LoaderDropLast,
          counts + " Each rank evaluated whole batches of " + std::to_string(b) + " only." +
              or_a_limit(st.rank_sizes.front()),
          &missing);
    return;
  }
  c.add(Pattern::BatchLimitSubset, counts, &missing);
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
    c.add(Pattern::SanityLeak,
          counted(st.flagged_sanity.count, "record", "evaluated in the sanity check") + ".",
          &st.flagged_sanity);
  } else if (st.within_rank_duplicates.count > 0 && !in.inner_with_replacement.value_or(false) &&
             in.records && repeats_are_a_leaked_prefix(*in.records)) {
    c.add(Pattern::SanityLeak,
          counted(st.within_rank_duplicates.count, "sample", "evaluated twice by the same rank") +
              ", each rank's first records again right after them.",
          &st.within_rank_duplicates);
  }
  const SampleSet& cross = st.cross_rank_duplicates;
  if (w > 1 && every_rank_has(st, st.rank_sizes.front()) && st.rank_sizes.front() > 0 &&
      cross.count >= (w - 1) * st.rank_sizes.front()) {
    c.add(Pattern::NoDistributedSampler,
          "All " + std::to_string(w) + " ranks evaluated the same " +
              std::to_string(st.rank_sizes.front()) + " samples.",
          nullptr);
    return;
  }
  bool padding = false;
  if (st.flagged_padding.count > 0) {
    padding = true;
    c.add(Pattern::PaddingDuplicates,
          counted(st.flagged_padding.count, "padding record", "counted") + ".",
          &st.flagged_padding);
  } else if (cross.count > 0 && cross.count < w && cross.count == st.cross_rank_at_rank_end) {
    padding = true;
    c.add(
        Pattern::PaddingDuplicates,
        counted(cross.count, "sample", "evaluated again as the last record of another rank") + ".",
        &cross);
  }
  const bool overlap = st.flagged_padding.count > 0 ? cross.count > st.flagged_padding.count
                                                    : cross.count > 0 && !padding;
  if (overlap) {
    c.add(Pattern::RankOverlap,
          counted(cross.count, "evaluation") +
              " repeated a sample another rank had evaluated, and " +
              counted(missing.count, "sample", "never evaluated") + ".",
          &cross, std::vector<int32_t>(missing.classes.begin(), missing.classes.end()));
  } else if (missing.count > 0) {
    classify_missing(c, st, missing);
  }
  if (st.shuffled_order && !overlap && (missing.count > 0 || padding)) {
    c.add(Pattern::ShuffledEval, "The evaluation order is shuffled, so this changes every epoch.",
          missing.count > 0 ? &missing : &st.flagged_padding);
  }
}

}  // namespace

Diagnosis diagnose(const DiagnosisInput& in) {
  Diagnosis out;
  const Matrix& reported = *in.reported;
  const int32_t classes = reported.classes;
  std::optional<RecordStats> walked;
  if (!in.stats) walked = collect_stats(*in.records, in.dataset_size, classes);
  const RecordStats& st = in.stats ? *in.stats : *walked;
  const Matrix rank_sum = sum_of(*in.per_rank, classes);
  const std::vector<Matrix>& exact = st.exact_per_rank.empty() ? *in.per_rank : st.exact_per_rank;
  std::optional<Matrix> exact_sum;  // only when the counter was not exact
  if (!st.exact_per_rank.empty()) exact_sum = sum_of(exact, classes);
  const Matrix& record_sum = exact_sum ? *exact_sum : rank_sum;

  SampleSet missing;
  for (size_t i = 0; i < st.times.size(); ++i) {
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
  int64_t distinct = 0;
  int64_t duplicated = 0;
  for (uint8_t t : st.times) {
    distinct += t > 0;
    duplicated += t > 1;
  }
  out.reported_total = reported.total();
  for (int64_t k : in.class_counts) out.expected_total += k;
  out.evaluated_records = st.records;
  out.distinct_evaluated = distinct;
  out.duplicated_samples = duplicated;
  out.missing_samples = missing.count;
  const auto rows = reported.row_sums();
  for (int32_t r = 0; r < classes; ++r) {
    const double want = r < static_cast<int32_t>(in.class_counts.size()) ? in.class_counts[r] : 0;
    if (std::abs(rows[r] - want) > 1e-9) out.mismatched_rows.push_back(r);
  }
  if (in.expected) {
    out.correct = reported == *in.expected;
  } else {
    out.correct = missing.count == 0 && duplicated == 0 && reported == record_sum &&
                  out.mismatched_rows.empty();
  }
  if (out.correct) return out;

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
    c.add(Pattern::UnexplainedDifference, "", nullptr, out.mismatched_rows);
  }
  return out;
}

Diagnosis diagnose_incomplete(const RecordSource& records, const std::vector<int64_t>& class_counts,
                              const std::vector<uint8_t>& times_evaluated, const std::string& why) {
  Diagnosis d;
  d.correct = false;
  for (int64_t c : class_counts) d.expected_total += c;
  for (int r = 0; r < records.world_size(); ++r) d.evaluated_records += records.rank_size(r);
  for (uint8_t t : times_evaluated) {
    d.distinct_evaluated += t > 0;
    d.duplicated_samples += t > 1;
    d.missing_samples += t == 0;
  }
  Finding f = describe_pattern(Pattern::IncompleteRun);
  f.explanation = "The run ended before its sync (" + why +
                  "), so there is no reported matrix to check. The per-rank matrices and records "
                  "show what each rank had counted when it stopped.";
  d.findings.push_back(std::move(f));
  return d;
}

Diagnosis diagnose_nothing_recorded(const std::vector<int64_t>& class_counts) {
  Diagnosis d;
  d.correct = false;
  for (int64_t c : class_counts) d.expected_total += c;
  d.findings.push_back(describe_pattern(Pattern::NothingRecorded));
  return d;
}

}  // namespace shardlens
