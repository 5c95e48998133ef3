#pragma once
// The lesson presets (resources/lessons/*.json) and where ShardLens finds its resources, in
// the build tree and when installed. The one loader both the CLI and the GUI use.
//
// Directories, one policy (an empty variable counts as unset):
//   resource_dir()  $SHARDLENS_RESOURCE_DIR; else <exe>/../share/shardlens when it holds
//                   lessons/ (installed); else the source tree's resources/ of this build.
//   lessons_dir()   $SHARDLENS_LESSONS_DIR; else resource_dir()/lessons.
//
// Lessons: every *.json file of the directory. A lesson's name is its file name without
// .json (what --preset takes); a scenario without a "name" takes it, and one naming itself
// otherwise is a broken preset. Order: the seed lesson first, then by name. A preset that
// cannot be loaded is reported, its file named, and skipped: it never hides the others.
#include <string>
#include <vector>

#include "core/evaluation/evaluation.h"
#include "core/evaluation/scenario.h"

namespace shardlens {

inline constexpr const char* kSeedLesson = "seed-lesson";

std::string resource_dir();
std::string lessons_dir();

struct LessonInfo {
  std::string name;  // the file name without .json; scenario.name is the same
  std::string path;
  Scenario scenario;
};

struct LessonList {
  std::vector<LessonInfo> lessons;  // seed lesson first, then by name
  std::vector<std::string> errors;  // one per broken preset ("PATH: what"), or unlistable dir
};

// The lessons of `dir` / of lessons_dir(). Never throws for a broken preset or a missing
// directory: those are in `errors`.
LessonList load_lessons(const std::string& dir);
LessonList load_lessons();

// A preset by name ("padding-duplicates", from lessons_dir()) or a scenario JSON path.
// Throws InputError naming the file, or for an unknown name listing the available ones.
Scenario load_preset(const std::string& name_or_path);

// The simulation of load_preset(name_or_path) (compare's operands, the GUI's too): a setting
// the simulation refuses is named as the file has it ("FILE: rank_seeds: ...", not the flag).
Evaluation simulate_preset(const std::string& name_or_path);

}  // namespace shardlens
