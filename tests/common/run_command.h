#pragma once
// Runs a shell command for the CLI tests: exit code, stdout and stderr.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace shardlens::test {

struct CommandResult {
  int code = -1;
  std::string out;
  std::string err;
};

inline CommandResult run_command(const std::string& command) {
  const std::filesystem::path err = std::filesystem::temp_directory_path() /
                                    ("shardlens-test-stderr-" + std::to_string(getpid()));
  const std::string cmd = command + " 2>" + err.string();
  CommandResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err);
  r.err.assign(std::istreambuf_iterator<char>(in), {});
  std::filesystem::remove(err);
  return r;
}

}  // namespace shardlens::test
