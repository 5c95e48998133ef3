// `shardlens-cli run --backend nccl` as a user runs it: on a CPU-only machine one clear line
// and exit 2; with >= 2 GPUs the same per-rank and synced matrices as the Gloo run.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "tests/common/run_command.h"

#include "tests/cuda/gpu_test.h"

namespace {

using Result = shardlens::test::CommandResult;

Result run_cli(const std::string& args) {
  // Local-launcher mode: torchrun variables from the caller's shell would change the mode.
  return shardlens::test::run_command(
      "env -u RANK -u WORLD_SIZE -u LOCAL_RANK -u MASTER_ADDR -u MASTER_PORT " +
      std::string(SHARDLENS_CLI) + " " + args);
}

TEST(CliNccl, WithoutAGpuOneLineAndExit2) {
  std::string why;
  if (shardlens::cuda::device_count(&why) > 0) GTEST_SKIP() << "this machine has a GPU";
  const Result r = run_cli("run --backend nccl --world-size 2");
  // A build without LibTorch (the GPU check falls back to one where the machine's LibTorch
  // fails) says that first, before any backend is looked at.
  if (r.err.find("no LibTorch support") != std::string::npos) GTEST_SKIP() << r.err;
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("shardlens-cli: --backend nccl: no CUDA device available", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(CliNccl, TooManyRanksForTheDevices) {
  SHARDLENS_REQUIRE_GPUS(1);
  const int have = shardlens::cuda::device_count();
  const Result r = run_cli("run --backend nccl --world-size " + std::to_string(have + 1));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("one CUDA device per rank"), std::string::npos) << r.err;
}

void put_be32(std::ofstream& out, uint32_t v) {
  const char b[4] = {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
  out.write(b, 4);
}

// A self-contained IDX dataset (n noise images of 28 x 28 with labels i % 10), so the test
// needs no Fashion-MNIST install; the reference model still predicts deterministically.
std::string write_idx_dataset(int n) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("shardlens-cuda-idx-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream labels(dir / "noise-labels-idx1-ubyte", std::ios::binary);
  put_be32(labels, 0x00000801);
  put_be32(labels, uint32_t(n));
  std::ofstream images(dir / "noise-images-idx3-ubyte", std::ios::binary);
  put_be32(images, 0x00000803);
  put_be32(images, uint32_t(n));
  put_be32(images, 28);
  put_be32(images, 28);
  std::mt19937 rng(2024);
  for (int i = 0; i < n; ++i) {
    labels.put(char(i % 10));
    for (int k = 0; k < 28 * 28; ++k) images.put(char(rng() & 0xff));
  }
  return (dir / "noise-labels-idx1-ubyte").string();
}

// Same settings, Gloo then NCCL on `world` ranks: identical per-rank and synced matrices.
// Several sync strategies and counter dtypes, since each takes a different path through the
// collectives and the CUDA batch counter.
void expect_nccl_equals_gloo(int world) {
  const std::string labels = write_idx_dataset(2999);
  struct Cleanup {
    std::filesystem::path dir;
    ~Cleanup() { std::filesystem::remove_all(dir); }
  } cleanup{std::filesystem::path(labels).parent_path()};
  const std::string common = "run --world-size " + std::to_string(world) +
                             " --batch-size 256 --format json --timeout 120 " +
                             std::string("--dataset idx:") + labels + " ";
  for (const std::string extra :
       {"", "--sync gather-zero-pad", "--sync normalize-then-sum", "--counter-dtype float16",
        "--counter-dtype bfloat16", "--counter-dtype float32 --sync double",
        "--sync double --ignore-index 3"}) {
    const Result gloo = run_cli(common + extra + " --backend gloo");
    if (gloo.err.find("no LibTorch") != std::string::npos) GTEST_SKIP() << gloo.err;
    const Result nccl = run_cli(common + extra + " --backend nccl");
    ASSERT_EQ(gloo.code, 0) << extra << ": " << gloo.err;
    ASSERT_EQ(nccl.code, 0) << extra << ": " << nccl.err;
    const auto a = nlohmann::json::parse(gloo.out);
    const auto b = nlohmann::json::parse(nccl.out);
    EXPECT_EQ(a.at("per_rank"), b.at("per_rank")) << extra;
    EXPECT_EQ(a.at("synced"), b.at("synced")) << extra;
  }
}

TEST(CliNccl, TwoRanksEqualGloo) {
  SHARDLENS_REQUIRE_GPUS(2);
  expect_nccl_equals_gloo(2);
}

// One GPU (the lent machine has one): NCCL's single-rank communicator and the CUDA batch
// counter against Gloo's CPU counting.
TEST(CliNccl, OneRankEqualsGloo) {
  SHARDLENS_REQUIRE_GPUS(1);
  expect_nccl_equals_gloo(1);
}

}  // namespace
