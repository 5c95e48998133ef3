// The figure set of an evaluation, for the GUI's "Export figure set" and the CLI.
#include <QDir>
#include <QGuiApplication>
#include <cstdio>
#include <memory>

#include "core/sim/engine.h"
#include "ui/render/figures.h"
#include "ui/render/heatmap_source.h"

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

QString figureTitle(const Evaluation& eval, const QString& view) {
  const QString name = QString::fromStdString(
      eval.scenario().title.empty() ? eval.scenario().name : eval.scenario().title);
  return name.isEmpty() ? view : name + QStringLiteral(" — ") + view;
}

std::vector<std::pair<QString, Figure>> figureSet(const Evaluation& eval,
                                                  const MatrixOptions& options,
                                                  const HeatmapStyle& style,
                                                  const FigureSetOptions& set) {
  std::vector<std::pair<QString, Figure>> figures;
  Figure ranks;
  ranks.title = figureTitle(eval, QStringLiteral("per-rank matrices"));
  std::vector<HeatmapData> all = rankHeatmaps(eval, options);
  if (set.ranks.empty()) {
    ranks.panels = std::move(all);
  } else {
    for (int r : set.ranks) ranks.panels.push_back(all[size_t(r)]);
  }
  if (set.vmaxRanks > 0)
    for (HeatmapData& d : ranks.panels) d.valueMax = set.vmaxRanks;
  ranks.columns = std::min(4, std::max(1, static_cast<int>(ranks.panels.size())));
  ranks.style = style;
  ranks.style.compact = true;
  // Many ranks: a grid that fits a page, one colour bar for all (they share the range).
  if (ranks.panels.size() > 8) {
    ranks.page = kFigurePage;
    ranks.sharedColorBar = true;
  }
  figures.emplace_back(QStringLiteral("per-rank"), ranks);
  auto synced = syncedHeatmap(eval, options);
  auto expected = expectedHeatmap(eval, options);
  synced.valueMax = expected.valueMax =
      set.vmax > 0 ? set.vmax : std::max(synced.valueMax, expected.valueMax);
  auto difference = differenceHeatmap(eval, options);
  if (set.vmaxDifference > 0) difference.valueMax = set.vmaxDifference;
  const auto single = [&](const QString& file, HeatmapData d) {
    if (d.classes <= 0) return;  // e.g. the expected matrix of a run that does not know it
    Figure f;
    f.style = style;
    f.style.compact = false;
    d.title = figureTitle(eval, d.title);
    f.panels.push_back(std::move(d));
    figures.emplace_back(file, f);
  };
  single(QStringLiteral("synced"), std::move(synced));
  single(QStringLiteral("expected"), std::move(expected));
  single(QStringLiteral("difference"), std::move(difference));
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
  for (const auto& [file, figure] : figureSet(eval, options, style, set)) {
    for (FigureFormat f : formats) {
      const QString path = QDir(dir).filePath(file + QLatin1Char('.') + figureExtension(f));
      if (!writeFigure(figure, path, f, dpi, error)) return false;
      if (written) *written << path;
    }
  }
  return true;
}

int write_figure_set(const Evaluation& eval, const std::string& out_dir,
                     const std::vector<std::string>& formats, int dpi,
                     std::vector<std::string>* written, const FigureSetOptions& set) {
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
  const bool ok = writeFigureSet(eval, QString::fromStdString(out_dir), fmts, dpi, MatrixOptions{},
                                 HeatmapStyle{}, set, &paths, &error);
  if (written)
    for (const QString& p : paths) written->push_back(p.toStdString());
  if (!ok) {
    std::fprintf(stderr, "error: %s\n", error.toLocal8Bit().constData());
    return 2;
  }
  return 0;
}

}  // namespace shardlens::render
