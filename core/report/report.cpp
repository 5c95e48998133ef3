#include "core/report/report.h"
#include "core/io/output_text.h"
#include "core/report/verdict.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "core/diagnosis/facts_json.h"
#include "core/evaluation/caption.h"
#include "core/report/class_groups.h"
#include "core/report/confusion_ranking.h"
#include "core/report/metrics.h"
#include "core/report/task_metrics.h"
#include "core/torchsem/accelerate_sampler.h"
#include "core/torchsem/task_scores.h"

namespace shardlens {

using nlohmann::json;

namespace {

// Up to this many classes the report prints the matrices themselves.
constexpr int32_t kPrintedMatrixClasses = 12;

json number(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::abs(v) < 9e15) {
    return static_cast<int64_t>(v);
  }
  if (!std::isfinite(v)) return v > 0 ? "inf" : "nan";
  return v;
}

std::string fmt(double v) {
  std::ostringstream s;
  if (v == std::floor(v) && std::abs(v) < 1e15)
    s << static_cast<int64_t>(v);
  else
    s << std::setprecision(4) << v;
  return s.str();
}

void print_matrix(std::ostringstream& out, const std::string& title, const Matrix& m) {
  out << title << "\n";
  size_t width = 3;
  for (double v : m.cells) width = std::max(width, fmt(v).size());
  for (int32_t r = 0; r < m.classes; ++r) {
    out << "  ";
    for (int32_t c = 0; c < m.classes; ++c)
      out << std::setw(static_cast<int>(width) + 1) << fmt(m.at(r, c));
    out << "\n";
  }
}

}  // namespace

std::string count_text(double v) {
  return fmt(v);
}
json count_json(double v) {
  return number(v);
}

json matrix_json(const Matrix& m) {
  json rows = json::array();
  for (int32_t r = 0; r < m.classes; ++r) {
    json row = json::array();
    for (int32_t c = 0; c < m.classes; ++c) row.push_back(number(m.at(r, c)));
    rows.push_back(std::move(row));
  }
  return rows;
}

json finding_json(const Finding& f) {
  const FindingText text = describe(f);
  json fixes = json::array();
  for (const Fix& x : text.fixes) fixes.push_back({{"framework", x.framework}, {"text", x.text}});
  return {{"pattern", pattern_id(f.pattern)},
          {"title", text.title},
          {"explanation", text.explanation},
          {"fixes", fixes},
          {"classes", f.classes},
          {"samples", f.samples},
          {"sample_count", f.sample_count},
          {"facts", facts_json(f.facts)}};
}

std::string report_title(const Evaluation& e) {
  return scenario_title(e.scenario());
}

namespace {

// report_json with each C x C matrix made by `matrix`: the matrix's JSON, or a marker that
// write_reports_json replaces with the matrix streamed.
using MatrixJson = std::function<json(const Matrix&)>;

// The verdict and what it rests on: where the synced matrix came from, what is estimated and
// what could not be checked.
json verdict_json(const Evaluation& e) {
  const Verdict v = verdict_of(e);
  const char* origin = to_string(synced_origin_of(e.meta));
  json out = {{"text", v.sentence},
              {"status", v.status},
              {"synced_origin", *origin ? json(origin) : json("unknown")},
              {"synced_label", synced_title(e)},
              {"unchecked", unchecked(e)}};
  if (const std::string estimate = estimate_note(e); !estimate.empty()) out["estimated"] = estimate;
  return out;
}

json report_json_with(const Evaluation& e, const MatrixJson& matrix) {
  json per_rank = json::array();
  for (const Matrix& m : e.per_rank) per_rank.push_back(matrix(m));
  json observed = json::array();
  json mismatched = json::array();
  if (e.synced) {
    for (double sum : e.row_check.observed) observed.push_back(number(sum));
    for (int32_t r : e.row_check.wrong_rows) mismatched.push_back(static_cast<int64_t>(r));
  }
  json findings = json::array();
  for (const Finding& f : e.diagnosis.findings) findings.push_back(finding_json(f));
  const RunMetadata& meta = e.meta;
  json out = {{"title", report_caption(e)},
              {"epoch", e.epoch()},
              {"source", meta.source},
              {"backend", meta.backend},
              {"torch_version", meta.torch_version},
              {"classes", e.classes()},
              {"class_names", e.meta.class_names},
              {"class_counts", e.meta.class_counts},
              {"n", e.meta.dataset_size},
              {"world_size", e.meta.world_size},
              {"complete", meta.complete},
              {"per_rank", per_rank},
              {"synced", e.synced ? matrix(*e.synced) : json(nullptr)},
              {"expected", e.expected ? matrix(*e.expected) : json(nullptr)},
              {"expected_distinct", matrix(e.expected_distinct)},
              {"row_sums",
               {{"observed", e.synced ? observed : json(nullptr)},
                {"expected", e.meta.class_counts},
                {"mismatched", mismatched}}},
              {"correct", e.diagnosis.correct},
              {"verdict", verdict_json(e)},
              {"diagnosis", findings}};
  out["metrics"] = evaluation_metrics_json(e);
  out["confusion"] = confusion_ranking_json(rank_confusion(e, kReportedConfusions));
  if (e.class_groups) out["groups"] = class_groups_json(e);
  if (meta.task != Task::Classification) out["task_metrics"] = task_metrics_json(task_metrics(e));
  if (!meta.launcher.empty()) out["launcher"] = meta.launcher;
  out["label"] = evaluation_label(e);
  if (e.validation() >= 0) out["validation"] = e.validation();
  if (e.dataloader() >= 0) out["dataloader_idx"] = e.dataloader();
  if (!e.meta.stage.empty()) out["stage"] = e.meta.stage;
  if (meta.recorded) out["recorded_settings"] = json::parse(meta.recorded->text);
  if (!e.synced) out["incomplete"] = e.synced_missing;
  if (!e.expected) out["expected_missing"] = e.expected_missing;
  if (!e.meta.dataset.empty()) out["dataset"] = e.meta.dataset;
  if (!e.reported_per_rank.empty()) {
    json reported = json::array();
    for (const auto& m : e.reported_per_rank) reported.push_back(m ? matrix(*m) : json(nullptr));
    out["reported_per_rank"] = reported;
  }
  if (!meta.complete) out["incomplete_reason"] = meta.incomplete_reason;
  if (!e.meta.failed_ranks.empty()) out["failed_ranks"] = e.meta.failed_ranks;
  if (!meta.sync_note.empty()) out["sync_note"] = meta.sync_note;
  if (!e.is_run()) {
    const std::string note = accelerate_order_note(e.scenario().sampler);
    if (!note.empty()) out["order_note"] = note;
  }
  if (!e.provenance.file.empty()) out["run_file"] = e.provenance.file;
  const Diagnosis& d = e.diagnosis;
  out["summary"] = {{"reported_total", e.synced ? number(d.reported_total) : json(nullptr)},
                    {"expected_total", d.expected_total},
                    {"evaluated_records", d.evaluated_records},
                    {"distinct_evaluated", d.distinct_evaluated},
                    {"duplicated_samples", d.duplicated_samples},
                    {"missing_samples", d.missing_samples}};
  return out;
}

json reports_json_with(const std::vector<Evaluation>& epochs, const MatrixJson& matrix) {
  if (epochs.size() == 1) return report_json_with(epochs.front(), matrix);
  json list = json::array();
  bool correct = true;
  for (const Evaluation& e : epochs) {
    list.push_back(report_json_with(e, matrix));
    correct = correct && e.diagnosis.correct;
  }
  return {{"epochs", list}, {"correct", correct}};
}

// Writes what json::dump(2) writes, in pieces through a buffer. A binary value is the
// marker of matrix number `subtype` in `matrices`, written cell by cell: at 1000 classes
// and 64 ranks the matrices as a json tree and then one string took 2 GB.
class StreamingDump {
 public:
  StreamingDump(std::ostream& out, const std::vector<const Matrix*>& matrices)
      : m_out(out), m_matrices(matrices) {
    m_buffer.reserve(kFlushAt + 4096);
  }
  ~StreamingDump() { flush(); }

  void value(const json& j, size_t indent) {
    if (j.is_binary()) return matrix(*m_matrices.at(size_t(j.get_binary().subtype())), indent);
    if (j.is_object() && !j.empty()) {
      m_buffer += "{\n";
      bool first = true;
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (!first) m_buffer += ",\n";
        first = false;
        m_buffer.append(indent + 2, ' ');
        m_buffer += json_text(json(it.key()));
        m_buffer += ": ";
        value(it.value(), indent + 2);
      }
      close('}', indent);
    } else if (j.is_array() && !j.empty()) {
      m_buffer += "[\n";
      for (size_t i = 0; i < j.size(); ++i) {
        if (i > 0) m_buffer += ",\n";
        m_buffer.append(indent + 2, ' ');
        value(j[i], indent + 2);
      }
      close(']', indent);
    } else {
      m_buffer += json_text(j);  // scalars, "[]" and "{}" as the tree's dump writes them
    }
    maybe_flush();
  }

  void flush() {
    m_out.write(m_buffer.data(), std::streamsize(m_buffer.size()));
    m_buffer.clear();
  }

 private:
  static constexpr size_t kFlushAt = size_t(1) << 20;

  void close(char bracket, size_t indent) {
    m_buffer += '\n';
    m_buffer.append(indent, ' ');
    m_buffer += bracket;
  }

  void maybe_flush() {
    if (m_buffer.size() >= kFlushAt) flush();
  }

  // matrix_json(m).dump(2) at this indent: rows of numbers() as integers where integral.
  void matrix(const Matrix& m, size_t indent) {
    if (m.classes <= 0) {
      m_buffer += "[]";
      return;
    }
    m_buffer += "[\n";
    for (int32_t r = 0; r < m.classes; ++r) {
      if (r > 0) m_buffer += ",\n";
      m_buffer.append(indent + 2, ' ');
      m_buffer += "[\n";
      for (int32_t c = 0; c < m.classes; ++c) {
        if (c > 0) m_buffer += ",\n";
        m_buffer.append(indent + 4, ' ');
        cell(m.at(r, c));
      }
      close(']', indent + 2);
      maybe_flush();
    }
    close(']', indent);
  }

  void cell(double v) {
    if (std::isfinite(v) && v == std::floor(v) && std::abs(v) < 9e15) {
      char digits[24];
      const auto end = std::to_chars(digits, digits + sizeof digits, static_cast<int64_t>(v)).ptr;
      m_buffer.append(digits, end);
    } else {
      m_buffer += json_text(number(v));
    }
  }

  std::ostream& m_out;
  const std::vector<const Matrix*>& m_matrices;
  std::string m_buffer;
};

}  // namespace

json report_json(const Evaluation& e) {
  return report_json_with(e, [](const Matrix& m) { return matrix_json(m); });
}

json reports_json(const std::vector<Evaluation>& epochs) {
  return reports_json_with(epochs, [](const Matrix& m) { return matrix_json(m); });
}

void write_reports_json(std::ostream& out, const std::vector<Evaluation>& epochs) {
  std::vector<const Matrix*> matrices;
  const json tree = reports_json_with(epochs, [&](const Matrix& m) {
    matrices.push_back(&m);
    return json::binary({}, static_cast<std::uint64_t>(matrices.size() - 1));
  });
  StreamingDump dump(out, matrices);
  dump.value(tree, 0);
}

namespace {

void print_row_sums(std::ostringstream& out, const Evaluation& e) {
  const RowCheck& rows = e.row_check;
  const size_t shown = std::min<size_t>(rows.observed.size(), 50);
  for (size_t r = 0; r < shown; ++r) {
    const bool bad = rows.wrong[r];
    out << "  " << (bad ? "!! " : "   ") << std::left << std::setw(14) << e.meta.class_names[r]
        << std::right << std::setw(12) << fmt(rows.observed[r]) << std::setw(12)
        << fmt(static_cast<double>(rows.truth[r]));
    if (bad) out << "   (" << (rows.off[r] > 0 ? "+" : "") << fmt(rows.off[r]) << ")";
    out << "\n";
  }
  if (shown < rows.observed.size())
    out << "  ... " << rows.observed.size() - shown << " more classes\n";
}

// A finding's classes on one readable line: every name up to kListedClasses; more than that as
// a range when they are consecutive ("1000 classes (0–999)"), else the first ones and how
// many more.
constexpr size_t kListedClasses = 20;

std::string class_list(const Evaluation& e, const std::vector<int32_t>& classes) {
  const auto name = [&](int32_t c) { return e.meta.class_names[size_t(c)]; };
  std::string out;
  if (classes.size() > kListedClasses &&
      classes.back() - classes.front() + 1 == int32_t(classes.size()))
    return std::to_string(classes.size()) + " classes (" + name(classes.front()) + "–" +
           name(classes.back()) + ")";
  for (size_t i = 0; i < std::min(classes.size(), kListedClasses); ++i)
    out += (i ? " " : "") + name(classes[i]);
  if (classes.size() > kListedClasses)
    out += " and " + std::to_string(classes.size() - kListedClasses) + " more (" +
           std::to_string(classes.size()) + " classes)";
  return out;
}

void print_finding(std::ostringstream& out, const Evaluation& e, const Finding& f) {
  const FindingText text = describe(f);
  out << "\n* " << text.title << " [" << pattern_id(f.pattern) << "]\n  " << text.explanation
      << "\n";
  if (!f.classes.empty()) out << "  classes: " << class_list(e, f.classes) << "\n";
  if (!f.samples.empty()) {
    out << "  " << sample_word(e.meta.task) << "s (" << f.sample_count << "):";
    for (size_t i = 0; i < std::min<size_t>(f.samples.size(), 12); ++i) out << " " << f.samples[i];
    if (f.sample_count > 12) out << " ...";
    out << "\n";
  }
  for (const Fix& x : text.fixes) out << "  fix (" << x.framework << "): " << x.text << "\n";
}

// The metrics people report, reported vs expected: the overall ones, then the per-class ones
// that changed, largest change first.
void print_metrics(std::ostringstream& out, const Evaluation& e) {
  const std::vector<MetricRow> rows = metric_rows(e);
  if (rows.empty()) return;
  out << "\nMetrics (reported vs expected, torchmetrics conventions)\n";
  auto value = [](std::optional<double> v) {
    std::ostringstream s;
    if (v)
      s << std::fixed << std::setprecision(4) << *v;
    else
      s << "-";
    return s.str();
  };
  auto overall = [](const MetricRow& r) {
    return r.name == "accuracy" || r.name == kRankMeanAccuracyName ||
           r.name == kBatchLoggedAccuracyName || r.name == "macro F1" || r.name == "weighted F1";
  };
  auto print = [&](const MetricRow& r) {
    out << "  " << std::left << std::setw(40) << r.name << std::right << std::setw(10)
        << value(r.reported) << std::setw(10) << value(r.expected);
    if (r.difference) out << "   (" << difference_text(*r.difference) << ")";
    out << "\n";
  };
  for (const char* name :
       {"accuracy", kRankMeanAccuracyName, kBatchLoggedAccuracyName, "macro F1", "weighted F1"})
    for (const MetricRow& r : rows)
      if (r.name == name) print(r);
  size_t per_class_shown = 0, per_class_changed = 0;
  for (const MetricRow& r : rows) {  // largest change first
    if (overall(r) || !r.difference || std::abs(*r.difference) <= 1e-12) continue;
    if (++per_class_changed <= 10) {
      print(r);
      ++per_class_shown;
    }
  }
  if (per_class_changed > per_class_shown)
    out << "  ... " << per_class_changed - per_class_shown << " more per-class changes\n";
}

}  // namespace

std::string launcher_phrase(const RunMetadata& meta) {
  if (meta.launcher.empty()) return "";
  if (meta.launcher == "env") return "ranks started from RANK/WORLD_SIZE";
  if (meta.launcher == "shardlens") return "ranks started by shardlens-cli run";
  return "ranks started by " + meta.launcher;
}

namespace {

// Characters, not bytes: the underline of a title with a "—" is as long as the title.
size_t code_points(const std::string& text) {
  return size_t(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

}  // namespace

std::string report_text(const Evaluation& e) {
  std::ostringstream out;
  const Diagnosis& d = e.diagnosis;
  const std::string title = report_caption(e);
  out << title << "\n" << std::string(code_points(title), '=') << "\n";
  if (const std::string estimate = estimate_note(e); !estimate.empty()) out << estimate << "\n";
  if (e.is_run()) {
    out << "run: " << e.meta.source << ", backend " << e.meta.backend
        << (e.meta.launcher.empty() ? "" : ", " + launcher_phrase(e.meta))
        << (e.meta.complete ? "" : ", incomplete") << "\n";
  }
  if (e.meta.recorded)
    out << "Recorded settings: " << recorded_settings_text(*e.meta.recorded) << "\n";
  const Task task = e.meta.task;
  // A segmentation matrix counts pixels of images: the rows are said in the task's words.
  const std::string samples = task == Task::Classification ? "samples" : sample_word(task) + "s";
  const std::string counts = count_unit(task);
  out << "dataset: " << e.meta.dataset_size << " " << samples << ", "
      << (task == Task::Multilabel ? std::to_string(e.classes() / 2) + " labels as " : "")
      << e.classes() << " classes; " << e.meta.world_size << " ranks\n";
  out << (synced_origin_of(e.meta) == SyncedOrigin::SumOfRanks ? "sum of the ranks "
                                                               : "reported total ")
      << (e.synced ? fmt(d.reported_total) : std::string("(none)")) << " vs " << d.expected_total
      << (estimate_note(e).empty() ? " " + counts + "; "
                                   : " in the estimated class counts (" +
                                         std::to_string(e.meta.dataset_size) + " in the dataset); ")
      << d.evaluated_records << " records, " << d.distinct_evaluated << " distinct, "
      << d.duplicated_samples << " duplicated, " << d.missing_samples << " never evaluated\n";
  if (!e.meta.sync_note.empty()) out << "note: " << e.meta.sync_note << "\n";
  if (!e.is_run()) {
    const std::string note = accelerate_order_note(e.scenario().sampler);
    if (!note.empty()) out << "note: " << note << "\n";
  }
  if (!e.expected) out << "expected matrix unknown: " << e.expected_missing << "\n";
  if (e.synced) out << "synced matrix: " << synced_description(e) << "\n";
  for (const std::string& note : unchecked(e)) out << "not checked: " << note << "\n";
  if (e.synced) {
    out << "\nRow sums" << (task == Task::Classification ? "" : ", " + counts) << " (observed vs "
        << (estimate_note(e).empty() ? "expected" : "estimated") << ")\n";
    print_row_sums(out, e);
  } else {
    out << "\nNo synced matrix: " << e.synced_missing << ".\n";
    for (size_t r = 0; r < e.per_rank.size(); ++r) {
      const bool failed = std::find(e.meta.failed_ranks.begin(), e.meta.failed_ranks.end(),
                                    int(r)) != e.meta.failed_ranks.end();
      double total = 0;
      for (double v : e.per_rank[r].cells) total += v;
      out << "  rank " << r << ": " << fmt(total) << " counted" << (failed ? " (failed)" : "")
          << "\n";
    }
  }
  // Past the printed matrix, its most confused cells and worst rows instead.
  if (e.classes() > kPrintedMatrixClasses)
    out << confusion_ranking_text(e, rank_confusion(e, kReportedConfusions));
  out << class_groups_text(e);
  if (e.classes() <= kPrintedMatrixClasses) {
    out << "\n";
    if (e.synced) print_matrix(out, synced_title(e) + ", rows = true class:", *e.synced);
    if (e.expected) print_matrix(out, "Expected matrix (one process, whole dataset):", *e.expected);
  }
  if (e.meta.task == Task::Classification)
    print_metrics(out, e);
  else
    out << "\n" << task_metrics_text(task_metrics(e));
  if (e.meta.task != Task::Classification && logs_per_batch(logged_accuracy(e))) {
    // Said, not skipped in silence: the per-batch value is modelled for an accuracy only.
    out << "  the " << headline_metric_name(e.meta.task)
        << " a run logs per batch (--logged-accuracy per-batch) is not checked: ShardLens "
           "models the per-batch value of a classification's accuracy only\n";
  }
  out << "\n";
  out << "Verdict: " << verdict_of(e).sentence << "\n";
  if (d.correct) return out.str();
  for (const Finding& f : d.findings) print_finding(out, e, f);
  return out.str();
}

}  // namespace shardlens
