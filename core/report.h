#pragma once
// Reports of an evaluation (simulated, real or imported) as JSON and as readable text.
// The CLI's `simulate --format json` and `run --format json` print report_json().
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/diagnosis.h"
#include "core/matrix.h"

namespace shardlens {

struct ReportView {
  std::string title;
  std::vector<std::string> class_names;  // one per class
  std::vector<int64_t> class_counts;     // true count per class
  int64_t dataset_size = 0;
  int world_size = 0;
  const std::vector<Matrix>* per_rank = nullptr;
  const Matrix* synced = nullptr;
  const Matrix* expected = nullptr;  // may be null (real run with unseen samples)
  const Diagnosis* diagnosis = nullptr;
};

// {"classes", "class_names", "class_counts", "n", "world_size", "per_rank", "synced",
//  "expected", "row_sums": {"observed", "expected", "mismatched"}, "correct",
//  "diagnosis": [{"pattern", "title", "explanation", "fixes", "classes", "samples", ...}]}
nlohmann::json report_json(const ReportView& view);
std::string report_text(const ReportView& view);
nlohmann::json matrix_json(const Matrix& m);  // integral cells as integers
nlohmann::json finding_json(const Finding& f);

}  // namespace shardlens
