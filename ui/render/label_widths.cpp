#include "ui/render/label_widths.h"

#include <QFontMetricsF>
#include <algorithm>
#include <map>
#include <set>

#include "ui/render/heatmap_data.h"

namespace shardlens::render {

double LabelWidths::widest(const QFont& font, const std::vector<QString>& labels) const {
  const QString key = font.key();
  {
    std::lock_guard lock(m_mutex);
    if (auto it = m_widths.find(key); it != m_widths.end()) return it->second;
  }
  const QFontMetricsF fm(font);
  double widest = 0;
  for (const QString& label : labels) widest = std::max(widest, fm.horizontalAdvance(label));
  std::lock_guard lock(m_mutex);
  m_widths[key] = widest;
  return widest;
}

double widestNumberText(const QFont& font, const std::vector<const std::vector<double>*>& sets,
                        size_t first, size_t last, bool explicitSign) {
  // Shapes of the texts of the two longest lengths (a sign or point is narrower than a
  // digit, so one character fewer can still be wider): every digit as 0, so "1234" and
  // "5678" are measured once.
  std::map<qsizetype, std::set<QString>> shapes;
  for (const std::vector<double>* values : sets)
    for (size_t i = first; i < std::min(last, values->size()); ++i) {
      QString text =
          explicitSign ? signedValueText((*values)[i], false) : formatValue((*values)[i], false);
      if (!shapes.empty() && text.size() + 1 < shapes.rbegin()->first) continue;
      for (QChar& ch : text)
        if (ch.isDigit()) ch = QLatin1Char('0');
      shapes[text.size()].insert(text);
      while (shapes.size() > 2) shapes.erase(shapes.begin());
    }
  const QFontMetricsF fm(font);
  double widest = fm.horizontalAdvance(QStringLiteral("0"));
  for (const auto& [length, texts] : shapes)
    for (const QString& shape : texts) widest = std::max(widest, fm.horizontalAdvance(shape));
  return widest;
}

}  // namespace shardlens::render
