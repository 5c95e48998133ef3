#pragma once
// Where ShardLens finds its resources (lesson presets, the reference model), in the build
// tree and when installed.
#include <string>
#include <vector>

#include "core/scenario.h"

namespace shardlens {

// $SHARDLENS_RESOURCE_DIR, else <exe>/../share/shardlens when installed, else the
// source tree's resources/ this build came from.
std::string resource_dir();

struct LessonInfo {
  std::string name;
  std::string path;
  Scenario scenario;
};

// Every lesson preset, sorted with the seed lesson first.
std::vector<LessonInfo> list_lessons();
// A preset by name ("padding-duplicates") or a scenario JSON path. Throws InputError.
Scenario load_preset(const std::string& name_or_path);

}  // namespace shardlens
