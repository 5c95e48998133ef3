#include "core/report/confusion_ranking.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "core/report/report.h"

namespace shardlens {

namespace {

// fastai's order: the larger count first, then the lower true class, then the lower
// predicted class. Infinity (a float counter's overflow) is the largest count.
bool before(double count_a, int32_t true_a, int32_t pred_a, double count_b, int32_t true_b,
            int32_t pred_b) {
  if (count_a != count_b) return count_a > count_b;
  return std::tie(true_a, pred_a) < std::tie(true_b, pred_b);
}

bool pair_before(const ConfusedPair& a, const ConfusedPair& b) {
  return before(a.count, a.true_class, a.predicted, b.count, b.true_class, b.predicted);
}

bool counts_as_confused(double v, double min_count) {
  return !std::isnan(v) && v >= min_count;
}

}  // namespace

std::vector<ConfusedPair> most_confused(const Matrix& m, size_t top, double min_count) {
  // The `top` first kept in a heap whose front is the last of them: at 1000 classes there
  // may be a million confused cells, and only a few are asked for.
  std::vector<ConfusedPair> kept;
  if (top == 0) return kept;
  for (int32_t t = 0; t < m.classes; ++t)
    for (int32_t p = 0; p < m.classes; ++p) {
      const double v = m.at(t, p);
      if (t == p || !counts_as_confused(v, min_count)) continue;
      if (kept.size() == top) {
        if (!before(v, t, p, kept.front().count, kept.front().true_class, kept.front().predicted))
          continue;
        std::pop_heap(kept.begin(), kept.end(), pair_before);
        kept.pop_back();
      }
      kept.push_back({t, p, v, {}, {}});
      std::push_heap(kept.begin(), kept.end(), pair_before);
    }
  std::sort_heap(kept.begin(), kept.end(), pair_before);
  return kept;
}

// Walking every pair largest first and placing its true, then its predicted class, a class is
// placed at the first pair that names it: its own largest cell in its row or its column. So
// each class's key is that cell (and whether the class is the cell's true class), found in one
// pass over the matrix instead of sorting up to C^2 cells.
std::vector<int32_t> order_by_confusion(const Matrix& m) {
  struct Key {
    bool confused = false;
    double count = 0;
    int32_t true_class = 0, predicted = 0;
    bool as_predicted = false;  // placed as the cell's predicted class (after its true class)
  };
  const size_t c = size_t(std::max(m.classes, 0));
  std::vector<Key> key(c);
  auto offer = [&](int32_t cls, double v, int32_t t, int32_t p) {
    Key& k = key[size_t(cls)];
    const bool as_predicted = cls == p;
    if (!k.confused || before(v, t, p, k.count, k.true_class, k.predicted))
      k = {true, v, t, p, as_predicted};
  };
  for (int32_t t = 0; t < m.classes; ++t)
    for (int32_t p = 0; p < m.classes; ++p) {
      const double v = m.at(t, p);
      if (t == p || !counts_as_confused(v, 1)) continue;
      offer(t, v, t, p);
      offer(p, v, t, p);
    }
  std::vector<int32_t> order(c);
  for (size_t i = 0; i < c; ++i) order[i] = int32_t(i);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const Key& ka = key[size_t(a)];
    const Key& kb = key[size_t(b)];
    if (ka.confused != kb.confused) return ka.confused;
    if (!ka.confused) return false;  // both unconfused: by id (stable)
    if (ka.count != kb.count || ka.true_class != kb.true_class || ka.predicted != kb.predicted)
      return before(ka.count, ka.true_class, ka.predicted, kb.count, kb.true_class, kb.predicted);
    return !ka.as_predicted && kb.as_predicted;
  });
  return order;
}

Matrix ranked_matrix(const Evaluation& e) {
  if (e.synced) return *e.synced;
  if (e.per_rank.empty()) return Matrix();
  Matrix sum(e.per_rank.front().classes);
  for (const Matrix& m : e.per_rank)
    if (m.classes == sum.classes) sum += m;
  return sum;
}

namespace {

// WrongRow::repeated of `rows`, in one walk over the records.
void attribute_repeats(const Evaluation& e, std::vector<WrongRow>& rows) {
  if (rows.empty() || !e.records || e.records->cell_table() || e.times_evaluated.empty()) return;
  const int world = e.records->world_size();
  int64_t total = 0;
  for (int k = 0; k < world; ++k) total += e.records->rank_size(k);
  if (total > kMaxAttributedRecords) return;
  std::vector<int32_t> slot(size_t(std::max(e.classes(), 0)), -1);
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].row < e.classes()) slot[size_t(rows[i].row)] = int32_t(i);
  std::vector<std::vector<double>> counts(rows.size(), std::vector<double>(size_t(world), 0.0));
  for (int k = 0; k < world; ++k)
    for_each_record(*e.records, k, [&](const Record& r) {
      if (r.target < 0 || r.target >= e.classes() || slot[size_t(r.target)] < 0) return;
      const size_t index = size_t(r.index);
      if (index < e.times_evaluated.size() && e.times_evaluated[index] > 1)
        counts[size_t(slot[size_t(r.target)])][size_t(k)] += 1;
    });
  for (size_t i = 0; i < rows.size(); ++i)
    for (int k = 0; k < world; ++k)
      if (counts[i][size_t(k)] != 0) rows[i].repeated.push_back({k, counts[i][size_t(k)]});
}

}  // namespace

ConfusionRanking rank_confusion(const Evaluation& e, size_t top, double min_count,
                                Repeats repeats) {
  ConfusionRanking out;
  const Matrix m = ranked_matrix(e);
  out.pairs = most_confused(m, top, min_count);
  for (int32_t t = 0; t < m.classes; ++t)
    for (int32_t p = 0; p < m.classes; ++p)
      if (t != p && counts_as_confused(m.at(t, p), min_count)) ++out.confused_cells;
  for (ConfusedPair& pair : out.pairs) {
    if (e.expected && e.expected->classes == m.classes)
      pair.expected = e.expected->at(pair.true_class, pair.predicted);
    for (size_t k = 0; k < e.per_rank.size(); ++k) {
      const Matrix& r = e.per_rank[k];
      if (r.classes != m.classes) continue;
      const double v = r.at(pair.true_class, pair.predicted);
      if (v != 0) pair.ranks.push_back({int32_t(k), v});
    }
  }
  const RowCheck& check = e.row_check;
  out.wrong_total = check.wrong_rows.size();
  for (int32_t row : check.by_error) {
    if (out.wrong_rows.size() >= top) break;
    if (!check.is_wrong(row)) continue;
    const size_t r = size_t(row);
    WrongRow w{row, check.observed[r], check.truth[r], check.off[r], {}};
    for (size_t k = 0; k < e.per_rank.size(); ++k) {
      const Matrix& rank = e.per_rank[k];
      if (row >= rank.classes) continue;
      double sum = 0;
      for (int32_t p = 0; p < rank.classes; ++p) sum += rank.at(row, p);
      if (sum != 0) w.ranks.push_back({int32_t(k), sum});
    }
    out.wrong_rows.push_back(std::move(w));
  }
  if (repeats == Repeats::FromRecords) attribute_repeats(e, out.wrong_rows);
  return out;
}

namespace {

constexpr size_t kRanksALine = 8;

std::string ranks_text(const std::vector<RankCount>& ranks) {
  if (ranks.empty()) return "no rank";
  std::string s;
  for (size_t i = 0; i < std::min(ranks.size(), kRanksALine); ++i)
    s += (i ? ", r" : "r") + std::to_string(ranks[i].rank) + ": " + count_text(ranks[i].count);
  if (ranks.size() > kRanksALine)
    s += ", ... (" + std::to_string(ranks.size() - kRanksALine) + " more ranks)";
  return s;
}

nlohmann::json ranks_json(const std::vector<RankCount>& ranks) {
  nlohmann::json a = nlohmann::json::array();
  for (const RankCount& r : ranks) a.push_back({{"rank", r.rank}, {"count", count_json(r.count)}});
  return a;
}

}  // namespace

std::string confusion_ranking_text(const Evaluation& e, const ConfusionRanking& ranking) {
  std::ostringstream out;
  auto name = [&](int32_t c) {
    return size_t(c) < e.meta.class_names.size() ? e.meta.class_names[size_t(c)]
                                                 : std::to_string(c);
  };
  if (!ranking.pairs.empty()) {
    out << "\nMost confused pairs (true -> predicted: count" << (e.expected ? ", expected" : "")
        << "; ranks that counted it)\n";
    for (const ConfusedPair& p : ranking.pairs) {
      out << "  " << std::left << std::setw(30) << (name(p.true_class) + " -> " + name(p.predicted))
          << std::right << std::setw(10) << count_text(p.count);
      if (p.expected) out << std::setw(10) << count_text(*p.expected);
      out << "   " << ranks_text(p.ranks) << "\n";
    }
    if (ranking.confused_cells > ranking.pairs.size())
      out << "  ... " << ranking.confused_cells - ranking.pairs.size() << " more confused cells\n";
  }
  if (!ranking.wrong_rows.empty()) {
    out << "\nWrong rows, worst first (observed vs expected; each rank's row sum)\n";
    for (const WrongRow& w : ranking.wrong_rows) {
      out << "  !! " << std::left << std::setw(14) << name(w.row) << std::right << std::setw(12)
          << count_text(w.observed) << std::setw(12) << count_text(double(w.truth)) << "   ("
          << (w.off > 0 ? "+" : "") << count_text(w.off) << ")   " << ranks_text(w.ranks);
      out << "\n";
    }
    if (ranking.wrong_total > ranking.wrong_rows.size())
      out << "  ... " << ranking.wrong_total - ranking.wrong_rows.size() << " more wrong rows\n";
  }
  return out.str();
}

nlohmann::json confusion_ranking_json(const ConfusionRanking& ranking) {
  nlohmann::json pairs = nlohmann::json::array();
  for (const ConfusedPair& p : ranking.pairs)
    pairs.push_back({{"true", p.true_class},
                     {"predicted", p.predicted},
                     {"count", count_json(p.count)},
                     {"expected", p.expected ? count_json(*p.expected) : nlohmann::json()},
                     {"ranks", ranks_json(p.ranks)}});
  nlohmann::json rows = nlohmann::json::array();
  for (const WrongRow& w : ranking.wrong_rows)
    rows.push_back({{"class", w.row},
                    {"observed", count_json(w.observed)},
                    {"expected", w.truth},
                    {"difference", count_json(w.off)},
                    {"ranks", ranks_json(w.ranks)}});
  return {{"most_confused", pairs},
          {"confused_cells", ranking.confused_cells},
          {"wrong_rows", rows},
          {"wrong_total", ranking.wrong_total}};
}

}  // namespace shardlens
