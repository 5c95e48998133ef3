// shardlens-cli: the headless twin of the ShardLens desktop application.
#include <CLI/CLI.hpp>
#include <iostream>

#include "app/cli/commands.h"
#include "core/io/output_text.h"
#include "core/realrun/model_predictions.h"
#include "core/vocabulary/types.h"
#include "shardlens/config.h"

int main(int argc, char** argv) {
  // Everything printed passes the terminal's escaper: titles, class names, paths and values
  // quoted in messages come from files, and none may drive the terminal.
  const shardlens::TerminalTextGuard out_text(std::cout), err_text(std::cerr);
  CLI::App app{"ShardLens: what distributed evaluation does to a confusion matrix"};
  app.set_version_flag("--version", std::string("shardlens-cli ") + SHARDLENS_VERSION);
  app.require_subcommand(1);
  namespace cli = shardlens::cli;
  cli::register_memory_flag(app);  // before the subcommands: they inherit it
  cli::register_simulate(app);
  cli::register_shards(app);
  cli::register_diagnose(app);
  cli::register_export(app);
  cli::register_lessons(app);
  cli::register_run(app);
  cli::register_import(app);
  cli::register_compare(app);
  cli::register_predict(app);
  shardlens::install_model_predictor();  // --predictor model:PATH in every command
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // Usage errors: one line, exit 2 like every other bad input (CLI11 would use 105-109).
    std::cerr << "shardlens-cli: " << e.what() << " (see --help)\n";
    return 2;
  } catch (const shardlens::InputError& e) {
    std::cerr << "shardlens-cli: " << e.what() << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "shardlens-cli: out of memory\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "shardlens-cli: internal error: " << e.what() << "\n";
    return 3;
  }
  return cli::g_exit_code;
}
