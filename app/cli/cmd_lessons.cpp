// `lessons`: the lesson presets, one per pitfall plus the seed lesson.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/engine_flags.h"
#include "core/evaluation/scenario.h"
#include "core/io/output_text.h"
#include "core/sim/lessons.h"

namespace shardlens::cli {

void register_lessons(CLI::App& app) {
  auto format = std::make_shared<std::string>("text");
  CLI::App* cmd = app.add_subcommand("lessons", "List the lesson presets (use with --preset NAME)");
  add_format_flag(*cmd, *format);
  cmd->callback([format] {
    // A broken preset is named on stderr; the others are still listed.
    const LessonList all = load_lessons();
    for (const std::string& error : all.errors)
      std::cerr << "shardlens-cli: warning: " << error << "\n";
    const std::vector<LessonInfo>& lessons = all.lessons;
    if (*format == "json") {
      nlohmann::json out = nlohmann::json::array();
      for (const LessonInfo& l : lessons) {
        nlohmann::json j = to_json(l.scenario);
        j["name"] = l.name;
        j["path"] = l.path;
        out.push_back(j);
      }
      std::cout << json_text(out, 2) << "\n";
      return;
    }
    for (const LessonInfo& l : lessons) {
      std::cout << l.name << "\n  " << l.scenario.title << "\n  " << l.scenario.description
                << "\n\n";
    }
    std::cout << "Run one: shardlens-cli simulate --preset NAME\n";
  });
}

}  // namespace shardlens::cli
