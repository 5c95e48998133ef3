#pragma once
// The verdict of an evaluation in a few hundred bytes, for a program that acts on it after
// every validation (the Python recorder's printed line, logged scalars and heatmap): what the
// full JSON report says of it without a C x C matrix. `shardlens-cli import --format verdict`
// prints it; at 1000 classes the full report was 49 MB to write and parse.
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/evaluation/evaluation.h"

namespace shardlens {

// {"classes", "correct", "dataset" (when the class counts are a dataset's),
//  "duplicated_samples", "missing_samples", "mismatched_rows" (the wrong rows, ascending;
//  empty without a synced matrix), "patterns" (each finding's pattern id, in order),
//  "row_difference" ([[row, sum - true count], ...] of the rows that differ; null without a
//  synced matrix), "difference" ([[row, column, synced - expected], ...] of the cells that
//  differ, against the expected matrix of the whole dataset when known, else of the distinct
//  samples evaluated; null without a synced matrix), "difference_of" ("expected" or
//  "expected_distinct"), "run_file" (when read from or written to one)}.
// Numbers are integers where whole, as in the full report (report.h).
nlohmann::json verdict_summary_json(const Evaluation& e);
// One evaluation's summary, or {"epochs": [...], "correct"} of several (as reports_json).
nlohmann::json verdict_summaries_json(const std::vector<Evaluation>& evaluations);

}  // namespace shardlens
