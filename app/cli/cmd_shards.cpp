// `shards`: which dataset indices each rank's sampler yields and which it evaluates.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/engine_flags.h"
#include "core/sim/specs.h"
#include "core/torchsem/loader.h"

namespace shardlens::cli {

namespace {

void print_shards(const ShardPlan& plan, const std::string& format) {
  if (format == "json") {
    nlohmann::json ranks = nlohmann::json::array();
    for (int r = 0; r < plan.world_size; ++r) {
      const RankSequence& sampled = plan.sampler[static_cast<size_t>(r)];
      const EvaluatedRank& evaluated = plan.evaluated[static_cast<size_t>(r)];
      ranks.push_back({{"rank", r},
                       {"indices", sampled.indices()},
                       {"padding", sampled.flags()},
                       {"evaluated", evaluated.sequence.indices()},
                       {"batches", evaluated.batches}});
    }
    std::cout << nlohmann::json{{"n", plan.n},
                                {"world_size", plan.world_size},
                                {"batch_size", plan.batch_size},
                                {"ranks", ranks}}
                     .dump()
              << "\n";
    return;
  }
  std::cout << "n = " << plan.n << ", world size " << plan.world_size << ", batch size "
            << plan.batch_size << "\n";
  for (int r = 0; r < plan.world_size; ++r) {
    const EvaluatedRank& e = plan.evaluated[static_cast<size_t>(r)];
    const auto indices = e.sequence.indices();
    const auto flags = e.sequence.flags();
    std::cout << "rank " << r << ": sampler " << e.sampler_size << ", evaluated " << indices.size()
              << " in " << e.batches << " batches:";
    const size_t shown = std::min<size_t>(indices.size(), 40);
    for (size_t i = 0; i < shown; ++i) {
      std::cout << " " << indices[i] << ((flags[i] & kPadding) ? "*" : "")
                << ((flags[i] & kSanity) ? "s" : "");
    }
    if (shown < indices.size()) std::cout << " ...";
    std::cout << "\n";
  }
  std::cout << "(* padding duplicate, s sanity-check batch)\n";
}

}  // namespace

void register_shards(CLI::App& app) {
  auto flags = std::make_shared<EngineFlags>();
  CLI::App* cmd =
      app.add_subcommand("shards", "Show each rank's sampler output and evaluated indices");
  add_engine_flags(*cmd, *flags);
  cmd->callback([cmd, flags] {
    const Scenario s = resolve_scenario(*cmd, *flags);
    const Labels labels = load_labels(s.dataset);
    print_shards(plan_shards(labels.size(), s.sampler, s.loader), flags->format);
  });
}

}  // namespace shardlens::cli
