#pragma once
// The validations of a followed runs folder as one growing run. Each run file's evaluations
// are read once (loadFollowedFile, in a worker) and added here; they are kept in training
// order (epoch, then validations before a test, the validation within the epoch, the
// dataloader, then the order they landed), and every result lists all of them as its
// siblings, so the epoch stepper and the drift view walk them as they walk one run file's.
//
// Ownership is the runner's rule for one run file (ui/jobs/evaluation_runner.h): a result
// handed out shares the ownership of the whole set, and its sibling list does not own them.
// Unlike a run file, the set grows: add() gives every result a new sibling list and index,
// in place. Views read those on the GUI thread only, but a worker may be reading a result's
// `eval` (its views prepared, a figure exported), whose provenance says "k of n": so add() is
// called on the GUI thread while the runner runs nothing (FollowController waits for that).
// Sibling lists and results replaced by a rewritten file are kept until the set goes, so a
// view that remembers a list by its address never mistakes a new list for an old one.
#include <QString>
#include <cstdint>
#include <memory>
#include <vector>

#include "ui/jobs/evaluation_runner.h"

namespace shardlens::ui {

// One run file's evaluations, ready for the views but for their heatmaps (prepared when one
// is shown).
struct FollowedFile {
  QString path;
  std::vector<std::shared_ptr<EvaluationResult>> results;
};

// Reads `path` (.slrun) into its evaluations, as File > Open run does; throws InputError.
FollowedFile loadFollowedFile(const QString& path, JobProgress* progress);

class FollowedRuns {
 public:
  FollowedRuns();

  // The evaluations of `file`, in order among the others; a file added before (rewritten on
  // disk) has its evaluations replaced. Returns how many evaluations it brought. GUI thread,
  // runner idle (above).
  size_t add(FollowedFile file);

  size_t size() const { return m_order.size(); }
  bool empty() const { return m_order.empty(); }
  // The k-th evaluation in training order, sharing the ownership of the set.
  ResultPtr at(size_t k) const;
  // The evaluation that landed last (the last of its file); null when empty.
  ResultPtr newest() const;
  // Whether `result` is one of the set's current evaluations.
  bool holds(const EvaluationResult* result) const;
  // Run files added (a rewritten file counts again).
  int filesAdded() const { return m_filesAdded; }

 private:
  struct Entry {
    std::shared_ptr<EvaluationResult> result;
    QString path;
    uint64_t landed = 0;  // the order of arrival, the last tie-break and "newest"
  };
  void relink();

  // Everything ever handed out: the results (current and replaced) and every sibling list.
  struct Owned {
    std::vector<std::shared_ptr<EvaluationResult>> results;
    std::vector<std::shared_ptr<const std::vector<ResultPtr>>> lists;
  };
  std::shared_ptr<Owned> m_owned;
  std::vector<Entry> m_order;
  uint64_t m_landed = 0;
  int m_filesAdded = 0;
};

}  // namespace shardlens::ui
