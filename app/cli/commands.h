#pragma once
// Subcommands of shardlens-cli. Each file registers one subcommand on the root app; the
// callbacks throw shardlens::InputError on bad input (main turns that into exit 2).
#include <CLI/CLI.hpp>

namespace shardlens::cli {

// Exit code a subcommand asks for (diagnose: 1 when the matrix is wrong).
inline int g_exit_code = 0;

// --max-memory (the load budget, core/vocabulary/memory_budget.h), given before or after any
// subcommand: every command that loads files honours it.
void register_memory_flag(CLI::App& app);
void register_simulate(CLI::App& app);
void register_shards(CLI::App& app);
void register_diagnose(CLI::App& app);
void register_export(CLI::App& app);
void register_lessons(CLI::App& app);
void register_run(CLI::App& app);      // real runs (app/cli/cmd_run.cpp)
void register_import(CLI::App& app);   // imports of users' dumps (app/cli/cmd_import.cpp)
void register_compare(CLI::App& app);  // two evaluations side by side (app/cli/cmd_compare.cpp)
void register_predict(CLI::App& app);  // a model's predictions as .npy (app/cli/cmd_predict.cpp)

}  // namespace shardlens::cli
