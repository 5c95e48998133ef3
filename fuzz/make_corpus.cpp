// Writes the valid examples of the seed corpora (fuzz/corpus/<target>/valid-*) with
// ShardLens's own writers, so the seeds are small, reproducible and owe nothing to outside
// files. Crash reproducers (crash-*) are added by hand next to them.
// Usage: fuzz_make_corpus fuzz/corpus   (built on request: ninja fuzz_make_corpus)
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/evaluation/scenario.h"
#include "core/io/files.h"
#include "core/io/npy.h"
#include "core/io/npz.h"
#include "core/runfile/import.h"
#include "core/runfile/runfile.h"
#include "fuzz/fuzz_util.h"
#include "tests/common/small_run.h"

namespace fs = std::filesystem;
using namespace shardlens;

namespace {

fs::path g_root;

void put(const std::string& target, const std::string& name, const std::string& bytes) {
  fs::create_directories(g_root / target);
  std::ofstream out(g_root / target / ("valid-" + name), std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
}

std::string gzip(const std::string& data) {
  z_stream zs{};
  deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);  // 16: gzip wrapper.
  std::string out(deflateBound(&zs, uLong(data.size())) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = uInt(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = uInt(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// An .npy with a hand-written header, for dtypes and versions the writer does not produce.
std::string raw_npy(const std::string& dict, const std::string& payload, int major = 1) {
  std::string header = dict;
  const size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(major);
  out += char(0);
  for (size_t i = 0; i < prefix - 8; ++i) out += char((header.size() >> (8 * i)) & 0xFF);
  return out + header + payload;
}

std::string be32(uint32_t v) {
  return {char(v >> 24), char((v >> 16) & 0xFF), char((v >> 8) & 0xFF), char(v & 0xFF)};
}

std::string zip_of(const fuzz::Members& members, bool compress) {
  const std::string path = (fs::temp_directory_path() / "shardlens-corpus.npz").string();
  write_npz(path, members, compress);
  std::string bytes = read_file_bytes(path);
  fs::remove(path);
  return bytes;
}

// The tests' small run; complete with a scenario, or as a run whose rank 1 died first.
RunFile small_run(bool complete) {
  RunFile run = test::small_run();
  if (complete) {
    run.meta.scenario = Scenario{};
  } else {
    run.synced = Matrix();
    run.meta.complete = false;
    run.meta.incomplete_reason = "rank 1 failed: killed";
    run.meta.failed_ranks = {1};
  }
  return run;
}

void npy_seeds() {
  put("npy", "i8.npy", npy_bytes(std::vector<int64_t>{0, 1, 2, -3}, {4}));
  put("npy", "i4-2d.npy", npy_bytes(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {2, 3}));
  put("npy", "u1.npy", npy_bytes(std::vector<uint8_t>{7, 8, 9}, {3}));
  put("npy", "f8-2d.npy", npy_bytes(std::vector<double>{0.5, 1.5, -2, 1e300}, {2, 2}));
  put("npy", "scalar.npy", npy_bytes(std::vector<int64_t>{42}, {}));
  put("npy", "empty.npy", npy_bytes(std::vector<int64_t>{}, {0}));
  const std::string be = be32(1) + be32(0x7FFFFFFF);
  put("npy", "be-i4.npy", raw_npy("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", be));
  put("npy", "bool.npy",
      raw_npy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
              std::string("\x01\x00\x02", 3)));
  put("npy", "f2-v2.npy",
      raw_npy("{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }",
              std::string("\x00\x3c\x00\x7c", 4), 2));
  put("npy", "u8-v3.npy",
      raw_npy("{\"descr\": \"<u8\", \"fortran_order\": False, \"shape\": (1,)}",
              std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8), 3));
}

void npz_seeds() {
  const fuzz::Members members = {{"index.npy", npy_bytes(std::vector<int64_t>{0, 1, 2}, {3})},
                                 {"target.npy", npy_bytes(std::vector<int32_t>{1, 0, 1}, {3})},
                                 {"meta.json", "{\"format\": \"x\"}\n"}};
  put("npz", "stored.npz", zip_of(members, false));
  put("npz", "deflated.npz", zip_of(members, true));
  put("npz", "empty.npz", zip_of({}, false));
}

void csv_seeds() {
  put("csv", "labels.csv", "label\n0\n1\n2\n1\n");
  put("csv", "bare.csv", "3\n1\n-2\n");
  put("csv", "dump.csv", "rank,index,target,prediction,flags\n0,0,1,1,0\n1,1,2,0,1\n");
  put("csv", "quoted.csv",
      "\xEF\xBB\xBF\"name, quoted\",target\r\n\"a\"\"b\",+4\r\n\"x\ny\",5\r\n\r\n");
}

void idx_seeds() {
  const std::string labels = be32(0x00000801) + be32(4) + std::string("\x00\x01\x09\x03", 4);
  const std::string images = be32(0x00000803) + be32(2) + be32(2) + be32(3) + std::string(12, 'x');
  put("idx", "labels-idx1-ubyte", labels);
  put("idx", "images-idx3-ubyte", images);
  put("idx", "labels-idx1-ubyte.gz", gzip(labels));
  put("idx", "images-idx3-ubyte.gz", gzip(images));
}

void scenario_seeds() {
  put("scenario", "default.json", to_json(Scenario{}).dump(2));
  Scenario s;
  s.name = "padding";
  s.sampler.world_size = 3;
  s.sampler.shuffle = true;
  s.sampler.rank_seeds = {1, 2, 3};
  s.loader.limit = BatchLimit::parse("0.25");
  s.sync = SyncStrategy::GatherZeroPad;
  s.dtype = CounterDtype::Float16;
  s.ignore_index = 0;
  put("scenario", "padding.json", to_json(s).dump());
  put("scenario", "partial.json", R"({"world_size": 8, "limit_batches": 3, "lesson": "x"})");
}

void labels_seeds() {
  const std::string idx = be32(0x00000801) + be32(3) + std::string("\x00\x01\x02", 3);
  put("labels", "idx", std::string(1, '\0') + idx);
  put("labels", "npy", "\x01" + npy_bytes(std::vector<int64_t>{0, 2, 1, 1}, {4}));
  put("labels", "csv", "\x02target\n0\n1\n1\n");
  put("labels", "names",
      "\x03"
      "cat\n dog \n\nemu\n");
}

void import_seeds() {
  const fuzz::Members dump = {
      {"index.npy", npy_bytes(std::vector<int64_t>{0, 2, 4}, {3})},
      {"target.npy", npy_bytes(std::vector<int64_t>{1, 0, 2}, {3})},
      {"prediction.npy", npy_bytes(std::vector<int64_t>{1, 1, 2}, {3})},
      {"world_size.npy", npy_bytes(std::vector<int64_t>{1}, {})},
      {"matrix.npy", npy_bytes(std::vector<int64_t>{0, 1, 0, 0, 1, 0, 0, 0, 1}, {3, 3})}};
  put("import", "dump.npz", std::string(1, '\0') + zip_of(dump, false));
  put("import", "dump-members", "\x01" + fuzz::pack_members(dump));
  const fuzz::Members scores = {
      {"indices.npy", npy_bytes(std::vector<int64_t>{0, 1}, {2})},
      {"labels.npy", npy_bytes(std::vector<int32_t>{1, 0}, {2})},
      {"preds.npy", npy_bytes(std::vector<double>{0.1, 0.9, 0.8, 0.2}, {2, 2})},
      {"ranks.npy", npy_bytes(std::vector<int64_t>{0}, {1})},
      {"flags.npy", npy_bytes(std::vector<uint8_t>{0, 1}, {2})}};
  put("import", "scores-members", "\x01" + fuzz::pack_members(scores));
  // The recorder's settings_json: UTF-8 JSON in a uint8 array, with the keys that
  // split evaluations.
  const std::string text =
      R"({"framework":"lightning","sampler":"distributed","shuffle":true,"seed":42,)"
      R"("batch_size":2,"limit_batches":"10","stage":"validate","dataloader_idx":1,)"
      R"("validation_in_epoch":0,"world_size":1,"rank":0,"versions":{"torch":"2.15.0"}})";
  fuzz::Members settings = dump;
  settings.push_back({"settings_json.npy", npy_bytes(std::vector<uint8_t>(text.begin(), text.end()),
                                                     {int64_t(text.size())})});
  settings.push_back({"dataloader_idx.npy", npy_bytes(std::vector<int64_t>{1}, {})});
  put("import", "settings-members", "\x01" + fuzz::pack_members(settings));
  // The matrices as their nonzero cells (row, column, value), with their class count.
  fuzz::Members sparse(dump.begin(), dump.end() - 1);
  sparse.push_back(
      {"matrix_sparse.npy", npy_bytes(std::vector<int64_t>{0, 1, 1, 1, 1, 1, 2, 2, 1}, {3, 3})});
  sparse.push_back(
      {"reported_sparse.npy", npy_bytes(std::vector<double>{0, 1, 2, 1, 1, 0.5}, {2, 3})});
  sparse.push_back({"sparse_classes.npy", npy_bytes(std::vector<int64_t>{3}, {})});
  put("import", "sparse-members", "\x01" + fuzz::pack_members(sparse));
  put("import", "dump.npy",
      "\x02" + npy_bytes(std::vector<int64_t>{0, 0, 1, 1, 0, 1, 0, 0}, {2, 4}));
  put("import", "dump.csv", "\x03rank,index,target,prediction,flags\n0,0,1,1,0\n0,1,0,1,1\n");
  put("import", "bare.csv",
      "\x03"
      "0,0,1,1\n0,1,0,0\n");
}

void runfile_seeds() {
  for (bool complete : {true, false}) {
    const auto members = run_file_members(small_run(complete));
    const std::string tag = complete ? "complete" : "incomplete";
    put("runfile", tag + ".slrun", std::string(1, '\0') + zip_of(members, false));
    put("runfile", tag + "-members", "\x01" + fuzz::pack_members(members));
  }
  // 64 classes (4096 cells): matrices stored as their nonzero cells, every rank's reported
  // matrix the synced one (format 4).
  RunFile wide = small_run(true);
  wide.meta.classes = 64;
  wide.meta.class_names.clear();
  wide.meta.class_counts.resize(64, 0);
  wide.per_rank = matrices_from_records(wide.records, 64, -1);
  wide.synced = wide.per_rank[0];
  wide.synced += wide.per_rank[1];
  wide.reported_per_rank = {wide.synced, wide.synced};
  const auto sparse = run_file_members(wide);
  put("runfile", "sparse.slrun", std::string(1, '\0') + zip_of(sparse, false));
  put("runfile", "sparse-members", "\x01" + fuzz::pack_members(sparse));
  // Two epochs in one file (format 2: members prefixed epoch<e>_).
  std::vector<RunFile> epochs = {small_run(true), small_run(true)};
  epochs[0].meta.epoch = 0;
  epochs[1].meta.epoch = 1;
  const auto members = run_epochs_members(epochs);
  put("runfile", "epochs.slrun", std::string(1, '\0') + zip_of(members, false));
  put("runfile", "epochs-members", "\x01" + fuzz::pack_members(members));
  // Two dataloaders of one epoch (format 3: an "evaluations" list, members under eval<k>_).
  std::vector<RunFile> loaders = {small_run(true), small_run(true)};
  for (int k = 0; k < 2; ++k) {
    loaders[size_t(k)].meta.epoch = 0;
    loaders[size_t(k)].meta.dataloader_idx = k;
  }
  const auto evaluations = run_epochs_members(loaders);
  put("runfile", "evaluations.slrun", std::string(1, '\0') + zip_of(evaluations, false));
  put("runfile", "evaluations-members", "\x01" + fuzz::pack_members(evaluations));
}

// Samples of many counts: a segmentation dump's cells (three images, one of ignored pixels
// only, a padding duplicate), a multilabel one, a CSV of token cells, and the run file an
// import of the first makes.
void cells_seeds() {
  auto ints = [](const std::vector<int64_t>& v) { return npy_bytes(v, {int64_t(v.size())}); };
  auto text = [](const std::string& s) {
    return npy_bytes(std::vector<uint8_t>(s.begin(), s.end()), {int64_t(s.size())});
  };
  const fuzz::Members segmentation = {
      {"index.npy", ints({0, 1, 2, 0})},
      {"target.npy", ints({0, 2, 0, 0})},
      {"prediction.npy", ints({0, 2, 0, 0})},
      {"flags.npy", npy_bytes(std::vector<uint8_t>{0, 0, 0, 1}, {4})},
      {"format_version.npy", npy_bytes(std::vector<int64_t>{3}, {})},
      {"cells_per_record.npy", ints({3, 2, 0, 3})},
      {"cell_target.npy", ints({0, 1, 1, 2, 0, 0, 1, 1})},
      {"cell_prediction.npy", ints({0, 0, 1, 2, 2, 0, 0, 1})},
      {"cell_count.npy", ints({5, 2, 3, 4, 1, 5, 2, 3})},
      {"sample_size.npy", ints({12, 5, 4, 12})},
      {"ignored.npy", ints({2, 0, 4, 2})},
      {"settings_json.npy",
       text(R"({"task":"segmentation","num_classes":3,"ignore_index":255,"rank":0})")}};
  put("cells", "segmentation-members", std::string(1, '\0') + fuzz::pack_members(segmentation));
  const fuzz::Members multilabel = {
      {"index.npy", ints({0, 1})},
      {"target.npy", ints({0, 0})},
      {"prediction.npy", ints({0, 0})},
      {"cells_per_record.npy", ints({2, 1})},
      {"cell_target.npy", ints({1, 2, 0})},
      {"cell_prediction.npy", ints({1, 3, 0})},
      {"cell_count.npy", ints({1, 1, 1})},
      {"sample_size.npy", ints({2, 2})},
      {"ignored.npy", ints({0, 1})},
      {"settings_json.npy", text(R"({"task":"multilabel","num_labels":2,"ignore_index":-1})")}};
  put("cells", "multilabel-members", std::string(1, '\0') + fuzz::pack_members(multilabel));
  put("cells", "tokens.csv",
      "\x01rank,index,record,target,prediction,count,flags\n0,4,0,0,0,7,0\n0,6,1,1,2,2,1\n"
      "0,4,0,2,2,1,0\n0,6,1,1,1,3,1\n");
  const std::string dump = fuzz::scratch_file("dump_rank0.npz", fuzz::npz_bytes(segmentation));
  const auto run = run_file_members(import_dumps({dump}, ImportOptions{}));
  put("cells", "run-members", "\x02" + fuzz::pack_members(run));
  put("runfile", "cells-members", "\x01" + fuzz::pack_members(run));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  g_root = argv[1];
  npy_seeds();
  npz_seeds();
  csv_seeds();
  idx_seeds();
  scenario_seeds();
  labels_seeds();
  import_seeds();
  runfile_seeds();
  cells_seeds();
  std::printf("seed corpora written under %s\n", argv[1]);
  return 0;
}
