#pragma once
// A small complete run shared by the run-file tests and the fuzz corpus generator:
// W = 2, C = 3, four records each; rank 1 evaluates index 0 twice (padding).
#include "core/runfile/runfile.h"

namespace shardlens::test {

inline RunFile small_run() {
  RunFile run;
  run.meta.source = "real";
  run.meta.backend = "gloo";
  run.meta.torch_version = "1.13";
  run.meta.classes = 3;
  run.meta.class_names = {"cat", "dog", "émeu"};
  run.meta.class_counts = {3, 2, 2};
  run.meta.dataset_size = 7;
  run.meta.world_size = 2;
  run.meta.batch_size = 2;
  run.records.ranks = {
      {{0, 0, 0, 0}, {2, 1, 1, 0}, {4, 2, 2, 0}, {6, 0, 1, 0}},
      {{1, 0, 0, 0}, {3, 1, 2, 0}, {5, 2, 2, 0}, {0, 0, 0, kPadding}},
  };
  run.per_rank = matrices_from_records(run.records, 3, -1);
  run.synced = run.per_rank[0];
  run.synced += run.per_rank[1];
  return run;
}

}  // namespace shardlens::test
