#pragma once
// The pattern catalogue: each pattern's id, the words a finding of it is shown with (made
// from its facts) and the properties reports and views read instead of naming patterns.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnosis/finding.h"

namespace shardlens {

struct Fix {
  std::string framework;  // "PyTorch", "Lightning", "torchmetrics", "Accelerate"
  std::string text;
};

// A finding in words.
struct FindingText {
  std::string title;
  std::string explanation;
  std::vector<Fix> fixes;
};

// What a diagnosis holding the pattern says in its verdict line.
enum class Headline {
  Wrong,            // the reported matrix is wrong (most patterns)
  NothingRecorded,  // no record at all: nothing can be checked
  FollowsTheDraw,   // the rows follow a sampler's own draw, not the dataset
  Hangs,            // the real run would hang, so nothing is reported
  GatherFails,      // the real run's gather fails, so nothing is reported
};

// The catalogue id ("padding-duplicates"), as reports, lessons and the CLI name it.
const char* pattern_id(Pattern p);
std::optional<Pattern> pattern_from_id(std::string_view id);
// Every pattern, in catalogue order.
const std::vector<Pattern>& all_patterns();

// The finding in words: its facts in the catalogue's sentences.
FindingText describe(const Finding& f);
// A pattern's general words, with no evaluation's facts (the lessons view, the docs).
FindingText describe_pattern(Pattern pattern);

Headline headline(Pattern p);
// The verdict a diagnosis's findings call for: the first headline other than Wrong.
Headline headline_of(const std::vector<Finding>& findings);

}  // namespace shardlens
