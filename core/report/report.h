#pragma once
// Reports of an evaluation (simulated, real or imported: the same to the report) as JSON
// and as readable text. The CLI's `--format json` prints report_json().
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/diagnosis/diagnosis.h"
#include "core/evaluation/evaluation.h"
#include "core/vocabulary/matrix.h"

namespace shardlens {

// {"classes", "class_names", "class_counts", "n", "world_size", "per_rank", "synced",
//  "expected", "row_sums": {"observed", "expected", "mismatched"}, "correct",
//  "diagnosis": [{"pattern", "title", "explanation", "fixes", "classes", "samples", ...}]}
// "synced" is null and "incomplete" names the cause when the run ended before its sync.
nlohmann::json report_json(const Evaluation& e);
std::string report_text(const Evaluation& e);
// The report of a run's epochs: report_json of one, {"epochs": [...], "correct"} of several.
nlohmann::json reports_json(const std::vector<Evaluation>& epochs);
// Writes reports_json(epochs).dump(2), byte for byte, without building the matrices' json
// or the whole string: they are streamed to `out` (no newline after).
void write_reports_json(std::ostream& out, const std::vector<Evaluation>& epochs);
// What the evaluation's scenario is called (scenario_title, core/evaluation/caption.h),
// without its epoch: the reports' and figures' titles add it.
std::string report_title(const Evaluation& e);

// "ranks started by slurm", "ranks started from RANK/WORLD_SIZE" ...: who started a real
// run's ranks, as the report and the GUI say it; empty when the run does not record it.
std::string launcher_phrase(const RunMetadata& meta);
nlohmann::json matrix_json(const Matrix& m);  // integral cells as integers
// A count as the reports write it: whole numbers as integers, else 4 significant digits
// (text) or the double, "inf" or "nan" (JSON).
std::string count_text(double v);
nlohmann::json count_json(double v);
nlohmann::json finding_json(const Finding& f);

}  // namespace shardlens
