// Every reader given a path refuses what is not a regular file with a message naming the
// path and what it is, instead of blocking on a FIFO forever (a FIFO as scenario,
// CSV, IDX, names file, .npy, dump or run file hung the CLI and kept the GUI's window away).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <span>
#include <string>
#include <vector>

#include "core/evaluation/scenario.h"
#include "core/io/csv.h"
#include "core/io/files.h"
#include "core/io/idx.h"
#include "core/io/npy.h"
#include "core/io/npz.h"
#include "core/io/sha256.h"
#include "core/runfile/runfile.h"
#include "core/vocabulary/types.h"

namespace shardlens {
namespace {

struct Reader {
  const char* name;
  std::function<void(const std::string&)> read;
};

const std::vector<Reader>& readers() {
  static const std::vector<Reader> all = {
      {"bytes", [](const std::string& p) { read_file_bytes(p); }},
      {"csv", [](const std::string& p) { read_csv(p); }},
      {"idx", [](const std::string& p) { read_idx_labels(p); }},
      {"npy", [](const std::string& p) { read_npy_integers(p); }},
      {"npy_column",
       [](const std::string& p) {
         read_npy_integer_column(p, [](size_t, size_t, std::span<const int64_t>) {});
       }},
      {"npz", [](const std::string& p) { NpzArchive::open_file(p); }},
      {"names", [](const std::string& p) { read_class_names(p); }},
      {"scenario", [](const std::string& p) { load_scenario_file(p); }},
      {"run_file", [](const std::string& p) { load_run_file(p); }},
      {"sha256", [](const std::string& p) { sha256_file_hex(p); }},
  };
  return all;
}

class NonRegular : public ::testing::TestWithParam<const Reader*> {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("shardlens-nonregular-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The reader's error on `path`, failing the test if it took more than a few seconds (a
  // blocked open is left behind on its thread; the test has failed by then).
  std::string errorOf(const std::string& path) {
    auto result = std::async(std::launch::async, [&]() -> std::string {
      try {
        GetParam()->read(path);
      } catch (const InputError& e) {
        return e.what();
      } catch (const std::exception& e) {
        return std::string("not an InputError: ") + e.what();
      }
      return "accepted";
    });
    if (result.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
      ADD_FAILURE() << GetParam()->name << " blocked on " << path;
      std::_Exit(1);  // the reader's thread cannot be joined
    }
    return result.get();
  }

  std::filesystem::path dir_;
};

TEST_P(NonRegular, FifoIsRefusedWithoutBlocking) {
  const std::string fifo = (dir_ / "labels.fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string error = errorOf(fifo);
  EXPECT_NE(error.find(fifo), std::string::npos) << error;
  EXPECT_NE(error.find("FIFO"), std::string::npos) << error;
}

TEST_P(NonRegular, DirectoryIsRefused) {
  const std::string error = errorOf(dir_.string());
  EXPECT_NE(error.find("directory"), std::string::npos) << error;
}

TEST_P(NonRegular, SocketIsRefused) {
  const std::string path = (dir_ / "s.sock").string();
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof addr.sun_path);
  std::copy(path.begin(), path.end(), addr.sun_path);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string error = errorOf(path);
  ::close(fd);
  EXPECT_NE(error.find("socket"), std::string::npos) << error;
}

TEST_P(NonRegular, CharacterDeviceIsRefused) {
  // /dev/zero never ends: read to the end, it would fill the memory budget.
  const std::string error = errorOf("/dev/zero");
  EXPECT_NE(error.find("character device"), std::string::npos) << error;
}

std::vector<const Reader*> readerRows() {
  std::vector<const Reader*> rows;
  for (const Reader& r : readers()) rows.push_back(&r);
  return rows;
}

INSTANTIATE_TEST_SUITE_P(Readers, NonRegular, ::testing::ValuesIn(readerRows()),
                         [](const auto& info) { return std::string(info.param->name); });

}  // namespace
}  // namespace shardlens
