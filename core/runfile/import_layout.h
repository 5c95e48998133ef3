#pragma once
// The second stage of an import (import.h): what the dumps read (import_read.h) say about the
// run they come from, before anything is checked against it or built. Dumps of several
// evaluations are grouped into one run each (the epoch, the stage, the validation and the
// dataloader); the dumps of one evaluation give its world size, which dump holds each rank,
// its classes and its dataset size. Refuses dumps that contradict each other.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/evaluation/run_metadata.h"
#include "core/runfile/import_read.h"
#include "core/vocabulary/matrix.h"
#include "core/vocabulary/records.h"

namespace shardlens::dump_import {

// Dumps of several evaluations, one group per (stage, epoch, validation_in_epoch,
// dataloader_idx), in run order (runfile.h: evaluation_before). Sanity-check dumps are left
// out (noted); a validation or dataloader number is kept only when there are several.
struct EvaluationGroups {
  std::vector<std::vector<RankDump>> evaluations;
  bool epochs_named = false;  // every dump names its epoch (else none does)
  std::vector<std::string> notes;
};
EvaluationGroups group_by_evaluation(std::vector<RankDump> dumps);

// Which dump holds each rank, and the matrices the dumps give for it.
struct RankOwners {
  std::vector<std::string> owner;               // the file of each rank's records
  std::vector<std::optional<Matrix>> provided;  // the rank's own accumulated matrix
  // What each rank reported itself: a dump's `reported` is its (lowest) rank's.
  std::vector<std::optional<Matrix>> reported;
};

// The class count and, when it was inferred from the values, the dump that implied it.
struct ClassCount {
  int32_t classes = 0;
  std::string origin;
};

// One evaluation's run as its dumps lay it out.
struct ImportLayout {
  // What the dumps and the options say: the settings every dump recorded alike, the world
  // size, the classes, the dataset (spec and size), the batch size, ignore_index (recorded,
  // else --ignore-index) and the task.
  RunMetadata meta;
  StoredRecords records;  // the dumps' records by rank
  RankOwners owners;
  ClassCount classes;  // meta.classes, and what implied it
  DatasetTruth truth;
  int64_t max_index = -1;  // the largest dataset index of any record
  // Rows of the run's cell table the records name (the dumps' cells, in the order of the
  // dumps); 0 for a classification.
  int64_t cell_rows = 0;
};
// The dumps' matrices move into the layout's owners (at 1000 classes each is 8 MB); their
// class counts stay, for the checks that read them (decide_classes, check_layout).
ImportLayout infer_layout(std::vector<RankDump>& dumps, const ImportOptions& options);

}  // namespace shardlens::dump_import
