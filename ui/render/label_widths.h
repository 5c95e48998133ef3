#pragma once
// The widest class label per font, measured once and shared by every view built on one class
// axis: measuring 1000 names for each of 67 views, on every layout pass, cost seconds of the
// GUI thread. Thread-safe, so the background job measures and the GUI thread reads.
#include <QFont>
#include <QString>
#include <map>
#include <mutex>
#include <vector>

namespace shardlens::render {

class LabelWidths {
 public:
  // The widest of `labels` in `font`, measured on the first call for that font.
  double widest(const QFont& font, const std::vector<QString>& labels) const;

 private:
  mutable std::mutex m_mutex;
  mutable std::map<QString, double> m_widths;  // by QFont::key()
};

// The widest of the numbers as formatValue(v, false) prints them (signedValueText with
// `explicitSign`: a difference's sums). Measures one text per distinct shape (digits alike)
// among the longest, not each of the C numbers: digits have one width in the heatmap's font.
double widestNumberText(const QFont& font, const std::vector<const std::vector<double>*>& sets,
                        size_t first = 0, size_t last = size_t(-1), bool explicitSign = false);

}  // namespace shardlens::render
