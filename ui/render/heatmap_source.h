#pragma once
// Builds the heatmaps of an evaluation: each rank's matrix, the synced (reported) one, the
// expected one, and their difference, in the chosen normalization and class order.
#include <QString>
#include <QStringList>
#include <memory>
#include <vector>

#include "core/sim/engine.h"
#include "core/vocabulary/matrix.h"
#include "ui/render/heatmap_data.h"

namespace shardlens::render {

enum class ClassOrder {
  Index,  // class id
  Name,   // alphabetical class name
  Count,  // most frequent class first
  Error,  // largest row-sum error first (the row check's order), so mismatches gather at top
  // the most confused classes first, each large confusion's two classes side by side
  // (order_by_confusion, core/report/confusion_ranking.h)
  Confusion,
};
QString classOrderName(ClassOrder order);
ClassOrder parseClassOrder(const QString& name);  // unknown names give Index
QStringList classOrderNames();

struct MatrixOptions {
  Normalization normalization = Normalization::None;
  ClassOrder order = ClassOrder::Index;
  bool operator==(const MatrixOptions&) const = default;
};

// What each row of a correct reported matrix sums to: the true class counts, the reference of
// the evaluation's row check (equal to the expected matrix's row sums, whose rows a run file
// must sum to its class counts).
std::vector<double> trueRowCounts(const Evaluation& e);
// Why the expected and difference views are empty when the evaluation has no expected matrix.
QString expectedUnknownText(const Evaluation& e);
// Why the synced and difference views are empty for a run that never synchronized.
QString syncedMissingText(const Evaluation& e);
// A heatmap with no cells that shows `why` instead.
HeatmapData emptyHeatmap(const QString& title, const QString& why);

// Display position -> class id.
std::vector<int> classOrder(const Evaluation& e, ClassOrder order);
std::vector<QString> classNames(const Evaluation& e);

// The class axis every view of one evaluation shares: display order and names, computed once
// for all views instead of once per view (64 ranks at 1000 classes).
struct ClassAxis {
  std::vector<int> order;  // display position -> class id
  std::vector<QString> names;
  std::shared_ptr<const LabelWidths> nameWidths = std::make_shared<LabelWidths>();
};
ClassAxis classAxis(const Evaluation& e, ClassOrder order);

// What a heatmap of `e`'s matrix in normalization `n` shows, after makeHeatmap: the colour
// bar's quantity (valueLabel: "count", the task's "pixels" or "tokens", "fraction of row",
// "Δ ..." for a difference) and whether its values count pixels or tokens
// (countsManyPerSample, which makes the automatic colour scale logarithmic).
void describeValues(HeatmapData& d, const Evaluation& e, Normalization n, bool difference);

// A heatmap of `values` (display values) with row/column sums from `counts`; its cells are
// kept sparse when most are zero.
HeatmapData makeHeatmap(const QString& title, const Matrix& values, const Matrix& counts,
                        const std::vector<int>& order, const std::vector<QString>& names);

HeatmapData rankHeatmap(const Evaluation& e, int rank, const MatrixOptions& o,
                        const ClassAxis& axis);
HeatmapData syncedHeatmap(const Evaluation& e, const MatrixOptions& o, const ClassAxis& axis);
HeatmapData expectedHeatmap(const Evaluation& e, const MatrixOptions& o, const ClassAxis& axis);
HeatmapData differenceHeatmap(const Evaluation& e, const MatrixOptions& o, const ClassAxis& axis);
// Gives every view the largest of their colour ranges, so their colours compare.
void shareRange(std::vector<HeatmapData>& views);

HeatmapData rankHeatmap(const Evaluation& e, int rank, const MatrixOptions& o);
HeatmapData syncedHeatmap(const Evaluation& e, const MatrixOptions& o);
HeatmapData expectedHeatmap(const Evaluation& e, const MatrixOptions& o);
// Synced minus expected (both normalized first when a normalization is chosen).
HeatmapData differenceHeatmap(const Evaluation& e, const MatrixOptions& o);
// Every rank's heatmap, sharing one colour range.
std::vector<HeatmapData> rankHeatmaps(const Evaluation& e, const MatrixOptions& o);

}  // namespace shardlens::render
