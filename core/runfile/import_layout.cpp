#include "core/runfile/import_layout.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "core/runfile/import_arrays.h"
#include "core/vocabulary/limits.h"
#include "core/vocabulary/types.h"

namespace shardlens::dump_import {
namespace {

// What every dump of one evaluation recorded about it, into the run's meta: the ranks must
// agree (their settings but the rank, their epoch, stage, validation, dataloader, dataset size).
void carry_evaluation_settings(const std::vector<RankDump>& dumps, RunMetadata& m) {
  const RankDump* first = nullptr;
  for (const RankDump& d : dumps) {
    if (!first) {
      first = &d;
      continue;
    }
    auto disagree = [&](const std::string& what) {
      fail(d.origin, what + " disagrees with " + first->origin + "'s");
    };
    if (d.settings && first->settings) {
      std::string key;
      if (!same_evaluation_settings(*d.settings, *first->settings, &key))
        disagree("settings_json '" + key + "'");
    } else if (d.settings.has_value() != first->settings.has_value()) {
      disagree(std::string("settings_json (") + (d.settings ? "given" : "absent") + ")");
    }
    if (d.epoch != first->epoch) disagree("the epoch");
    if (d.stage != first->stage) disagree("the stage");
    if (d.validation_in_epoch != first->validation_in_epoch) disagree("validation_in_epoch");
    if (d.dataloader_idx != first->dataloader_idx) disagree("dataloader_idx");
    if (d.dataset_size && first->dataset_size && *d.dataset_size != *first->dataset_size)
      disagree("dataset_size " + std::to_string(*d.dataset_size));
  }
  if (!first) return;
  m.recorded = first->settings;
  // The torch the user's run used is the run's torch version: it chooses the semantics
  // a re-simulation imitates (TorchVersion::parse_recorded reads it when a run is opened).
  if (m.torch_version.empty() && m.recorded) {
    if (auto it = m.recorded->versions.find("torch"); it != m.recorded->versions.end())
      m.torch_version = it->second;
  }
  m.stage = first->stage;
  m.validation_in_epoch = first->validation_in_epoch;
  m.dataloader_idx = first->dataloader_idx;
}

// Which evaluation of a run a dump belongs to, in run order (evaluation_before's).
using EvaluationKey = std::tuple<int64_t, int, int64_t, int64_t, std::string>;
EvaluationKey key_of(const RankDump& d) {
  const bool validate = d.stage.empty() || d.stage == "validate";
  const int stage = validate ? 0 : d.stage == "test" ? 1 : 2;
  return {d.epoch.value_or(0), stage, d.validation_in_epoch.value_or(-1),
          d.dataloader_idx.value_or(-1), validate ? std::string() : d.stage};
}

// A dump's rank beyond the world size: one wording, whether the rank came from its records
// or from its file name.
[[noreturn]] void rank_outside_world(const std::string& origin, int rank, int world) {
  fail(origin,
       "rank " + std::to_string(rank) + " is outside the world size " + std::to_string(world));
}

// World size: declared by the dumps (they must agree), by the user, or the largest rank.
int decide_world_size(const std::vector<RankDump>& dumps, const ImportOptions& options) {
  std::optional<int> world = options.world_size;
  std::string world_origin = "--world-size";
  int max_rank = -1;
  std::string max_rank_origin;  // the dump that holds it
  for (const RankDump& d : dumps) {
    if (d.world_size) {
      if (world && *world != *d.world_size) {
        fail(d.origin, "world size " + std::to_string(*d.world_size) + " disagrees with " +
                           world_origin + " (" + std::to_string(*world) + ")");
      }
      world = d.world_size;
      world_origin = d.origin;
    }
    for (int r : d.ranks) {
      if (r <= max_rank) continue;
      max_rank = r;
      max_rank_origin = d.origin;
    }
  }
  const int w = world ? *world : max_rank + 1;
  if (w < 1) throw InputError("import: the dumps hold no records and do not say the world size");
  if (max_rank >= w) rank_outside_world(max_rank_origin, max_rank, w);
  return w;
}

// The dumps' records into the run, by rank. Each rank's records come from exactly one file,
// so a dump given twice is not merged.
void merge_ranks(std::vector<RankDump>& dumps, ImportLayout& layout) {
  const int w = layout.meta.world_size;
  RankOwners& o = layout.owners;
  o.owner.resize(size_t(w));
  o.provided.resize(size_t(w));
  o.reported.resize(size_t(w));
  layout.records.ranks.resize(size_t(w));
  for (RankDump& d : dumps) {
    std::set<int> mine(d.ranks.begin(), d.ranks.end());
    if (d.ranks.empty() && (d.rank_matrix || d.reported)) {
      if (auto r = rank_from_name(d.origin)) mine.insert(*r);
    }
    if (d.reported && !mine.empty() && *mine.begin() < w)
      o.reported[size_t(*mine.begin())] = std::move(d.reported);
    for (int r : mine) {
      if (r >= w) rank_outside_world(d.origin, r, w);
      if (!o.owner[size_t(r)].empty())
        fail(d.origin, "rank " + std::to_string(r) + " also appears in " + o.owner[size_t(r)]);
      o.owner[size_t(r)] = d.origin;
      if (d.rank_matrix) o.provided[size_t(r)] = std::move(d.rank_matrix);
    }
    // A dump's cells become rows of the run's one table in the order of the dumps
    // (gather_cells, import_build.h): its records name them.
    if (d.cells && d.cells->records() >= int64_t(kOneCell) - layout.cell_rows)
      fail(d.origin, "more samples of cells than a run holds (2^32 - 1)");
    const uint32_t first_row = uint32_t(layout.cell_rows);
    for (size_t i = 0; i < d.records.size(); ++i) {
      Record& rec = layout.records.ranks[size_t(d.ranks[i])].emplace_back(d.records[i]);
      if (d.cells) rec.cells = first_row + uint32_t(i);
    }
    if (d.cells) layout.cell_rows += d.cells->records();
    if (d.batch_size) layout.meta.batch_size = d.batch_size;
  }
}

// The class count the values imply: the largest class id (or matrix) of any dump.
ClassCount classes_from_values(const std::vector<RankDump>& dumps, int ignore_index) {
  ClassCount out;
  int64_t top = 0;
  auto raise = [&](int64_t count, const RankDump& d) {
    if (count > top) {
      top = count;
      out.origin = d.origin;
    }
  };
  for (const RankDump& d : dumps) {
    if (d.cells) {  // the records' own target and prediction are recomputed from these
      for (size_t c = 0; c < d.cells->cells(); ++c) {
        // Saturated: any id past the class limit is refused alike.
        if (d.cells->target[c] != ignore_index)
          raise(std::min<int64_t>(d.cells->target[c], kMaxClasses) + 1, d);
        raise(std::min<int64_t>(d.cells->prediction[c], kMaxClasses) + 1, d);
      }
    } else {
      for (const Record& rec : d.records) {
        // In 64 bits: a target of INT32_MAX + 1 overflows int.
        if (rec.target != ignore_index) raise(int64_t(rec.target) + 1, d);
        raise(int64_t(rec.prediction) + 1, d);
      }
    }
    if (d.reported) raise(d.reported->classes, d);
    if (d.rank_matrix) raise(d.rank_matrix->classes, d);
  }
  if (top < 1 || top > kMaxClasses)
    throw InputError("import: cannot tell the number of classes; give --classes");
  out.classes = static_cast<int32_t>(top);
  return out;
}

// A multilabel matrix has two classes a label (2l + t: label l is t): an odd class count, or
// one that is not twice the recorded num_labels, reads no label right. num_labels of another
// task is a recording that mixed two.
void check_labels(const std::string& origin, const RunMetadata& m, int64_t classes) {
  const std::optional<int64_t> labels = m.recorded ? m.recorded->num_labels : std::nullopt;
  if (m.task != Task::Multilabel) {
    if (labels)
      fail(origin, "settings_json: 'num_labels' = " + std::to_string(*labels) +
                       " belongs to a multilabel evaluation, but the task is " + to_string(m.task));
    return;
  }
  if (labels && 2 * *labels != classes)
    fail(origin, "settings_json: num_classes " + std::to_string(classes) +
                     " is not 2 x num_labels (" + std::to_string(*labels) +
                     "): a multilabel matrix has two classes a label (2l + t: label l is t)");
  if (classes % 2 != 0)
    fail(origin, std::to_string(classes) +
                     " classes for a multilabel evaluation: its matrix has two classes a label "
                     "(2l + t: label l is t)");
}

// What a record counts: the dumps' task (they agree), else --task, else segmentation for a
// dump of cells and classification for one without. A dump whose task needs cells it does not
// hold, or that holds cells for a classification, is refused.
Task decide_task(const std::vector<RankDump>& dumps, const ImportOptions& options) {
  std::optional<Task> task;
  const RankDump* first = nullptr;
  for (const RankDump& d : dumps) {
    if (d.task && options.task && *d.task != *options.task)
      fail(d.origin, "settings_json says task '" + to_string(*d.task) + "' but --task says '" +
                         to_string(*options.task) + "'");
    const Task own = d.task         ? *d.task
                     : options.task ? *options.task
                     : d.cells      ? Task::Segmentation
                                    : Task::Classification;
    if (own == Task::Classification && d.cells)
      fail(d.origin, "holds cells (a sample of many counts), but --task says classification");
    if (own != Task::Classification && !d.cells)
      fail(d.origin, "task '" + to_string(own) +
                         "' needs each record's cells (cells_per_record, cell_target, "
                         "cell_prediction, cell_count; a CSV's count column); the dump has none");
    if (task && own != *task)
      fail(d.origin, "task '" + to_string(own) + "' disagrees with " + first->origin + "'s '" +
                         to_string(*task) + "'");
    task = own;
    first = &d;
  }
  return task.value_or(Task::Classification);
}

// ignore_index: the recorded one (the metric's), else --ignore-index; the two must agree when
// both are given (-1, the option's default, is "not given").
int decide_ignore_index(const std::vector<RankDump>& dumps, const ImportOptions& options) {
  for (const RankDump& d : dumps) {
    if (!d.settings || !d.settings->ignore_index) continue;
    const int64_t recorded = *d.settings->ignore_index;
    if (recorded < INT32_MIN || recorded > INT32_MAX)
      fail(d.origin,
           "settings_json: 'ignore_index' = " + std::to_string(recorded) + " is out of range");
    if (options.ignore_index != -1 && options.ignore_index != recorded)
      fail(d.origin, "settings_json: ignore_index " + std::to_string(recorded) +
                         " disagrees with --ignore-index " + std::to_string(options.ignore_index));
    return int(recorded);
  }
  return options.ignore_index;
}

// Classes: the dataset's, the user's, the recorder's, or what the records and matrices show.
ClassCount decide_classes(const std::vector<RankDump>& dumps, const ImportOptions& options,
                          const DatasetTruth& truth, const RunMetadata& m) {
  ClassCount out;
  out.classes = options.classes.value_or(0);
  if (options.classes && (out.classes < 1 || out.classes > kMaxClasses))
    throw InputError("import: --classes " + std::to_string(out.classes) + " is out of range [1, " +
                     std::to_string(kMaxClasses) + "]");
  if (truth.labels) {
    if (out.classes && out.classes != truth.labels->num_classes)
      throw InputError("import: --classes " + std::to_string(out.classes) +
                       " disagrees with the dataset's " +
                       std::to_string(truth.labels->num_classes));
    out.classes = truth.labels->num_classes;
  }
  // The recorder's num_classes (the metric's): a class no record shows still counts.
  if (!out.classes && m.recorded && m.recorded->num_classes) {
    if (*m.recorded->num_classes < 1 || *m.recorded->num_classes > kMaxClasses)
      fail(dumps.front().origin, "settings_json: 'num_classes' = " +
                                     std::to_string(*m.recorded->num_classes) + " is out of range");
    out.classes = static_cast<int32_t>(*m.recorded->num_classes);
  }
  // A multilabel recording that names its labels alone: two classes a label.
  if (!out.classes && m.task == Task::Multilabel && m.recorded && m.recorded->num_labels) {
    const int64_t labels = *m.recorded->num_labels;
    if (labels < 1 || labels > kMaxClasses / 2)
      fail(dumps.front().origin,
           "settings_json: 'num_labels' = " + std::to_string(labels) + " is out of range");
    out.classes = static_cast<int32_t>(2 * labels);
  }
  if (!out.classes) out = classes_from_values(dumps, m.ignore_index);
  check_labels(dumps.front().origin, m, out.classes);
  return out;
}

// The dataset's size: the dataset's own, else the largest a dump declares, else what the
// records show (the largest index evaluated, plus one).
void infer_dataset_size(const std::vector<RankDump>& dumps, ImportLayout& layout) {
  RunMetadata& m = layout.meta;
  for (const auto& rank : layout.records.ranks)
    for (const Record& rec : rank) layout.max_index = std::max(layout.max_index, rec.index);
  if (layout.truth.labels) {
    m.dataset_size = layout.truth.labels->size();
    return;
  }
  for (const RankDump& d : dumps)
    if (d.dataset_size) m.dataset_size = std::max(m.dataset_size, *d.dataset_size);
  if (m.dataset_size <= 0) m.dataset_size = layout.max_index + 1;
}

}  // namespace

EvaluationGroups group_by_evaluation(std::vector<RankDump> dumps) {
  EvaluationGroups out;
  // A Lightning sanity check is not part of an epoch's metric (Lightning resets the metric
  // after it); it is kept apart by the recorder and left out here.
  size_t sanity = 0;
  std::erase_if(dumps, [&](const RankDump& d) { return d.sanity && ++sanity; });
  if (sanity > 0)
    out.notes.push_back("left out " + std::to_string(sanity) +
                        " sanity-check dump(s): the sanity check is not part of an epoch's metric");
  if (dumps.empty()) throw InputError("import: only sanity-check dumps were given");
  int64_t pad_rows = 0;
  for (const RankDump& d : dumps) pad_rows += d.pad_rows;
  if (pad_rows > 0)
    out.notes.push_back(std::to_string(pad_rows) +
                        " rows pad_across_processes added (flag PAD_ROW) were not counted as "
                        "samples");
  std::string with, without;  // a dump that names its epoch, one that does not
  int64_t with_epoch = 0;
  // Validation and dataloader numbers tell evaluations apart only when there are several.
  std::set<int64_t> validations, loaders;
  for (const RankDump& d : dumps) {
    validations.insert(d.validation_in_epoch.value_or(0));
    loaders.insert(d.dataloader_idx.value_or(0));
  }
  std::map<EvaluationKey, std::vector<RankDump>> groups;
  for (RankDump& d : dumps) {
    if (d.epoch) {
      with = d.origin;
      with_epoch = *d.epoch;
    } else {
      without = d.origin;
    }
    if (validations.size() < 2) d.validation_in_epoch.reset();
    if (loaders.size() < 2) d.dataloader_idx.reset();
    groups[key_of(d)].push_back(std::move(d));
  }
  if (!with.empty() && !without.empty())
    fail(without, "names no epoch, but " + with + " does (epoch " + std::to_string(with_epoch) +
                      "); give every dump its epoch");
  out.epochs_named = !with.empty();
  for (auto& [key, group] : groups) out.evaluations.push_back(std::move(group));
  return out;
}

ImportLayout infer_layout(std::vector<RankDump>& dumps, const ImportOptions& options) {
  ImportLayout layout;
  RunMetadata& m = layout.meta;
  carry_evaluation_settings(dumps, m);
  m.task = decide_task(dumps, options);
  m.ignore_index = decide_ignore_index(dumps, options);
  m.world_size = decide_world_size(dumps, options);
  merge_ranks(dumps, layout);
  layout.truth = read_dataset_truth(options);
  if (const std::optional<DenseTruth>& dense = layout.truth.dense) {
    // A dataset of many counts a sample says what a record counts, and which target it
    // leaves out when neither the dumps nor --ignore-index say.
    if (dense->task != m.task)
      throw InputError("--dataset " + options.dataset + " is a " + to_string(dense->task) +
                       " dataset, but the dumps hold a " + to_string(m.task) + " evaluation");
    if (m.ignore_index == -1) m.ignore_index = dense->ignore_index;
  }
  m.dataset = options.dataset;
  layout.classes = decide_classes(dumps, options, layout.truth, m);
  m.classes = layout.classes.classes;
  infer_dataset_size(dumps, layout);
  return layout;
}

}  // namespace shardlens::dump_import
