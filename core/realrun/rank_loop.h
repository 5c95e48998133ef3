#pragma once
// One rank's part of a real run, over the interfaces of rank_services.h: evaluate exactly the
// batches the engine plans for it (sampler, loader, limit, sanity batches), publish its
// records and matrix to the store, perform the sync strategy with real collectives.
#include <cstdint>
#include <string>

#include "core/dataset/labels.h"
#include "core/evaluation/scenario.h"
#include "core/io/idx.h"
#include "core/realrun/rank_protocol.h"
#include "core/realrun/rank_services.h"
#include "core/realrun/rank_sync.h"
#include "core/realrun/real_run.h"
#include "core/vocabulary/progress.h"

namespace shardlens {

// The images and labels a real run evaluates.
struct RunDataset {
  Labels labels;
  IdxImages images;
};

// The dataset of `config` (its images from config.images_path, else dataset_images_path).
// Throws InputError when it cannot be read or images and labels disagree in number.
RunDataset load_run_dataset(const RealRunConfig& config);

// Evaluates rank `rank` of `world`: batches of at most batch_size, a batch ending where the
// sanity-check batches give way to the epoch's; counts accumulate in the counter dtype batch
// by batch (with `counter`, or on the CPU when null). Every rank reports its progress (the
// terminal bar draws rank 0's; the GUI shows each rank's).
RankOutput evaluate_rank(const Scenario& scenario, const RunDataset& data, int rank, int world,
                         BatchClassifier& model, BatchCounter* counter, Progress* progress);

// A rank's job once connected: evaluate, publish its records and matrix (key_records,
// key_matrix), synchronize over `collectives`; rank 0 then publishes the reported matrix
// (kKeySynced) and any note (kKeySyncNote); last the rank's key_done. Throws RunFailure when
// the store cannot be reached; collective failures propagate.
void run_rank_body(const Scenario& scenario, const RunDataset& data, int rank, int world,
                   RankStore& store, RankCollectives& collectives, BatchCounter* counter,
                   BatchClassifier& model, Progress* progress);

}  // namespace shardlens
