#include "core/io/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>

#include "core/io/detail.h"
#include "core/io/posix_fd.h"
#include "core/vocabulary/limits.h"
#include "core/vocabulary/memory_budget.h"

namespace shardlens {
namespace {

using io_detail::fail;
using io_detail::fail_errno;
using io_detail::Fd;

std::string limit_text(size_t bytes) {
  return std::to_string(bytes) + "-byte limit";
}

// Reads until EOF, never holding more than max_bytes + 1 bytes, so a file that grows while
// it is read (or a pipe) cannot exhaust memory.
void read_all(int fd, const std::string& path, size_t max_bytes, std::string& out) {
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_errno(path, "read", errno);
    }
    if (n == 0) return;
    if (out.size() + size_t(n) > max_bytes) fail(path, "file exceeds the " + limit_text(max_bytes));
    if (out.size() + size_t(n) > out.capacity())  // a pipe or a growing file: bound it too
      check_load_budget(path, out.size() + size_t(n), "what has been read so far");
    out.append(chunk, size_t(n));
  }
}

std::string random_suffix() {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  // Seeded once: a std::random_device per name opened the kernel's source for each of the
  // 131,084 files of a 65,536-rank export. O_EXCL, not the name, makes the file ours.
  thread_local std::mt19937_64 generator{std::random_device{}()};
  std::string s(8, 'x');
  for (char& c : s) c = kAlphabet[generator() % (sizeof kAlphabet - 1)];
  return s;
}

// Creates PATH.tmp-XXXXXXXX next to the target (same filesystem, so rename is atomic).
// O_EXCL rather than mkstemp because mkstemp forces mode 0600 and we want the umask's.
std::string create_temp(const std::string& path, int* fd_out) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string tmp = path + ".tmp-" + random_suffix();
    const int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      *fd_out = fd;
      return tmp;
    }
    if (errno != EEXIST) fail_errno(path, "write", errno);
  }
  fail(path, "cannot write (no free temporary file name)");
}

void write_all(int fd, const std::string& path, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_errno(path, "write", errno);
    }
    done += size_t(n);
  }
}

// The data must be on disk before the rename makes it visible, or a crash could leave a
// complete-looking but empty file; the directory sync makes the rename itself durable.
void sync_and_rename(Fd& fd, const std::string& tmp, const std::string& path) {
  if (::fsync(fd.get()) != 0 || fd.close_now() != 0) fail_errno(path, "write", errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail_errno(path, "replace file", errno);
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);  // Best effort: some filesystems do not support syncing directories.
    ::close(dfd);
  }
}

// Length of the valid UTF-8 sequence starting at p[0], or 0 if it is invalid.
size_t utf8_sequence_length(const unsigned char* p, size_t avail) {
  const unsigned char c = p[0];
  if (c < 0x80) return 1;
  size_t len = 0;
  uint32_t cp = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;  // Continuation byte, overlong lead (C0/C1) or beyond U+10FFFF (F5..FF).
  }
  if (avail < len) return 0;
  for (size_t i = 1; i < len; ++i) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  if (len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) return 0;
  if (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) return 0;
  return len;
}

std::string_view trim(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

namespace io_detail {

std::string quote_excerpt(std::string_view text, size_t max_chars) {
  std::string out = "'";
  size_t i = 0;
  while (i < text.size() && i < max_chars) {
    const auto* p = reinterpret_cast<const unsigned char*>(text.data() + i);
    const size_t len = utf8_sequence_length(p, text.size() - i);
    if (len == 1 && *p >= 0x20 && *p != 0x7F) {
      out += char(*p);
    } else if (len > 1) {
      out.append(text.data() + i, len);
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[*p >> 4];
      out += kHex[*p & 0xF];
      i += 1;
      continue;
    }
    i += len;
  }
  out += "'";
  if (i < text.size()) out += "...";
  return out;
}

}  // namespace io_detail

namespace {

std::string kind_of(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "a special file";
}

[[noreturn]] void fail_not_regular(const std::string& path, mode_t mode) {
  fail(path, "cannot read: is " + kind_of(mode) + ", not a regular file");
}

// Opened without blocking (a FIFO without a writer would block the open itself), then
// refused unless regular; O_NONBLOCK changes nothing for a regular file's reads.
Fd open_regular(const std::string& path, struct stat& st) {
  // Named before opening: a socket cannot be opened at all ("No such device or address").
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) fail_not_regular(path, st.st_mode);
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) fail_errno(path, "open", errno);
  if (::fstat(fd.get(), &st) != 0) fail_errno(path, "open", errno);
  if (!S_ISREG(st.st_mode)) fail_not_regular(path, st.st_mode);
  return fd;
}

}  // namespace

void require_regular_file(const std::string& path) {
  struct stat st {};
  open_regular(path, st);
}

namespace {

bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// Whether the file `input` (its real path: a symlink's target is what a write destroys)
// lies in the directory `dir` or below it.
bool lies_in(const std::string& input, const struct stat& dir) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::canonical(input, ec);
  if (ec) return false;
  while (p.has_relative_path()) {
    p = p.parent_path();
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0 && same_file(st, dir)) return true;
  }
  return false;
}

}  // namespace

void require_output(const std::string& out, OutputKind kind, const std::vector<std::string>& inputs,
                    const std::function<bool(const std::string& file_name)>& writes) {
  struct stat target {};
  const bool exists = ::stat(out.c_str(), &target) == 0;  // through a symlink, as a write goes
  if (exists) {
    const bool fits = kind == OutputKind::File ? S_ISREG(target.st_mode) : S_ISDIR(target.st_mode);
    if (!fits)
      fail(out, "cannot write: is " + kind_of(target.st_mode) + ", not " +
                    (kind == OutputKind::File ? "a regular file" : "a directory"));
  }
  for (const std::string& input : inputs) {
    struct stat in {};
    if (!exists || input.empty() || ::stat(input.c_str(), &in) != 0) continue;
    if (same_file(in, target))
      fail(out, "cannot write: it is the input " + input + ", which writing would destroy");
    if (kind == OutputKind::Directory && writes) {
      std::error_code ec;
      const std::string name = std::filesystem::canonical(input, ec).filename().string();
      if (!ec && writes(name) && lies_in(input, target))
        fail(out, "cannot write: the input " + input + " lies in it, and the files written " +
                      "there include a '" + name + "', which would replace it");
    }
  }
}

std::string read_file_bytes(const std::string& path, size_t max_bytes) {
  struct stat st {};
  Fd fd = open_regular(path, st);
  std::string out;
  if (uint64_t(st.st_size) > max_bytes)
    fail(path, "file is " + std::to_string(st.st_size) + " bytes, more than the " +
                   limit_text(max_bytes));
  check_load_budget(path, uint64_t(st.st_size), "the file's bytes");
  out.reserve(size_t(st.st_size));  // Checked against the limit and the budget just above.
  read_all(fd.get(), path, max_bytes, out);
  if (out.empty()) fail(path, "empty file");
  return out;
}

bool is_gzip(std::string_view data) {
  return data.size() >= 2 && uint8_t(data[0]) == 0x1F && uint8_t(data[1]) == 0x8B;
}

std::string gunzip(const std::string& data, const std::string& origin, size_t max_bytes,
                   GunzipLimit on_limit) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) fail(origin, "cannot start gzip decompression");
  struct Guard {
    z_stream* z;
    ~Guard() { inflateEnd(z); }
  } guard{&zs};

  // Inflated chunk by chunk into the result: what is allocated grows with the data that
  // really comes out, and the first byte past max_bytes stops it.
  std::string out;
  char chunk[1 << 16];
  size_t in_pos = 0;
  for (;;) {
    // avail_in is 32-bit; feed large inputs in pieces.
    if (zs.avail_in == 0 && in_pos < data.size()) {
      const size_t n = std::min<size_t>(data.size() - in_pos, size_t(1) << 30);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + in_pos));
      zs.avail_in = uInt(n);
      in_pos += n;
    }
    zs.next_out = reinterpret_cast<Bytef*>(chunk);
    zs.avail_out = sizeof chunk;
    const int rc = inflate(&zs, Z_NO_FLUSH);
    const size_t produced = sizeof chunk - zs.avail_out;
    if (out.size() + produced > max_bytes) {
      if (on_limit == GunzipLimit::kPrefix) {
        out.append(chunk, max_bytes - out.size());
        return out;
      }
      if (on_limit == GunzipLimit::kTrailing)
        fail(origin, "decompressed data holds more than the " + std::to_string(max_bytes) +
                         " bytes its header announces");
      fail(origin, "decompressed data exceeds the " + limit_text(max_bytes));
    }
    if (out.size() + produced > out.capacity())
      check_load_budget(origin, out.size() + produced, "its decompressed data so far");
    out.append(chunk, produced);
    if (rc == Z_STREAM_END) {
      const size_t rest = zs.avail_in + (data.size() - in_pos);
      if (rest == 0) break;
      // gzip allows several members back to back; anything else after the stream is junk.
      const size_t at = data.size() - rest;
      if (!is_gzip(std::string_view(data).substr(at)))
        fail(origin, std::to_string(rest) + " bytes of trailing data after the gzip stream");
      inflateReset(&zs);
      continue;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR && zs.avail_in == 0 && in_pos == data.size()) {
      if (on_limit == GunzipLimit::kPrefix) return out;  // shorter than the prefix asked for
      fail(origin, "truncated gzip data");
    }
    if (rc == Z_BUF_ERROR) continue;  // Output chunk was full; go around again.
    fail(origin, std::string("corrupt gzip data (") + (zs.msg ? zs.msg : "inflate error") + ")");
  }
  return out;
}

std::string maybe_gunzip(const std::string& data, const std::string& origin, size_t max_bytes) {
  if (!is_gzip(data)) return data;
  return gunzip(data, origin, max_bytes, GunzipLimit::kFail);
}

void write_file_atomic(const std::string& path, const std::string& bytes) {
  int raw_fd = -1;
  const std::string tmp = create_temp(path, &raw_fd);
  Fd fd(raw_fd);
  try {
    write_all(fd.get(), path, bytes);
    sync_and_rename(fd, tmp, path);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
}

void write_file_atomic_with(const std::string& path,
                            const std::function<void(const std::string& tmp_path)>& fill) {
  int raw_fd = -1;
  const std::string tmp = create_temp(path, &raw_fd);
  ::close(raw_fd);  // `fill` may replace the file (libzip writes its own temp and renames).
  try {
    fill(tmp);
    Fd fd(::open(tmp.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) fail_errno(path, "write", errno);
    sync_and_rename(fd, tmp, path);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
}

AtomicFileSet::~AtomicFileSet() {
  for (const Pending& p : m_pending) ::unlink(p.temporary.c_str());
}

void AtomicFileSet::add(const std::string& path, const std::string& bytes) {
  int raw_fd = -1;
  std::string tmp = create_temp(path, &raw_fd);
  m_pending.push_back({tmp, path});  // removed by the destructor unless committed
  Fd fd(raw_fd);
  write_all(fd.get(), path, bytes);
  if (fd.close_now() != 0) fail_errno(path, "write", errno);
}

void AtomicFileSet::commit() {
  if (m_pending.empty()) return;
  // One sync of the filesystem that holds them (syncfs reports their writeback errors since
  // Linux 5.8), then the renames: no target can become a complete-looking empty file.
  {
    const std::string& first = m_pending.front().temporary;
    Fd fd(::open(first.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0 || ::syncfs(fd.get()) != 0)
      fail_errno(m_pending.front().target, "write", errno);
  }
  std::set<std::filesystem::path> directories;
  for (size_t i = 0; i < m_pending.size(); ++i) {
    const Pending& p = m_pending[i];
    if (::rename(p.temporary.c_str(), p.target.c_str()) != 0) {
      const int error = errno;
      const std::string target = p.target;
      m_pending.erase(m_pending.begin(), m_pending.begin() + long(i));  // those are in place
      fail_errno(target, "replace file", error);
    }
    std::filesystem::path dir = std::filesystem::path(p.target).parent_path();
    directories.insert(dir.empty() ? std::filesystem::path(".") : dir);
  }
  m_pending.clear();
  for (const auto& dir : directories) {
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      ::fsync(dfd);  // Best effort, as in sync_and_rename.
      ::close(dfd);
    }
  }
}

size_t invalid_utf8_offset(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto* p = reinterpret_cast<const unsigned char*>(text.data() + i);
    const size_t len = utf8_sequence_length(p, text.size() - i);
    if (len == 0) return i;
    i += len;
  }
  return std::string_view::npos;
}

std::vector<std::string> read_class_names(const std::string& path) {
  std::string_view text;
  const std::string bytes = read_file_bytes(path, kMaxClassNamesFileBytes);
  text = bytes;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);

  std::vector<std::string> names;
  size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    const size_t bad = invalid_utf8_offset(line);
    if (bad != std::string_view::npos)
      fail(path, "line " + std::to_string(line_no) + ": not valid UTF-8 (byte " +
                     std::to_string(bad + 1) + ")");
    line = trim(line);
    if (line.empty()) continue;
    if (std::any_of(line.begin(), line.end(), [](char c) { return uint8_t(c) < 0x20; }))
      fail(path, "line " + std::to_string(line_no) + ": control character in class name");
    if (line.size() > kMaxClassNameBytes)
      fail(path, "line " + std::to_string(line_no) + ": class name of " +
                     std::to_string(line.size()) + " bytes, more than the " +
                     std::to_string(kMaxClassNameBytes) + " a name may have");
    names.emplace_back(line);
  }
  if (names.empty()) fail(path, "no class names (only blank lines)");
  return names;
}

}  // namespace shardlens
