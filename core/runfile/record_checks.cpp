#include "core/runfile/record_checks.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "core/diagnosis/row_check.h"
#include "core/vocabulary/counter.h"
#include "core/vocabulary/types.h"

namespace shardlens {
namespace {

[[noreturn]] void fail(const std::string& origin, const std::string& what) {
  throw InputError(origin + ": " + what);
}

// A count as the file holds it: whole numbers without a fraction, others in full.
std::string count_text(double v) {
  if (std::isinf(v)) return "infinity";
  std::ostringstream out;
  if (v == std::floor(v) && std::fabs(v) < 9.2e18) {
    out << static_cast<int64_t>(v);
  } else {
    out << std::setprecision(17) << v;
  }
  return out.str();
}

std::string cell_text(int32_t classes, size_t i) {
  return "row " + std::to_string(i / size_t(classes)) + ", column " +
         std::to_string(i % size_t(classes));
}

// "1 sample", "3 distinct samples"; of a task of many counts "3 pixels", "3 distinct pixels".
std::string samples(int64_t n, const std::string& kind = "", Task task = Task::Classification) {
  return std::to_string(n) + " " + kind + (n == 1 ? count_unit_one(task) : count_unit(task));
}

// One bit per dataset index.
class IndexBits {
 public:
  explicit IndexBits(int64_t n) : m_words(static_cast<size_t>((n + 63) / 64), 0) {}
  // Sets the bit; true when it was clear.
  bool first(int64_t i) {
    uint64_t& w = m_words[static_cast<size_t>(i >> 6)];
    const uint64_t bit = uint64_t(1) << (i & 63);
    const bool clear = (w & bit) == 0;
    w |= bit;
    return clear;
  }

 private:
  std::vector<uint64_t> m_words;
};

// Rank r's matrix against its records: the records counted as the run's counter counts
// them (a target equal to ignore_index is not counted).
void check_rank_matrix(const RunFile& run, int r, CounterDtype dtype, const std::string& origin) {
  const RunMetadata& m = run.meta;
  const int32_t c = m.classes;
  Matrix counted(c);
  count_records(counted, run.records.ranks[size_t(r)], m.ignore_index, run.records.cell_table());
  const Matrix& held = run.per_rank[size_t(r)];
  // Every integer up to the stall count is exact in the counter, so are the partial sums
  // below it; past it the value never falls back under it (rounding is monotone).
  const double stall = stall_count(dtype);
  const std::string name = "rank" + std::to_string(r) + "_matrix.npy";
  for (size_t i = 0; i < counted.cells.size(); ++i) {
    const double n = counted.cells[i];
    const double v = held.cells[i];
    const bool exact = dtype == CounterDtype::Int64 || n <= stall;
    if (exact ? v == n : v >= stall && round_to_dtype(v, dtype) == v) continue;
    std::string why = "but rank " + std::to_string(r) + "'s records hold " +
                      samples(int64_t(n), "", m.task) + " of class " +
                      std::to_string(i / size_t(c)) + " predicted as " +
                      std::to_string(i % size_t(c));
    if (dtype != CounterDtype::Int64) {
      why += exact
                 ? " (a " + to_string(dtype) + " counter is exact up to " + count_text(stall) + ")"
                 : ", which a " + to_string(dtype) + " counter keeps at " + count_text(stall) +
                       " or more, on values it can hold";
    }
    fail(origin,
         "member " + name + " holds " + count_text(v) + " at " + cell_text(c, i) + ", " + why);
  }
}

// What the records prove about the dataset: the distinct samples of each class (first record
// of each index with a class target, sanity check included, as an import estimates the class
// counts) and one count per distinct evaluated sample (its first evaluation outside the
// sanity check, as the diagnosis counts them).
struct DistinctSamples {
  std::vector<int64_t> per_class;
  Matrix evaluated;
};

DistinctSamples distinct_samples(const RunFile& run) {
  const RunMetadata& m = run.meta;
  const int32_t c = m.classes;
  const int64_t n = m.dataset_size;
  DistinctSamples out{std::vector<int64_t>(size_t(c), 0), Matrix(c)};
  IndexBits any(n), outside_sanity(n);
  // A sample of many counts adds its cells (validate_run: its row exists, of C classes).
  const CellTable* cells = run.records.cell_table();
  for (const auto& rank : run.records.ranks) {
    for (const Record& rec : rank) {
      if (rec.index < 0 || rec.index >= n || rec.target < 0 || rec.target >= c ||
          rec.prediction < 0 || rec.prediction >= c)
        continue;
      if (cells && rec.cells != kOneCell) {
        if (any.first(rec.index)) {
          const auto keys = cells->keys_of(rec.cells);
          const auto counts = cells->counts_of(rec.cells);
          for (size_t k = 0; k < keys.size(); ++k)
            out.per_class[keys[k] / uint32_t(c)] += counts[k];
        }
        if ((rec.flags & kSanity) == 0 && outside_sanity.first(rec.index))
          count_sample_cells(out.evaluated, *cells, rec.cells, -1);
        continue;
      }
      if (any.first(rec.index)) ++out.per_class[size_t(rec.target)];
      if ((rec.flags & kSanity) == 0 && outside_sanity.first(rec.index))
        out.evaluated.at(rec.target, rec.prediction) += 1;
    }
  }
  return out;
}

void check_class_counts(const RunFile& run, const DistinctSamples& seen,
                        const std::string& origin) {
  const std::vector<int64_t>& counts = run.meta.class_counts;
  for (size_t k = 0; k < counts.size(); ++k) {
    if (seen.per_class[k] <= counts[k]) continue;
    const Task task = run.meta.task;
    fail(origin, "meta.json: 'class_counts' gives class " + std::to_string(k) + " " +
                     samples(counts[k], "", task) + ", but the records evaluate " +
                     samples(seen.per_class[k], "distinct ", task) + " of it");
  }
}

// The expected matrix counts one prediction of every dataset index.
void check_expected(const RunFile& run, const DistinctSamples& seen, const std::string& origin) {
  const RunMetadata& m = run.meta;
  const Matrix& x = *run.expected;
  const int32_t c = m.classes;
  const std::string member = "member expected.npy";
  for (size_t i = 0; i < x.cells.size(); ++i) {
    const double v = x.cells[i];
    if (std::isfinite(v) && v == std::floor(v)) continue;
    fail(origin, member + " holds " + count_text(v) + " at " + cell_text(c, i) +
                     ": it counts one prediction per dataset index, in whole numbers");
  }
  const RowCheck rows = check_rows(x, m.class_counts);
  if (!rows.wrong_rows.empty()) {
    const int32_t r = rows.wrong_rows.front();
    fail(origin, member + ": row " + std::to_string(r) + " sums to " +
                     count_text(rows.observed[size_t(r)]) +
                     ", but meta.json 'class_counts' gives class " + std::to_string(r) + " " +
                     samples(m.class_counts[size_t(r)], "", m.task));
  }
  // A sample of many counts adds its pixels or tokens, which the rows above check.
  if (m.task == Task::Classification && x.total() != double(m.dataset_size))
    fail(origin, member + " counts " + count_text(x.total()) +
                     " samples, but meta.json 'dataset_size' is " + std::to_string(m.dataset_size));
  for (size_t i = 0; i < x.cells.size(); ++i) {
    const double n = seen.evaluated.cells[i];
    if (x.cells[i] >= n) continue;
    fail(origin, member + " holds " + count_text(x.cells[i]) + " at " + cell_text(c, i) +
                     ", but the records evaluate " + samples(int64_t(n), "distinct ", m.task) +
                     " of class " + std::to_string(i / size_t(c)) + " predicted as " +
                     std::to_string(i % size_t(c)) + ", each counted once in the expected matrix");
  }
}

// A stored synced matrix that meta.json calls the sum of the ranks must be that sum: it is
// labelled "computed" in every report, so a file whose ranks sum to another matrix would put
// a provenance on it that it does not have.
void check_sum_of_ranks(const RunFile& run, const std::string& origin) {
  if (run.meta.synced_origin != SyncedOrigin::SumOfRanks || run.synced.classes == 0) return;
  const int32_t c = run.synced.classes;
  for (size_t i = 0; i < run.synced.cells.size(); ++i) {
    double sum = 0;
    for (const Matrix& rank : run.per_rank) sum += rank.cells[i];
    if (run.synced.cells[i] == sum) continue;
    fail(origin, "member synced.npy holds " + count_text(run.synced.cells[i]) + " at " +
                     cell_text(c, i) + ", but meta.json calls it the sum of the ranks' matrices " +
                     "(synced_origin 'sum-of-ranks') and they sum to " + count_text(sum) +
                     " there");
  }
}

}  // namespace

void check_run_against_records(const RunFile& run, const std::string& origin) {
  const RunMetadata& m = run.meta;
  // A dump's own matrix is its counter's, which the records do not tell: an import lists the
  // ranks it gave, and one written before it listed them may have given any.
  const bool any_provided = m.source == "imported" && !m.provided_matrices;
  const CounterDtype dtype = m.scenario ? m.scenario->dtype : CounterDtype::Int64;
  for (int r = 0; r < m.world_size && !any_provided; ++r) {
    const auto& listed = m.provided_matrices;
    if (listed && std::find(listed->begin(), listed->end(), r) != listed->end()) continue;
    check_rank_matrix(run, r, dtype, origin);
  }
  check_sum_of_ranks(run, origin);
  const DistinctSamples seen = distinct_samples(run);
  check_class_counts(run, seen, origin);
  if (run.expected) check_expected(run, seen, origin);
}

}  // namespace shardlens
