#pragma once
// The catalogue's patterns as test rows (TEST_P), one per pattern, named by its id.
#include <ostream>
#include <string>
#include <vector>

#include "core/diagnosis/diagnosis.h"

namespace shardlens {

struct PatternRow {
  std::string name;
  Pattern pattern;
};

inline void PrintTo(const PatternRow& r, std::ostream* os) {
  *os << r.name;
}

inline std::vector<PatternRow> pattern_rows() {
  std::vector<PatternRow> rows;
  for (Pattern p : all_patterns()) rows.push_back({pattern_id(p), p});
  return rows;
}

}  // namespace shardlens
