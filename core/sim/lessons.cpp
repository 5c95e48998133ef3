#include "core/sim/lessons.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <filesystem>

#include "core/evaluation/scenario_settings.h"
#include "core/sim/engine.h"
#include "core/vocabulary/types.h"
#include "shardlens/config.h"

namespace shardlens {

namespace fs = std::filesystem;

namespace {

const char* env_dir(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// One lesson file, with the naming rule of lessons.h. Throws InputError naming the file.
LessonInfo load_lesson(const fs::path& path) {
  LessonInfo info;
  info.name = path.stem().string();
  info.path = path.string();
  info.scenario = load_scenario_file(info.path);
  if (info.scenario.name.empty()) info.scenario.name = info.name;
  if (info.scenario.name != info.name) {
    throw InputError(info.path + ": the scenario is named '" + info.scenario.name +
                     "' but a lesson is named after its file ('" + info.name + "')");
  }
  return info;
}

}  // namespace

std::string resource_dir() {
  if (const char* env = env_dir("SHARDLENS_RESOURCE_DIR")) return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "shardlens";
    if (fs::exists(installed / "lessons", ec)) return installed.string();
  }
  return SHARDLENS_RESOURCE_DIR;
}

std::string lessons_dir() {
  if (const char* env = env_dir("SHARDLENS_LESSONS_DIR")) return env;
  return (fs::path(resource_dir()) / "lessons").string();
}

LessonList load_lessons(const std::string& dir) {
  LessonList out;
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (it->path().extension() == ".json" && it->is_regular_file(type_ec))
      files.push_back(it->path());
  }
  if (ec) out.errors.push_back(dir + ": cannot list lessons (" + ec.message() + ")");
  for (const fs::path& path : files) {
    try {
      out.lessons.push_back(load_lesson(path));
    } catch (const std::exception& e) {
      const std::string what = e.what();
      // Every message names the file, whatever threw.
      out.errors.push_back(what.rfind(path.string(), 0) == 0 ? what : path.string() + ": " + what);
    }
  }
  std::sort(out.lessons.begin(), out.lessons.end(), [](const LessonInfo& a, const LessonInfo& b) {
    const bool sa = a.name == kSeedLesson;
    const bool sb = b.name == kSeedLesson;
    return sa != sb ? sa : a.name < b.name;
  });
  std::sort(out.errors.begin(), out.errors.end());
  return out;
}

LessonList load_lessons() {
  return load_lessons(lessons_dir());
}

Scenario load_preset(const std::string& name_or_path) {
  std::error_code ec;
  if (name_or_path.find('/') != std::string::npos || fs::exists(name_or_path, ec)) {
    return load_scenario_file(name_or_path);
  }
  const fs::path path = fs::path(lessons_dir()) / (name_or_path + ".json");
  if (!fs::exists(path, ec)) {
    std::string names;
    for (const LessonInfo& l : load_lessons().lessons)
      names += (names.empty() ? "" : ", ") + l.name;
    throw InputError("--preset: no lesson named '" + name_or_path + "' in " + lessons_dir() +
                     " (available: " + names + ")");
  }
  return load_lesson(path).scenario;
}

Evaluation simulate_preset(const std::string& name_or_path) {
  const Scenario s = load_preset(name_or_path);
  check_simulation_budget(s, name_or_path);  // before a label is drawn, naming the file
  try {
    return simulate(s);
  } catch (const InputError& e) {
    throw InputError(for_origin(e.what(), {SettingOrigin::Kind::File, name_or_path}));
  }
}

}  // namespace shardlens
