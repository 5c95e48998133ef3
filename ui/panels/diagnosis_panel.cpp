#include "ui/panels/diagnosis_panel.h"

#include <QScrollBar>

#include "core/report/verdict.h"
#include "ui/render/heatmap_data.h"
#include "ui/render/shown_text.h"

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
  for (const std::string& note : unchecked(e))
    h += QObject::tr("<p><i>Not checked:</i> %1</p>").arg(esc(note));
  h += QStringLiteral("<table cellspacing=2>");
  const auto row = [&h](const QString& k, const QString& v) {
    h += QStringLiteral("<tr><td>%1</td><td align=right><b>%2</b></td></tr>").arg(k, v);
  };
  row(synced_origin_of(e.meta) == SyncedOrigin::SumOfRanks ? QObject::tr("Sum of the ranks' totals")
                                                           : QObject::tr("Reported total"),
      e.synced ? render::formatValue(d.reported_total, false) : QObject::tr("none (never synced)"));
  row(QObject::tr("Dataset size (expected total)"), QString::number(d.expected_total));
  row(QObject::tr("Records evaluated"), QString::number(d.evaluated_records));
  row(QObject::tr("Distinct samples evaluated"), QString::number(d.distinct_evaluated));
  row(QObject::tr("Samples evaluated more than once"), QString::number(d.duplicated_samples));
  row(QObject::tr("Samples never evaluated"), QString::number(d.missing_samples));
  row(QObject::tr("Rows ≠ class count"), QString::number(d.mismatched_rows.size()));
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
      h += QObject::tr("<p><i>Samples (%1):</i> %2</p>").arg(f.sample_count).arg(s.join(", "));
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
  if (!result) return clear();
  const int scroll = verticalScrollBar() ? verticalScrollBar()->value() : 0;
  setHtml(diagnosisHtml(result->eval));
  verticalScrollBar()->setValue(scroll);
}

}  // namespace shardlens::ui
