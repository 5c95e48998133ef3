#pragma once
// What a run file's records prove about the matrices and counts stored beside them. The
// diagnosis judges the synced matrix against the expected one and the class counts, so a
// file whose stored expected matrix, class counts or per-rank matrices contradict its own
// records would make the report lie ("equals the expected one" under a wrong row). Every
// load recomputes what the records prove and refuses a file that contradicts it:
//   rank{r}_matrix  the rank's records counted (targets equal to ignore_index dropped), as an
//                   int64 counter has them exactly; a float counter (the scenario's
//                   counter_dtype) is exact up to the count where adding 1 stalls, and at
//                   least that count past it. Ranks whose matrix a dump provided
//                   (meta.json 'provided_matrices') are not counted from the records.
//   class_counts    each class has at least the distinct samples the records show of it.
//   expected        one prediction per dataset index: whole counts, rows summing to the
//                   class counts, the dataset size in all, and at least the distinct
//                   evaluated samples (their first evaluation outside the sanity check) in
//                   every cell.
// The synced matrix is what the diagnosis judges, so it is not checked here.
#include <string>

#include "core/runfile/runfile.h"

namespace shardlens {

// Throws InputError "ORIGIN: member NAME holds V at row r, column c, but ..." (or
// "ORIGIN: meta.json: 'class_counts' ...") for the first contradiction found.
void check_run_against_records(const RunFile& run, const std::string& origin);

}  // namespace shardlens
