#pragma once
// Helpers for the core/io tests: a scratch directory, fixture writing, and the numpy oracle.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "core/vocabulary/types.h"

namespace shardlens::io_test {

// A fresh directory under $TMPDIR, removed with everything in it when the test ends.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "shardlens-io-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    m_path = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
  std::string path(const std::string& name) const { return (m_path / name).string(); }
  const std::filesystem::path& dir() const { return m_path; }

 private:
  std::filesystem::path m_path;
};

// `data` as one gzip member (what gzip(1) writes), for the readers' gzip paths.
inline std::string gzip(const std::string& data) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, uLong(data.size())) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = uInt(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = uInt(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out) throw std::runtime_error("cannot write fixture " + path);
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline std::string be32(uint32_t v) {
  return {char(v >> 24), char((v >> 16) & 0xFF), char((v >> 8) & 0xFF), char(v & 0xFF)};
}

// Runs `f` and returns the InputError message; fails the test if nothing (or something
// else) is thrown.
template <typename F>
std::string input_error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected InputError, got another exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected InputError, nothing was thrown";
  return {};
}

// Asserts an InputError whose message starts with `origin` and contains `fragment`.
#define EXPECT_INPUT_ERROR(stmt, origin, fragment)                                            \
  do {                                                                                        \
    const std::string msg_ = ::shardlens::io_test::input_error_of([&] { (void)(stmt); });     \
    EXPECT_EQ(msg_.rfind(origin, 0), 0u) << "message does not start with the file: " << msg_; \
    EXPECT_NE(msg_.find(fragment), std::string::npos) << "message: " << msg_;                 \
  } while (0)

// Small random edits (byte flips, cuts, insertions of syntax characters) for robustness
// tests: readers must answer every variant with a value or an InputError, never a crash.
inline std::string mutate(std::string s, std::mt19937& rng) {
  static const char* const kTokens[] = {"(",  ")",  ",",    "'", "-", "99999999999", "True",
                                        "\"", "\n", "\xff", "{", "}", "\x00"};
  const int edits = 1 + int(rng() % 4);
  for (int k = 0; k < edits; ++k) {
    if (s.empty()) s = "x";
    const size_t at = rng() % s.size();
    switch (rng() % 4) {
      case 0:
        s[at] = char(rng());
        break;
      case 1:
        s.resize(at);
        break;
      case 2:
        s.insert(at, 1, char(rng()));
        break;
      default:
        s.insert(at, kTokens[rng() % std::size(kTokens)]);
        break;
    }
  }
  return s;
}

// Runs `read` on `iterations` mutations of `seed`; returns how many were accepted.
template <typename F>
int survive_mutations(const std::string& seed, int iterations, F&& read) {
  std::mt19937 rng(12345);
  int accepted = 0;
  for (int i = 0; i < iterations; ++i) {
    const std::string input = mutate(seed, rng);
    try {
      read(input);
      ++accepted;
    } catch (const InputError&) {
    }
  }
  return accepted;
}

inline bool python_has_numpy() {
  static const bool has = std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
  return has;
}

// Runs a Python script (written to `dir`) with /usr/bin/python3; returns its exit status.
inline int run_python(const TempDir& dir, const std::string& script) {
  const std::string file = dir.path("oracle.py");
  write_bytes(file, script);
  const std::string cmd = "cd '" + dir.dir().string() + "' && /usr/bin/python3 '" + file + "'";
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

#define SKIP_WITHOUT_NUMPY()                                                        \
  do {                                                                              \
    if (!::shardlens::io_test::python_has_numpy())                                  \
      GTEST_SKIP() << "numpy oracle skipped: /usr/bin/python3 cannot import numpy"; \
  } while (0)

}  // namespace shardlens::io_test
