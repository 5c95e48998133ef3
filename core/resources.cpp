#include "core/resources.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "core/types.h"
#include "shardlens/config.h"

namespace shardlens {

namespace fs = std::filesystem;

std::string resource_dir() {
  if (const char* env = std::getenv("SHARDLENS_RESOURCE_DIR"); env && *env) return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "shardlens";
    if (fs::exists(installed / "lessons", ec)) return installed.string();
  }
  return SHARDLENS_RESOURCE_DIR;
}

std::vector<LessonInfo> list_lessons() {
  std::vector<LessonInfo> lessons;
  const fs::path dir = fs::path(resource_dir()) / "lessons";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".json") continue;
    LessonInfo info;
    info.name = entry.path().stem().string();
    info.path = entry.path().string();
    info.scenario = load_scenario_file(info.path);
    lessons.push_back(std::move(info));
  }
  if (ec) throw InputError(dir.string() + ": cannot list lessons (" + ec.message() + ")");
  std::sort(lessons.begin(), lessons.end(), [](const LessonInfo& a, const LessonInfo& b) {
    const bool sa = a.name == "seed-lesson";
    const bool sb = b.name == "seed-lesson";
    return sa != sb ? sa : a.name < b.name;
  });
  return lessons;
}

Scenario load_preset(const std::string& name_or_path) {
  std::error_code ec;
  if (name_or_path.find('/') != std::string::npos || fs::exists(name_or_path, ec)) {
    return load_scenario_file(name_or_path);
  }
  const fs::path path = fs::path(resource_dir()) / "lessons" / (name_or_path + ".json");
  if (!fs::exists(path, ec)) {
    std::string names;
    for (const LessonInfo& l : list_lessons()) names += (names.empty() ? "" : ", ") + l.name;
    throw InputError("--preset: no lesson named '" + name_or_path + "' (available: " + names + ")");
  }
  return load_scenario_file(path.string());
}

}  // namespace shardlens
