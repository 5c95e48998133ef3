#include "core/runfile/import_build.h"

#include <algorithm>
#include <memory>
#include <unordered_set>

namespace shardlens::dump_import {
namespace {

// The true pixels / tokens / label decisions of each class, from the distinct samples seen
// (the first record of each index): a dataset's labels are one class a sample, not its cells.
void count_distinct_cells(RunFile& run, const CellTable& cells) {
  RunMetadata& m = run.meta;
  m.class_counts.assign(size_t(m.classes), 0);
  const auto c = uint32_t(cells.classes);
  std::unordered_set<int64_t> seen;
  for (const auto& rank : run.records.ranks) {
    for (const Record& rec : rank) {
      if (rec.cells == kOneCell || !seen.insert(rec.index).second) continue;
      const auto keys = cells.keys_of(rec.cells);
      const auto counts = cells.counts_of(rec.cells);
      for (size_t k = 0; k < keys.size(); ++k) m.class_counts[keys[k] / c] += counts[k];
    }
  }
  m.class_counts_source = "distinct-records";
}

// True class counts: the dataset's, or estimated from the distinct samples seen (the first
// record of each index).
void count_classes(RunFile& run, const DatasetTruth& truth) {
  RunMetadata& m = run.meta;
  if (truth.dense) {  // every sample's true cells: the exact pixels / tokens of each class
    m.class_counts.assign(size_t(m.classes), 0);
    const CellTable& t = truth.dense->truth;
    for (size_t k = 0; k < t.keys.size(); ++k)
      m.class_counts[t.keys[k] / uint32_t(t.classes)] += t.counts[k];
    m.class_names = truth.dense->class_names;
    m.class_counts_source = "dataset";
    return;
  }
  if (const CellTable* cells = run.records.cell_table()) {
    count_distinct_cells(run, *cells);
    return;
  }
  if (truth.labels) {
    m.class_counts = truth.labels->class_counts();
    m.class_names = truth.labels->class_names;
    m.class_counts_source = "dataset";
    return;
  }
  m.class_counts.assign(size_t(m.classes), 0);
  std::unordered_set<int64_t> seen;
  for (const auto& rank : run.records.ranks) {
    for (const Record& rec : rank) {
      if (rec.target >= 0 && rec.target < m.classes && seen.insert(rec.index).second)
        ++m.class_counts[size_t(rec.target)];
    }
  }
  m.class_counts_source = "distinct-records";
}

// The run's matrices (build_run says which); the dumps' matrices are moved in (at 1000 classes
// each is 8 MB, and copying them was a tenth of an import).
void build_matrices(RunFile& run, RankOwners& owners, const DatasetTruth& truth) {
  const int32_t classes = run.meta.classes;
  // Each rank's own matrix where its dump gives one (listed, so a reader checks the other
  // ranks' matrices against their records), else the one its records give.
  run.meta.provided_matrices.emplace();
  run.per_rank.resize(run.records.ranks.size());
  for (size_t r = 0; r < run.per_rank.size(); ++r) {
    if (r < owners.provided.size() && owners.provided[r]) {
      run.per_rank[r] = std::move(*owners.provided[r]);
      run.meta.provided_matrices->push_back(int(r));
    } else {
      run.per_rank[r] = Matrix(classes);
      count_records(run.per_rank[r], run.records.ranks[r], run.meta.ignore_index,
                    run.records.cell_table());
    }
  }
  // The logged matrix is the lowest rank's report (rank 0's, as Lightning logs it); ranks that
  // report something else are kept for the diagnosis (`unsynced`).
  for (const std::optional<Matrix>& reported : owners.reported) {
    if (!reported) continue;
    run.synced = *reported;
    run.reported_per_rank = std::move(owners.reported);
    break;
  }
  if (truth.predictions) {
    Matrix expected(classes);
    for (size_t i = 0; i < truth.predictions->size(); ++i)
      expected.at(truth.labels->targets[i], (*truth.predictions)[i]) += 1;
    run.expected = std::move(expected);
  }
  run.meta.synced_origin = run.has_synced() ? SyncedOrigin::Recorded : SyncedOrigin::SumOfRanks;
  if (!run.has_synced()) {
    run.synced = Matrix(classes);
    for (const Matrix& mat : run.per_rank) run.synced += mat;
  }
}

}  // namespace

void gather_cells(const std::vector<RankDump>& dumps, ImportLayout& layout) {
  if (layout.meta.task == Task::Classification) return;
  auto table = std::make_shared<CellTable>();
  table->classes = layout.meta.classes;
  for (const RankDump& d : dumps)
    if (d.cells) append_cell_rows(*d.cells, *table, layout.meta.ignore_index);
  // What each record shows: its sample's largest true and predicted class (0 for a sample of
  // ignored pixels only), as a simulation's records show them.
  for (auto& rank : layout.records.ranks) {
    for (Record& rec : rank) {
      const auto [target, prediction] = table->dominant(rec.cells);
      rec.target = std::max(target, 0);
      rec.prediction = std::max(prediction, 0);
    }
  }
  layout.records.cells = std::move(table);
}

RunFile build_run(ImportLayout layout) {
  RunFile run;
  run.meta = std::move(layout.meta);
  run.meta.source = "imported";
  run.meta.backend = "import";
  run.records = std::move(layout.records);
  count_classes(run, layout.truth);
  // A multilabel matrix's classes read "3 present", "3 absent" where no names were given: a
  // class number alone would hide that class 7 is label 3.
  RunMetadata& m = run.meta;
  if (m.task == Task::Multilabel && m.class_names.empty()) {
    std::vector<std::string> labels;
    for (int32_t l = 0; l < m.classes / 2; ++l) labels.push_back(std::to_string(l));
    m.class_names = multilabel_class_names(labels);
  }
  build_matrices(run, layout.owners, layout.truth);
  return run;
}

}  // namespace shardlens::dump_import
