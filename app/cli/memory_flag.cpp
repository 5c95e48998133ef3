// --max-memory: the memory budget every load is checked against before it allocates.
#include "app/cli/commands.h"
#include "core/vocabulary/memory_budget.h"

namespace shardlens::cli {

void register_memory_flag(CLI::App& app) {
  app.add_option_function<std::string>(
         "--max-memory",
         [](const std::string& text) {
           const auto bytes = parse_memory_size(text);
           if (!bytes)
             throw CLI::ValidationError("--max-memory",
                                        "'" + text + "' is not a size (e.g. 512M, 2G, 800000000)");
           set_load_budget(*bytes);
         },
         "Most memory one file load may take, e.g. 512M or 2G (default: half of physical "
         "memory, " +
             memory_size_text(default_load_budget()) +
             " here); a file that needs more is refused before anything is allocated")
      ->type_name("SIZE");
  // Subcommands created after this pass options they do not know to the root app, so
  // `shardlens-cli import ... --max-memory 1G` works as well as the flag before `import`.
  app.fallthrough();
}

}  // namespace shardlens::cli
