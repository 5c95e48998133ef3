// The figure set of an evaluation, for the GUI's "Export figure set" and the CLI.
#include <QDir>
#include <QGuiApplication>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>

#include "core/evaluation/caption.h"
#include "core/sim/engine.h"
#include "core/vocabulary/limits.h"
#include "ui/render/confusion_figure.h"
#include "ui/render/drift_figure.h"
#include "ui/render/figures.h"
#include "ui/render/group_heatmaps.h"
#include "ui/render/heatmap_source.h"
#include "ui/render/shown_text.h"

namespace shardlens::render {
namespace {

// The CLI has no QGuiApplication; fonts and paint devices need one. Offscreen needs no
// display, so figures work on servers and in CI.
QtMessageHandler g_previousHandler = nullptr;

// A headless CLI has no XDG_RUNTIME_DIR; Qt's warning about it is noise on a terminal.
void quietHandler(QtMsgType type, const QMessageLogContext& context, const QString& message) {
  if (type == QtWarningMsg && message.contains(QLatin1String("XDG_RUNTIME_DIR"))) return;
  if (g_previousHandler)
    g_previousHandler(type, context, message);
  else
    std::fprintf(stderr, "%s\n", message.toLocal8Bit().constData());
}

// One QGuiApplication for the life of the process: Qt cannot make a second one after the
// first is gone (the figures of a second epoch would hang).
void ensureGuiApp() {
  if (QCoreApplication::instance()) return;
  g_previousHandler = qInstallMessageHandler(quietHandler);
  static int argc = 3;
  static char arg0[] = "shardlens-cli";
  static char arg1[] = "-platform";
  static char arg2[] = "offscreen";
  static char* argv[] = {arg0, arg1, arg2, nullptr};
  static QGuiApplication* app = new QGuiApplication(argc, argv);  // never destroyed
  (void)app;
}

}  // namespace

// Both from core's one caption policy (core/evaluation/caption.h), as the GUI and the
// reports say it.
QString figureEvaluationLabel(const Evaluation& eval) {
  return shownText(evaluation_which(eval));
}

QString figureTitle(const Evaluation& eval, const QString& view) {
  return shownText(figure_caption(eval, view.toStdString()));
}

int rankFigureColumns(int panels) {
  // A near-square grid: 2 x 2 for 4 ranks, 3 x 3 for 8 (its last cell empty).
  return std::max(1, static_cast<int>(std::ceil(std::sqrt(double(std::max(1, panels))))));
}

namespace {

// A fixed range of the figure set: the user's, or the largest over the run's epochs.
ColourRange fixedRange(const FigureSetOptions& set) {
  return set.rangesOverEpochs ? ColourRange::OverEpochs : ColourRange::Fixed;
}

// The per-rank figure around its panels: title, grid and colour bar for their number.
void frameRankFigure(Figure& ranks, const Evaluation& eval, const HeatmapStyle& style) {
  ranks.title = figureTitle(eval, QStringLiteral("per-rank matrices"));
  ranks.columns = rankFigureColumns(static_cast<int>(ranks.panels.size()));
  ranks.style = style;
  ranks.style.compact = true;
  ranks.style.axisTitles = true;  // every panel says which axis is true, which predicted
  // Many ranks: a grid that fits a page, one colour bar for all (they share the range).
  if (ranks.panels.size() > 8) {
    ranks.page = kFigurePage;
    ranks.sharedColorBar = true;
  }
}

// What the lazy per-rank figure keeps of a dense panel's values between building the panels
// (for the layout and the shared range) and painting them: the non-zero cells, so each
// matrix is built once. Beyond this budget for all panels together a dense panel keeps
// nothing and its matrix is built again when painted. Sparse panels (most cells zero: a
// rank's share at 1000 classes) keep their cells as they are. The budget:
// kMaxFigureStoredCellsBytes (core/vocabulary/limits.h).

// A cell's row-major index fits 32 bits at the class cap.
static_assert(uint64_t(kMaxClasses) * uint64_t(kMaxClasses) <= UINT32_MAX);

struct StoredCells {
  enum class Kind { Whole, Stored, Rebuilt } kind = Kind::Whole;
  size_t size = 0;              // C x C
  std::vector<uint32_t> index;  // row-major cell index
  std::vector<double> value;
};

// The per-rank figure for writing: dense panels without their values, filled in one at a
// time when painted, so 64 dense ranks at C = 1000 hold one matrix (8 MB) instead of all
// (512 MB). Its panels equal figureSet's: the same heatmaps, the range shared across every
// rank as rankHeatmaps shares it.
Figure lazyRankFigure(const Evaluation& eval, const MatrixOptions& options,
                      const HeatmapStyle& style, const FigureSetOptions& set) {
  const int world = static_cast<int>(eval.per_rank.size());
  std::vector<int> chosen = set.ranks;
  if (chosen.empty())
    for (int r = 0; r < world; ++r) chosen.push_back(r);
  // Without a fixed range every rank sets it, shown or not.
  std::vector<bool> shown(size_t(world), false);
  for (int r : chosen) shown[size_t(r)] = true;
  auto axis = std::make_shared<const ClassAxis>(classAxis(eval, options.order));
  std::vector<HeatmapData> all(static_cast<size_t>(world));
  auto stored = std::make_shared<std::vector<StoredCells>>(size_t(world));
  size_t storedBytes = 0;
  std::vector<HeatmapData> ranges;  // the panels' ranges, shared as rankHeatmaps shares them
  for (int r = 0; r < world; ++r) {
    if (!shown[size_t(r)] && set.vmaxRanks > 0) continue;
    HeatmapData d = rankHeatmap(eval, r, options, *axis);
    ranges.emplace_back().valueMax = d.valueMax;
    if (!shown[size_t(r)] || d.values.empty()) {  // sparse or empty: kept whole
      all[size_t(r)] = std::move(d);
      continue;
    }
    const size_t nonZero =
        size_t(std::count_if(d.values.begin(), d.values.end(), [](double v) { return v != 0; }));
    const size_t bytes = nonZero * (sizeof(uint32_t) + sizeof(double));
    StoredCells& cells = (*stored)[size_t(r)];
    cells.kind = StoredCells::Kind::Rebuilt;
    if (storedBytes + bytes <= kMaxFigureStoredCellsBytes) {
      storedBytes += bytes;
      cells.kind = StoredCells::Kind::Stored;
      cells.size = d.values.size();
      cells.index.reserve(nonZero);
      cells.value.reserve(nonZero);
      for (size_t i = 0; i < d.values.size(); ++i)
        if (d.values[i] != 0) {
          cells.index.push_back(uint32_t(i));
          cells.value.push_back(d.values[i]);
        }
    }
    std::vector<double>().swap(d.values);
    all[size_t(r)] = std::move(d);
  }
  shareRange(ranges);
  const double top = set.vmaxRanks > 0 ? set.vmaxRanks
                     : ranges.empty()  ? 0.0
                                       : ranges.front().valueMax;
  Figure ranks;
  for (int r : chosen) {
    ranks.panels.push_back(all[size_t(r)]);
    ranks.panels.back().valueMax = top;
    noteColourRange(ranks.panels.back(),
                    set.vmaxRanks > 0 ? fixedRange(set) : ColourRange::SharedByRanks);
  }
  ranks.panelValues = [&eval, options, axis, chosen, stored](size_t i,
                                                             std::vector<double>& values) {
    const int rank = chosen[i];
    const StoredCells& cells = (*stored)[size_t(rank)];
    switch (cells.kind) {
      case StoredCells::Kind::Whole:
        values.clear();  // the panel holds its cells
        return;
      case StoredCells::Kind::Rebuilt:
        values = rankHeatmap(eval, rank, options, *axis).values;
        return;
      case StoredCells::Kind::Stored:
        break;
    }
    values.assign(cells.size, 0.0);  // the previous panel's storage: no new pages
    for (size_t k = 0; k < cells.index.size(); ++k) values[cells.index[k]] = cells.value[k];
  };
  frameRankFigure(ranks, eval, style);
  return ranks;
}

// The figures of one matrix each (synced, expected, difference; the last two only when the
// expected matrix is known), handed to `sink` one by one; stops when it returns false.
bool singleFigures(const Evaluation& eval, const MatrixOptions& options, const HeatmapStyle& style,
                   const FigureSetOptions& set,
                   const std::function<bool(const QString&, Figure&&)>& sink) {
  auto synced = syncedHeatmap(eval, options);
  auto expected = expectedHeatmap(eval, options);
  // Each its own range (the window's), unless fixed or asked to share one.
  const bool both = synced.classes > 0 && expected.classes > 0;
  if (set.vmax > 0) {
    synced.valueMax = set.vmax;
    expected.valueMax = set.vmaxExpected > 0 ? set.vmaxExpected : set.vmax;
    noteColourRange(synced, fixedRange(set));
    noteColourRange(expected, fixedRange(set));
  } else if (set.sharedRange && both) {
    synced.valueMax = expected.valueMax = std::max(synced.valueMax, expected.valueMax);
    noteColourRange(synced, ColourRange::Shared);
    noteColourRange(expected, ColourRange::Shared);
  } else {
    noteColourRange(synced, ColourRange::Own);
    noteColourRange(expected, ColourRange::Own);
  }
  const auto single = [&](const QString& file, HeatmapData d) {
    if (d.classes <= 0) return true;  // e.g. the expected matrix of a run that does not know it
    Figure f;
    f.style = style;
    f.style.compact = false;
    d.title = figureTitle(eval, d.title);
    f.panels.push_back(std::move(d));
    return sink(file, std::move(f));
  };
  if (!single(QStringLiteral("synced"), std::move(synced))) return false;
  if (!single(QStringLiteral("expected"), std::move(expected))) return false;
  auto difference = differenceHeatmap(eval, options);
  if (set.vmaxDifference > 0) difference.valueMax = set.vmaxDifference;
  noteColourRange(difference, set.vmaxDifference > 0 ? fixedRange(set) : ColourRange::Own);
  return single(QStringLiteral("difference"), std::move(difference));
}

}  // namespace

std::vector<std::pair<QString, Figure>> figureSet(const Evaluation& eval,
                                                  const MatrixOptions& options,
                                                  const HeatmapStyle& style,
                                                  const FigureSetOptions& set) {
  std::vector<std::pair<QString, Figure>> figures;
  Figure ranks;
  std::vector<HeatmapData> all = rankHeatmaps(eval, options);
  if (set.ranks.empty()) {
    ranks.panels = std::move(all);
  } else {
    for (int r : set.ranks) ranks.panels.push_back(all[size_t(r)]);
  }
  for (HeatmapData& d : ranks.panels) {
    if (set.vmaxRanks > 0) d.valueMax = set.vmaxRanks;
    noteColourRange(d, set.vmaxRanks > 0 ? fixedRange(set) : ColourRange::SharedByRanks);
  }
  frameRankFigure(ranks, eval, style);
  figures.emplace_back(QStringLiteral("per-rank"), std::move(ranks));
  singleFigures(eval, options, style, set, [&](const QString& file, Figure&& f) {
    figures.emplace_back(file, std::move(f));
    return true;
  });
  if (auto confused = mostConfusedFigure(eval, style))
    figures.emplace_back(QStringLiteral("most-confused"), std::move(*confused));
  for (auto& [name, figure] : groupsFigures(eval, style))
    figures.emplace_back(name, std::move(figure));
  return figures;
}

bool writeFigureSet(const Evaluation& eval, const QString& dir,
                    const std::vector<FigureFormat>& formats, int dpi, const MatrixOptions& options,
                    const HeatmapStyle& style, const FigureSetOptions& set, QStringList* written,
                    QString* error) {
  const int world = static_cast<int>(eval.per_rank.size());
  for (int r : set.ranks) {
    if (r < 0 || r >= world) {
      if (error) *error = QStringLiteral("--ranks: rank %1 is not in 0..%2").arg(r).arg(world - 1);
      return false;
    }
  }
  if (!QDir().mkpath(dir)) {
    if (error) *error = dir + QStringLiteral(": cannot create the directory");
    return false;
  }
  // Figure by figure, every format in one pass: each matrix is built once for all formats
  // and released before the next (figureSet would hold all of them, 512 MB at 64 x 1000).
  const auto write = [&](const QString& file, const Figure& figure) {
    std::vector<FigureOutput> outputs;
    for (FigureFormat f : formats)
      outputs.push_back({QDir(dir).filePath(file + QLatin1Char('.') + figureExtension(f)), f});
    return writeFigureFormats(figure, outputs, dpi, written, error);
  };
  if (!write(QStringLiteral("per-rank"), lazyRankFigure(eval, options, style, set))) return false;
  if (!singleFigures(eval, options, style, set,
                     [&](const QString& file, Figure&& f) { return write(file, f); }))
    return false;
  const auto confused = mostConfusedFigure(eval, style);
  if (confused && !write(QStringLiteral("most-confused"), *confused)) return false;
  // A figure per level of the hierarchy, each built and written before the next.
  for (int level = 0; eval.class_groups && level < eval.class_groups->depth(); ++level) {
    const auto groups = groupsFigure(eval, style, level);
    if (groups && !write(groupsFigureName(level), *groups)) return false;
  }
  return true;
}

namespace {

// The CLI's figure writers: the formats parsed, a QGuiApplication made, then `write`; 0, or
// 2 with the error on stderr.
int writeForCli(
    const std::vector<std::string>& formats, std::vector<std::string>* written,
    const std::function<bool(const std::vector<FigureFormat>&, QStringList*, QString*)>& write) {
  std::vector<FigureFormat> fmts;
  for (const std::string& name : formats) {
    const auto f = parseFigureFormat(QString::fromStdString(name));
    if (!f) {
      std::fprintf(stderr, "error: --figures: unknown format '%s' (use png, svg, pdf)\n",
                   name.c_str());
      return 2;
    }
    fmts.push_back(*f);
  }
  ensureGuiApp();
  if (!qobject_cast<QGuiApplication*>(QCoreApplication::instance())) {
    std::fprintf(stderr, "error: figures need a QGuiApplication, but a non-GUI one exists\n");
    return 2;
  }
  QStringList paths;
  QString error;
  const bool ok = write(fmts, &paths, &error);
  if (written)
    for (const QString& p : paths) written->push_back(p.toStdString());
  if (!ok) {
    std::fprintf(stderr, "error: %s\n", error.toLocal8Bit().constData());
    return 2;
  }
  return 0;
}

}  // namespace

int write_figure_set(const Evaluation& eval, const std::string& out_dir,
                     const std::vector<std::string>& formats, int dpi,
                     std::vector<std::string>* written, const FigureSetOptions& set,
                     const std::string& colour_scale, const std::string& class_order) {
  HeatmapStyle style;
  style.scale = parseColourScale(QString::fromStdString(colour_scale));
  MatrixOptions options;
  options.order = parseClassOrder(QString::fromStdString(class_order));
  return writeForCli(formats, written, [&](const auto& fmts, QStringList* paths, QString* error) {
    return writeFigureSet(eval, QString::fromStdString(out_dir), fmts, dpi, options, style, set,
                          paths, error);
  });
}

int write_drift_figure(const std::vector<const Evaluation*>& epochs, const std::string& out_dir,
                       const std::vector<std::string>& formats, int dpi,
                       std::vector<std::string>* written) {
  if (epochs.size() < 2) return 0;
  return writeForCli(formats, written, [&](const auto& fmts, QStringList* paths, QString* error) {
    DriftFigure f;
    f.drift = row_drift(epochs);
    f.classNames = classNames(*epochs.front());
    // The same caption as the epochs' other figures, with no epoch: it shows them all.
    // "by class and epoch", or "... and validation" for one epoch's validations.
    f.title = shownText(scenario_title(epochs.front()->scenario())) +
              QStringLiteral(" — row sum − true count, by class and ") + driftColumns(f.drift).word;
    return writeDriftFigure(f, QString::fromStdString(out_dir), fmts, dpi, paths, error);
  });
}

}  // namespace shardlens::render
