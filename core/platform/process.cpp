#include "core/platform/process.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>

extern char** environ;

namespace shardlens {

namespace {

class ChildProcess : public RankProcess {
 public:
  explicit ChildProcess(pid_t pid) : m_pid(pid) {}
  ~ChildProcess() override {
    if (m_status) return;
    ::kill(m_pid, SIGKILL);
    int st = 0;
    while (waitpid(m_pid, &st, 0) < 0 && errno == EINTR) {
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  std::optional<ExitStatus> poll() override {
    if (m_status) return m_status;
    int st = 0;
    const pid_t got = waitpid(m_pid, &st, WNOHANG);
    if (got == m_pid) {
      m_status = exit_status_of(st);
    } else if (got < 0 && errno == ECHILD) {
      m_status = ExitStatus{-1, 0};  // reaped elsewhere: its status is lost
    }
    return m_status;
  }
  void kill() override {
    if (!m_status) ::kill(m_pid, SIGKILL);
  }
  void terminate() override {
    if (!m_status) ::kill(m_pid, SIGTERM);
  }

 private:
  pid_t m_pid;
  std::optional<ExitStatus> m_status;
};

}  // namespace

ExitStatus exit_status_of(int wait_status) {
  ExitStatus s;
  if (WIFSIGNALED(wait_status)) {
    s.signal = WTERMSIG(wait_status);
  } else if (WIFEXITED(wait_status)) {
    s.code = WEXITSTATUS(wait_status);
  } else {
    s.code = -1;
  }
  return s;
}

std::string describe_status(const ExitStatus& status) {
  if (status.signal != 0) {
    return "was killed by signal " + std::to_string(status.signal) + " (" +
           strsignal(status.signal) + ")";
  }
  return "exited with status " + std::to_string(status.code);
}

std::unique_ptr<RankProcess> spawn_rank(const std::string& exe,
                                        const std::vector<std::string>& args, int rank, int world,
                                        const std::vector<std::string>& store_env) {
  std::vector<std::string> env_strings;
  const std::set<std::string> overridden = {
      "RANK",        "WORLD_SIZE",  "LOCAL_RANK",         "LOCAL_WORLD_SIZE",
      "MASTER_ADDR", "MASTER_PORT", "SHARDLENS_LAUNCHER", "SHARDLENS_STORE_FILE"};
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    if (!overridden.count(entry.substr(0, entry.find('=')))) env_strings.push_back(entry);
  }
  env_strings.push_back("RANK=" + std::to_string(rank));
  env_strings.push_back("LOCAL_RANK=" + std::to_string(rank));
  env_strings.push_back("WORLD_SIZE=" + std::to_string(world));
  env_strings.push_back("LOCAL_WORLD_SIZE=" + std::to_string(world));
  env_strings.insert(env_strings.end(), store_env.begin(), store_env.end());
  env_strings.push_back("SHARDLENS_LAUNCHER=1");
  std::vector<char*> argv, envp;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv.data(), envp.data());
  if (rc != 0)
    throw RunFailure("cannot start rank " + std::to_string(rank) + ": " + std::strerror(rc));
  return std::make_unique<ChildProcess>(pid);
}

std::vector<std::string> own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), {});
  std::vector<std::string> args;
  size_t begin = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i] == '\0') {
      args.push_back(all.substr(begin, i - begin));
      begin = i + 1;
    }
  }
  return args;
}

}  // namespace shardlens
