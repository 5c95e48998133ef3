// A heatmap's title and its wrong-rows note, fitted to a width. The layout (how tall the
// title band is) and the painter use the same result, so a figure never clips either.
#include <QFontMetricsF>
#include <algorithm>
#include <cmath>

#include "ui/render/heatmap_painter.h"

namespace shardlens::render {
namespace {

constexpr int kSmallestTitlePixels = 7;

// Greedy word wrap at spaces. A caption's parts ("<scenario> — Synced − expected — epoch
// 2") are kept whole where they fit a line, so a break never splits "Synced − expected";
// a part longer than a line breaks between its words. A word wider than `width` stays whole
// on its own line; the caller sees it in `fits` and shrinks the font.
QStringList wrapWords(const QString& text, const QFontMetricsF& fm, double width, bool* fits) {
  static const QString dash = QStringLiteral(" — ");
  QStringList units;  // what a line may not break inside
  const QStringList parts = text.split(dash);
  for (qsizetype i = 0; i < parts.size(); ++i) {
    const QString part = i + 1 < parts.size() ? parts[i] + QStringLiteral(" —") : parts[i];
    if (fm.horizontalAdvance(part) <= width)
      units << part;
    else
      units << part.split(QLatin1Char(' '), Qt::SkipEmptyParts);
  }
  QStringList lines;
  QString line;
  for (const QString& unit : units) {
    if (unit.isEmpty()) continue;
    const QString candidate = line.isEmpty() ? unit : line + QLatin1Char(' ') + unit;
    if (line.isEmpty() || fm.horizontalAdvance(candidate) <= width) {
      line = candidate;
    } else {
      lines << line;
      line = unit;
    }
    if (fm.horizontalAdvance(line) > width) *fits = false;
  }
  if (!line.isEmpty() || lines.isEmpty()) lines << line;
  return lines;
}

}  // namespace

QString mismatchNote(const HeatmapData& d) {
  const int wrong = d.mismatchCount();
  if (wrong <= 0) return {};
  return wrong == 1 ? QStringLiteral("⚠ 1 row ≠ expected")
                    : QStringLiteral("⚠ %1 rows ≠ expected").arg(wrong);
}

double TitleLines::height() const {
  const int n = int(lines.size()) + (noteOwnLine ? 1 : 0);
  return n * lineHeight;
}

TitleLines layoutTitle(const HeatmapData& d, const HeatmapStyle& s, double width,
                       double maxHeight) {
  TitleLines t;
  t.note = mismatchNote(d);
  const int base = s.fontPixels + (s.compact ? 0 : 2);
  for (int px = base; px >= std::min(base, kSmallestTitlePixels); --px) {
    t.font = heatmapFont(s, true);
    t.font.setPixelSize(px);
    const QFontMetricsF fm(t.font);
    t.lineHeight = fm.height();
    bool fits = true;
    t.lines = wrapWords(d.title, fm, width, &fits);
    const double noteWidth = t.note.isEmpty() ? 0 : fm.horizontalAdvance(t.note);
    if (noteWidth > width) fits = false;
    t.noteOwnLine = !t.note.isEmpty() &&
                    fm.horizontalAdvance(t.lines.back() + QStringLiteral("  ")) + noteWidth > width;
    // One line always counts as fitting the height: a band is at least one line tall.
    const bool oneLine = t.lines.size() == 1 && !t.noteOwnLine;
    if (fits && (oneLine || t.height() <= maxHeight + 0.5)) return t;
  }
  // Even the smallest font needs more lines than there are (a small on-screen panel): keep
  // the note whole and elide the title, the one place text is shortened.
  const QFontMetricsF fm(t.font);
  const double noteWidth = t.note.isEmpty() ? 0 : fm.horizontalAdvance(t.note) + 8;
  t.noteOwnLine = false;
  t.lines = QStringList{fm.elidedText(d.title, Qt::ElideRight, std::max(0.0, width - noteWidth))};
  return t;
}

void paintTitle(QPainter& p, const HeatmapData& d, const HeatmapStyle& s, const QRectF& band) {
  const TitleLines t = layoutTitle(d, s, band.width(), band.height());
  p.save();
  p.setFont(t.font);
  // Lines are centred in the band as a block.
  double y = band.top() + std::max(0.0, (band.height() - t.height()) / 2);
  for (int i = 0; i < t.lines.size(); ++i) {
    const QRectF line(band.left(), y, band.width(), t.lineHeight);
    p.setPen(Qt::black);
    p.drawText(line, Qt::AlignLeft | Qt::AlignVCenter, t.lines[i]);
    const bool last = i + 1 == t.lines.size();
    if (last && !t.note.isEmpty()) {
      const QRectF noteLine = t.noteOwnLine ? line.translated(0, t.lineHeight) : line;
      p.setPen(QColor(kMismatchInk));
      p.drawText(noteLine, (t.noteOwnLine ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter,
                 t.note);
    }
    y += t.lineHeight;
  }
  p.restore();
}

}  // namespace shardlens::render
