#pragma once
// Figure export: one heatmap or a grid of them (small multiples) written as PNG at a chosen
// DPI, SVG or PDF, with title, axis labels, class names and colour bar. QtGui only, so the
// CLI makes the same figures headless.
#include <QString>
#include <optional>
#include <string>
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
  int columns = 1;
  HeatmapStyle style;
};

// Natural size in points (1/72 inch): panels grow with the class count, within limits.
QSizeF figureSizePoints(const Figure& f);
void paintFigure(QPainter& p, const Figure& f, const QRectF& bounds);

// Writes the figure; returns false and sets `error` on failure (bad path, full disk).
bool writeFigure(const Figure& f, const QString& path, FigureFormat format, int dpi,
                 QString* error = nullptr);

// The CLI's entry point: writes per-rank, synced, expected and difference figures for every
// format into out_dir (created if missing). Creates an offscreen QGuiApplication when the
// process has none. Returns 0 on success, 2 on an unknown format or a write error (message on
// stderr). `written` receives the paths of the files written.
struct MatrixOptions;
// The figure set of an evaluation with the given options: per-rank.EXT, synced.EXT,
// expected.EXT and difference.EXT per format. Needs a QGuiApplication. Returns false and
// sets `error` on the first failure.
bool writeFigureSet(const shardlens::Evaluation& eval, const QString& dir,
                    const std::vector<FigureFormat>& formats, int dpi, const MatrixOptions& options,
                    const HeatmapStyle& style, QStringList* written, QString* error);

int write_figure_set(const shardlens::Evaluation& eval, const std::string& out_dir,
                     const std::vector<std::string>& formats, int dpi,
                     std::vector<std::string>* written);

}  // namespace shardlens::render
