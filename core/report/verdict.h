#pragma once
// What an evaluation's records prove, in one place: the name of its synced matrix (by where
// it came from), the one verdict the report, the JSON, the GUI's status bar and the CLI give,
// and what could not be checked. A report may claim only what the records hold: a sum of the
// ranks computed here cannot show a sync mistake, and class counts estimated from the
// records cannot name the rows of samples never evaluated.
#include <string>
#include <vector>

#include "core/evaluation/evaluation.h"

namespace shardlens {

// The synced view's title, short enough for a heatmap: "Synced (reported)" for a simulation,
// "Reported by the run", "Sum of the ranks (computed)", or "Reported = rank 0's own
// (unsynced)" when the reported matrix is one rank's local matrix.
std::string synced_title(const Evaluation& e);
// The difference view's title, named by the same origin: "Synced − expected" for a
// simulation, "Reported − expected", "Sum of the ranks − expected", "Rank 0's own −
// expected".
std::string difference_title(const Evaluation& e);
// The same in a sentence, for reports: where the matrix came from.
std::string synced_description(const Evaluation& e);

enum class VerdictKind {
  Correct,          // equals the expected matrix (or every check the records allow passed)
  Wrong,            // rows or cells differ from what the dataset holds
  FollowsTheDraw,   // a sampler drawing with replacement: rows follow its draw by design
  NothingRecorded,  // no record at all
  Incomplete,       // the run ended before its sync: nothing reported
};

struct Verdict {
  VerdictKind kind = VerdictKind::Correct;
  std::string sentence;  // the report's "Verdict: ..." line, without the prefix
  std::string status;    // one short line for a status bar ("✓ ..." or "⚠ ...")
};

Verdict verdict_of(const Evaluation& e);

// Empty when the class counts are the dataset's; else the first line of a report: what is
// estimated, and how to give the true labels.
std::string estimate_note(const Evaluation& e);
// What the records could not prove (each a sentence): a sync mistake without a recorded
// reported matrix, an origin the file does not say.
std::vector<std::string> unchecked(const Evaluation& e);

}  // namespace shardlens
