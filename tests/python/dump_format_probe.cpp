// The C++ reader's view of one dump, as JSON, for the recorder's round-trip test
// (test_dump_format.py): dump_format_probe DUMP.npz prints every field the import reads from
// it (the records, the one-number arrays, both matrices and every settings_json key the
// schema names, through the members generated from it), so the test compares each with what
// Python wrote. A refused dump prints the InputError on stderr and exits 2, as the CLI does.
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/runfile/import.h"
#include "core/vocabulary/types.h"

namespace {

using nlohmann::json;

template <class T>
json value_json(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json value_json(const std::map<std::string, std::string>& versions) {
  return json(versions);
}

json matrix_json(const std::optional<shardlens::Matrix>& m) {
  if (!m) return nullptr;
  json rows = json::array();
  for (int32_t r = 0; r < m->classes; ++r) {
    json row = json::array();
    for (int32_t c = 0; c < m->classes; ++c) row.push_back(m->at(r, c));
    rows.push_back(row);
  }
  return rows;
}

json settings_json(const shardlens::RecordedSettings& s) {
  json out = json::object();
#define SHARDLENS_SETTING_JSON(key, kind, minimum) out[#key] = value_json(s.key);
  SHARDLENS_RECORDED_SETTINGS(SHARDLENS_SETTING_JSON)
#undef SHARDLENS_SETTING_JSON
  return out;
}

json dump_json(const shardlens::RankDump& d) {
  json records = {{"rank", d.ranks},
                  {"index", json::array()},
                  {"target", json::array()},
                  {"prediction", json::array()},
                  {"flags", json::array()}};
  for (const shardlens::Record& r : d.records) {
    records["index"].push_back(r.index);
    records["target"].push_back(r.target);
    records["prediction"].push_back(r.prediction);
    records["flags"].push_back(r.flags);
  }
  return {{"records", records},
          {"world_size", value_json(d.world_size)},
          {"dataset_size", value_json(d.dataset_size)},
          {"batch_size", value_json(d.batch_size)},
          {"epoch", value_json(d.epoch)},
          {"sanity", d.sanity},
          {"stage", d.stage},
          {"validation_in_epoch", value_json(d.validation_in_epoch)},
          {"dataloader_idx", value_json(d.dataloader_idx)},
          {"matrix", matrix_json(d.rank_matrix)},
          {"reported", matrix_json(d.reported)},
          {"settings", d.settings ? settings_json(*d.settings) : json(nullptr)}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: dump_format_probe DUMP.npz\n";
    return 2;
  }
  try {
    std::cout << dump_json(shardlens::read_npz_dump(argv[1])).dump() << "\n";
  } catch (const shardlens::InputError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  return 0;
}
