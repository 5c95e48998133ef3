#include "ui/panels/diagnosis_panel.h"

#include <QScrollBar>
#include <cmath>

#include "core/report/task_metrics.h"
#include "core/report/verdict.h"
#include "ui/render/heatmap_data.h"
#include "ui/render/shown_text.h"
#include "ui/render/task_words.h"

namespace shardlens::ui {
namespace {

QString esc(const std::string& s) {
  return richText(s);
}

QString classList(const Evaluation& e, const std::vector<int32_t>& classes) {
  QStringList names;
  for (size_t i = 0; i < classes.size() && i < 20; ++i) names << esc(e.class_name(classes[i]));
  if (classes.size() > 20) names << QObject::tr("… %1 more").arg(classes.size() - 20);
  return names.join(QStringLiteral(", "));
}

std::string upper_first(std::string s) {
  if (!s.empty()) s[0] = char(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

QString metricValue(const std::optional<double>& v) {
  return v && !std::isnan(*v) ? QString::number(*v, 'f', 4) : QObject::tr("unknown");
}

// A task of many counts: its headline metrics (mIoU and pixel accuracy, token accuracy and
// macro F1, ...) reported, true and as a per-rank mean would log them, under the verdict.
QString taskMetricsHtml(const Evaluation& e) {
  if (!render::countsCells(e)) return {};
  const TaskMetrics t = task_metrics(e);
  QString h = QStringLiteral(
                  "<table cellspacing=2><tr><td></td><td align=right><i>%1</i></td>"
                  "<td align=right><i>%2</i></td><td align=right><i>%3</i></td></tr>")
                  .arg(QObject::tr("reported"), QObject::tr("true"), QObject::tr("per-rank mean"));
  constexpr size_t kHeadline = 2;
  for (size_t i = 0; i < t.overall.size() && i < kHeadline; ++i) {
    const TaskMetric& m = t.overall[i];
    const bool wrong = m.difference() && std::abs(*m.difference()) > 1e-12;
    h += QStringLiteral(
             "<tr><td>%1</td><td align=right><b>%2</b></td><td align=right>%3</td>"
             "<td align=right>%4</td></tr>")
             .arg(esc(m.name),
                  wrong
                      ? QStringLiteral("<font color=#b2182b>%1</font>").arg(metricValue(m.reported))
                      : metricValue(m.reported),
                  metricValue(m.truth), metricValue(m.per_rank_mean));
  }
  return h + QStringLiteral("</table>");
}

}  // namespace

QString diagnosisHtml(const Evaluation& e) {
  const Diagnosis& d = e.diagnosis;
  QString h;
  // The verdict as the report and the status bar give it (core/report/verdict.h).
  const Verdict verdict = verdict_of(e);
  const QString colour =
      verdict.kind == VerdictKind::Correct ? QString() : QStringLiteral(" color=#b2182b");
  h += QStringLiteral("<h3><font%1>%2</font></h3><p>%3</p>")
           .arg(colour, esc(verdict.status), esc(upper_first(verdict.sentence)));
  h += taskMetricsHtml(e);
  if (e.meta.task == Task::Multilabel)
    h += QObject::tr(
        "<p><small>Each label is two classes of the matrix, \"L absent\" and "
        "\"L present\": its 2 × 2 block on the diagonal is torchmetrics' "
        "MultilabelConfusionMatrix for the label (hover a cell for its TP, FN, FP, "
        "TN); the Metrics table has each label's F1.</small></p>");
  for (const std::string& note : unchecked(e))
    h += QObject::tr("<p><i>Not checked:</i> %1</p>").arg(esc(note));
  h += QStringLiteral("<table cellspacing=2>");
  // Every count as the views print them (grouped from 10,000): "266,659,644" beside
  // "265,184,441", never one of them ungrouped.
  const auto count = [](auto n) { return render::formatValue(double(n), true); };
  const auto row = [&h](const QString& k, const QString& v) {
    h += QStringLiteral("<tr><td>%1</td><td align=right><b>%2</b></td></tr>").arg(k, v);
  };
  // Totals and rows are in the matrix's counts (pixels, tokens); records, duplicates and the
  // never evaluated are samples (images, sequences), as the samplers deal them.
  const bool cells = render::countsCells(e);
  const QString counts = render::countsWord(e), samples = render::samplesWord(e);
  const QString unit = cells ? QStringLiteral(" (%1)").arg(counts) : QString();
  row((synced_origin_of(e.meta) == SyncedOrigin::SumOfRanks
           ? QObject::tr("Sum of the ranks' totals")
           : QObject::tr("Reported total")) +
          unit,
      e.synced ? render::formatValue(d.reported_total, false) : QObject::tr("none (never synced)"));
  row(cells ? QObject::tr("%1 in the dataset (expected total)").arg(render::capitalized(counts))
            : QObject::tr("Dataset size (expected total)"),
      count(d.expected_total));
  row(cells ? QObject::tr("Records evaluated (%1)").arg(samples) : QObject::tr("Records evaluated"),
      count(d.evaluated_records));
  row(QObject::tr("Distinct %1 evaluated").arg(samples), count(d.distinct_evaluated));
  row(QObject::tr("%1 evaluated more than once").arg(render::capitalized(samples)),
      count(d.duplicated_samples));
  row(QObject::tr("%1 never evaluated").arg(render::capitalized(samples)),
      count(d.missing_samples));
  row(cells ? QObject::tr("Rows ≠ the class's true %1").arg(counts)
            : QObject::tr("Rows ≠ class count"),
      count(d.mismatched_rows.size()));
  h += QStringLiteral("</table>");
  if (!d.mismatched_rows.empty())
    h += QObject::tr("<p>Wrong rows, by class: %1</p>").arg(classList(e, d.mismatched_rows));
  for (const Finding& f : d.findings) {
    const FindingText text = describe(f);
    h += QStringLiteral("<hr><h4>%1 <small><code>%2</code></small></h4>")
             .arg(esc(text.title), esc(pattern_id(f.pattern)));
    h += QStringLiteral("<p>%1</p>").arg(esc(text.explanation));
    if (!f.classes.empty())
      h += QObject::tr("<p><i>Classes:</i> %1</p>").arg(classList(e, f.classes));
    if (f.sample_count > 0) {
      QStringList s;
      for (size_t i = 0; i < f.samples.size() && i < 20; ++i) s << QString::number(f.samples[i]);
      if (f.sample_count > int64_t(s.size())) s << QObject::tr("…");
      h += QObject::tr("<p><i>%1 (%2):</i> %3</p>")
               .arg(render::capitalized(render::samplesWord(e)))
               .arg(f.sample_count)
               .arg(s.join(", "));
    }
    if (!text.fixes.empty()) {
      h += QObject::tr("<p><b>Fix</b></p><ul>");
      for (const Fix& fix : text.fixes)
        h += QStringLiteral("<li><b>%1:</b> %2</li>").arg(esc(fix.framework), esc(fix.text));
      h += QStringLiteral("</ul>");
    }
  }
  return h;
}

DiagnosisPanel::DiagnosisPanel(QWidget* parent) : QTextBrowser(parent) {
  setOpenExternalLinks(false);
  setPlaceholderText(tr("The diagnosis appears here after the first evaluation."));
}

void DiagnosisPanel::setResult(const ResultPtr& result) {
  if (!result) {
    m_html.clear();
    return clear();
  }
  QString html = diagnosisHtml(result->eval);
  if (html == m_html) return;
  m_html = std::move(html);
  const int scroll = verticalScrollBar() ? verticalScrollBar()->value() : 0;
  setHtml(m_html);
  verticalScrollBar()->setValue(scroll);
}

}  // namespace shardlens::ui
