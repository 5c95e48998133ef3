#pragma once
// POSIX descriptors and errno messages for the writers of core/io. Not part of the public API.
#include <unistd.h>

#include <cstring>
#include <string>

#include "core/io/detail.h"

namespace shardlens::io_detail {

// "PATH: cannot ACTION (reason)". Built by appending: GCC 12 warns falsely (-Wrestrict,
// PR105329) on "literal" + std::string here.
[[noreturn]] inline void fail_errno(const std::string& path, const char* action, int err) {
  std::string what = "cannot ";
  what += action;
  what += " (";
  what += std::strerror(err);
  what += ")";
  fail(path, what);
}

// Closes a POSIX descriptor on every exit path.
class Fd {
 public:
  explicit Fd(int fd = -1) : m_fd(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& other) noexcept : m_fd(other.m_fd) { other.m_fd = -1; }
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      if (m_fd >= 0) ::close(m_fd);
      m_fd = other.m_fd;
      other.m_fd = -1;
    }
    return *this;
  }
  ~Fd() {
    if (m_fd >= 0) ::close(m_fd);
  }
  int get() const { return m_fd; }
  // Closes now so that a failing close (delayed write error) can be reported.
  int close_now() {
    const int rc = ::close(m_fd);
    m_fd = -1;
    return rc;
  }

 private:
  int m_fd;
};

}  // namespace shardlens::io_detail
