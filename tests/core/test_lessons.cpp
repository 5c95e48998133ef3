// The one lesson loader (core/sim/lessons.h) the CLI and the GUI share: directories and their
// environment variables, names, order, and what a broken preset does.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/sim/lessons.h"
#include "core/vocabulary/types.h"
#include "tests/core/test_io_util.h"

using namespace shardlens;
using shardlens::io_test::input_error_of;
using shardlens::io_test::TempDir;
using shardlens::io_test::write_bytes;

namespace {

// Sets (or unsets, with nullopt) an environment variable for the test's scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value) : m_name(name) {
    if (const char* old = std::getenv(name)) m_old = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    if (m_old)
      ::setenv(m_name, m_old->c_str(), 1);
    else
      ::unsetenv(m_name);
  }

 private:
  const char* m_name;
  std::optional<std::string> m_old;
};

void write_lesson(const TempDir& dir, const std::string& file, const std::string& json) {
  write_bytes(dir.path(file), json);
}

std::vector<std::string> names(const LessonList& list) {
  std::vector<std::string> out;
  for (const LessonInfo& l : list.lessons) out.push_back(l.name);
  return out;
}

}  // namespace

TEST(Lessons, SeedLessonFirstThenByName) {
  TempDir dir;
  for (const char* name : {"zeta", "seed-lesson", "alpha", "mid"})
    write_lesson(dir, std::string(name) + ".json", R"({"world_size": 2})");
  write_lesson(dir, "notes.txt", "not a lesson");
  const LessonList list = load_lessons(dir.dir().string());
  EXPECT_TRUE(list.errors.empty());
  EXPECT_EQ(names(list), (std::vector<std::string>{"seed-lesson", "alpha", "mid", "zeta"}));
  // A scenario without a name takes its file's.
  for (const LessonInfo& l : list.lessons) {
    EXPECT_EQ(l.scenario.name, l.name);
    EXPECT_EQ(l.path, dir.path(l.name + ".json"));
  }
}

TEST(Lessons, BrokenPresetIsReportedWithItsFileAndSkipped) {
  TempDir dir;
  write_lesson(dir, "good.json", R"({"name": "good", "title": "Good", "world_size": 2})");
  write_lesson(dir, "bad-key.json", R"({"name": "bad-key", "no_such_key": 1})");
  write_lesson(dir, "bad-json.json", "{");
  write_lesson(dir, "misnamed.json", R"({"name": "other"})");
  const LessonList list = load_lessons(dir.dir().string());
  EXPECT_EQ(names(list), (std::vector<std::string>{"good"}));
  ASSERT_EQ(list.errors.size(), 3u);
  // Sorted by file; each message starts with the file's path.
  EXPECT_EQ(list.errors[0].rfind(dir.path("bad-json.json") + ": ", 0), 0u) << list.errors[0];
  EXPECT_EQ(list.errors[1].rfind(dir.path("bad-key.json") + ": ", 0), 0u) << list.errors[1];
  EXPECT_NE(list.errors[1].find("no_such_key"), std::string::npos) << list.errors[1];
  EXPECT_EQ(list.errors[2].rfind(dir.path("misnamed.json") + ": ", 0), 0u) << list.errors[2];
  EXPECT_NE(list.errors[2].find("'other'"), std::string::npos) << list.errors[2];
}

TEST(Lessons, MissingDirectoryIsReportedNotThrown) {
  const LessonList list = load_lessons("/nonexistent/shardlens-lessons");
  EXPECT_TRUE(list.lessons.empty());
  ASSERT_EQ(list.errors.size(), 1u);
  EXPECT_NE(list.errors[0].find("/nonexistent/shardlens-lessons"), std::string::npos);
}

TEST(Lessons, EnvironmentChoosesTheDirectories) {
  TempDir resources, lessons;
  ASSERT_TRUE(std::filesystem::create_directory(resources.path("lessons")));
  write_bytes(resources.path("lessons/from-resources.json"), R"({"world_size": 2})");
  write_lesson(lessons, "from-lessons-dir.json", R"({"world_size": 3})");

  // SHARDLENS_RESOURCE_DIR alone: the resource root, lessons/ below it.
  {
    const ScopedEnv res("SHARDLENS_RESOURCE_DIR", resources.dir().string());
    const ScopedEnv les("SHARDLENS_LESSONS_DIR", std::nullopt);
    EXPECT_EQ(resource_dir(), resources.dir().string());
    EXPECT_EQ(lessons_dir(), resources.path("lessons"));
    EXPECT_EQ(names(load_lessons()), (std::vector<std::string>{"from-resources"}));
    EXPECT_EQ(load_preset("from-resources").sampler.world_size, 2);
  }
  // SHARDLENS_LESSONS_DIR overrides the lessons directory only, for the CLI's --preset too.
  {
    const ScopedEnv res("SHARDLENS_RESOURCE_DIR", resources.dir().string());
    const ScopedEnv les("SHARDLENS_LESSONS_DIR", lessons.dir().string());
    EXPECT_EQ(resource_dir(), resources.dir().string());
    EXPECT_EQ(lessons_dir(), lessons.dir().string());
    EXPECT_EQ(names(load_lessons()), (std::vector<std::string>{"from-lessons-dir"}));
    EXPECT_EQ(load_preset("from-lessons-dir").sampler.world_size, 3);
    EXPECT_EQ(load_preset("from-lessons-dir").name, "from-lessons-dir");
    const std::string unknown = input_error_of([] { load_preset("from-resources"); });
    EXPECT_NE(unknown.find("available: from-lessons-dir"), std::string::npos) << unknown;
  }
  // Empty counts as unset: back to the build's (or the installed) resources.
  {
    const ScopedEnv res("SHARDLENS_RESOURCE_DIR", std::string());
    const ScopedEnv les("SHARDLENS_LESSONS_DIR", std::string());
    EXPECT_NE(resource_dir(), "");
    EXPECT_EQ(lessons_dir(), (std::filesystem::path(resource_dir()) / "lessons").string());
  }
}
