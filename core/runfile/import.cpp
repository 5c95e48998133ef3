#include "core/runfile/import.h"

#include <unordered_set>

#include "core/runfile/import_build.h"
#include "core/runfile/import_checks.h"
#include "core/runfile/import_layout.h"

namespace shardlens {
namespace {

// The import of one evaluation's dumps; their matrices move into the run.
RunFile import_group(std::vector<RankDump>& dumps, const ImportOptions& options) {
  dump_import::refuse_empty_dumps(dumps);
  dump_import::ImportLayout layout = dump_import::infer_layout(dumps, options);
  dump_import::check_layout(dumps, options, layout);
  dump_import::gather_cells(dumps, layout);
  RunFile run = dump_import::build_run(std::move(layout));
  validate_run(run, "import");
  return run;
}

// 1234567 as "1,234,567".
std::string grouped(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (n < 0 ? "-" : "") + out;
}

}  // namespace

std::string dump_kind_text(const RunFile& run) {
  const RunMetadata& m = run.meta;
  const CellTable* cells = run.records.cell_table();
  std::unordered_set<int64_t> samples;
  int64_t records = 0, counted = 0;
  for (const auto& rank : run.records.ranks) {
    for (const Record& rec : rank) {
      samples.insert(rec.index);
      ++records;
      if (cells && rec.cells != kOneCell) counted += cells->total(rec.cells);
    }
  }
  const int64_t distinct = int64_t(samples.size());
  std::string word = sample_word(m.task);
  std::string out =
      to_string(m.task) + " dump: " + grouped(distinct) + " " + word + (distinct == 1 ? "" : "s");
  if (records != distinct) out += " (" + grouped(records) + " records)";
  out += ", " + grouped(m.classes) + " classes";
  if (m.task != Task::Classification)
    out += ", " + grouped(counted) + " " +
           (counted == 1 ? count_unit_one(m.task) : count_unit(m.task)) + " counted";
  return out;
}

RunFile import_dumps(const std::vector<RankDump>& dumps, const ImportOptions& options) {
  std::vector<RankDump> own = dumps;
  return import_group(own, options);
}

RunFile import_dumps(const std::vector<std::string>& paths, const ImportOptions& options,
                     Progress* progress) {
  std::vector<RankDump> dumps = dump_import::read_dumps(paths, options, progress);
  return import_group(dumps, options);
}

ImportedRun import_epochs(const std::vector<std::string>& paths, const ImportOptions& options,
                          Progress* progress) {
  std::vector<RankDump> dumps = dump_import::read_dumps(paths, options, progress);
  dump_import::refuse_empty_dumps(dumps);
  dump_import::EvaluationGroups groups = dump_import::group_by_evaluation(std::move(dumps));
  ImportedRun out;
  out.notes = std::move(groups.notes);
  const size_t count = groups.evaluations.size();
  for (std::vector<RankDump>& group : groups.evaluations) {
    step(progress, "importing evaluations", double(out.epochs.size()) / double(count));
    RunFile run = import_group(group, options);
    if (groups.epochs_named) run.meta.epoch = group.front().epoch;
    if (count > 1 && !run.meta.epoch) run.meta.epoch = 0;
    out.epochs.push_back(std::move(run));
  }
  return out;
}

}  // namespace shardlens
