#include "core/report/metrics.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/io/csv.h"

namespace shardlens {

using nlohmann::json;

namespace {

double safe_divide(double a, double b) {
  return b == 0 ? 0.0 : a / b;
}

// Below this a metric's difference is the floating-point noise of summing in another order.
constexpr double kDifferenceNoise = 1e-12;

std::string number_text(double v) {
  std::ostringstream s;
  s.precision(12);
  s << v;
  return s.str();
}

json difference_json(const Metrics& r, const Metrics& e) {
  auto diff = [](const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<double> d(a.size());
    for (size_t i = 0; i < a.size(); ++i) d[i] = a[i] - b[i];
    return d;
  };
  return {{"accuracy", r.accuracy - e.accuracy}, {"precision", diff(r.precision, e.precision)},
          {"recall", diff(r.recall, e.recall)},  {"f1", diff(r.f1, e.f1)},
          {"macro_f1", r.macro_f1 - e.macro_f1}, {"weighted_f1", r.weighted_f1 - e.weighted_f1}};
}

}  // namespace

Metrics compute_metrics(const Matrix& m) {
  Metrics out;
  const int32_t c = m.classes;
  const auto rows = m.row_sums();
  std::vector<double> cols(static_cast<size_t>(c), 0.0);
  double total = 0, correct = 0;
  for (int32_t i = 0; i < c; ++i) {
    for (int32_t j = 0; j < c; ++j) {
      cols[size_t(j)] += m.at(i, j);
      total += m.at(i, j);
    }
    correct += m.at(i, i);
  }
  out.accuracy = safe_divide(correct, total);
  double macro_sum = 0, macro_weight = 0, weighted_sum = 0, support_sum = 0;
  for (int32_t k = 0; k < c; ++k) {
    const double tp = m.at(k, k);
    const double fp = cols[size_t(k)] - tp;
    const double fn = rows[size_t(k)] - tp;
    out.precision.push_back(safe_divide(tp, tp + fp));
    out.recall.push_back(safe_divide(tp, tp + fn));
    const double f1 = safe_divide(2 * tp, 2 * tp + fp + fn);
    out.f1.push_back(f1);
    if (tp + fp + fn > 0) {
      macro_sum += f1;
      macro_weight += 1;
    }
    weighted_sum += f1 * (tp + fn);
    support_sum += tp + fn;
  }
  out.macro_f1 = safe_divide(macro_sum, macro_weight);
  out.weighted_f1 = safe_divide(weighted_sum, support_sum);
  return out;
}

json metrics_json(const Metrics& m) {
  return {{"accuracy", m.accuracy}, {"precision", m.precision},
          {"recall", m.recall},     {"f1", m.f1},
          {"macro_f1", m.macro_f1}, {"weighted_f1", m.weighted_f1}};
}

namespace {

// Each rank's (total, correct): complete_evaluation's, else counted here (an evaluation
// assembled by hand).
std::vector<RankTally> rank_sums(const Evaluation& e) {
  std::vector<RankTally> out;
  const bool stored =
      e.rank_totals.size() == e.per_rank.size() && e.rank_correct.size() == e.per_rank.size();
  for (size_t r = 0; r < e.per_rank.size(); ++r)
    out.push_back({stored ? e.rank_totals[r] : e.per_rank[r].total(),
                   stored ? e.rank_correct[r] : e.per_rank[r].diagonal_sum()});
  return out;
}

}  // namespace

std::optional<double> rank_mean_accuracy(const Evaluation& e) {
  return logged_rank_mean(rank_sums(e));
}

std::optional<double> batch_logged_accuracy(const Evaluation& e) {
  return logged_per_batch(rank_sums(e));
}

json evaluation_metrics_json(const Evaluation& e) {
  std::optional<Metrics> reported, expected;
  if (e.synced) reported = compute_metrics(*e.synced);
  if (e.expected) expected = compute_metrics(*e.expected);
  const std::optional<double> rank_mean = rank_mean_accuracy(e);
  const std::optional<double> batch_logged = batch_logged_accuracy(e);
  return {
      {"reported", reported ? metrics_json(*reported) : json(nullptr)},
      {"expected", expected ? metrics_json(*expected) : json(nullptr)},
      {"difference", reported && expected ? difference_json(*reported, *expected) : json(nullptr)},
      {"rank_mean_accuracy", rank_mean ? json(*rank_mean) : json(nullptr)},
      {"batch_logged_accuracy", batch_logged ? json(*batch_logged) : json(nullptr)}};
}

std::string difference_text(double v) {
  std::ostringstream s;
  if (std::abs(v) <= kDifferenceNoise) return "0.0000";
  if (std::abs(v) < 5e-5)
    s << std::showpos << std::scientific << std::setprecision(1) << v;
  else
    s << std::showpos << std::fixed << std::setprecision(4) << v;
  return s.str();
}

std::vector<MetricRow> metric_rows(const Evaluation& e) {
  std::vector<MetricRow> rows;
  if (!e.expected) return rows;
  const Metrics want = compute_metrics(*e.expected);
  std::optional<Metrics> got;
  if (e.synced) got = compute_metrics(*e.synced);
  auto add = [&](const std::string& name, double expected, std::optional<double> reported) {
    MetricRow row;
    row.name = name;
    row.expected = expected;
    row.reported = reported;
    // Two sums of the same counts in another order may differ in the last bit: no change.
    if (reported)
      row.difference =
          std::abs(*reported - expected) <= kDifferenceNoise ? 0.0 : *reported - expected;
    rows.push_back(std::move(row));
  };
  auto opt = [&](auto member) -> std::optional<double> {
    if (!got) return std::nullopt;
    return (*got).*member;
  };
  add("accuracy", want.accuracy, opt(&Metrics::accuracy));
  // What the run logged with sync_dist=True, against the truth; only what it logged.
  const LoggedAccuracy logged_as = logged_accuracy(e);
  if (const auto logged = rank_mean_accuracy(e); logged && logs_rank_mean(logged_as))
    add(kRankMeanAccuracyName, want.accuracy, logged);
  if (const auto logged = batch_logged_accuracy(e); logged && logs_per_batch(logged_as))
    add(kBatchLoggedAccuracyName, want.accuracy, logged);
  add("macro F1", want.macro_f1, opt(&Metrics::macro_f1));
  add("weighted F1", want.weighted_f1, opt(&Metrics::weighted_f1));
  for (int32_t k = 0; k < e.classes(); ++k) {
    const size_t i = size_t(k);
    const std::string name = e.class_name(k);
    add("F1 " + name, want.f1[i], got ? std::optional(got->f1[i]) : std::nullopt);
    add("precision " + name, want.precision[i],
        got ? std::optional(got->precision[i]) : std::nullopt);
    add("recall " + name, want.recall[i], got ? std::optional(got->recall[i]) : std::nullopt);
  }
  // Largest change first; the overall metrics lead among equals (stable sort keeps order).
  std::stable_sort(rows.begin(), rows.end(), [](const MetricRow& a, const MetricRow& b) {
    return std::abs(a.difference.value_or(0)) > std::abs(b.difference.value_or(0));
  });
  return rows;
}

std::string metrics_csv(const Evaluation& e) {
  std::ostringstream out;
  out << "metric,class,reported,expected,difference\n";
  std::optional<Metrics> got, want;
  if (e.synced) got = compute_metrics(*e.synced);
  if (e.expected) want = compute_metrics(*e.expected);
  auto line = [&](const std::string& metric, const std::string& cls, std::optional<double> r,
                  std::optional<double> x) {
    out << metric << "," << csv_field(cls) << "," << (r ? number_text(*r) : "") << ","
        << (x ? number_text(*x) : "") << "," << (r && x ? number_text(*r - *x) : "") << "\n";
  };
  auto field = [](const std::optional<Metrics>& m, auto member) -> std::optional<double> {
    if (!m) return std::nullopt;
    return (*m).*member;
  };
  auto per_class = [](const std::optional<Metrics>& m, std::vector<double> Metrics::*member,
                      size_t i) -> std::optional<double> {
    if (!m) return std::nullopt;
    return ((*m).*member)[i];
  };
  line("accuracy", "", field(got, &Metrics::accuracy), field(want, &Metrics::accuracy));
  const LoggedAccuracy logged_as = logged_accuracy(e);
  if (const auto logged = rank_mean_accuracy(e); logged && logs_rank_mean(logged_as))
    line("accuracy_rank_mean", "", logged, field(want, &Metrics::accuracy));
  if (const auto logged = batch_logged_accuracy(e); logged && logs_per_batch(logged_as))
    line("accuracy_batch_logged", "", logged, field(want, &Metrics::accuracy));
  line("macro_f1", "", field(got, &Metrics::macro_f1), field(want, &Metrics::macro_f1));
  line("weighted_f1", "", field(got, &Metrics::weighted_f1), field(want, &Metrics::weighted_f1));
  for (int32_t k = 0; k < e.classes(); ++k) {
    const size_t i = size_t(k);
    for (auto [name, member] :
         {std::pair{"precision", &Metrics::precision}, std::pair{"recall", &Metrics::recall},
          std::pair{"f1", &Metrics::f1}}) {
      line(name, e.class_name(k), per_class(got, member, i), per_class(want, member, i));
    }
  }
  return out.str();
}

}  // namespace shardlens
