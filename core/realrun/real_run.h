#pragma once
// Real multi-rank evaluations (`shardlens-cli run`): a TorchScript model over an image
// dataset, W rank processes talking through ProcessGroupGloo (or NCCL with the CUDA kernel,
// `--backend nccl`). No LibTorch types leak out of this header.
//
// Modes, chosen from the environment:
//  - launcher (no RANK/WORLD_SIZE): creates the store, starts W copies of this command as
//    rank processes, waits for them, assembles the run file from what the ranks published
//    to the store, and names any rank that failed (exit status or signal). The store is a
//    c10d FileStore in a private directory (0700, removed afterwards), so nothing listens
//    on the network: LibTorch 1.13's TCPStore server binds every interface whatever address
//    it is given. Only when the user names --master-addr or --master-port is it a TCPStore;
//  - rank under the launcher (SHARDLENS_LAUNCHER=1 plus the torchrun variables and
//    SHARDLENS_STORE_FILE when the store is a file);
//  - rank under torchrun or any launcher (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
//    MASTER_PORT): rank 0 hosts a TCPStore on the address the user gave and assembles the
//    run file.
// Each rank uses the engine's exact sampler and loader, publishes its records and matrix to
// the store, then performs the sync strategy with real collectives. All of that is
// rank_launcher.h, rank_loop.h, rank_sync.h and rank_protocol.h (no LibTorch); real_run()
// itself, with the c10d stores, Gloo and the TorchScript model, is in the LibTorch plugin.
#include <optional>
#include <string>

#include "core/evaluation/scenario.h"
#include "core/runfile/runfile.h"
#include "core/vocabulary/progress.h"

namespace shardlens {

struct RealRunConfig {
  Scenario scenario;
  std::string model_path;
  std::string images_path;                // empty: derived from the dataset spec
  int timeout_s = 60;                     // bounds every collective and store wait
  std::string master_addr = "127.0.0.1";  // TCPStore address (store_address_given only)
  int master_port = 0;                    // 0: any free port (launcher mode)
  bool world_size_given = false;          // --world-size was given (checked against WORLD_SIZE)
  bool store_address_given = false;       // --master-addr/--master-port: a TCPStore there
  std::string backend = "gloo";           // "gloo" or "nccl" (CUDA builds; device LOCAL_RANK)
  std::string iface;  // --iface: the interface Gloo binds (else GLOO_SOCKET_IFNAME, else the
                      // one that routes to MASTER_ADDR; core/platform/bind_address.h)
};

struct RealRunResult {
  bool reporter = false;       // this process holds the assembled run (launcher or rank 0)
  std::optional<RunFile> run;  // the run (incomplete when a rank failed), reporter only
  std::string error;           // non-empty when the run failed; names the failed rank(s)
};

// Runs this process's part. Throws InputError for bad input found before any rank starts.
RealRunResult real_run(const RealRunConfig& config, Progress* progress = nullptr);

}  // namespace shardlens
