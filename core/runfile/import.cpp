#include "core/runfile/import.h"

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
  RunFile run = dump_import::build_run(std::move(layout));
  validate_run(run, "import");
  return run;
}

}  // namespace

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
