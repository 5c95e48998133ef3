#include "core/runfile/import_checks.h"

#include <algorithm>
#include <map>
#include <optional>

#include "core/runfile/import_arrays.h"
#include "core/vocabulary/limits.h"
#include "core/vocabulary/memory_budget.h"
#include "core/vocabulary/types.h"

namespace shardlens::dump_import {
namespace {

// How to name a subset of the dataset when a run evaluated one.
std::string subset_hint(const std::string& dataset, std::optional<int64_t> size = std::nullopt) {
  const std::string n = size ? std::to_string(*size) : std::string("N");
  return "; if the run evaluated a subset, give --dataset " + dataset + ",first=" + n +
         " (the first " + n + " samples) or " + dataset + ",indices=FILE.npy (the ones listed)";
}

// One C x C matrix per rank plus the synced one. A single large class id in a small dump
// implies C, so the memory is bounded before anything is allocated.
void check_matrix_memory(const ClassCount& c, int w) {
  const int32_t classes = c.classes;
  const uint64_t cells = uint64_t(classes) * uint64_t(classes);
  if (cells > kMaxImportMatrixCells / uint64_t(w + 1)) {
    const std::string need =
        std::to_string(cells * uint64_t(w + 1) * sizeof(double) >> 20) + " MiB, more than the " +
        std::to_string(kMaxImportMatrixCells * sizeof(double) >> 20) + " MiB limit";
    const std::string shape = std::to_string(w + 1) + " matrices of " + std::to_string(classes) +
                              " x " + std::to_string(classes) + " (one per rank of " +
                              std::to_string(w) + ", and the synced one)";
    if (c.origin.empty())
      throw InputError("import: " + std::to_string(classes) + " classes need " + shape + ": " +
                       need);
    fail(c.origin, "class id " + std::to_string(classes - 1) + " implies " +
                       std::to_string(classes) + " classes, and " + shape + " would take " + need +
                       "; check the target and prediction values, or give --classes");
  }
}

// The evaluation the run makes (its records, the per-index arrays its dataset size sizes, a
// matrix per rank) against the memory budget, before the matrices or any per-index array is
// built. Named after what set the size that costs most: the dataset (--dataset), the dump that
// declared its size or holds the largest index, the dump whose class id implied the classes.
void check_import_memory(const std::vector<RankDump>& dumps, const ImportOptions& options,
                         const ImportLayout& layout) {
  const RunMetadata& m = layout.meta;
  EvaluationSize size{.samples = m.dataset_size, .classes = m.classes, .world_size = m.world_size};
  for (const auto& rank : layout.records.ranks) size.records += int64_t(rank.size());
  // The run's cell table beside the evaluation: a key and a count a cell, an offset a row.
  uint64_t cells = 0;
  for (const RankDump& d : dumps)
    if (d.cells) cells += d.cells->cells();
  const uint64_t cell_table = cells * 8 + uint64_t(layout.cell_rows) * 8;
  EvaluationSize matrices = size;
  matrices.samples = 0;
  matrices.records = 0;
  const std::string& implied = layout.classes.origin;
  std::string origin = implied.empty() ? std::string("import") : implied;
  if (evaluation_memory(matrices) < evaluation_memory(size) / 2) {
    // The dataset size dominates.
    const RankDump* declared = nullptr;
    const RankDump* largest = nullptr;
    int64_t top = -1;
    for (const RankDump& d : dumps) {
      if (!declared && d.dataset_size && *d.dataset_size == m.dataset_size) declared = &d;
      for (const Record& rec : d.records)
        if (rec.index > top) top = rec.index, largest = &d;
    }
    origin = !options.dataset.empty() ? std::string("--dataset")
             : declared               ? declared->origin
             : largest                ? largest->origin
                                      : origin;
  }
  check_evaluation_budget(origin, size, cell_table);
}

// A record that lies within the run's bounds still has to agree with the dataset given.
void check_against_dataset(const RankDump& d, const RecordSite& site, size_t i,
                           const DatasetTruth& truth, const ImportOptions& options,
                           int ignore_index) {
  const Record& rec = d.records[i];
  auto place = [&](RecordField f) { return record_place(site, int64_t(i), d.ranks[i], f) + ": "; };
  if (truth.predictions && rec.prediction != (*truth.predictions)[size_t(rec.index)])
    throw InputError(place(RecordField::Prediction) + "prediction " +
                     std::to_string(rec.prediction) + " at dataset index " +
                     std::to_string(rec.index) + " but " + options.predictions + " says " +
                     std::to_string((*truth.predictions)[size_t(rec.index)]));
  const int32_t label = truth.labels->targets[size_t(rec.index)];
  if (rec.target != label && rec.target != ignore_index)
    throw InputError(place(RecordField::Target) + "target " + std::to_string(rec.target) +
                     " at dataset index " + std::to_string(rec.index) + " but the dataset says " +
                     std::to_string(label) +
                     " (wrong --dataset, or the dump's indices are not dataset indices)");
}

// A sample's true cells (its cells added up by target) are the dataset's: another count of a
// class means another dataset, or indices that are not dataset indices.
void check_cells_against_dataset(const RankDump& d, const DenseTruth& dense,
                                 const std::string& dataset, int ignore_index) {
  const DumpCells& cells = *d.cells;
  const CellTable& truth = dense.truth;
  std::map<int64_t, int64_t> own, want;
  for (int64_t i = 0; i < cells.records(); ++i) {
    const Record& rec = d.records[size_t(i)];
    own.clear(), want.clear();
    for (size_t c = cells.offsets[size_t(i)]; c < cells.offsets[size_t(i) + 1]; ++c)
      if (cells.target[c] != ignore_index) own[cells.target[c]] += cells.count[c];
    const auto keys = truth.keys_of(rec.index);
    const auto counts = truth.counts_of(rec.index);
    for (size_t k = 0; k < keys.size(); ++k) want[keys[k] / uint32_t(truth.classes)] += counts[k];
    if (own == want) continue;
    // The first class whose count differs, in class order.
    int64_t cls = -1;
    for (auto a = own.begin(), b = want.begin(); a != own.end() || b != want.end();) {
      if (b == want.end() || (a != own.end() && a->first < b->first)) {
        cls = a->first;
        break;
      }
      if (a == own.end() || b->first < a->first || a->second != b->second) {
        cls = b->first;
        break;
      }
      ++a, ++b;
    }
    const auto count_of = [&](const std::map<int64_t, int64_t>& m) {
      const auto it = m.find(cls);
      return std::to_string(it == m.end() ? 0 : it->second);
    };
    throw InputError(sample_place(d.origin, i, d.ranks[size_t(i)], rec.index) +
                     ": its cells hold " + count_of(own) + " " + count_unit(dense.task) +
                     " of class " + std::to_string(cls) + ", but " + dataset + " says " +
                     count_of(want) +
                     " (wrong --dataset, or the dump's indices are not dataset indices)");
  }
}

// Every dump against the run: its records within the run's bounds (and the dataset's), its
// dataset size and matrices fitting.
void check_dumps(const std::vector<RankDump>& dumps, const ImportOptions& options,
                 const ImportLayout& layout) {
  const int32_t classes = layout.meta.classes;
  const DatasetTruth& truth = layout.truth;
  const std::optional<Labels>& labels = truth.labels;
  const RunMetadata& m = layout.meta;
  RecordBounds bounds = RecordBounds::of_run(classes, labels ? labels->size() : 0, m.ignore_index);
  if (labels) bounds.beyond_samples += subset_hint(options.dataset);
  int64_t counted = 0;  // every dump's cells: what the synced matrix adds up
  for (const RankDump& d : dumps) {
    const RecordSite site{d.origin, d.record_keys};
    for (size_t i = 0; i < d.records.size(); ++i) {
      check_record_bounds(bounds, site, int64_t(i), d.ranks[i], d.records[i]);
      // A sample of cells has no one label to agree with (its record's is recomputed).
      if (labels && !d.cells) check_against_dataset(d, site, i, truth, options, m.ignore_index);
    }
    if (d.cells) {
      check_cells_in_run(*d.cells, d.origin, d.ranks, d.records, classes, m.ignore_index, m.task);
      if (truth.dense)
        check_cells_against_dataset(d, *truth.dense, options.dataset, m.ignore_index);
      if (d.cells->total > kMaxExactCount - counted)
        fail(d.origin, "the dumps' cells add up to more than 2^53 " + count_unit(m.task) +
                           ", past what a matrix of doubles counts exactly");
      counted += d.cells->total;
    }
    if (d.dataset_size && labels && *d.dataset_size != labels->size())
      fail(d.origin, "dataset_size " + std::to_string(*d.dataset_size) + " but the dataset has " +
                         std::to_string(labels->size()) + " samples" +
                         subset_hint(options.dataset, *d.dataset_size));
    for (const auto* mat :
         {d.reported ? &*d.reported : nullptr, d.rank_matrix ? &*d.rank_matrix : nullptr}) {
      if (mat && mat->classes != classes)
        fail(d.origin, "a " + std::to_string(mat->classes) + " x " + std::to_string(mat->classes) +
                           " matrix for " + std::to_string(classes) + " classes");
    }
  }
}

// Without a dataset, no record lies beyond the dataset size a dump declared.
void check_declared_dataset_size(const ImportLayout& layout) {
  const int64_t declared = layout.meta.dataset_size;
  if (layout.truth.labels || layout.max_index < declared) return;
  throw InputError("import: dataset index " + std::to_string(layout.max_index) +
                   " beyond the declared dataset_size " + std::to_string(declared));
}

// Every rank of the world has its dump.
void refuse_missing_ranks(const RankOwners& owners) {
  const size_t w = owners.owner.size();
  for (size_t r = 0; r < w; ++r) {
    if (owners.owner[r].empty())
      throw InputError("import: no dump holds rank " + std::to_string(r) + " (world size " +
                       std::to_string(w) + ")");
  }
}

}  // namespace

void refuse_empty_dumps(const std::vector<RankDump>& dumps) {
  std::string empty;  // one line, every empty file named
  for (const RankDump& d : dumps)
    if (d.records.empty()) empty += (empty.empty() ? "" : "; ") + d.origin + ": holds no records";
  if (empty.empty()) return;
  throw InputError(empty +
                   " (index, target and prediction are empty). Hint: the recorder could not "
                   "read validation_step's output: return a dict with index, target and "
                   "prediction, or tell ShardLensCallback its keys");
}

void check_layout(const std::vector<RankDump>& dumps, const ImportOptions& options,
                  const ImportLayout& layout) {
  check_matrix_memory(layout.classes, layout.meta.world_size);
  if (layout.truth.predictions && layout.meta.task != Task::Classification)
    throw InputError("--predictions: one prediction per dataset index cannot give what a " +
                     sample_word(layout.meta.task) + " of a " + to_string(layout.meta.task) +
                     " run counts (its cells); leave it out");
  check_dumps(dumps, options, layout);
  check_declared_dataset_size(layout);
  check_import_memory(dumps, options, layout);
  refuse_missing_ranks(layout.owners);
}

}  // namespace shardlens::dump_import
