#include "core/realrun/rank_launcher.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>

#include "core/platform/bind_address.h"
#include "core/platform/launcher_env.h"
#include "core/platform/process.h"
#include "core/platform/store_auth.h"
#include "core/realrun/rank_loop.h"
#include "core/vocabulary/limits.h"
#include "core/vocabulary/types.h"

namespace shardlens {

namespace {

using Clock = std::chrono::steady_clock;

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

// A directory only this user can enter (mkdtemp: mode 0700), removed with its contents.
class PrivateDir {
 public:
  PrivateDir() {
    std::string path = env("TMPDIR").value_or("/tmp") + "/shardlens-run-XXXXXX";
    if (!mkdtemp(path.data())) {
      throw InputError("cannot create a private directory for the store (" + path +
                       "): " + std::strerror(errno));
    }
    m_path = path;
  }
  ~PrivateDir() {
    std::error_code ignored;
    std::filesystem::remove_all(m_path, ignored);
  }
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;
  const std::string& path() const { return m_path; }

 private:
  std::string m_path;
};

// SIGTERM, SIGINT or SIGHUP to the launcher cancels the run: its ranks are terminated and
// what they published is kept as an incomplete run (the GUI's Cancel sends SIGTERM).
volatile std::sig_atomic_t g_launch_cancelled = 0;

class CancelOnSignals {
 public:
  CancelOnSignals() {
    g_launch_cancelled = 0;
    struct sigaction action {};
    action.sa_handler = [](int) { g_launch_cancelled = 1; };
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &action, &m_old[i]);
  }
  ~CancelOnSignals() {
    for (size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &m_old[i], nullptr);
  }
  CancelOnSignals(const CancelOnSignals&) = delete;
  CancelOnSignals& operator=(const CancelOnSignals&) = delete;
  static bool cancelled() { return g_launch_cancelled != 0; }

 private:
  static constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP};
  struct sigaction m_old[std::size(kSignals)]{};
};

RealRunResult launch(const RealRunConfig& cfg, const RealRunServices& sv) {
  const CancelOnSignals cancel_on_signals;
  const int world = cfg.scenario.sampler.world_size;
  check_world_size(world, kMaxLocalWorldSize, "a local run");
  sv.check_launch(cfg.backend, world);            // e.g. "--backend nccl: no CUDA device available"
  const RunDataset data = load_run_dataset(cfg);  // bad input is reported before any rank starts
  sv.load_model(cfg.model_path);

  // Where the ranks meet. By default a file store in a private directory: no socket at all.
  // Declared before the stores so it is removed after they are closed.
  std::optional<PrivateDir> dir;
  std::shared_ptr<RankStore> server;
  std::vector<std::string> store_env;
  if (cfg.store_address_given) {
    // The store listens on a port any process of the host can reach: a new secret for this
    // run authenticates its ranks (inherited through the environment, never argv), unless
    // the user gave one.
    if (!store_secret_from_environment())
      ::setenv(kStoreSecretVariable, store_secret_text(make_store_secret()).c_str(), 1);
    int port = 0;
    try {
      server = sv.open_tcp_store(cfg.master_addr, cfg.master_port, true, cfg.timeout_s, &port,
                                 run_store_limits(data.labels.num_classes, data.labels.size(),
                                                  world, cfg.scenario.loader.batch_size));
    } catch (const std::exception& e) {
      throw InputError("cannot start the store on " + cfg.master_addr + ":" +
                       std::to_string(cfg.master_port) + " (" + first_line(e.what()) + ")");
    }
    store_env = {"MASTER_ADDR=" + cfg.master_addr, "MASTER_PORT=" + std::to_string(port)};
  } else {
    dir.emplace();
    const std::string path = dir->path() + "/store";
    const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0)
      throw InputError("cannot create the store file " + path + ": " + std::strerror(errno));
    ::close(fd);
    server = sv.open_file_store(path, cfg.timeout_s);
    // MASTER_ADDR still tells the ranks to bind Gloo to loopback.
    store_env = {"MASTER_ADDR=127.0.0.1", "SHARDLENS_STORE_FILE=" + path};
  }
  const std::shared_ptr<RankStore> store = server->prefixed(kRunStorePrefix);

  const std::vector<std::string> args = own_command_line();
  std::vector<std::unique_ptr<RankProcess>> ranks;
  for (int r = 0; r < world; ++r)
    ranks.push_back(spawn_rank("/proc/self/exe", args, r, world, store_env));
  const std::vector<RankEnd> ends =
      wait_for_ranks(ranks, std::chrono::seconds(cfg.timeout_s + 5), std::chrono::milliseconds(20),
                     &CancelOnSignals::cancelled);
  RankFailures failures = describe_rank_failures(*store, ends);
  if (CancelOnSignals::cancelled())
    failures.reason = "cancelled" + (failures.reason.empty() ? "" : ": " + failures.reason);

  RealRunResult result;
  result.reporter = true;
  result.run = assemble_run(*store, cfg, data.labels, world, failures, sv.torch_version);
  result.run->meta.launcher = "shardlens";
  result.error = failures.reason;
  return result;
}

// " (no records yet from ranks 2, 3)": the ranks other than `rank` that have published
// nothing, which a failed rank was most likely waiting for. Empty when there are none or the
// store cannot be asked.
std::string ranks_without_records(RankStore& store, int world, int rank) {
  std::vector<int> missing;
  for (int r = 0; r < world; ++r)
    if (r != rank && !has_key(store, key_records(r))) missing.push_back(r);
  if (missing.empty()) return "";
  std::string list;
  for (size_t i = 0; i < missing.size() && i < 16; ++i)
    list += (i ? ", " : "") + std::to_string(missing[i]);
  if (missing.size() > 16) list += " and " + std::to_string(missing.size() - 16) + " more";
  return std::string(" (no records yet from rank") + (missing.size() > 1 ? "s " : " ") + list + ")";
}

// A rank started by our launcher, torchrun, srun, mpirun or by hand.
RealRunResult run_as_rank(const RealRunConfig& cfg, const RealRunServices& sv,
                          const RankEnvironment& place, Progress* progress) {
  const int world = place.world;
  const int rank = place.rank;
  const bool under_launcher = place.launcher == "shardlens";
  const bool reporter = !under_launcher && rank == 0;  // rank 0 under torchrun assembles
  // A launcher that dies (killed, crashed) takes its ranks with it: no orphans.
  if (under_launcher && (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() == 1))
    throw RunFailure("rank " + std::to_string(rank) + ": its launcher is gone");
  if (cfg.world_size_given && cfg.scenario.sampler.world_size != world) {
    throw InputError("--world-size " + std::to_string(cfg.scenario.sampler.world_size) +
                     " disagrees with the launcher's world size " + std::to_string(world) + " (" +
                     place.launcher + ")");
  }
  const int local_rank = place.local_rank;
  sv.check_rank(cfg.backend, local_rank);
  const std::string addr = env("MASTER_ADDR").value_or("127.0.0.1");
  // Gloo's pairs (and NCCL's bootstrap) bind where peers on other hosts can reach them.
  std::string iface = cfg.iface;
  if (iface.empty()) {
    iface = env("GLOO_SOCKET_IFNAME").value_or("");
    iface = iface.substr(0, iface.find(','));  // torch accepts a list; the first is ours
  }
  const BindChoice bind = choose_bind_address(addr, iface);
  if (cfg.backend == "nccl" && !bind.interface.empty())
    ::setenv("NCCL_SOCKET_IFNAME", bind.interface.c_str(), 0);  // the user's own wins
  const RunDataset data = load_run_dataset(cfg);

  // Our launcher's file store (only trusted from it), else the TCP store torchrun's
  // variables name.
  const std::optional<std::string> store_file =
      under_launcher ? env("SHARDLENS_STORE_FILE") : std::nullopt;
  std::shared_ptr<RankStore> base;
  if (store_file) {
    try {
      base = sv.open_file_store(*store_file, cfg.timeout_s);
    } catch (const std::exception& e) {
      throw RunFailure("rank " + std::to_string(rank) + ": cannot open the store " + *store_file +
                       " (" + first_line(e.what()) + ")");
    }
  } else {
    const int port =
        env("MASTER_PORT") ? env_integer(process_environment(), "MASTER_PORT", 1, 65535) : 29500;
    try {
      // Rank 0 hosts the store, as env:// does, unless torchrun's agent already hosts it.
      const bool host = reporter && !torchrun_agent_hosts_store(process_environment());
      base = sv.open_tcp_store(addr, port, host, cfg.timeout_s, nullptr,
                               run_store_limits(data.labels.num_classes, data.labels.size(), world,
                                                cfg.scenario.loader.batch_size));
    } catch (const std::exception& e) {
      throw RunFailure("rank " + std::to_string(rank) + ": cannot reach the store at " + addr +
                       ":" + std::to_string(port) + " (" + first_line(e.what()) + ")");
    }
  }
  const std::shared_ptr<RankStore> store = base->prefixed(kRunStorePrefix);

  RealRunResult result;
  result.reporter = reporter;
  std::string error;
  bool world_agreed = false;  // past the WORLD_SIZE check: waiting on peers can explain a failure
  try {
    RankConnection connection;
    connection.store = store;
    connection.rank = rank;
    connection.world = world;
    connection.local_rank = local_rank;
    connection.timeout_s = cfg.timeout_s;
    connection.classes = data.labels.num_classes;
    connection.bind_address = bind.address;
    // Before the backend: ranks that disagree would fail inside Gloo's rendezvous, unnamed.
    agree_world_size(*store, rank, world, std::chrono::seconds(cfg.timeout_s));
    world_agreed = true;
    const RankBackend backend = sv.connect(cfg.backend, connection);
    const std::unique_ptr<BatchClassifier> model = sv.load_model(cfg.model_path);
    run_rank_body(cfg.scenario, data, rank, world, *store, *backend.collectives,
                  backend.counter.get(), *model, progress);
  } catch (const RunFailure& e) {
    error = e.what();
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    error = first_line(e.what());
  }
  if (!error.empty()) {
    // Ranks that disagree on the world were not waiting for each other's records.
    if (world_agreed) error += ranks_without_records(*store, world, rank);
    try {
      store->set(key_error(rank), encode_text(error));
    } catch (const std::exception&) {
    }
  }
  if (!reporter) {
    if (!error.empty()) result.error = "rank " + std::to_string(rank) + ": " + error;
    return result;
  }
  // Rank 0 under torchrun: wait for the others (bounded by the timeout), then assemble.
  RankFailures failures =
      await_ranks(*store, world, std::chrono::seconds(error.empty() ? cfg.timeout_s : 1));
  if (!error.empty())
    failures.reason += (failures.reason.empty() ? "" : "; ") + std::string("rank 0: ") + error;
  result.run = assemble_run(*store, cfg, data.labels, world, failures, sv.torch_version);
  result.run->meta.launcher = place.launcher;
  result.error = failures.reason;
  return result;
}

}  // namespace

std::vector<RankEnd> wait_for_ranks(std::vector<std::unique_ptr<RankProcess>>& ranks,
                                    std::chrono::milliseconds grace,
                                    std::chrono::milliseconds poll_every,
                                    const std::function<bool()>& cancelled) {
  const size_t n = ranks.size();
  std::vector<RankEnd> ends(n);
  std::vector<bool> ended(n, false);
  std::optional<Clock::time_point> deadline;
  bool cancelling = false;
  for (;;) {
    bool running = false;
    for (size_t r = 0; r < n; ++r) {
      if (ended[r]) continue;
      if (const std::optional<ExitStatus> st = ranks[r]->poll()) {
        ends[r].status = *st;
        ended[r] = true;
        if (!st->ok() && !deadline) deadline = Clock::now() + grace;
      } else {
        running = true;
      }
    }
    if (!running) break;
    if (!cancelling && cancelled && cancelled()) {
      cancelling = true;  // ranks that have ended keep their own status
      for (size_t r = 0; r < n; ++r) {
        if (ended[r]) continue;
        ranks[r]->terminate();
        ends[r].cancelled = true;
      }
      deadline = std::min(deadline.value_or(Clock::time_point::max()), Clock::now() + kCancelGrace);
    }
    if (deadline && Clock::now() > *deadline) {
      for (size_t r = 0; r < n; ++r) {
        if (!ended[r] && !ends[r].killed_as_hung) {
          ranks[r]->kill();
          ends[r].killed_as_hung = true;
        }
      }
    }
    std::this_thread::sleep_for(poll_every);
  }
  return ends;
}

RankFailures describe_rank_failures(RankStore& store, const std::vector<RankEnd>& ends) {
  RankFailures out;
  for (int r = 0; r < int(ends.size()); ++r) {
    const RankEnd& end = ends[size_t(r)];
    if (end.status.ok() && !end.killed_as_hung) continue;
    const bool root = end.killed_as_hung || !has_key(store, key_records(r));
    std::string what = "rank " + std::to_string(r) + " " +
                       (end.cancelled        ? std::string("was stopped by the cancel")
                        : end.killed_as_hung ? std::string("hung and was killed after the timeout")
                                             : describe_status(end.status));
    if (has_key(store, key_error(r))) {
      try {
        what += " (" + decode_text(store.get(key_error(r))) + ")";
      } catch (const std::exception&) {
      }
    }
    if (root) out.failed.push_back(r);
    out.reason = root ? what + (out.reason.empty() ? "" : "; " + out.reason)
                      : out.reason + (out.reason.empty() ? "" : "; ") + what;
  }
  return out;
}

RankFailures await_ranks(RankStore& store, int world, std::chrono::milliseconds timeout) {
  RankFailures out;
  for (int r = 0; r < world; ++r) {
    try {
      store.wait({key_done(r)}, timeout);
    } catch (const std::exception&) {
      if (!has_key(store, key_records(r))) out.failed.push_back(r);
    }
  }
  for (int r : out.failed)
    out.reason += (out.reason.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) +
                  " did not finish";
  return out;
}

namespace {

// Where the synced matrix in the store is not what the run's declared sync makes of the
// ranks' matrices, for the syncs whose arithmetic is exact (rank 0's own for no sync, an
// int64 sum for all-reduce, twice it for double-sync): a cell, or nothing. Float sums keep
// the backend's order of additions and the gathers depend on what only rank 0 saw (its
// loader's last batch), so they are left to the diagnosis.
std::optional<std::string> synced_contradiction(const Scenario& s, const RunFile& run) {
  const bool exact_sum = (s.sync == SyncStrategy::AllReduce || s.sync == SyncStrategy::Double) &&
                         s.dtype == CounterDtype::Int64;
  if (!run.has_synced() || run.per_rank.empty() || (!exact_sum && s.sync != SyncStrategy::Local))
    return std::nullopt;
  const Matrix& synced = run.synced;
  const int32_t c = synced.classes;
  for (size_t i = 0; i < synced.cells.size(); ++i) {
    double want = run.per_rank[0].cells[i];
    if (exact_sum) {
      want = 0;
      for (const Matrix& m : run.per_rank) want += m.cells[i];
      if (s.sync == SyncStrategy::Double) want *= 2;
    }
    if (synced.cells[i] == want) continue;
    return "row " + std::to_string(i / size_t(c)) + ", column " + std::to_string(i % size_t(c)) +
           " holds " + std::to_string(int64_t(synced.cells[i])) + " where --sync " +
           to_string(s.sync) + " of the ranks' matrices gives " + std::to_string(int64_t(want));
  }
  return std::nullopt;
}

}  // namespace

RunFile assemble_run(RankStore& store, const RealRunConfig& cfg, const Labels& labels, int world,
                     const RankFailures& failures, const std::string& torch_version) {
  RunFile run;
  RunMetadata& m = run.meta;
  m.source = "real";
  m.backend = cfg.backend;
  m.scenario = cfg.scenario;
  m.scenario->sampler.world_size = world;
  m.classes = labels.num_classes;
  m.class_names = labels.class_names;
  m.class_counts = labels.class_counts();
  m.dataset_size = labels.size();
  m.world_size = world;
  m.torch_version = torch_version;
  m.batch_size = cfg.scenario.loader.batch_size;
  m.ignore_index = cfg.scenario.ignore_index;
  m.failed_ranks = failures.failed;
  run.records.ranks.resize(size_t(world));
  RecordBounds bounds = RecordBounds::of_run(m.classes, m.dataset_size, m.ignore_index);
  bounds.samples = m.dataset_size;  // known here, so every index has its prediction slot below
  for (int r = 0; r < world; ++r) {
    if (has_key(store, key_records(r)) && has_key(store, key_matrix(r))) {
      const std::string who = "rank " + std::to_string(r) + " published ";
      try {
        run.records.ranks[size_t(r)] = decode_records(store.get(key_records(r)));
        run.per_rank.push_back(decode_matrix(store.get(key_matrix(r)), m.classes));
      } catch (const RunFailure& e) {
        throw RunFailure(who + e.what());
      }
      const RecordSite site{who + "records", {}};
      const auto& records = run.records.ranks[size_t(r)];
      try {
        for (size_t pos = 0; pos < records.size(); ++pos)
          check_record_bounds(bounds, site, int64_t(pos), r, records[pos]);
      } catch (const InputError& e) {
        throw RunFailure(e.what());  // a peer's fault, not the user's input
      }
    } else {
      run.per_rank.push_back(Matrix(m.classes));  // nothing arrived from this rank
    }
  }
  bool all_done = true;
  for (int r = 0; r < world; ++r) all_done = all_done && has_key(store, key_done(r));
  try {
    if (has_key(store, kKeySynced)) run.synced = decode_matrix(store.get(kKeySynced), m.classes);
    if (has_key(store, kKeySyncNote)) m.sync_note = decode_text(store.get(kKeySyncNote));
  } catch (const RunFailure& e) {
    throw RunFailure(std::string("rank 0 published ") + e.what());
  }
  m.complete = all_done && run.has_synced() && failures.failed.empty() && failures.reason.empty();
  m.incomplete_reason = m.complete ? "" : failures.reason;
  // Every rank's matrix is in hand: a synced matrix that contradicts them under the declared
  // sync is named and not kept, never written as the run's result.
  if (all_done) {
    if (const std::optional<std::string> why = synced_contradiction(cfg.scenario, run)) {
      run.synced = Matrix();
      m.complete = false;
      m.incomplete_reason = "the synced matrix in the store is not the ranks' (" + *why +
                            "): a process other than rank 0 wrote it";
    }
  }
  return run;
}

RealRunResult real_run_with(const RealRunConfig& config, const RealRunServices& services,
                            Progress* progress) {
  try {
    if (const std::optional<RankEnvironment> place = detect_rank_environment(process_environment()))
      return run_as_rank(config, services, *place, progress);
    return launch(config, services);
  } catch (const RunFailure& e) {
    RealRunResult r;
    r.error = e.what();
    return r;
  }
}

}  // namespace shardlens
