#pragma once
// Figure export: one heatmap or a grid of them (small multiples) written as PNG at a chosen
// DPI, SVG or PDF, with title, axis labels, class names and colour bar. QtGui only, so the
// CLI makes the same figures headless.
#include <QString>
#include <QStringList>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ui/render/heatmap_data.h"

namespace shardlens {
struct Evaluation;
}

namespace shardlens::render {

enum class FigureFormat { Png, Svg, Pdf };
std::optional<FigureFormat> parseFigureFormat(const QString& text);  // "png", "svg", "pdf"
QString figureExtension(FigureFormat f);

struct Figure {
  QString title;  // above the panels; empty for a single heatmap
  std::vector<HeatmapData> panels;
  int columns = 1;  // without a page; with one the grid is chosen to fit it
  HeatmapStyle style;
  // When valid (points), the grid's columns, the panels' size and, if need be, a smaller
  // font are chosen so the figure fits the page (small multiples of many ranks).
  QSizeF page;
  // One colour bar beside the grid instead of one per panel (panels share the range).
  bool sharedColorBar = false;
  // Export of many large dense panels (64 dense ranks at C = 1000 are 512 MB of cells): when
  // set, dense panels come without their `values` (the layout needs only names, sums and
  // the colour range) and this fills `values` with panel i's C x C values when it is
  // painted, or empties it for a panel that holds its cells itself (sparse). The buffer is
  // the previous panel's, so a filler may reuse its storage; one panel's values exist at a
  // time. It may refer to data that must outlive the figure's painting.
  std::function<void(size_t panel, std::vector<double>& values)> panelValues;
};

// A page for figures of many panels: A3 landscape, in points.
inline const QSizeF kFigurePage(1191, 842);

// Size in points (1/72 inch): panels grow with the class count, within limits, and shrink
// to fit the figure's page when it has one.
QSizeF figureSizePoints(const Figure& f);
void paintFigure(QPainter& p, const Figure& f, const QRectF& bounds);

// Writes the figure; returns false and sets `error` on failure (bad path, full disk).
bool writeFigure(const Figure& f, const QString& path, FigureFormat format, int dpi,
                 QString* error = nullptr);

// Writes the figure in several formats in one pass, each file the same as writeFigure's:
// the layout is computed once, and each panel's cells are built once, painted into every
// format (their images shared where the resolutions agree) and released before the next.
// Files are saved in the order given; on the first failure the rest are discarded and
// `error` says why. `written` receives the paths saved.
struct FigureOutput {
  QString path;
  FigureFormat format = FigureFormat::Png;
};
bool writeFigureFormats(const Figure& f, const std::vector<FigureOutput>& outputs, int dpi,
                        QStringList* written = nullptr, QString* error = nullptr);
// The same for any painting `pts` points large (the drift figure): `paint` draws once on
// every output's painter (in `outputs` order), each saved atomically; false and `error` on
// the first failure.
bool writePainted(const QSizeF& pts, const QString& title,
                  const std::function<void(std::span<QPainter* const>)>& paint,
                  const std::vector<FigureOutput>& outputs, int dpi, QStringList* written = nullptr,
                  QString* error = nullptr);

// Which evaluation of its run the figures show (evaluation_label: "epoch 2", "epoch 1,
// validation 3"), when its run has several or its epoch is not 0; else empty.
QString figureEvaluationLabel(const shardlens::Evaluation& eval);

// The title of an exported view, the same in "Export view" and the figure set:
// "<scenario title> — <view>", or the view alone for a scenario without a name, followed by
// " — <figureEvaluationLabel>" when there is one ("… — synced — epoch 2").
QString figureTitle(const shardlens::Evaluation& eval, const QString& view);

// The per-rank figure's columns for its number of panels: a near-square grid, ceil(sqrt(n))
// (2 x 2 for 4 ranks, 3 x 3 for 8). Beyond 8 panels the page decides.
int rankFigureColumns(int panels);

// What a figure set shows beyond the view options.
struct FigureSetOptions {
  std::vector<int> ranks;  // the per-rank figure's ranks, in this order; empty: all
  // Colour ranges. By default each figure has its own, its data's, as the window's views:
  // a batch-limited synced matrix (counts 0-9) is not drawn dark under the expected one's
  // range (0-50). The ranks share one range, so their panels compare.
  // Fixed ranges, so figures of two runs or epochs compare: [0, vmax] for the synced matrix,
  // [0, vmaxExpected] for the expected one (<= 0: vmax), [-vmaxDifference, vmaxDifference]
  // for the difference; <= 0: from the data.
  double vmax = 0;
  double vmaxExpected = 0;
  double vmaxDifference = 0;
  double vmaxRanks = 0;  // the per-rank panels' range
  // Without a fixed range: the synced and expected figures share the larger of their ranges
  // (the figures' behaviour before ranges were per view), so their colours compare.
  bool sharedRange = false;
  // The fixed ranges are the largest of every epoch of the run (the CLI's export of several
  // epochs), not the user's: the colour bars say so.
  bool rangesOverEpochs = false;
};

struct MatrixOptions;
// The figures of the set by file stem ("per-rank", "synced", "expected", "difference"; the
// last two only when the expected matrix is known). Ranks must be valid.
std::vector<std::pair<QString, Figure>> figureSet(const shardlens::Evaluation& eval,
                                                  const MatrixOptions& options,
                                                  const HeatmapStyle& style,
                                                  const FigureSetOptions& set);
// The figure set of an evaluation with the given options: per-rank.EXT, synced.EXT,
// expected.EXT and difference.EXT per format. Needs a QGuiApplication. Returns false and
// sets `error` on the first failure.
bool writeFigureSet(const shardlens::Evaluation& eval, const QString& dir,
                    const std::vector<FigureFormat>& formats, int dpi, const MatrixOptions& options,
                    const HeatmapStyle& style, const FigureSetOptions& set, QStringList* written,
                    QString* error);

// The CLI's entry point: writes per-rank, synced, expected and difference figures for every
// format into out_dir (created if missing). Creates an offscreen QGuiApplication when the
// process has none. Returns 0 on success, 2 on an unknown format, a rank the evaluation does
// not have or a write error (message on stderr). `written` receives the paths written.
// `colour_scale`: "auto" (log for pixel and token counts, linear otherwise: usesLogScale),
// "linear" or "log" (so the few small counts of a sparse 1000-class matrix stand out beside
// its large ones); the colour bars say a log scale.
int write_figure_set(const shardlens::Evaluation& eval, const std::string& out_dir,
                     const std::vector<std::string>& formats, int dpi,
                     std::vector<std::string>* written, const FigureSetOptions& set = {},
                     const std::string& colour_scale = "auto",
                     const std::string& class_order = "index");

// The CLI's drift figure of a run of several evaluations: drift.EXT per format in out_dir
// (nothing for a single evaluation). 0, or 2 with the error on stderr.
int write_drift_figure(const std::vector<const shardlens::Evaluation*>& epochs,
                       const std::string& out_dir, const std::vector<std::string>& formats, int dpi,
                       std::vector<std::string>* written);

}  // namespace shardlens::render
