// Rank processes of a real run: the c10d store (FileStore by default, TCPStore when an
// address is given), ProcessGroupGloo or NCCL, the launcher that starts the ranks, and
// assembly of the run file from what the ranks publish to the store.
#include <ATen/ATen.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>

#include "core/counter.h"
#include "core/io/idx.h"
#include "core/labels.h"
#include "core/loader.h"
#include "core/specs.h"
#include "core/sync.h"
#include "core/torch/model.h"
#include "core/torch/rank_backend.h"
#include "core/torch/real_run.h"
#include "core/types.h"
#include "shardlens/config.h"

extern char** environ;

namespace shardlens {
namespace {

using Clock = std::chrono::steady_clock;
using Bytes = std::vector<uint8_t>;

const std::string kPrefix = "shardlens/";
std::string key_records(int r) {
  return "rank" + std::to_string(r) + "/records";
}
std::string key_matrix(int r) {
  return "rank" + std::to_string(r) + "/matrix";
}
std::string key_done(int r) {
  return "rank" + std::to_string(r) + "/done";
}
std::string key_error(int r) {
  return "rank" + std::to_string(r) + "/error";
}
const std::string kKeySynced = "synced";
const std::string kKeySyncNote = "sync_note";

// Thrown when the run itself fails (a rank died, a collective timed out): not bad input.
struct RunFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

int env_int(const char* name, int lo, int hi) {
  const std::string text = *env(name);
  try {
    size_t used = 0;
    const long v = std::stol(text, &used);
    if (used == text.size() && v >= lo && v <= hi) return static_cast<int>(v);
  } catch (const std::exception&) {
  }
  throw InputError("environment variable " + std::string(name) + "='" + text +
                   "' is not an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                   "]");
}

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

// --- store values: little-endian fixed-width encodings -----------------------------------

template <class T>
void put(Bytes& out, T v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}
template <class T>
T take(const Bytes& in, size_t& at) {
  if (at + sizeof(T) > in.size()) throw RunFailure("a rank published a truncated value");
  T v;
  std::memcpy(&v, in.data() + at, sizeof(T));
  at += sizeof(T);
  return v;
}

Bytes encode_records(const std::vector<Record>& records) {
  Bytes out;
  out.reserve(records.size() * 17 + 8);
  put<uint64_t>(out, records.size());
  for (const Record& r : records) {
    put<int64_t>(out, r.index);
    put<int32_t>(out, r.target);
    put<int32_t>(out, r.prediction);
    put<uint8_t>(out, r.flags);
  }
  return out;
}

std::vector<Record> decode_records(const Bytes& in) {
  size_t at = 0;
  const uint64_t n = take<uint64_t>(in, at);
  if (n > (in.size() - at) / 17) throw RunFailure("a rank published malformed records");
  std::vector<Record> out(n);
  for (Record& r : out) {
    r.index = take<int64_t>(in, at);
    r.target = take<int32_t>(in, at);
    r.prediction = take<int32_t>(in, at);
    r.flags = take<uint8_t>(in, at);
  }
  return out;
}

Bytes encode_matrix(const Matrix& m) {
  Bytes out;
  put<int32_t>(out, m.classes);
  for (double v : m.cells) put<double>(out, v);
  return out;
}

Matrix decode_matrix(const Bytes& in, int32_t classes) {
  size_t at = 0;
  if (take<int32_t>(in, at) != classes || in.size() != 4 + size_t(classes) * classes * 8)
    throw RunFailure("a rank published a matrix of the wrong size");
  Matrix m(classes);
  for (double& v : m.cells) v = take<double>(in, at);
  return m;
}

// --- dataset -----------------------------------------------------------------------------

struct Dataset {
  Labels labels;
  IdxImages images;
};

Dataset load_dataset(const RealRunConfig& cfg) {
  Dataset d;
  d.labels = load_labels(cfg.scenario.dataset);
  const std::string images =
      cfg.images_path.empty() ? images_path_for(cfg.scenario.dataset) : cfg.images_path;
  d.images = read_idx_images(images);
  if (d.images.count != d.labels.size()) {
    throw InputError(images + ": " + std::to_string(d.images.count) + " images for " +
                     std::to_string(d.labels.size()) + " labels");
  }
  return d;
}

// --- the parts of one rank -----------------------------------------------------------------

struct RankSetup {
  int rank = 0;
  int world = 1;
  int local_rank = 0;                     // the CUDA device of --backend nccl
  bool reporter = false;                  // rank 0 under torchrun assembles the run
  c10::intrusive_ptr<c10d::Store> store;  // prefixed
  std::string addr;
};

// Test hook (documented in tests/integration): SHARDLENS_TEST_FAULT=kill:R:B or hang:R:B
// makes rank R die (SIGKILL) or hang after B batches, to test failure handling for real.
void maybe_inject_fault(int rank, int64_t batches_done) {
  static const std::optional<std::string> spec = env("SHARDLENS_TEST_FAULT");
  if (!spec) return;
  char kind[8] = {};
  int r = -1;
  long b = -1;
  if (std::sscanf(spec->c_str(), "%7[a-z]:%d:%ld", kind, &r, &b) != 3) return;
  if (r != rank || b != batches_done) return;
  if (std::strcmp(kind, "kill") == 0) std::raise(SIGKILL);
  if (std::strcmp(kind, "hang") == 0) {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

struct RankOutput {
  std::vector<Record> records;
  Matrix local;
  int64_t batches = 0;
  bool loader_exhausted = true;
};

// Evaluates this rank's batches exactly as the engine plans them (sampler, loader, limit,
// sanity batches), accumulating in the counter dtype batch by batch.
RankOutput evaluate_rank(const RealRunConfig& cfg, const Dataset& data, int rank, int world,
                         BatchCounter* counter, Progress* progress) {
  SamplerConfig sampler = cfg.scenario.sampler;
  sampler.world_size = world;
  const LoaderConfig& loader = cfg.scenario.loader;
  const ShardPlan plan = plan_shards(data.labels.size(), sampler, loader);
  const EvaluatedRank& mine = plan.evaluated[size_t(rank)];
  const std::vector<int64_t> indices = mine.sequence.indices();
  const std::vector<uint8_t> flags = mine.sequence.flags();
  const int32_t classes = data.labels.num_classes;
  TorchModel model(cfg.model_path);

  RankOutput out;
  out.local = Matrix(classes);
  out.loader_exhausted = mine.batches == batches_per_rank(mine.sampler_size, loader);
  const size_t image_bytes = size_t(data.images.rows) * size_t(data.images.cols);
  std::vector<uint8_t> pixels;
  std::vector<int32_t> targets;
  const int64_t batch = loader.batch_size;
  size_t begin = 0;
  while (begin < indices.size()) {
    // A batch ends at batch_size or where the sanity-check batches give way to the epoch's.
    size_t end = begin;
    while (end < indices.size() && int64_t(end - begin) < batch &&
           (flags[end] & kSanity) == (flags[begin] & kSanity)) {
      ++end;
    }
    pixels.resize((end - begin) * image_bytes);
    for (size_t i = begin; i < end; ++i) {
      std::memcpy(pixels.data() + (i - begin) * image_bytes,
                  data.images.pixels.data() + size_t(indices[i]) * image_bytes, image_bytes);
    }
    const auto preds = model.predict(pixels.data(), int64_t(end - begin), data.images.rows,
                                     data.images.cols, classes);
    Matrix counts(classes);
    targets.clear();
    for (size_t i = begin; i < end; ++i) {
      const int32_t target = data.labels.targets[size_t(indices[i])];
      const int32_t pred = preds[i - begin];
      out.records.push_back(Record{indices[i], target, pred, flags[i]});
      targets.push_back(target);
      if (!counter && target != cfg.scenario.ignore_index) counts.at(target, pred) += 1;
    }
    if (counter) counter->count(targets, preds, cfg.scenario.ignore_index, counts.cells);
    for (size_t k = 0; k < counts.cells.size(); ++k) {
      out.local.cells[k] = round_to_dtype(out.local.cells[k] + counts.cells[k], cfg.scenario.dtype);
    }
    ++out.batches;
    begin = end;
    if (rank == 0) step(progress, "evaluating", double(begin) / double(indices.size()));
    maybe_inject_fault(rank, out.batches);
  }
  return out;
}

at::ScalarType scalar_type_of(CounterDtype dtype) {
  switch (dtype) {
    case CounterDtype::Float16:
      return at::kHalf;
    case CounterDtype::BFloat16:
      return at::kBFloat16;
    case CounterDtype::Float32:
      return at::kFloat;
    case CounterDtype::Int64:
      break;
  }
  return at::kLong;
}

void wait(const c10::intrusive_ptr<c10d::Work>& work, const char* what) {
  try {
    work->wait();
  } catch (const std::exception& e) {
    throw RunFailure(std::string(what) + " failed: " + first_line(e.what()));
  }
}

// The collectives over ProcessGroupGloo, through CPU tensors.
class GlooCollectives : public RankCollectives {
 public:
  GlooCollectives(std::unique_ptr<c10d::ProcessGroupGloo> pg, int world)
      : m_pg(std::move(pg)), m_world(world) {}

  std::vector<double> all_gather(const std::vector<double>& mine, const char* what) override {
    return gather(mine, at::kDouble, what);
  }
  std::vector<int64_t> all_gather(const std::vector<int64_t>& mine, const char* what) override {
    return gather(mine, at::kLong, what);
  }
  void all_reduce_sum(std::vector<double>& values, const char* what) override {
    reduce(values, at::kDouble, what);
  }
  void all_reduce_sum(std::vector<int64_t>& values, const char* what) override {
    reduce(values, at::kLong, what);
  }
  bool all_reduce_sum(std::vector<double>& values, CounterDtype dtype, const char* what) override {
    std::vector<at::Tensor> t = {tensor_of(values, at::kDouble).to(scalar_type_of(dtype))};
    try {
      m_pg->allreduce(t)->wait();
    } catch (const std::exception& e) {
      // Gloo checks the type on every rank alike before sending anything, so every rank
      // takes this way out together and the group stays usable.
      if (std::string(e.what()).find("Invalid scalar type") != std::string::npos) return false;
      throw RunFailure(std::string(what) + " failed: " + first_line(e.what()));
    }
    const at::Tensor back = t[0].to(at::kDouble).contiguous();
    std::copy(back.data_ptr<double>(), back.data_ptr<double>() + values.size(), values.begin());
    return true;
  }

 private:
  template <class T>
  static at::Tensor tensor_of(const std::vector<T>& v, at::ScalarType type) {
    return at::from_blob(const_cast<T*>(v.data()), {int64_t(v.size())}, type).clone();
  }

  template <class T>
  std::vector<T> gather(const std::vector<T>& mine, at::ScalarType type, const char* what) {
    std::vector<std::vector<at::Tensor>> out(1);
    for (int r = 0; r < m_world; ++r) out[0].push_back(at::zeros({int64_t(mine.size())}, type));
    std::vector<at::Tensor> in = {tensor_of(mine, type)};
    wait(m_pg->allgather(out, in), what);
    std::vector<T> all;
    all.reserve(mine.size() * size_t(m_world));
    for (const at::Tensor& t : out[0]) {
      const T* p = t.contiguous().data_ptr<T>();
      all.insert(all.end(), p, p + mine.size());
    }
    return all;
  }

  template <class T>
  void reduce(std::vector<T>& values, at::ScalarType type, const char* what) {
    std::vector<at::Tensor> t = {tensor_of(values, type)};
    wait(m_pg->allreduce(t), what);
    const T* p = t[0].contiguous().data_ptr<T>();
    std::copy(p, p + values.size(), values.begin());
  }

  std::unique_ptr<c10d::ProcessGroupGloo> m_pg;
  int m_world;
};

Matrix matrix_of(const std::vector<double>& cells, size_t from, int32_t classes) {
  Matrix m(classes);
  std::copy(cells.begin() + std::ptrdiff_t(from),
            cells.begin() + std::ptrdiff_t(from + m.cells.size()), m.cells.begin());
  return m;
}

// The reported matrix of a sync strategy performed with real collectives, and a note when
// part of its arithmetic had to be the engine's instead.
struct RealSync {
  Matrix reported;
  std::string note;
};

// torchmetrics' dist_reduce_fx="sum" on a float state: the all_reduce itself sums in the
// counter dtype (twice for double-sync). Empty when the backend cannot sum that dtype.
std::optional<Matrix> float_all_reduce(RankCollectives& coll, const Matrix& local,
                                       const Scenario& s) {
  std::vector<double> sum = local.cells;
  if (!coll.all_reduce_sum(sum, s.dtype, "all_reduce")) return std::nullopt;
  if (s.sync == SyncStrategy::Double && !coll.all_reduce_sum(sum, s.dtype, "second all_reduce"))
    return std::nullopt;
  Matrix m(local.classes);
  m.cells = std::move(sum);
  return m;
}

// Performs the sync strategy with real collectives.
RealSync synchronize_for_real(RankCollectives& coll, const RealRunConfig& cfg,
                              const RankOutput& out, int world, int64_t dataset_size) {
  const int32_t classes = out.local.classes;
  const size_t cells = out.local.cells.size();
  const Scenario& s = cfg.scenario;
  // Every strategy needs the per-rank matrices somewhere; gather them for real.
  const std::vector<double> gathered =
      coll.all_gather(out.local.cells, "all_gather of the per-rank matrices");
  std::vector<Matrix> per_rank;
  for (int r = 0; r < world; ++r)
    per_rank.push_back(matrix_of(gathered, size_t(r) * cells, classes));

  const bool integral = s.dtype == CounterDtype::Int64;
  if ((s.sync == SyncStrategy::AllReduce || s.sync == SyncStrategy::Double) && integral) {
    // torchmetrics' dist_reduce_fx="sum": an int64 all_reduce (twice for double-sync).
    std::vector<int64_t> sum(cells);
    for (size_t k = 0; k < cells; ++k) sum[k] = static_cast<int64_t>(out.local.cells[k]);
    coll.all_reduce_sum(sum, "all_reduce");
    if (s.sync == SyncStrategy::Double) coll.all_reduce_sum(sum, "second all_reduce");
    Matrix m(classes);
    for (size_t k = 0; k < cells; ++k) m.cells[k] = double(sum[k]);
    return {m, ""};
  }
  std::string note;
  if (s.sync == SyncStrategy::AllReduce || s.sync == SyncStrategy::Double) {
    if (std::optional<Matrix> m = float_all_reduce(coll, out.local, s)) return {*m, ""};
    note = "this LibTorch's Gloo cannot all_reduce " + to_string(s.dtype) +
           " tensors (torch.distributed fails the same way); the per-rank matrices were "
           "gathered and summed in rank order with " +
           to_string(s.dtype) + " rounding instead";
  }
  if (s.sync == SyncStrategy::NormalizeThenSum) {
    Matrix m = normalize(out.local, Normalization::True);
    coll.all_reduce_sum(m.cells, "all_reduce of normalized matrices");
    return {m, ""};
  }
  StoredRecords all;
  if (s.sync == SyncStrategy::GatherZeroPad || s.sync == SyncStrategy::GatherTrim ||
      s.sync == SyncStrategy::GatherForMetrics) {
    // Uneven all_gather as users write it: sizes first, then [4, longest] tensors padded to
    // the largest (index, target, prediction and flags rows).
    const std::vector<int64_t> sizes =
        coll.all_gather(std::vector<int64_t>{int64_t(out.records.size())}, "all_gather of sizes");
    const size_t longest = size_t(*std::max_element(sizes.begin(), sizes.end()));
    std::vector<int64_t> mine(4 * longest, 0);
    for (size_t i = 0; i < out.records.size(); ++i) {
      mine[i] = out.records[i].index;
      mine[longest + i] = out.records[i].target;
      mine[2 * longest + i] = out.records[i].prediction;
      mine[3 * longest + i] = out.records[i].flags;
    }
    const std::vector<int64_t> recs = coll.all_gather(mine, "all_gather of records");
    for (int r = 0; r < world; ++r) {
      const int64_t* a = recs.data() + size_t(r) * 4 * longest;
      std::vector<Record> rank_records;
      for (size_t i = 0; i < size_t(sizes[size_t(r)]); ++i) {
        rank_records.push_back(Record{a[i], int32_t(a[longest + i]), int32_t(a[2 * longest + i]),
                                      uint8_t(a[3 * longest + i])});
      }
      all.ranks.push_back(std::move(rank_records));
    }
  }
  // The remaining arithmetic (zero padding, Accelerate's trimming) is the engine's, applied to
  // data that crossed the wire, so real and simulated runs agree.
  SyncInputs in;
  in.per_rank = &per_rank;
  in.records = all.ranks.empty() ? nullptr : &all;
  in.dataset_size = dataset_size;
  in.batch_size = s.loader.batch_size;
  in.loader_exhausted = out.loader_exhausted;
  in.ignore_index = s.ignore_index;
  in.dtype = s.dtype;
  return {synchronize(s.sync, in), note};
}

std::shared_ptr<::gloo::transport::Device> gloo_device(const std::string& addr) {
  // On one machine bind the Gloo pairs to loopback; across nodes to this host's address.
  if (addr == "127.0.0.1" || addr == "localhost" || addr == "::1")
    return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

void publish(c10d::Store& store, const std::string& key, const Bytes& value) {
  try {
    store.set(key, value);
  } catch (const std::exception& e) {
    throw RunFailure("cannot reach the store: " + first_line(e.what()));
  }
}

std::unique_ptr<RankCollectives> connect_gloo(const RealRunConfig& cfg, const RankSetup& setup) {
  auto options = c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(cfg.timeout_s));
  options->devices.push_back(gloo_device(setup.addr));
  try {
    return std::make_unique<GlooCollectives>(
        std::make_unique<c10d::ProcessGroupGloo>(
            c10::make_intrusive<c10d::PrefixStore>("gloo", setup.store), setup.rank, setup.world,
            options),
        setup.world);
  } catch (const std::exception& e) {
    throw RunFailure("cannot connect to the other ranks: " + first_line(e.what()));
  }
}

#if SHARDLENS_HAS_CUDA
NcclRank connect_nccl_rank(const RealRunConfig& cfg, const RankSetup& setup, int32_t classes) {
  // NCCL's unique id travels through the run's own store, under its own prefix.
  auto store = c10::make_intrusive<c10d::PrefixStore>("nccl", setup.store);
  cuda::BootstrapStore bootstrap;
  bootstrap.set = [store](const std::string& k, const std::vector<uint8_t>& v) {
    store->set(k, v);
  };
  bootstrap.get = [store](const std::string& k) { return store->get(k); };
  try {
    return connect_nccl(bootstrap, setup.rank, setup.world, setup.local_rank, cfg.timeout_s,
                        classes);
  } catch (const std::exception& e) {
    throw RunFailure("cannot connect to the other ranks over NCCL: " + first_line(e.what()));
  }
}
#endif

// One rank's whole job: connect, evaluate, publish, synchronize.
void run_rank_body(const RealRunConfig& cfg, const RankSetup& setup, const Dataset& data,
                   Progress* progress) {
  std::unique_ptr<RankCollectives> collectives;
  std::unique_ptr<BatchCounter> counter;  // none: count on the CPU
#if SHARDLENS_HAS_CUDA
  if (cfg.backend == "nccl") {
    NcclRank nccl = connect_nccl_rank(cfg, setup, data.labels.num_classes);
    collectives = std::move(nccl.collectives);
    counter = std::move(nccl.counter);
  }
#endif
  if (!collectives) collectives = connect_gloo(cfg, setup);
  const RankOutput out = evaluate_rank(cfg, data, setup.rank, setup.world, counter.get(), progress);
  publish(*setup.store, key_records(setup.rank), encode_records(out.records));
  publish(*setup.store, key_matrix(setup.rank), encode_matrix(out.local));
  if (setup.rank == 0) step(progress, "synchronizing", 0.0);
  const RealSync sync =
      synchronize_for_real(*collectives, cfg, out, setup.world, data.labels.size());
  if (setup.rank == 0) {
    if (!sync.note.empty())
      publish(*setup.store, kKeySyncNote, Bytes(sync.note.begin(), sync.note.end()));
    publish(*setup.store, kKeySynced, encode_matrix(sync.reported));
  }
  publish(*setup.store, key_done(setup.rank), Bytes{1});
}

// --- assembly of the run file from the store -------------------------------------------------

bool has_key(c10d::Store& store, const std::string& key) {
  try {
    return store.check({key});
  } catch (const std::exception&) {
    return false;
  }
}

RunFile assemble(c10d::Store& store, const RealRunConfig& cfg, const Dataset& data, int world,
                 const std::vector<int>& failed, const std::string& reason) {
  RunFile run;
  RunMeta& m = run.meta;
  m.source = "real";
  m.backend = cfg.backend;
  m.scenario = cfg.scenario;
  m.scenario->sampler.world_size = world;
  m.classes = data.labels.num_classes;
  m.class_names = data.labels.class_names;
  m.class_counts = data.labels.class_counts();
  m.dataset_size = data.labels.size();
  m.world_size = world;
  m.torch_version = libtorch_version();
  m.batch_size = cfg.scenario.loader.batch_size;
  m.ignore_index = cfg.scenario.ignore_index;
  m.failed_ranks = failed;
  run.records.ranks.resize(size_t(world));
  for (int r = 0; r < world; ++r) {
    if (has_key(store, key_records(r)) && has_key(store, key_matrix(r))) {
      run.records.ranks[size_t(r)] = decode_records(store.get(key_records(r)));
      run.per_rank.push_back(decode_matrix(store.get(key_matrix(r)), m.classes));
    } else {
      run.per_rank.push_back(Matrix(m.classes));  // nothing arrived from this rank
    }
  }
  bool all_done = true;
  for (int r = 0; r < world; ++r) all_done = all_done && has_key(store, key_done(r));
  if (has_key(store, kKeySynced)) run.synced = decode_matrix(store.get(kKeySynced), m.classes);
  if (has_key(store, kKeySyncNote)) {
    const Bytes note = store.get(kKeySyncNote);
    m.sync_note.assign(note.begin(), note.end());
  }
  m.complete = all_done && run.has_synced() && failed.empty() && reason.empty();
  m.incomplete_reason = m.complete ? "" : reason;
  if (m.complete) {
    // Every index evaluated at least once: the single-process matrix is known exactly.
    std::vector<int32_t> pred(size_t(m.dataset_size), -1);
    for (const auto& rank : run.records.ranks)
      for (const Record& r : rank) pred[size_t(r.index)] = r.prediction;
    bool all_seen = true;
    for (int32_t p : pred) all_seen = all_seen && p >= 0;
    if (all_seen) {
      Matrix expected(m.classes);
      for (int64_t i = 0; i < m.dataset_size; ++i) {
        const int32_t t = data.labels.targets[size_t(i)];
        if (t != m.ignore_index) expected.at(t, pred[size_t(i)]) += 1;
      }
      run.expected = expected;
    }
  }
  return run;
}

// --- launcher --------------------------------------------------------------------------------

std::vector<std::string> own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), {});
  std::vector<std::string> args;
  size_t begin = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i] == '\0') {
      args.push_back(all.substr(begin, i - begin));
      begin = i + 1;
    }
  }
  return args;
}

// `store_env`: how the rank finds the store (MASTER_ADDR/PORT or SHARDLENS_STORE_FILE).
pid_t spawn_rank(const std::vector<std::string>& args, int rank, int world,
                 const std::vector<std::string>& store_env) {
  std::vector<std::string> env_strings;
  const std::set<std::string> overridden = {
      "RANK",        "WORLD_SIZE",  "LOCAL_RANK",         "LOCAL_WORLD_SIZE",
      "MASTER_ADDR", "MASTER_PORT", "SHARDLENS_LAUNCHER", "SHARDLENS_STORE_FILE"};
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    if (!overridden.count(entry.substr(0, entry.find('=')))) env_strings.push_back(entry);
  }
  env_strings.push_back("RANK=" + std::to_string(rank));
  env_strings.push_back("LOCAL_RANK=" + std::to_string(rank));
  env_strings.push_back("WORLD_SIZE=" + std::to_string(world));
  env_strings.push_back("LOCAL_WORLD_SIZE=" + std::to_string(world));
  env_strings.insert(env_strings.end(), store_env.begin(), store_env.end());
  env_strings.push_back("SHARDLENS_LAUNCHER=1");
  std::vector<char*> argv, envp;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), envp.data());
  if (rc != 0)
    throw RunFailure("cannot start rank " + std::to_string(rank) + ": " + std::strerror(rc));
  return pid;
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  return "exited with status " + std::to_string(WEXITSTATUS(status));
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

c10::intrusive_ptr<c10d::Store> open_file_store(const std::string& path, int timeout_s) {
  // numWorkers -1: no FileStore deletes the file on destruction; PrivateDir does, once.
  auto store = c10::make_intrusive<c10d::FileStore>(path, -1);
  store->setTimeout(std::chrono::seconds(timeout_s));
  return store;
}

RealRunResult launch(const RealRunConfig& cfg) {
  const int world = cfg.scenario.sampler.world_size;
  if (world < 1 || world > 1024)
    throw InputError("--world-size must be in [1, 1024] for a local run");
#if SHARDLENS_HAS_CUDA
  if (cfg.backend == "nccl") {
    require_cuda_device(0);  // "--backend nccl: no CUDA device available" on CPU machines
    const int devices = cuda::device_count();
    if (world > devices) {
      throw InputError("--backend nccl: --world-size " + std::to_string(world) +
                       " needs one CUDA device per rank; this machine has " +
                       std::to_string(devices));
    }
  }
#endif
  const Dataset data = load_dataset(cfg);  // bad input is reported before any rank starts
  TorchModel check_model(cfg.model_path);

  // Where the ranks meet. By default a FileStore in a private directory: no socket at all.
  // Declared before the stores so it is removed after they are closed.
  std::optional<PrivateDir> dir;
  c10::intrusive_ptr<c10d::Store> server;
  std::vector<std::string> store_env;
  if (cfg.store_address_given) {
    c10d::TCPStoreOptions opts;
    opts.port = static_cast<uint16_t>(cfg.master_port);
    opts.isServer = true;
    opts.waitWorkers = false;
    opts.timeout = std::chrono::seconds(cfg.timeout_s);
    try {
      server = c10::make_intrusive<c10d::TCPStore>(cfg.master_addr, opts);
    } catch (const std::exception& e) {
      throw InputError("cannot start the store on " + cfg.master_addr + ":" +
                       std::to_string(cfg.master_port) + " (" + first_line(e.what()) + ")");
    }
    const int port = static_cast<c10d::TCPStore&>(*server).getPort();
    store_env = {"MASTER_ADDR=" + cfg.master_addr, "MASTER_PORT=" + std::to_string(port)};
  } else {
    dir.emplace();
    const std::string path = dir->path() + "/store";
    const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0)
      throw InputError("cannot create the store file " + path + ": " + std::strerror(errno));
    ::close(fd);
    server = open_file_store(path, cfg.timeout_s);
    // MASTER_ADDR still tells the ranks to bind Gloo to loopback (gloo_device).
    store_env = {"MASTER_ADDR=127.0.0.1", "SHARDLENS_STORE_FILE=" + path};
  }
  auto store = c10::make_intrusive<c10d::PrefixStore>(kPrefix, server);

  const std::vector<std::string> args = own_command_line();
  std::vector<pid_t> pids(size_t(world), 0);
  std::vector<std::optional<int>> status(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) pids[size_t(r)] = spawn_rank(args, r, world, store_env);

  // Wait for every rank. After the first failure the others get the collective timeout
  // (plus a grace period) to notice and exit; then any left is killed as hung.
  std::optional<Clock::time_point> deadline;
  std::vector<bool> killed_as_hung(size_t(world), false);
  for (;;) {
    bool running = false;
    for (int r = 0; r < world; ++r) {
      if (status[size_t(r)]) continue;
      int st = 0;
      const pid_t got = waitpid(pids[size_t(r)], &st, WNOHANG);
      if (got == pids[size_t(r)]) {
        status[size_t(r)] = st;
        const bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
        if (!ok && !deadline) deadline = Clock::now() + std::chrono::seconds(cfg.timeout_s + 5);
      } else {
        running = true;
      }
    }
    if (!running) break;
    if (deadline && Clock::now() > *deadline) {
      for (int r = 0; r < world; ++r) {
        if (!status[size_t(r)]) {
          kill(pids[size_t(r)], SIGKILL);
          killed_as_hung[size_t(r)] = true;
        }
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  // The root causes are the ranks that never published their records (killed, crashed,
  // hung); ranks that failed afterwards only saw a collective break.
  std::vector<int> failed;
  std::string reason;
  for (int r = 0; r < world; ++r) {
    const int st = *status[size_t(r)];
    const bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    if (ok) continue;
    const bool root = !has_key(*store, key_records(r)) || killed_as_hung[size_t(r)];
    std::string what =
        "rank " + std::to_string(r) + " " +
        (killed_as_hung[size_t(r)] ? "hung and was killed after the timeout" : describe_status(st));
    if (has_key(*store, key_error(r))) {
      const Bytes e = store->get(key_error(r));
      what += " (" + std::string(e.begin(), e.end()) + ")";
    }
    if (root) failed.push_back(r);
    reason = root ? what + (reason.empty() ? "" : "; " + reason)
                  : reason + (reason.empty() ? "" : "; ") + what;
  }
  RealRunResult result;
  result.reporter = true;
  result.run = assemble(*store, cfg, data, world, failed, reason);
  result.error = reason;
  return result;
}

// A rank started by our launcher or by torchrun.
RealRunResult run_as_rank(const RealRunConfig& cfg, Progress* progress) {
  RankSetup setup;
  setup.world = env_int("WORLD_SIZE", 1, 1 << 16);
  setup.rank = env_int("RANK", 0, setup.world - 1);
  const bool under_launcher = env("SHARDLENS_LAUNCHER").has_value();
  setup.reporter = !under_launcher && setup.rank == 0;
  if (cfg.world_size_given && cfg.scenario.sampler.world_size != setup.world) {
    throw InputError("--world-size " + std::to_string(cfg.scenario.sampler.world_size) +
                     " disagrees with WORLD_SIZE=" + std::to_string(setup.world));
  }
  setup.local_rank = env("LOCAL_RANK") ? env_int("LOCAL_RANK", 0, 1 << 16) : setup.rank;
#if SHARDLENS_HAS_CUDA
  if (cfg.backend == "nccl") require_cuda_device(setup.local_rank);
#endif
  setup.addr = env("MASTER_ADDR").value_or("127.0.0.1");
  const Dataset data = load_dataset(cfg);

  // Our launcher's FileStore (only trusted from it), else the TCPStore torchrun's variables
  // name.
  const std::optional<std::string> store_file =
      under_launcher ? env("SHARDLENS_STORE_FILE") : std::nullopt;
  c10::intrusive_ptr<c10d::Store> base;
  if (store_file) {
    try {
      base = open_file_store(*store_file, cfg.timeout_s);
    } catch (const std::exception& e) {
      throw RunFailure("rank " + std::to_string(setup.rank) + ": cannot open the store " +
                       *store_file + " (" + first_line(e.what()) + ")");
    }
  } else {
    const int port = env("MASTER_PORT") ? env_int("MASTER_PORT", 1, 65535) : 29500;
    c10d::TCPStoreOptions opts;
    opts.port = static_cast<uint16_t>(port);
    opts.isServer = setup.reporter;  // under torchrun rank 0 hosts the store, as env:// does
    opts.waitWorkers = false;
    opts.timeout = std::chrono::seconds(cfg.timeout_s);
    try {
      base = c10::make_intrusive<c10d::TCPStore>(setup.addr, opts);
    } catch (const std::exception& e) {
      throw RunFailure("rank " + std::to_string(setup.rank) + ": cannot reach the store at " +
                       setup.addr + ":" + std::to_string(port) + " (" + first_line(e.what()) + ")");
    }
  }
  setup.store = c10::make_intrusive<c10d::PrefixStore>(kPrefix, base);

  RealRunResult result;
  result.reporter = setup.reporter;
  std::string error;
  try {
    run_rank_body(cfg, setup, data, progress);
  } catch (const RunFailure& e) {
    error = e.what();
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    error = first_line(e.what());
  }
  if (!error.empty()) {
    try {
      setup.store->set(key_error(setup.rank), Bytes(error.begin(), error.end()));
    } catch (const std::exception&) {
    }
  }
  if (!setup.reporter) {
    if (!error.empty()) result.error = "rank " + std::to_string(setup.rank) + ": " + error;
    return result;
  }
  // Rank 0 under torchrun: wait for the others (bounded by the timeout), then assemble.
  std::vector<int> missing;
  for (int r = 0; r < setup.world; ++r) {
    try {
      setup.store->wait({key_done(r)}, std::chrono::seconds(error.empty() ? cfg.timeout_s : 1));
    } catch (const std::exception&) {
      if (!has_key(*setup.store, key_records(r))) missing.push_back(r);
    }
  }
  std::string reason;
  for (int r : missing)
    reason +=
        (reason.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) + " did not finish";
  if (!error.empty()) reason += (reason.empty() ? "" : "; ") + std::string("rank 0: ") + error;
  result.run = assemble(*setup.store, cfg, data, setup.world, missing, reason);
  result.error = reason;
  return result;
}

}  // namespace

std::string images_path_for(const std::string& dataset_spec) {
  const Spec spec = parse_spec(dataset_spec, "--dataset");
  if (spec.kind == "fashion-mnist") {
    const std::string which = spec.path.empty() ? "test" : spec.path;
    return fashion_mnist_dir() +
           (which == "train" ? "/train-images-idx3-ubyte.gz" : "/t10k-images-idx3-ubyte.gz");
  }
  if (spec.kind == "idx") {
    std::string path = spec.path;
    const size_t at = path.rfind("labels-idx1");
    if (at != std::string::npos) return path.replace(at, 11, "images-idx3");
    throw InputError("--dataset " + dataset_spec +
                     ": cannot tell where the images are; name the labels file *labels-idx1-ubyte* "
                     "next to *images-idx3-ubyte*, or give --images");
  }
  throw InputError("--dataset " + dataset_spec +
                   ": a real run needs images (fashion-mnist:test, fashion-mnist:train or "
                   "idx:PATH-labels-idx1-ubyte)");
}

RealRunResult real_run(const RealRunConfig& config, Progress* progress) {
  try {
    if (env("RANK") || env("WORLD_SIZE")) {
      if (!env("RANK") || !env("WORLD_SIZE"))
        throw InputError("RANK and WORLD_SIZE must be set together (torchrun sets both)");
      return run_as_rank(config, progress);
    }
    return launch(config);
  } catch (const RunFailure& e) {
    RealRunResult r;
    r.error = e.what();
    return r;
  }
}

}  // namespace shardlens
