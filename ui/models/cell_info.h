#pragma once
// What hover and click say about a cell: counts in every view, the expected count, which
// ranks contributed, and the samples behind it.
#include <QString>
#include <vector>

#include "core/report/cell_index.h"
#include "ui/jobs/evaluation_runner.h"

namespace shardlens::ui {

enum class ViewKind { Rank, Synced, Expected, Difference };

struct CellRef {
  ViewKind kind = ViewKind::Synced;
  int rank = 0;       // for ViewKind::Rank
  int trueClass = 0;  // class ids (not display positions)
  int predClass = 0;
};

QString cellTooltip(const EvaluationResult& r, const CellRef& c);
QString rowSumTooltip(const EvaluationResult& r, ViewKind kind, int rank, int trueClass);
// The samples behind a cell: one rank's, every rank's (synced, difference) or the dataset's
// (expected). `total` receives how many there are in all.
std::vector<CellSample> cellSamples(const EvaluationResult& r, const CellRef& c, size_t limit,
                                    int64_t* total);
QString cellTitle(const EvaluationResult& r, const CellRef& c);
// What the cell's samples add up to in the view: one rank's count, every rank's together
// (synced, difference), or the expected count. Pixels or tokens for a task whose samples
// count many cells, samples for classification.
double cellCount(const EvaluationResult& r, const CellRef& c);

}  // namespace shardlens::ui
