#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/diagnosis/diagnosis.h"
#include "core/diagnosis/framework_patterns.h"
#include "core/diagnosis/stats.h"
#include "core/torchsem/sampler.h"
#include "core/torchsem/sync.h"

namespace shardlens {

namespace {

using detail::RecordStats;
using detail::SampleSet;

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
  return false;
}

// Counting patterns: each rank's matrix against the exact count of its records.
void classify_counting(Classifier& c, const RecordStats& st, const Matrix& record_sum,
                       const Matrix& rank_sum) {
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
  // Stalled cells: a rank counted fewer than its records in a class that was not ignored.
  std::set<int32_t> stalled_rows;
  double largest_stalled = 0;
  int64_t stalled_cells = 0;
  for (size_t r = 0; r < in.per_rank->size(); ++r) {
    const Matrix& got = (*in.per_rank)[r];
    const Matrix& want = st.per_rank[r];
    for (int32_t i = 0; i < classes; ++i) {
      if (std::find(ignored.begin(), ignored.end(), i) != ignored.end()) continue;
      for (int32_t j = 0; j < classes; ++j) {
        if (got.at(i, j) < want.at(i, j)) {
          stalled_rows.insert(i);
          ++stalled_cells;
          largest_stalled = std::max(largest_stalled, got.at(i, j));
        }
      }
    }
  }
  if (stalled_cells > 0) {
    c.add(Pattern::CounterPrecision,
          std::to_string(stalled_cells) +
              " cell(s) hold fewer counts than "
              "their records (largest stalled value " +
              num(largest_stalled) + ").",
          nullptr, std::vector<int32_t>(stalled_rows.begin(), stalled_rows.end()));
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

void classify_sampling(Classifier& c, const RecordStats& st, const SampleSet& missing) {
  const auto w = static_cast<int64_t>(st.rank_sizes.size());
  if (st.flagged_sanity.count > 0) {
    c.add(Pattern::SanityLeak,
          counted(st.flagged_sanity.count, "record", "evaluated in the sanity check") + ".",
          &st.flagged_sanity);
  } else if (st.within_rank_duplicates.count > 0) {
    c.add(Pattern::SanityLeak,
          counted(st.within_rank_duplicates.count, "sample", "evaluated twice by the same rank") +
              ".",
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
  const RecordStats st = detail::collect_stats(in, classes);
  const Matrix rank_sum = sum_of(*in.per_rank, classes);
  const Matrix record_sum = sum_of(st.per_rank, classes);

  SampleSet missing;
  for (size_t i = 0; i < st.times.size(); ++i) {
    if (st.times[i] == 0) {
      const int32_t cls = in.targets ? (*in.targets)[i] : -1;
      missing.add(static_cast<int64_t>(i), cls);
    }
  }
  if (!in.targets && in.distinct && missing.count > 0) {
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
  classify_counting(c, st, record_sum, rank_sum);
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

}  // namespace shardlens
