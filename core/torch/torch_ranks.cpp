// The LibTorch side of a real run: c10d stores (FileStore by default, TCPStore when an
// address is given) behind RankStore, the TorchScript model behind BatchClassifier, and the
// backends by name (rank_backend.h). The launcher, the ranks' loop and the real
// synchronisation are core/realrun/rank_launcher.h, rank_loop.h and rank_sync.h.
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <chrono>
#include <cstdio>

#include "core/platform/launcher_env.h"
#include "core/realrun/rank_launcher.h"
#include "core/realrun/real_run.h"
#include "core/torch/c10d_store.h"
#include "core/torch/model.h"
#include "core/torch/rank_backend.h"
#include "core/torch/socket_c10d_store.h"

namespace shardlens {

namespace {

class TorchClassifier : public BatchClassifier {
 public:
  explicit TorchClassifier(const std::string& path) : m_model(path) {}
  std::vector<int32_t> predict(const uint8_t* pixels, int64_t count, int32_t rows, int32_t cols,
                               int32_t classes) override {
    return m_model.predict(pixels, count, rows, cols, classes);
  }

 private:
  TorchModel m_model;
};

std::shared_ptr<RankStore> open_file_store(const std::string& path, int timeout_s) {
  // numWorkers -1: no FileStore deletes the file on destruction; the launcher's private
  // directory does, once.
  auto store = c10::make_intrusive<c10d::FileStore>(path, -1);
  store->setTimeout(std::chrono::seconds(timeout_s));
  return std::make_shared<C10dStore>(store);
}

std::shared_ptr<RankStore> open_tcp_store(const std::string& addr, int port, bool server,
                                          int timeout_s, int* bound_port,
                                          const StoreLimits& limits) {
  const auto timeout = std::chrono::milliseconds(std::chrono::seconds(timeout_s));
  if (torchrun_agent_hosts_store(process_environment())) {
    // torchrun's agent already hosts a c10d TCPStore on MASTER_PORT: join it as a client,
    // under this restart's prefix as env:// does, so a restarted run never reads the keys
    // of the attempt before it.
    c10d::TCPStoreOptions opts;
    opts.port = static_cast<uint16_t>(port);
    opts.isServer = false;
    opts.waitWorkers = false;
    opts.timeout = timeout;
    auto store = c10::make_intrusive<c10d::TCPStore>(addr, opts);
    if (bound_port) *bound_port = port;
    const char* attempt = std::getenv("TORCHELASTIC_RESTART_COUNT");
    return std::make_shared<C10dStore>(c10::make_intrusive<c10d::PrefixStore>(
        std::string("/worker/attempt_") + (attempt && *attempt ? attempt : "0"), store));
  }
  // Our own store, listening on `addr` only (LibTorch's TCPStore server would bind every
  // interface); the clients, this process included, connect to the address it bound.
  // Authenticated with the run's secret: the one its processes were given (our launcher
  // always gives one), else one rank 0 makes and leaves for the ranks of its host in a file
  // only this user can read (HostSecretFile), written before the store listens.
  const std::optional<StoreSecret> given = store_secret_from_environment();
  StoreSecret secret = given.value_or(StoreSecret{});
  SocketStoreClient::FindSecret find_secret;
  std::shared_ptr<HostSecretFile> secret_file;
  std::shared_ptr<SocketStoreServer> host;
  std::string connect_to = addr;
  if (server) {
    if (!given && port > 0) {
      try {
        secret = make_store_secret();
        secret_file = std::make_shared<HostSecretFile>(secret, port);
        std::fprintf(stderr,
                     "shardlens: the store on %s:%d is authenticated with a secret in %s: ranks "
                     "on other hosts need it too (%s=FILE, a copy only you can read)\n",
                     addr.c_str(), port, secret_file->path().c_str(), kStoreSecretFileVariable);
      } catch (const std::exception& e) {
        secret.clear();
        std::fprintf(stderr,
                     "shardlens: note: the store on %s:%d is not authenticated (%s): any process "
                     "that reaches the port can read and change what the ranks publish. Give "
                     "every process of the run the same %s (a file only you can read) or %s\n",
                     addr.c_str(), port, e.what(), kStoreSecretFileVariable, kStoreSecretVariable);
      }
    }
    host = std::make_shared<SocketStoreServer>(addr, port, limits, secret);
    port = host->port();
    connect_to = host->address();
  } else if (!given) {
    find_secret = [port] { return read_host_secret(port); };
  }
  if (bound_port) *bound_port = port;
  return std::make_shared<C10dStore>(
      c10::make_intrusive<SocketC10dStore>(std::move(host), connect_to, port, timeout, secret,
                                           std::move(find_secret), std::move(secret_file)));
}

const RealRunServices& torch_services() {
  static const RealRunServices services = [] {
    RealRunServices s;
    s.torch_version = libtorch_version();
    s.open_file_store = &open_file_store;
    s.open_tcp_store = &open_tcp_store;
    s.load_model = [](const std::string& path) -> std::unique_ptr<BatchClassifier> {
      return std::make_unique<TorchClassifier>(path);
    };
    s.check_launch = &check_rank_backend_for_launch;
    s.check_rank = &check_rank_backend_for_rank;
    s.connect = &make_rank_backend;
    return s;
  }();
  return services;
}

}  // namespace

RealRunResult real_run(const RealRunConfig& config, Progress* progress) {
  return real_run_with(config, torch_services(), progress);
}

}  // namespace shardlens
