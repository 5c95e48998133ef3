#pragma once
// Run files and the one Evaluation: a run file opens as an Evaluation like any simulation
// (records, matrices, classes, diagnosis; no shard plan, and dataset inputs only when the run
// knows every prediction), and any Evaluation is saved as a run file.
#include <string>

#include "core/evaluation/evaluation.h"
#include "core/runfile/runfile.h"

namespace shardlens {

// A run that ended before its sync (no synced matrix) still opens: its per-rank matrices and
// records are there, `synced_missing` says why nothing was reported, and the diagnosis has
// one "incomplete-run" finding instead of row checks. `origin` is the file it came from.
Evaluation evaluation_from_run(RunFile run, const std::string& origin);

// Attaches the labels of the run's dataset (its spec recorded in the run) when this machine
// has them and they match the run, so views can show a sample's image and missing samples
// their class. Returns why not, or an empty string.
std::string attach_dataset_labels(Evaluation& e);

// Reads a run file of one epoch into an Evaluation. Throws InputError "PATH: what is wrong".
Evaluation load_run_evaluation(const std::string& path);
// The evaluations of a run's epochs (evaluation_from_run each), whose shuffled-eval findings
// say the order changes every epoch where another epoch of theirs shows it changed.
std::vector<Evaluation> evaluations_from_runs(std::vector<RunFile> runs, const std::string& origin);
// Every epoch of a run file, in epoch order.
std::vector<Evaluation> load_run_evaluations(const std::string& path);
// The evaluation of `epoch` among a run's; throws InputError "ORIGIN: holds epochs 0, 1, 2;
// no epoch E" when it is not there.
Evaluation select_epoch(std::vector<Evaluation> epochs, int64_t epoch, const std::string& origin);

// evaluation_label() of a run file's evaluation from its meta alone (no records read).
std::string run_label(const RunMetadata& meta);

// A run file holding an evaluation (a simulation's records materialized from its plan).
RunFile run_from_evaluation(const Evaluation& evaluation);

// "real, 4 ranks, complete": where a run came from and how it ended, in a few words.
std::string run_summary(const RunMetadata& meta);

}  // namespace shardlens
