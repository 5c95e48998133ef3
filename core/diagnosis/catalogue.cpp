// The pitfall catalogue: its rows, gathered from the catalogue_*.cpp of each family of
// patterns, looked up by pattern.
#include "core/diagnosis/catalogue.h"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "core/diagnosis/catalogue_entry.h"

namespace shardlens {

namespace {

using detail::CatalogueEntry;

constexpr size_t kPatterns = size_t(Pattern::UnexplainedDifference) + 1;

// Every pattern's row; a pattern without exactly one row is a programming error, caught the
// first time the catalogue is read (every test reads it).
const std::array<CatalogueEntry, kPatterns>& rows() {
  static const std::array<CatalogueEntry, kPatterns> table = [] {
    std::array<CatalogueEntry, kPatterns> out{};
    std::array<bool, kPatterns> seen{};
    for (const auto& family :
         {detail::coverage_entries(), detail::reduction_entries(), detail::framework_entries()}) {
      for (const CatalogueEntry& e : family) {
        const auto k = size_t(e.pattern);
        if (k >= kPatterns || seen[k])
          throw std::logic_error(std::string("catalogue: pattern listed twice: ") + e.id);
        seen[k] = true;
        out[k] = e;
      }
    }
    for (size_t k = 0; k < kPatterns; ++k)
      if (!seen[k])
        throw std::logic_error("catalogue: pattern " + std::to_string(k) + " has no row");
    return out;
  }();
  return table;
}

const CatalogueEntry& row(Pattern p) {
  return rows()[std::min(size_t(p), kPatterns - 1)];
}

}  // namespace

const char* pattern_id(Pattern p) {
  return row(p).id;
}

std::optional<Pattern> pattern_from_id(std::string_view id) {
  for (Pattern p : all_patterns())
    if (id == pattern_id(p)) return p;
  return std::nullopt;
}

const std::vector<Pattern>& all_patterns() {
  static const std::vector<Pattern> all = [] {
    std::vector<Pattern> out;
    for (size_t k = 0; k < kPatterns; ++k) out.push_back(Pattern(k));
    return out;
  }();
  return all;
}

FindingText describe(const Finding& f) {
  return row(f.pattern).words(f.facts);
}

FindingText describe_pattern(Pattern pattern) {
  return row(pattern).words(Facts{});
}

Headline headline(Pattern p) {
  return row(p).headline;
}

Headline headline_of(const std::vector<Finding>& findings) {
  for (const Finding& f : findings)
    if (headline(f.pattern) != Headline::Wrong) return headline(f.pattern);
  return Headline::Wrong;
}

}  // namespace shardlens
