#include "ui/controllers/data_export.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/io/csv.h"
#include "core/io/output_text.h"
#include "core/report/report.h"

namespace shardlens::ui {

std::string reportJson(const Evaluation& e) {
  return json_text(report_json(e), 2) + "\n";
}

QString heatmapTsv(const render::HeatmapData& d) {
  // Tabs and line breaks inside a name would shift the cells; a name that starts like a
  // formula (=HYPERLINK(...)) is pasted as text (spreadsheet_text, core/io/csv.h).
  const auto clean = [](QString name) {
    name.replace(QLatin1Char('\t'), QLatin1Char(' '));
    name.replace(QLatin1Char('\n'), QLatin1Char(' '));
    name.replace(QLatin1Char('\r'), QLatin1Char(' '));
    return QString::fromStdString(spreadsheet_text(name.toStdString()));
  };
  QString out = d.yLabel + QStringLiteral(" \\ ") + d.xLabel;
  for (int c = 0; c < d.classes; ++c) out += QLatin1Char('\t') + clean(d.names[size_t(c)]);
  out += QLatin1Char('\n');
  for (int r = 0; r < d.classes; ++r) {
    out += clean(d.names[size_t(r)]);
    for (int c = 0; c < d.classes; ++c) {
      const double v = d.value(r, c);
      out += QLatin1Char('\t') + (d.integral ? QString::number(static_cast<qlonglong>(v))
                                             : QString::number(v, 'g', 17));
    }
    out += QLatin1Char('\n');
  }
  return out;
}

}  // namespace shardlens::ui
