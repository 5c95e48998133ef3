#pragma once
// One row of the catalogue (internal to the diagnosis layer). The rows live in the
// catalogue_*.cpp of their family, next to the functions that word them.
#include <vector>

#include "core/diagnosis/catalogue.h"

namespace shardlens::detail {

struct CatalogueEntry {
  Pattern pattern;
  const char* id;
  Headline headline;
  // The words, from whatever facts the finding holds (none: the general text).
  FindingText (*words)(const Facts&);
};

std::vector<CatalogueEntry> coverage_entries();   // catalogue_coverage.cpp
std::vector<CatalogueEntry> reduction_entries();  // catalogue_reduction.cpp
std::vector<CatalogueEntry> framework_entries();  // catalogue_frameworks.cpp

}  // namespace shardlens::detail
