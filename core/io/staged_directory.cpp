#include "core/io/staged_directory.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <map>
#include <vector>

#include "core/io/posix_fd.h"
#include "core/vocabulary/types.h"

namespace shardlens {
namespace {

namespace fs = std::filesystem;
using io_detail::fail;
using io_detail::fail_errno;
using io_detail::Fd;

constexpr const char* kStagingTag = ".shardlens-staging-";

// The staging directories a process that is gone left under `parent` (their names carry
// its pid): removed, so that they neither fill the disk nor are taken for output.
void remove_abandoned(const fs::path& parent, const std::string& prefix) {
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    if (it->symlink_status(ec).type() != fs::file_type::directory) continue;
    const std::string rest = name.substr(prefix.size());
    const size_t dash = rest.find('-');
    if (dash == 0 || dash == std::string::npos) continue;
    pid_t pid = 0;
    try {
      pid = pid_t(std::stol(rest.substr(0, dash)));
    } catch (const std::exception&) {
      continue;
    }
    if (pid <= 0 || pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    std::error_code ignored;
    fs::remove_all(it->path(), ignored);  // does not follow links inside it
  }
}

// A staged folder and where its files go.
struct Place {
  fs::path relative;  // below the staging directory ("" for its top)
  Fd staged;          // the staged folder
  Fd target;          // the folder under OUT; -1 while it is still to be made
  bool make = false;  // made by commit()
};

// "OUT/epoch1" as the user would name it.
std::string shown(const std::string& out, const fs::path& relative) {
  return relative.empty() ? out : (fs::path(out) / relative).string();
}

// Opens `name` in `parent` as a folder without following a link; names what it is when it
// is not one.
Fd open_folder_at(int parent, const std::string& name, const std::string& where, bool* missing) {
  Fd fd(::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() >= 0) return fd;
  const int error = errno;
  if (error == ENOENT) {
    *missing = true;
    return fd;
  }
  struct stat st {};
  if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(st.st_mode))
      fail(where, "cannot write: is a symbolic link, and an export writes nothing outside --out");
    if (!S_ISDIR(st.st_mode)) fail(where, "cannot write: is not a directory");
  }
  fail_errno(where, "open", error);
}

}  // namespace

StagedDirectory::StagedDirectory(std::string out) : m_out(std::move(out)) {
  fs::path target = fs::absolute(m_out).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();  // "exp/" is "exp"
  m_target = target.string();
  struct stat st {};
  m_out_existed = ::stat(target.c_str(), &st) == 0;  // require_output checked it is a folder
  fs::path parent = m_out_existed ? target : target.parent_path();
  const std::string prefix =
      m_out_existed ? std::string(kStagingTag) : "." + target.filename().string() + kStagingTag;
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) fail(m_out, "cannot create the output directory's parent (" + ec.message() + ")");
  remove_abandoned(parent, prefix);
  std::string name = (parent / (prefix + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (::mkdtemp(name.data()) == nullptr)
    fail_errno(m_out, "create the staging directory beside it", errno);
  m_staging = name;
}

StagedDirectory::~StagedDirectory() {
  if (m_committed) return;
  std::error_code ignored;
  fs::remove_all(m_staging, ignored);
}

std::string StagedDirectory::final_path(const std::string& staged_path) const {
  const fs::path relative = fs::path(staged_path).lexically_relative(m_staging);
  return shown(m_out, relative == "." ? fs::path() : relative);
}

std::string StagedDirectory::final_text(std::string text) const {
  const std::string shown_out = final_path(m_staging);
  for (size_t at = text.find(m_staging); at != std::string::npos;
       at = text.find(m_staging, at + shown_out.size()))
    text.replace(at, m_staging.size(), shown_out);
  return text;
}

void StagedDirectory::commit() {
  if (!m_out_existed) {
    {
      Fd top(::open(m_staging.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (top.get() < 0 || ::syncfs(top.get()) != 0) fail_errno(m_out, "write", errno);
    }
    const fs::path target = m_target;
    // mkdtemp made it private while it was written; OUT gets the mode a new folder gets.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::chmod(m_staging.c_str(), 0777 & ~mask);
    if (::rename(m_staging.c_str(), target.c_str()) == 0) {
      m_committed = true;
      Fd parent(::open(target.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (parent.get() >= 0) ::fsync(parent.get());  // best effort, as write_file_atomic
      return;
    }
    if (errno != EEXIST && errno != ENOTEMPTY) fail_errno(m_out, "create", errno);
    // OUT appeared while the export ran: its files are merged as into any existing OUT,
    // which needs the staged files on OUT's filesystem.
    const std::string moved = (target / (kStagingTag + std::to_string(::getpid()))).string();
    if (::rename(m_staging.c_str(), moved.c_str()) != 0) fail_errno(m_out, "write into", errno);
    m_staging = moved;
  }
  merge_into_existing();
}

void StagedDirectory::write_and_commit(const std::function<void()>& write) {
  try {
    write();
  } catch (const InputError& e) {
    throw InputError(final_text(e.what()));
  }
  commit();
}

void StagedDirectory::merge_into_existing() {
  // Every staged folder, parents first, and every staged file in each.
  std::vector<Place> places;
  std::map<fs::path, size_t> index;
  std::vector<std::pair<size_t, std::string>> files;
  {
    Place top;
    top.staged = Fd(::open(m_staging.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    // The top's files go to OUT itself, the staging directory's parent.
    top.target =
        Fd(::open(fs::path(m_staging).parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (top.staged.get() < 0 || top.target.get() < 0) fail_errno(m_out, "open", errno);
    index[fs::path()] = 0;
    places.push_back(std::move(top));
  }
  std::error_code ec;
  for (fs::recursive_directory_iterator it(m_staging, ec), end; !ec && it != end;
       it.increment(ec)) {
    const fs::path relative = it->path().lexically_relative(m_staging);
    const size_t parent = index.at(relative.parent_path());
    const std::string name = relative.filename().string();
    const fs::file_type type = it->symlink_status(ec).type();
    if (type == fs::file_type::directory) {
      Place p;
      p.relative = relative;
      p.staged = Fd(::openat(places[parent].staged.get(), name.c_str(),
                             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (p.staged.get() < 0) fail_errno(m_staging, "open", errno);
      if (places[parent].target.get() >= 0) {
        p.target =
            open_folder_at(places[parent].target.get(), name, shown(m_out, relative), &p.make);
      } else {
        p.make = true;  // below a folder still to be made
      }
      index[relative] = places.size();
      places.push_back(std::move(p));
    } else {
      // A file may replace a file or a link (the link itself, never what it points to), not
      // a folder: that would fail half way through the renames.
      const int target = places[parent].target.get();
      struct stat st {};
      if (target >= 0 && ::fstatat(target, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISDIR(st.st_mode))
        fail(shown(m_out, relative),
             "cannot write: is a directory, where the export writes a file");
      files.emplace_back(parent, name);
    }
  }
  if (ec) fail(m_staging, "cannot list the staged export (" + ec.message() + ")");

  // Every place is known good: the data made durable once, then only renames.
  if (::syncfs(places[0].staged.get()) != 0) fail_errno(m_out, "write", errno);
  for (size_t i = 1; i < places.size(); ++i) {
    Place& p = places[i];
    if (!p.make) continue;
    const size_t parent = index.at(p.relative.parent_path());
    const std::string name = p.relative.filename().string();
    const std::string where = shown(m_out, p.relative);
    if (::mkdirat(places[parent].target.get(), name.c_str(), 0777) != 0 && errno != EEXIST)
      fail_errno(where, "create", errno);
    bool missing = false;
    p.target = open_folder_at(places[parent].target.get(), name, where, &missing);
    if (missing) fail_errno(where, "create", ENOENT);
  }
  for (const auto& [place, name] : files) {
    const Place& p = places[place];
    if (::renameat(p.staged.get(), name.c_str(), p.target.get(), name.c_str()) != 0)
      fail_errno(shown(m_out, p.relative / name), "replace file", errno);
  }
  for (const Place& p : places) ::fsync(p.target.get());  // best effort
  m_committed = true;
  std::error_code ignored;
  fs::remove_all(m_staging, ignored);  // empty folders now
}

}  // namespace shardlens
