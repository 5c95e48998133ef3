#include "ui/settings/settings.h"

#include <QSettings>
#include <exception>

namespace shardlens::ui {
namespace {

// The keys, in one place.
const QString kRecentFiles = QStringLiteral("recentFiles");
const QString kGeometry = QStringLiteral("window/geometry");
const QString kState = QStringLiteral("window/state");
const QString kCentreSplitter = QStringLiteral("window/centreSplitter");
const QString kNormalization = QStringLiteral("view/normalization");
const QString kOrder = QStringLiteral("view/order");
const QString kColormap = QStringLiteral("view/colormap");
const QString kLog = QStringLiteral("view/log");  // before the scale: log or linear
const QString kScale = QStringLiteral("view/scale");
const QString kValues = QStringLiteral("view/values");
const QString kLastScenario = QStringLiteral("lastScenario");
const QString kExportDir = QStringLiteral("export/dir");
const QString kExportDpi = QStringLiteral("export/dpi");
const QString kMemoryBudget = QStringLiteral("loads/maxMemory");
const QString kWelcomeDismissed = QStringLiteral("welcome/dismissed");

}  // namespace

QStringList Settings::recentFiles() {
  return QSettings().value(kRecentFiles).toStringList().mid(0, kMaxRecentFiles);
}

void Settings::setRecentFiles(const QStringList& paths) {
  QSettings().setValue(kRecentFiles, paths.mid(0, kMaxRecentFiles));
}

QByteArray Settings::windowGeometry() {
  return QSettings().value(kGeometry).toByteArray();
}

void Settings::setWindowGeometry(const QByteArray& bytes) {
  QSettings().setValue(kGeometry, bytes);
}

QByteArray Settings::windowState() {
  return QSettings().value(kState).toByteArray();
}

void Settings::setWindowState(const QByteArray& bytes) {
  QSettings().setValue(kState, bytes);
}

QByteArray Settings::centreSplitter() {
  return QSettings().value(kCentreSplitter).toByteArray();
}

void Settings::setCentreSplitter(const QByteArray& bytes) {
  QSettings().setValue(kCentreSplitter, bytes);
}

ViewOptions Settings::viewOptions() {
  const QSettings s;
  ViewOptions o;
  try {
    o.matrix.normalization = parse_normalization(
        s.value(kNormalization, QStringLiteral("none")).toString().toStdString());
  } catch (const std::exception&) {
    o.matrix.normalization = Normalization::None;  // a stale settings file must not stop startup
  }
  o.matrix.order = render::parseClassOrder(s.value(kOrder).toString());
  o.style.colormap = render::parseColormap(s.value(kColormap).toString());
  // A log scale chosen before the automatic one stays chosen.
  o.style.scale = s.contains(kScale) ? render::parseColourScale(s.value(kScale).toString())
                  : s.value(kLog, false).toBool() ? render::ColourScale::Log
                                                  : render::ColourScale::Auto;
  o.style.showValues = s.value(kValues, true).toBool();
  return o;
}

void Settings::setViewOptions(const ViewOptions& o) {
  QSettings s;
  s.setValue(kNormalization, QString::fromStdString(to_string(o.matrix.normalization)));
  s.setValue(kOrder, render::classOrderName(o.matrix.order));
  s.setValue(kColormap, render::colormapName(o.style.colormap));
  s.setValue(kScale, render::colourScaleName(o.style.scale));
  s.setValue(kValues, o.style.showValues);
}

QString Settings::lastScenario() {
  return QSettings().value(kLastScenario).toString();
}

void Settings::setLastScenario(const QString& json) {
  QSettings().setValue(kLastScenario, json);
}

QString Settings::exportDir() {
  return QSettings().value(kExportDir).toString();
}

void Settings::setExportDir(const QString& dir) {
  QSettings().setValue(kExportDir, dir);
}

int Settings::exportDpi() {
  return QSettings().value(kExportDpi, 150).toInt();
}

void Settings::setExportDpi(int dpi) {
  QSettings().setValue(kExportDpi, dpi);
}

QString Settings::memoryBudget() {
  return QSettings().value(kMemoryBudget).toString();
}

void Settings::setMemoryBudget(const QString& text) {
  QSettings().setValue(kMemoryBudget, text);
}

bool Settings::welcomeDismissed() {
  return QSettings().value(kWelcomeDismissed, false).toBool();
}

void Settings::setWelcomeDismissed(bool dismissed) {
  QSettings().setValue(kWelcomeDismissed, dismissed);
}

}  // namespace shardlens::ui
