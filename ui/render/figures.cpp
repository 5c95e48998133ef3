#include "ui/render/figures.h"

#include <QFileInfo>
#include <QFontMetricsF>
#include <QImage>
#include <QImageWriter>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <algorithm>
#include <cmath>
#include <memory>
#include <span>

#include "core/io/output_text.h"
#include "ui/render/heatmap_painter.h"

namespace shardlens::render {

std::optional<FigureFormat> parseFigureFormat(const QString& text) {
  const QString t = text.trimmed().toLower();
  if (t == QLatin1String("png")) return FigureFormat::Png;
  if (t == QLatin1String("svg")) return FigureFormat::Svg;
  if (t == QLatin1String("pdf")) return FigureFormat::Pdf;
  return std::nullopt;
}

QString figureExtension(FigureFormat f) {
  switch (f) {
    case FigureFormat::Svg:
      return QStringLiteral("svg");
    case FigureFormat::Pdf:
      return QStringLiteral("pdf");
    case FigureFormat::Png:
      break;
  }
  return QStringLiteral("png");
}

namespace {

constexpr double kFigureTitleMin = 24;  // points
constexpr double kMinPanelSide = 48;    // below this a page fit gives up and the page grows

// The panel that sets the grid's size: the first one with cells (a failed rank's panel of a
// run has none, only the reason).
const HeatmapData& sizingPanel(const Figure& f) {
  for (const HeatmapData& d : f.panels)
    if (d.classes > 0) return d;
  return f.panels.front();
}

double naturalSide(const Figure& f) {
  const int c = std::max(1, sizingPanel(f).classes);
  // About 30 pt per class at small C (values fit), capped for large C where the image
  // carries the detail and labels thin out.
  return std::clamp(140.0 + 30.0 * c, f.style.compact ? 220.0 : 320.0, 640.0);
}

// A shared colour bar replaces the panels' own: the panels share one colour range anyway.
HeatmapStyle panelStyle(const Figure& f) {
  HeatmapStyle s = f.style;
  if (f.sharedColorBar) s.showColorBar = false;
  return s;
}

double sharedBarWidth(const Figure& f) {
  if (!f.sharedColorBar || !f.style.showColorBar) return 0;
  return layoutMetrics(sizingPanel(f), f.style).colorBar + 12;
}

// Everything of a panel but its grid, across and down (the title at one line), for a grid
// `side` wide: its column labels read across where they fit at that size.
QSizeF panelExtras(const Figure& f, const HeatmapStyle& s, double side) {
  LayoutMetrics m = layoutMetrics(sizingPanel(f), s);
  if (columnLabelsFitAcross(sizingPanel(f), s, side)) m = withColumnLabelsAcross(m, s);
  return {m.axisTitle + m.rowLabels + m.rowSums + m.colorBar + 6 * m.gap + 2 * m.margin,
          m.title + m.colSums + m.colLabels + m.axisTitle + 5 * m.gap + 2 * m.margin};
}

QFont figureTitleFont(const HeatmapStyle& s) {
  QFont font = heatmapFont(s, true);
  font.setPixelSize(s.fontPixels + 4);
  return font;
}

// The figure title wraps at spaces to the figure's width.
double figureTitleHeight(const Figure& f, double width) {
  if (f.title.isEmpty()) return 0;
  const QFontMetricsF fm(figureTitleFont(f.style));
  const QRectF r = fm.boundingRect(QRectF(0, 0, std::max(1.0, width - 8), 1e6),
                                   Qt::AlignHCenter | Qt::TextWordWrap, f.title);
  return std::max(kFigureTitleMin, std::ceil(r.height() + 8));
}

struct FigureGrid {
  int columns = 1, rows = 1;
  double side = 0;
  HeatmapStyle style;  // the panels' style (a page fit may take a smaller font)
};

FigureGrid naturalGrid(const Figure& f) {
  FigureGrid g;
  g.columns = std::max(1, std::min<int>(f.columns, static_cast<int>(f.panels.size())));
  g.rows = static_cast<int>((f.panels.size() + size_t(g.columns) - 1) / size_t(g.columns));
  g.side = naturalSide(f);
  g.style = panelStyle(f);
  // No blank bands beside the grid: rows too thin for their sums and none wrong (a figure
  // never zooms, so they would stay empty).
  if (!sumsDrawn(sizingPanel(f), g.style, g.side)) g.style.showSums = false;
  return g;
}

// Within a page: the grid (columns x rows) and font that give the largest grid side.
FigureGrid fitGrid(const Figure& f) {
  FigureGrid best = naturalGrid(f);
  if (!f.page.isValid()) return best;
  const int n = static_cast<int>(f.panels.size());
  best.side = -1;
  // Smaller fonts, then no sums (unreadable in panels this small; the synced figure has
  // them), until the grids are readable.
  struct Try {
    int px;
    bool sums;
  };
  for (const Try t : {Try{f.style.fontPixels, true}, Try{9, true}, Try{7, true}, Try{7, false}}) {
    if (t.px > f.style.fontPixels) continue;
    HeatmapStyle s = panelStyle(f);
    s.fontPixels = t.px;
    s.showSums = t.sums && f.style.showSums;
    // A few points of slack for rounding and a panel title that wraps.
    const double width = f.page.width() - sharedBarWidth(f) - 8;
    const double title = figureTitleHeight(f, f.page.width());
    for (int cols = 1; cols <= n; ++cols) {
      const int rows = (n + cols - 1) / cols;
      const auto sideWith = [&](const QSizeF& extras) {
        return std::min({naturalSide(f), width / cols - extras.width(),
                         (f.page.height() - 8 - title) / rows - extras.height()});
      };
      double side = sideWith(panelExtras(f, s, 0));  // column labels rotated
      // Labels that fit across at this size fit at the larger size they leave.
      if (columnLabelsFitAcross(sizingPanel(f), s, side))
        side = std::max(side, sideWith(panelExtras(f, s, side)));
      if (side > best.side + 0.5) best = {cols, rows, side, s};
    }
    if (best.side >= 120) break;  // readable at this font: no need to shrink it
  }
  best.side = std::max(best.side, kMinPanelSide);
  return best;
}

QSizeF panelSize(const Figure& f, const FigureGrid& g) {
  const QSizeF extras = panelExtras(f, g.style, g.side);
  const double w = g.side + extras.width();
  // A title that wraps at this width makes the panel taller.
  const LayoutMetrics one = layoutMetrics(sizingPanel(f), g.style);
  double title = one.title;
  for (const HeatmapData& d : f.panels) title = std::max(title, layoutMetrics(d, g.style, w).title);
  return {w, g.side + extras.height() - one.title + title};
}

// A panel with nothing to draw says why, where its matrix would be.
void paintEmptyPanel(QPainter& p, const HeatmapData& d, const HeatmapStyle& style,
                     const QRectF& cell) {
  const LayoutMetrics m = layoutMetrics(d, style);
  p.setPen(Qt::black);
  p.setFont(heatmapFont(style, true));
  const QRectF inner = cell.adjusted(m.margin, m.margin, -m.margin, -m.margin);
  p.drawText(QRectF(inner.left(), inner.top(), inner.width(), m.title),
             Qt::AlignLeft | Qt::AlignVCenter, d.title);
  p.setFont(heatmapFont(style, false));
  p.setPen(QColor(0x55, 0x55, 0x55));
  p.drawText(inner.adjusted(0, m.title, 0, 0), Qt::AlignCenter | Qt::TextWordWrap,
             d.emptyText.isEmpty() ? QStringLiteral("No data") : d.emptyText);
}

// The figure's geometry, computed once for all its formats: fitting the grid measures every
// panel's labels and sums, thousands of text advances per panel at C = 1000.
struct FigurePlan {
  FigureGrid grid;
  QSizeF panel;   // one cell of the grid
  QSizeF points;  // the whole figure
};

FigurePlan planFigure(const Figure& f) {
  FigurePlan plan;
  if (f.panels.empty()) {
    plan.points = {100, 100};
    return plan;
  }
  plan.grid = fitGrid(f);
  plan.panel = panelSize(f, plan.grid);
  const double width = plan.panel.width() * plan.grid.columns + sharedBarWidth(f);
  // Whole points, so every format gets exactly the same page.
  plan.points = {std::ceil(width),
                 std::ceil(plan.panel.height() * plan.grid.rows + figureTitleHeight(f, width))};
  return plan;
}

// One painter a figure is painted into, and whether its format draws cells as rectangles.
struct PaintTarget {
  QPainter* painter = nullptr;
  bool vectorCells = false;
};

// Device pixels per logical unit, as paintCells derives them to decide on pooling.
double devicePixelsPerUnit(const QPainter& p) {
  return p.device() ? p.device()->devicePixelRatioF() * p.transform().m11() : 1.0;
}

// One panel into every target: the layout once, the one-pixel-per-cell image at most once,
// and a pooled image per output resolution (cells below a pixel), so each target paints
// exactly what paintHeatmap(p, d, style, cell) would, without building the images again.
void paintPanel(std::span<const PaintTarget> targets, const HeatmapData& d,
                const HeatmapStyle& style, const QRectF& cell) {
  const HeatmapLayout layout = computeLayout(cell, panelMetrics(d, style, cell));
  HeatmapViewport view;
  view.classes = d.classes;
  view.grid = layout.grid;
  QImage full;
  std::vector<std::pair<double, QImage>> pooled;  // by device pixels per unit
  for (const PaintTarget& t : targets) {
    HeatmapStyle s = style;
    s.vectorCells = t.vectorCells;
    PaintState state;
    if (!s.vectorCells) {
      const double scale = devicePixelsPerUnit(*t.painter);
      if (needsPooling(view, scale)) {
        auto it = std::find_if(pooled.begin(), pooled.end(),
                               [&](const auto& entry) { return entry.first == scale; });
        if (it == pooled.end()) {
          pooled.emplace_back(scale, pooledImageFor(d, s, view, scale));
          it = std::prev(pooled.end());
        }
        state.pooled = &it->second;
      } else {
        if (full.isNull()) full = buildHeatmapImage(d, s);
        state.image = &full;
      }
    }
    paintHeatmap(*t.painter, d, s, layout, view, state);
  }
}

// The figure into every target at once; a lazy figure's panel values exist one at a time.
void paintPlanned(std::span<const PaintTarget> targets, const Figure& f, const FigurePlan& plan,
                  const QRectF& bounds) {
  for (const PaintTarget& t : targets) t.painter->fillRect(bounds, Qt::white);
  if (f.panels.empty()) return;
  QRectF area = bounds;
  if (!f.title.isEmpty()) {
    const double h = figureTitleHeight(f, bounds.width());
    for (const PaintTarget& t : targets) {
      t.painter->setFont(figureTitleFont(f.style));
      t.painter->setPen(Qt::black);
      t.painter->drawText(QRectF(bounds.left() + 4, bounds.top(), bounds.width() - 8, h),
                          Qt::AlignCenter | Qt::TextWordWrap, f.title);
    }
    area.setTop(bounds.top() + h);
  }
  const FigureGrid& g = plan.grid;
  const double bar = sharedBarWidth(f);
  if (bar > 0) {
    // One colour bar for all panels, as tall as one panel's grid, beside the first row.
    const double top = area.top() + (plan.panel.height() - g.side) / 2;
    const QRectF r(area.right() - bar + 4, top, bar - 8,
                   std::min(g.side * 1.5, area.height() - (top - area.top())));
    for (const PaintTarget& t : targets) {
      HeatmapStyle s = f.style;
      s.vectorCells = t.vectorCells;
      paintColorBar(*t.painter, sizingPanel(f), s, r);
    }
    area.setRight(area.right() - bar);
  }
  const double w = area.width() / g.columns, h = area.height() / g.rows;
  std::vector<double> cells;  // a lazy figure's panel values, one panel at a time
  for (size_t i = 0; i < f.panels.size(); ++i) {
    const QRectF cell(area.left() + w * double(i % size_t(g.columns)),
                      area.top() + h * double(i / size_t(g.columns)), w, h);
    const HeatmapData& panel = f.panels[i];
    if (panel.classes <= 0) {
      for (const PaintTarget& t : targets) paintEmptyPanel(*t.painter, panel, g.style, cell);
    } else if (f.panelValues) {
      HeatmapData filled = panel;  // names are implicitly shared; the sums are a few KB
      f.panelValues(i, cells);
      filled.values = std::move(cells);
      paintPanel(targets, filled, g.style, cell);
      cells = std::move(filled.values);
    } else {
      paintPanel(targets, panel, g.style, cell);
    }
  }
}

// Between QSvgGenerator and the SVG file: keeps the drawing well-formed XML whatever text is
// painted. The generator escapes & < > " of painted text (class names, titles) but writes
// every other character as it is, and a C0 control character other than tab, line feed and
// carriage return (ESC, BEL in a class name) or U+FFFE / U+FFFF is no XML 1.0 character: the
// drawing would not open. Each becomes U+FFFD. The generator writes UTF-8, in which the bytes
// of those characters never occur inside another character; the last bytes of a write that
// may begin U+FFFE / U+FFFF wait for the next write (or close). The one escape of SVG text.
class XmlCharacters final : public QIODevice {
 public:
  explicit XmlCharacters(QIODevice* file) : m_file(file) { open(QIODevice::WriteOnly); }
  ~XmlCharacters() override { XmlCharacters::close(); }
  void close() override {
    if (!m_pending.isEmpty()) m_file->write(m_pending);
    m_pending.clear();
    QIODevice::close();
  }

 protected:
  qint64 readData(char*, qint64) override { return -1; }
  qint64 writeData(const char* data, qint64 size) override {
    QByteArray in = m_pending + QByteArray::fromRawData(data, int(size));
    m_pending.clear();
    QByteArray out;
    out.reserve(in.size());
    static const QByteArray kReplacement("\xEF\xBF\xBD");
    qsizetype i = 0;
    for (; i < in.size(); ++i) {
      const auto c = static_cast<unsigned char>(in[i]);
      if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
        out += kReplacement;
      } else if (c == 0xEF) {
        if (i + 2 >= in.size()) break;  // may be U+FFFE / U+FFFF: wait for the rest
        const auto c1 = static_cast<unsigned char>(in[i + 1]);
        const auto c2 = static_cast<unsigned char>(in[i + 2]);
        if (c1 == 0xBF && (c2 == 0xBE || c2 == 0xBF)) {
          out += kReplacement;
          i += 2;
        } else {
          out += char(c);
        }
      } else {
        out += char(c);
      }
    }
    m_pending = in.mid(i);
    if (m_file->write(out) != out.size()) return -1;
    return size;
  }

 private:
  QIODevice* m_file;
  QByteArray m_pending;
};

// One file being written: its device, its painter and the file it is saved to.
struct Output {
  FigureOutput what;
  QSaveFile file;
  QImage image;                        // PNG
  std::unique_ptr<XmlCharacters> xml;  // SVG: between the generator and the file
  std::unique_ptr<QSvgGenerator> svg;
  std::unique_ptr<QPdfWriter> pdf;
  QPainter painter;  // declared last: ends before its device goes
  explicit Output(const FigureOutput& o) : what(o), file(o.path) {}
};

QString documentTitle(const Figure& f) {
  return f.title.isEmpty() && !f.panels.empty() ? f.panels.front().title : f.title;
}

// Opens the output's device and begins painting on it; returns why not, or an empty string.
QString beginOutput(Output& out, const QString& title, const QSizeF& pts, int dpi) {
  // Fonts are sized in logical pixels; one logical pixel is one point in every format.
  if (out.what.format == FigureFormat::Png) {
    const double scale = dpi / 72.0;
    out.image =
        QImage(QSize(int(std::ceil(pts.width() * scale)), int(std::ceil(pts.height() * scale))),
               QImage::Format_ARGB32_Premultiplied);
    if (out.image.isNull()) return QStringLiteral("figure too large for memory at %1 dpi").arg(dpi);
    out.image.setDotsPerMeterX(int(std::lround(dpi / 0.0254)));
    out.image.setDotsPerMeterY(int(std::lround(dpi / 0.0254)));
    out.image.fill(Qt::white);
    out.painter.begin(&out.image);
    out.painter.setRenderHint(QPainter::TextAntialiasing);
    out.painter.scale(scale, scale);
    return {};
  }
  if (!out.file.open(QIODevice::WriteOnly)) return out.file.errorString();
  if (out.what.format == FigureFormat::Svg) {
    out.svg = std::make_unique<QSvgGenerator>();
    out.xml = std::make_unique<XmlCharacters>(&out.file);
    out.svg->setOutputDevice(out.xml.get());
    out.svg->setSize(pts.toSize());
    out.svg->setViewBox(QRectF(QPointF(0, 0), pts));
    out.svg->setResolution(72);
    // The generator writes the title into <title> as it is (Qt 6.4 escapes only painted text):
    // a title from a file holding <script> would run in a browser that opens the figure.
    out.svg->setTitle(QString::fromStdString(xml_text(title.toStdString())));
    out.svg->setDescription(QStringLiteral("ShardLens confusion-matrix figure"));
    if (!out.painter.begin(out.svg.get())) return QStringLiteral("cannot write SVG");
    return {};
  }
  out.pdf = std::make_unique<QPdfWriter>(&out.file);
  out.pdf->setResolution(std::max(dpi, 300));
  out.pdf->setPageSize(QPageSize(pts, QPageSize::Point));
  out.pdf->setPageMargins(QMarginsF(0, 0, 0, 0));
  out.pdf->setTitle(QString::fromStdString(display_text(title.toStdString())));
  out.pdf->setCreator(QStringLiteral("ShardLens"));
  if (!out.painter.begin(out.pdf.get())) return QStringLiteral("cannot write PDF");
  const double scale = out.pdf->resolution() / 72.0;
  out.painter.scale(scale, scale);
  return {};
}

// Saves a painted output: every format goes to a temporary file beside PATH, renamed over it
// only when complete (QSaveFile: the same atomic save as run files), so a full disk or a
// read-only directory leaves the previous figure intact and no temporary file behind.
QString saveOutput(Output& out) {
  const auto discard = [&] {
    out.file.cancelWriting();
    out.file.commit();  // discards the temporary file
  };
  if (out.what.format == FigureFormat::Png) {
    if (!out.file.open(QIODevice::WriteOnly)) return out.file.errorString();
    QImageWriter writer(&out.file, "png");
    if (!writer.write(out.image)) return writer.errorString();
  } else if (out.file.size() == 0 && out.file.error() == QFileDevice::NoError) {
    discard();
    return QStringLiteral("nothing was written");
  }
  if (out.file.error() != QFileDevice::NoError) {
    const QString why = out.file.errorString();
    discard();
    return why;
  }
  if (!out.file.commit()) return QStringLiteral("cannot write (%1)").arg(out.file.errorString());
  return {};
}

}  // namespace

QSizeF figureSizePoints(const Figure& f) {
  return planFigure(f).points;
}

void paintFigure(QPainter& p, const Figure& f, const QRectF& bounds) {
  const PaintTarget target{&p, f.style.vectorCells};
  paintPlanned({&target, 1}, f, planFigure(f), bounds);
}

bool writeFigure(const Figure& f, const QString& path, FigureFormat format, int dpi,
                 QString* error) {
  return writeFigureFormats(f, {FigureOutput{path, format}}, dpi, nullptr, error);
}

bool writePainted(const QSizeF& pts, const QString& title,
                  const std::function<void(std::span<QPainter* const>)>& paint,
                  const std::vector<FigureOutput>& outputs, int dpi, QStringList* written,
                  QString* error) {
  dpi = std::clamp(dpi, 30, 1200);
  std::vector<std::unique_ptr<Output>> outs;
  std::vector<QPainter*> painters;
  for (const FigureOutput& o : outputs) {
    outs.push_back(std::make_unique<Output>(o));
    const QString why = beginOutput(*outs.back(), title, pts, dpi);
    if (!why.isEmpty()) {
      if (error) *error = o.path + QStringLiteral(": ") + why;
      return false;  // the outputs begun so far are discarded, their files untouched
    }
    painters.push_back(&outs.back()->painter);
  }
  paint(painters);
  for (auto& out : outs) {
    out->painter.end();
    out->svg.reset();  // the generators go before the file is saved, as they always did
    out->xml.reset();  // writes what it held back
    out->pdf.reset();
  }
  for (auto& out : outs) {
    const QString why = saveOutput(*out);
    if (!why.isEmpty()) {
      if (error) *error = out->what.path + QStringLiteral(": ") + why;
      return false;
    }
    if (written) *written << out->what.path;
    out.reset();  // its image and file go now
  }
  return true;
}

bool writeFigureFormats(const Figure& f, const std::vector<FigureOutput>& outputs, int dpi,
                        QStringList* written, QString* error) {
  const FigurePlan plan = planFigure(f);
  // Vector formats: rectangles per cell while that stays small; the image beyond.
  const bool vectorCells = (f.panels.empty() ? 0 : sizingPanel(f).classes) <= 100;
  const auto paint = [&](std::span<QPainter* const> painters) {
    std::vector<PaintTarget> targets;
    for (size_t k = 0; k < painters.size(); ++k)
      targets.push_back({painters[k], outputs[k].format == FigureFormat::Png ? f.style.vectorCells
                                                                             : vectorCells});
    paintPlanned(targets, f, plan, QRectF(QPointF(0, 0), plan.points));
  };
  return writePainted(plan.points, documentTitle(f), paint, outputs, dpi, written, error);
}

}  // namespace shardlens::render
