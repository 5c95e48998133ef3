#include "core/scenario.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/io/files.h"
#include "core/types.h"

namespace shardlens {

using nlohmann::json;

json to_json(const Scenario& s) {
  return json{{"name", s.name},
              {"title", s.title},
              {"description", s.description},
              {"dataset", s.dataset},
              {"predictor", s.predictor},
              {"world_size", s.sampler.world_size},
              {"batch_size", s.loader.batch_size},
              {"sampler", to_string(s.sampler.kind)},
              {"shuffle", s.sampler.shuffle},
              {"seed", s.sampler.seed},
              {"epoch", s.sampler.epoch},
              {"sampler_drop_last", s.sampler.drop_last},
              {"loader_drop_last", s.loader.drop_last},
              {"limit_batches", s.loader.limit.to_string()},
              {"rank_seeds", s.sampler.rank_seeds},
              {"sanity_leak", s.loader.sanity_leak},
              {"sanity_steps", s.loader.sanity_steps},
              {"sync", to_string(s.sync)},
              {"counter_dtype", to_string(s.dtype)},
              {"torch_version", s.sampler.torch.to_string()},
              {"ignore_index", s.ignore_index}};
}

namespace {

template <class T>
T get(const json& j, const char* key, const std::string& origin) {
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw InputError(origin + ": '" + key + "' has the wrong type (" + j.at(key).dump() + ")");
  }
}

}  // namespace

Scenario scenario_from_json(const json& j, const std::string& origin, const Scenario& base) {
  if (!j.is_object()) throw InputError(origin + ": a scenario must be a JSON object");
  static const std::set<std::string> known = {"name",
                                              "title",
                                              "description",
                                              "dataset",
                                              "predictor",
                                              "world_size",
                                              "batch_size",
                                              "sampler",
                                              "shuffle",
                                              "seed",
                                              "epoch",
                                              "sampler_drop_last",
                                              "loader_drop_last",
                                              "limit_batches",
                                              "rank_seeds",
                                              "sanity_leak",
                                              "sanity_steps",
                                              "sync",
                                              "counter_dtype",
                                              "torch_version",
                                              "ignore_index",
                                              "lesson"};
  for (const auto& item : j.items()) {
    if (!known.count(item.key())) throw InputError(origin + ": unknown key '" + item.key() + "'");
  }
  Scenario s = base;
  auto has = [&](const char* k) { return j.contains(k); };
  if (has("name")) s.name = get<std::string>(j, "name", origin);
  if (has("title")) s.title = get<std::string>(j, "title", origin);
  if (has("description")) s.description = get<std::string>(j, "description", origin);
  if (has("dataset")) s.dataset = get<std::string>(j, "dataset", origin);
  if (has("predictor")) s.predictor = get<std::string>(j, "predictor", origin);
  if (has("world_size")) s.sampler.world_size = get<int>(j, "world_size", origin);
  if (has("batch_size")) s.loader.batch_size = get<int64_t>(j, "batch_size", origin);
  if (has("sampler")) s.sampler.kind = parse_sampler_kind(get<std::string>(j, "sampler", origin));
  if (has("shuffle")) s.sampler.shuffle = get<bool>(j, "shuffle", origin);
  if (has("seed")) s.sampler.seed = get<int64_t>(j, "seed", origin);
  if (has("epoch")) s.sampler.epoch = get<int64_t>(j, "epoch", origin);
  if (has("sampler_drop_last")) s.sampler.drop_last = get<bool>(j, "sampler_drop_last", origin);
  if (has("loader_drop_last")) s.loader.drop_last = get<bool>(j, "loader_drop_last", origin);
  if (has("limit_batches")) {
    const json& v = j.at("limit_batches");
    s.loader.limit = BatchLimit::parse(v.is_string() ? v.get<std::string>() : v.dump());
  }
  if (has("rank_seeds")) s.sampler.rank_seeds = get<std::vector<int64_t>>(j, "rank_seeds", origin);
  if (has("sanity_leak")) s.loader.sanity_leak = get<bool>(j, "sanity_leak", origin);
  if (has("sanity_steps")) s.loader.sanity_steps = get<int>(j, "sanity_steps", origin);
  if (has("sync")) s.sync = parse_sync_strategy(get<std::string>(j, "sync", origin));
  if (has("counter_dtype"))
    s.dtype = parse_counter_dtype(get<std::string>(j, "counter_dtype", origin));
  if (has("torch_version")) {
    s.sampler.torch = TorchVersion::parse(get<std::string>(j, "torch_version", origin));
  }
  if (has("ignore_index")) s.ignore_index = get<int>(j, "ignore_index", origin);
  return s;
}

Scenario load_scenario_file(const std::string& path) {
  const std::string text = read_file_bytes(path, size_t(1) << 24);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  try {
    return scenario_from_json(j, path);
  } catch (const InputError& e) {
    const std::string what = e.what();
    // Flag-named errors from the parsers get the file name in front.
    throw InputError(what.rfind(path, 0) == 0 ? what : path + ": " + what);
  }
}

void save_scenario_file(const Scenario& s, const std::string& path) {
  write_file_atomic(path, to_json(s).dump(2) + "\n");
}

}  // namespace shardlens
