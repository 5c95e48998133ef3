#pragma once
// What a real run needs from LibTorch (and CUDA), as interfaces without their types: the
// collectives a sync strategy performs, how a batch is classified and counted, and where the
// stores come from. core/torch implements them (c10d stores, ProcessGroupGloo, NCCL, the
// TorchScript model); tests implement them in memory.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/realrun/rank_protocol.h"
#include "core/vocabulary/counter.h"

namespace shardlens {

// Collectives across every rank of the run. `what` names the step in error messages.
// Implementations throw std::exception subclasses on failure or timeout.
class RankCollectives {
 public:
  virtual ~RankCollectives() = default;
  // Every rank's vector (all of the same length) concatenated in rank order.
  virtual std::vector<double> all_gather(const std::vector<double>& mine, const char* what) = 0;
  virtual std::vector<int64_t> all_gather(const std::vector<int64_t>& mine, const char* what) = 0;
  virtual void all_reduce_sum(std::vector<double>& values, const char* what) = 0;
  virtual void all_reduce_sum(std::vector<int64_t>& values, const char* what) = 0;
  // Sums a counter matrix over ranks as a tensor of the float `dtype` on the wire, so the
  // collective's own summation order and rounding apply, as they do to a torchmetrics state
  // kept in that dtype. Returns false, values unchanged, when the backend has no sum for the
  // dtype (LibTorch 1.13's Gloo rejects bfloat16).
  virtual bool all_reduce_sum(std::vector<double>& values, CounterDtype dtype,
                              const char* what) = 0;
};

// Counts one batch: cells (C x C, row-major) += pairs, skipping target == ignore_index.
// Without one, the rank counts on the CPU.
class BatchCounter {
 public:
  virtual ~BatchCounter() = default;
  virtual void count(const std::vector<int32_t>& targets, const std::vector<int32_t>& predictions,
                     int32_t ignore_index, std::vector<double>& cells) = 0;
};

// The model of a real run: predicted classes of `count` images of rows x cols bytes each.
// Throws InputError when the model does not fit the data (its output is not [count, classes]).
class BatchClassifier {
 public:
  virtual ~BatchClassifier() = default;
  virtual std::vector<int32_t> predict(const uint8_t* pixels, int64_t count, int32_t rows,
                                       int32_t cols, int32_t classes) = 0;
};

// One rank's backend once connected: its collectives, and its batch counter (null: count
// on the CPU).
struct RankBackend {
  std::unique_ptr<RankCollectives> collectives;
  std::unique_ptr<BatchCounter> counter;
};

// What a backend needs to connect one rank to the others.
struct RankConnection {
  std::shared_ptr<RankStore> store;  // the run's store; a backend adds its own prefix
  int rank = 0;
  int world = 1;
  int local_rank = 0;  // the CUDA device of --backend nccl
  int timeout_s = 60;  // bounds every collective
  int32_t classes = 0;
  // The address this rank's Gloo pairs bind and advertise (core/platform/bind_address.h).
  std::string bind_address = "127.0.0.1";
};

// Everything of LibTorch a real run uses (core/torch fills it in). Each function throws
// std::exception subclasses on failure; InputError for bad input.
struct RealRunServices {
  std::string torch_version;  // recorded in the run files assembled
  // The store in the file `path` (c10d FileStore), shared by every process opening it.
  std::function<std::shared_ptr<RankStore>(const std::string& path, int timeout_s)> open_file_store;
  // A TCP store at addr:port, hosted by this process when `server` (port 0: any free one),
  // accepting what `limits` allow (run_store_limits); *bound_port, when given, receives the
  // port it uses.
  std::function<std::shared_ptr<RankStore>(const std::string& addr, int port, bool server,
                                           int timeout_s, int* bound_port,
                                           const StoreLimits& limits)>
      open_tcp_store;
  // Loads the model (checks it, in the launcher, before any rank starts).
  std::function<std::unique_ptr<BatchClassifier>(const std::string& path)> load_model;
  // Throws InputError when `backend` cannot run `world` ranks on this machine (launcher), or
  // rank LOCAL_RANK = `local_rank` (a rank), before anything starts.
  std::function<void(const std::string& backend, int world)> check_launch;
  std::function<void(const std::string& backend, int local_rank)> check_rank;
  // Connects this rank to the others over `backend`.
  std::function<RankBackend(const std::string& backend, const RankConnection& connection)> connect;
};

}  // namespace shardlens
