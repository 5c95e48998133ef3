#include "core/evaluation/scenario.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/io/files.h"
#include "core/io/json_fields.h"
#include "core/model/types.h"

namespace shardlens {

using nlohmann::json;

namespace {

json inner_to_json(const InnerSampler& inner) {
  json j{{"kind", to_string(inner.kind)}};
  if (inner.kind == InnerSampler::Kind::WeightedRandom) {
    j["weights"] = inner.weights;
    j["num_samples"] = inner.num_samples;
  }
  if (inner.kind == InnerSampler::Kind::Recorded) j["indices"] = inner.indices;
  return j;
}

}  // namespace

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
              {"ignore_index", s.ignore_index},
              {"split_batches", s.sampler.split_batches},
              {"even_batches", s.sampler.even_batches},
              {"accelerate_input", to_string(s.sampler.accelerate_input)},
              {"accelerate_shuffle", to_string(s.sampler.accelerate_shuffle)},
              {"inner_sampler", inner_to_json(s.sampler.inner)},
              {"validations_per_epoch", s.validations_per_epoch}};
}

namespace {

// The value parsers name the command-line flag ("--sampler: ..."); in a file the file
// comes first, so the user knows where the bad value is.
template <class F>
auto in_file(const std::string& origin, F&& parse) {
  try {
    return parse();
  } catch (const InputError& e) {
    throw InputError(origin + ": " + e.what());
  }
}

InnerSampler inner_from_json(const json& j, const std::string& origin) {
  const std::string where = origin + ": 'inner_sampler'";
  if (!j.is_object()) throw InputError(where + " must be an object with a 'kind'");
  for (const auto& item : j.items()) {
    if (item.key() != "kind" && item.key() != "weights" && item.key() != "num_samples" &&
        item.key() != "indices")
      throw InputError(where + " has an unknown key '" + item.key() + "'");
  }
  InnerSampler inner;
  if (j.contains("kind")) {
    const std::string text = json_string(j, "kind", where);
    inner.kind = in_file(origin, [&] { return parse_inner_sampler_kind(text); });
  }
  if (j.contains("weights")) inner.weights = json_numbers(j, "weights", where);
  if (j.contains("num_samples"))
    inner.num_samples = json_integer_of<int64_t>(j, "num_samples", where);
  if (inner.num_samples < 0) throw InputError(where + ": 'num_samples' must not be negative");
  if (j.contains("indices")) inner.indices = json_integers(j, "indices", where);
  return inner;
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
                                              "split_batches",
                                              "even_batches",
                                              "accelerate_input",
                                              "accelerate_shuffle",
                                              "inner_sampler",
                                              "validations_per_epoch",
                                              "lesson"};
  for (const auto& item : j.items()) {
    if (!known.count(item.key())) throw InputError(origin + ": unknown key '" + item.key() + "'");
  }
  Scenario s = base;
  auto has = [&](const char* k) { return j.contains(k); };
  if (has("name")) s.name = json_string(j, "name", origin);
  if (has("title")) s.title = json_string(j, "title", origin);
  if (has("description")) s.description = json_string(j, "description", origin);
  if (has("dataset")) s.dataset = json_string(j, "dataset", origin);
  if (has("predictor")) s.predictor = json_string(j, "predictor", origin);
  if (has("world_size")) s.sampler.world_size = json_integer_of<int>(j, "world_size", origin);
  if (has("batch_size")) s.loader.batch_size = json_integer_of<int64_t>(j, "batch_size", origin);
  if (has("sampler")) {
    const std::string text = json_string(j, "sampler", origin);
    s.sampler.kind = in_file(origin, [&] { return parse_sampler_kind(text); });
  }
  if (has("shuffle")) s.sampler.shuffle = json_bool(j, "shuffle", origin);
  if (has("seed")) s.sampler.seed = json_integer_of<int64_t>(j, "seed", origin);
  if (has("epoch")) s.sampler.epoch = json_integer_of<int64_t>(j, "epoch", origin);
  if (has("sampler_drop_last")) s.sampler.drop_last = json_bool(j, "sampler_drop_last", origin);
  if (has("loader_drop_last")) s.loader.drop_last = json_bool(j, "loader_drop_last", origin);
  if (has("limit_batches")) {
    const json& v = j.at("limit_batches");
    if (v.is_array() || v.is_object())
      throw InputError(origin + ": 'limit_batches' has the wrong type (" + describe_json(v) + ")");
    const std::string text = v.is_string() ? v.get<std::string>() : v.dump();  // a scalar
    s.loader.limit = in_file(origin, [&] { return BatchLimit::parse(text); });
  }
  if (has("rank_seeds")) s.sampler.rank_seeds = json_integers(j, "rank_seeds", origin);
  if (has("sanity_leak")) s.loader.sanity_leak = json_bool(j, "sanity_leak", origin);
  if (has("sanity_steps")) s.loader.sanity_steps = json_integer_of<int>(j, "sanity_steps", origin);
  if (has("sync")) {
    const std::string text = json_string(j, "sync", origin);
    s.sync = in_file(origin, [&] { return parse_sync_strategy(text); });
  }
  if (has("counter_dtype")) {
    const std::string text = json_string(j, "counter_dtype", origin);
    s.dtype = in_file(origin, [&] { return parse_counter_dtype(text); });
  }
  if (has("torch_version")) {
    const std::string text = json_string(j, "torch_version", origin);
    s.sampler.torch = in_file(origin, [&] { return TorchVersion::parse(text); });
  }
  if (has("ignore_index")) s.ignore_index = json_integer_of<int>(j, "ignore_index", origin);
  if (has("split_batches")) s.sampler.split_batches = json_bool(j, "split_batches", origin);
  if (has("even_batches")) s.sampler.even_batches = json_bool(j, "even_batches", origin);
  if (has("accelerate_input")) {
    const std::string text = json_string(j, "accelerate_input", origin);
    s.sampler.accelerate_input = in_file(origin, [&] { return parse_accelerate_input(text); });
  }
  if (has("accelerate_shuffle")) {
    const std::string text = json_string(j, "accelerate_shuffle", origin);
    s.sampler.accelerate_shuffle = in_file(origin, [&] { return parse_accelerate_shuffle(text); });
  }
  if (has("inner_sampler")) s.sampler.inner = inner_from_json(j.at("inner_sampler"), origin);
  if (has("validations_per_epoch")) {
    s.validations_per_epoch = json_integer_of<int>(j, "validations_per_epoch", origin);
    if (s.validations_per_epoch < 1 || s.validations_per_epoch > 1000)
      throw InputError(origin + ": 'validations_per_epoch' must be 1 to 1000");
  }
  return s;
}

Scenario load_scenario_file(const std::string& path) {
  const std::string text = read_file_bytes(path, size_t(1) << 24);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    // parse_error, and out_of_range for a number too large for a double (1e400). The
    // library's "[json.exception.parse_error.101] parse error at line 1, ..." is said plainly:
    // "not valid JSON at line 1, column 18: ...".
    std::string what = e.what();
    if (what.rfind("[json.exception.", 0) == 0 && what.find("] ") != std::string::npos)
      what.erase(0, what.find("] ") + 2);
    if (what.rfind("parse error ", 0) == 0) what.erase(0, 12);
    if (what.rfind("syntax error while parsing value - ", 0) == 0) what.erase(0, 35);
    throw InputError(path + ": not valid JSON " +
                     (what.rfind("at ", 0) == 0 ? what : "(" + what + ")"));
  }
  return scenario_from_json(j, path);
}

void save_scenario_file(const Scenario& s, const std::string& path) {
  write_file_atomic(path, to_json(s).dump(2) + "\n");
}

}  // namespace shardlens
