#pragma once
// A finding's facts as JSON (the "facts" object of each finding in `diagnose --format json`):
// the facts that were measured, by name; unknown ones are left out.
#include <nlohmann/json.hpp>

#include "core/diagnosis/finding.h"

namespace shardlens {

nlohmann::json facts_json(const Facts& f);

}  // namespace shardlens
