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

bool writeFigureSet(const Evaluation& eval, const QString& dir,
                    const std::vector<FigureFormat>& formats, int dpi, const MatrixOptions& options,
                    const HeatmapStyle& style, QStringList* written, QString* error) {
  if (!QDir().mkpath(dir)) {
    if (error) *error = dir + QStringLiteral(": cannot create the directory");
    return false;
  }
  const QString name = QString::fromStdString(eval.scenario.title.empty() ? eval.scenario.name
                                                                          : eval.scenario.title);
  std::vector<std::pair<QString, Figure>> figures;
  Figure ranks;
  ranks.title = name.isEmpty() ? QStringLiteral("Per-rank matrices")
                               : name + QStringLiteral(" — per-rank matrices");
  ranks.panels = rankHeatmaps(eval, options);
  ranks.columns = std::min(4, std::max(1, static_cast<int>(ranks.panels.size())));
  ranks.style = style;
  ranks.style.compact = true;
  figures.emplace_back(QStringLiteral("per-rank"), ranks);
  auto synced = syncedHeatmap(eval, options);
  auto expected = expectedHeatmap(eval, options);
  synced.valueMax = expected.valueMax = std::max(synced.valueMax, expected.valueMax);
  const auto single = [&](const QString& file, HeatmapData d) {
    if (d.classes <= 0) return;  // e.g. the expected matrix of a run that does not know it
    Figure f;
    f.style = style;
    f.style.compact = false;
    if (!name.isEmpty()) d.title = name + QStringLiteral(" — ") + d.title;
    f.panels.push_back(std::move(d));
    figures.emplace_back(file, f);
  };
  single(QStringLiteral("synced"), std::move(synced));
  single(QStringLiteral("expected"), std::move(expected));
  single(QStringLiteral("difference"), differenceHeatmap(eval, options));
  for (const auto& [file, figure] : figures) {
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
                     std::vector<std::string>* written) {
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
                                 HeatmapStyle{}, &paths, &error);
  if (written)
    for (const QString& p : paths) written->push_back(p.toStdString());
  if (!ok) {
    std::fprintf(stderr, "error: %s\n", error.toLocal8Bit().constData());
    return 2;
  }
  return 0;
}

}  // namespace shardlens::render
