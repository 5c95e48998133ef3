#include "ui/models/cell_info.h"

#include <numeric>

#include "core/report/verdict.h"
#include "ui/render/heatmap_data.h"
#include "ui/render/heatmap_source.h"
#include "ui/render/shown_text.h"
#include "ui/render/task_words.h"

namespace shardlens::ui {
namespace {

using render::formatValue;

QString name(const EvaluationResult& r, int c) {
  const QString n = richText(r.eval.class_name(c));
  // Unnamed classes are named by their number: say it once.
  return n == QString::number(c) ? n : QStringLiteral("%1 (%2)").arg(n).arg(c);
}

QString count(double v) {
  return formatValue(v, false);
}

// A multilabel matrix's classes are 2 a label ("L absent", "L present"), so label l is the
// 2 x 2 block at rows and columns 2l, 2l + 1 on the diagonal (torchmetrics'
// MultilabelConfusionMatrix[l]): a cell inside it names the label's four counts in the view,
// a cell outside it (two labels) says it is never counted.
QString multilabelBlock(const EvaluationResult& r, const CellRef& c) {
  const Evaluation& e = r.eval;
  if (e.meta.task != Task::Multilabel) return {};
  const int label = c.trueClass / 2;
  if (c.predClass / 2 != label)
    return QObject::tr(
        "<br><small>Two different labels: a multilabel matrix counts only "
        "the 2 × 2 block of each label on the diagonal</small>");
  const Matrix* m = c.kind == ViewKind::Rank       ? &e.per_rank[size_t(c.rank)]
                    : c.kind == ViewKind::Expected ? &e.expected_or_distinct()
                    : e.synced                     ? &*e.synced
                                                   : nullptr;
  if (!m) return {};
  const int absent = 2 * label, present = absent + 1;
  // The label's name is its classes' without " absent" (multilabel_class_names).
  QString labelName = QString::fromStdString(e.class_name(absent));
  if (labelName.endsWith(QLatin1String(" absent"))) labelName.chop(7);
  return QObject::tr("<br>Label %1 (this view): TP %2, FN %3, FP %4, TN %5")
      .arg(QStringLiteral("<b>%1</b>").arg(richText(labelName)))
      .arg(count(m->at(present, present)), count(m->at(present, absent)),
           count(m->at(absent, present)), count(m->at(absent, absent)));
}

}  // namespace

QString cellTitle(const EvaluationResult& r, const CellRef& c) {
  QString where;
  switch (c.kind) {
    case ViewKind::Rank:
      where = QObject::tr("rank %1").arg(c.rank);
      break;
    case ViewKind::Synced:
      where = QObject::tr("synced");
      break;
    case ViewKind::Expected:
      where = QObject::tr("expected");
      break;
    case ViewKind::Difference:
      where = QObject::tr("difference");
      break;
  }
  return QObject::tr("True %1 → predicted %2, %3")
      .arg(name(r, c.trueClass), name(r, c.predClass), where);
}

double cellCount(const EvaluationResult& r, const CellRef& c) {
  const Evaluation& e = r.eval;
  const int t = c.trueClass, p = c.predClass;
  if (c.kind == ViewKind::Expected) return e.expected_or_distinct().at(t, p);
  if (c.kind == ViewKind::Rank) return e.per_rank[size_t(c.rank)].at(t, p);
  double counted = 0;
  for (const Matrix& m : e.per_rank) counted += m.at(t, p);
  return counted;
}

QString cellTooltip(const EvaluationResult& r, const CellRef& c) {
  const Evaluation& e = r.eval;
  const int t = c.trueClass, p = c.predClass;
  const bool cells = render::countsCells(e);
  QString html = QStringLiteral("<b>%1</b>").arg(cellTitle(r, c));
  if (cells)
    html += QObject::tr("<br><small>Counts are %1; the list is of %2</small>")
                .arg(render::countsWord(e), render::samplesWord(e));
  html += multilabelBlock(r, c);
  html += QStringLiteral("<table>");
  const auto line = [&html](const QString& k, const QString& v) {
    html += QStringLiteral("<tr><td>%1</td><td align=right><b>%2</b></td></tr>").arg(k, v);
  };
  if (c.kind == ViewKind::Rank) {
    line(QObject::tr("This rank's count"), count(e.per_rank[size_t(c.rank)].at(t, p)));
    if (size_t(c.rank) < e.reported_per_rank.size() && e.reported_per_rank[size_t(c.rank)])
      line(QObject::tr("This rank reported"), count(e.reported_per_rank[size_t(c.rank)]->at(t, p)));
  }
  line(QString::fromStdString(synced_title(e)),
       e.synced ? count(e.synced->at(t, p)) : QObject::tr("never synchronized"));
  const bool known = e.expected.has_value();
  line(QObject::tr("Expected (whole dataset)"),
       known ? count(e.expected->at(t, p)) : QObject::tr("unknown"));
  line(QObject::tr("Expected (distinct evaluated)"), count(e.expected_distinct.at(t, p)));
  const double diff = known && e.synced ? e.synced->at(t, p) - e.expected->at(t, p) : 0;
  if (diff != 0) line(QObject::tr("Difference"), (diff > 0 ? "+" : "") + count(diff));
  html += QStringLiteral("</table>");
  QStringList ranks;
  for (int k = 0; k < int(e.per_rank.size()); ++k) {
    const double v = e.per_rank[size_t(k)].at(t, p);
    if (v != 0) ranks << QStringLiteral("r%1: %2").arg(k).arg(count(v));
  }
  html += QObject::tr("Contributing ranks: %1<br>")
              .arg(ranks.isEmpty() ? QObject::tr("none") : ranks.join(QStringLiteral(", ")));
  // A classification cell's samples are its count, read from the matrices so a hover never
  // scans every record (exact for int64 counters; for float counters the records may exceed
  // a stalled cell). A cell of pixels or tokens says nothing of how many images or
  // sequences gave them: those are counted by the walk, which is short (images are few).
  int64_t total = cells ? 0 : int64_t(cellCount(r, c));
  const auto samples = cellSamples(r, c, 12, cells ? &total : nullptr);
  if (!samples.empty()) {
    QStringList idx;
    for (const CellSample& s : samples) {
      QString text = QString::number(s.index);
      if (s.flags & kPadding) text += QStringLiteral("ᵖ");
      if (s.flags & kSanity) text += QStringLiteral("ˢ");
      if (render::countsPerSample(e)) text += QStringLiteral(" (%1)").arg(count(double(s.count)));
      idx << text;
    }
    if (total > int64_t(samples.size()))
      idx << QObject::tr("… %1 more").arg(total - int64_t(samples.size()));
    html += render::countsPerSample(e)
                ? QObject::tr("%1 (%2 in the cell): %3")
                      .arg(render::capitalized(render::samplesWord(e)), render::countsWord(e),
                           idx.join(QStringLiteral(", ")))
                : QObject::tr("%1: %2").arg(render::capitalized(render::samplesWord(e)),
                                            idx.join(QStringLiteral(", ")));
    html +=
        QObject::tr("<br><small>ᵖ padding duplicate, ˢ sanity-check leak; click to list</small>");
  }
  return html;
}

QString rowSumTooltip(const EvaluationResult& r, ViewKind kind, int rank, int t) {
  const Evaluation& e = r.eval;
  const Matrix* m = kind == ViewKind::Rank       ? &e.per_rank[size_t(rank)]
                    : kind == ViewKind::Expected ? &e.expected_or_distinct()
                    : e.synced                   ? &*e.synced
                                                 : nullptr;
  if (!m) return QObject::tr("<b>Row %1</b><br>Never synchronized").arg(name(r, t));
  // One row's sums, not all C of them: a hover at 1000 classes reads 1000 cells, not 10^6.
  const auto rowSum = [t](const Matrix& x) {
    const double* row = x.cells.data() + size_t(t) * size_t(x.classes);
    return std::accumulate(row, row + x.classes, 0.0);
  };
  // The synced and difference views show the evaluation's one row check; a rank's matrix and
  // the expected one are only summed.
  const RowCheck& check = e.row_check;
  const bool checked = kind != ViewKind::Rank && kind != ViewKind::Expected && t < check.rows();
  const double obs = checked ? check.observed[size_t(t)] : rowSum(*m);
  const double exp = checked ? double(check.truth[size_t(t)])
                     : size_t(t) < e.meta.class_counts.size()
                         ? double(e.meta.class_counts[size_t(t)])
                         : 0.0;
  QString html = QObject::tr("<b>Row %1</b><br>").arg(name(r, t));
  // A row of pixels (tokens) is checked against the class's true pixels, not its images.
  const QString unit =
      render::countsCells(e) ? QStringLiteral(" ") + render::countsWord(e) : QString();
  html += QObject::tr("Observed row sum: <b>%1</b>%2<br>").arg(count(obs), unit);
  if (kind != ViewKind::Rank) {
    html += render::countsCells(e)
                ? QObject::tr("True %1 of the class: <b>%2</b><br>")
                      .arg(render::countsWord(e), count(exp))
                : QObject::tr("True count of the class: <b>%1</b><br>").arg(count(exp));
    if (checked && check.is_wrong(t))
      html += QObject::tr("<font color=#b2182b>⚠ off by %1%2</font>")
                  .arg(check.off[size_t(t)] > 0 ? "+" : "")
                  .arg(count(check.off[size_t(t)]));
  }
  return html;
}

std::vector<CellSample> cellSamples(const EvaluationResult& r, const CellRef& c, size_t limit,
                                    int64_t* total) {
  const SampleScope scope = c.kind == ViewKind::Rank       ? SampleScope::Rank
                            : c.kind == ViewKind::Expected ? SampleScope::Expected
                                                           : SampleScope::AllRanks;
  return samplesOf(r.eval, scope, c.rank, c.trueClass, c.predClass, limit, total);
}

}  // namespace shardlens::ui
