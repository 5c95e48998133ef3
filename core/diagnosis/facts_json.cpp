#include "core/diagnosis/facts_json.h"

namespace shardlens {

using nlohmann::json;

namespace {

json cell_json(const CellFact& c) {
  json out = {{"row", c.row}, {"col", c.col}, {"observed", c.observed}, {"exact", c.exact}};
  if (c.rank >= 0) out["rank"] = c.rank;
  return out;
}

const char* evidence_name(ListEvidence e) {
  switch (e) {
    case ListEvidence::None:
      return "none";
    case ListEvidence::SimulatedSame:
      return "simulated-same";
    case ListEvidence::SimulatedApart:
      return "simulated-apart";
    case ListEvidence::SeedEverything:
      return "seed-everything";
    case ListEvidence::PaddingAgrees:
      return "padding-agrees";
    case ListEvidence::PaddingDisagrees:
      return "padding-disagrees";
  }
  return "none";
}

json lists_json(const ListFacts& l) {
  json out = {{"evidence", evidence_name(l.evidence)}};
  if (l.evidence == ListEvidence::SeedEverything) out["seed"] = l.seed;
  if (l.evidence == ListEvidence::PaddingAgrees) out["padding_checked"] = l.padding_checked;
  if (l.evidence == ListEvidence::PaddingDisagrees)
    out.update({{"padding_rank", l.padding_rank},
                {"padding_sample", l.padding_sample},
                {"position", l.position},
                {"other_rank", l.other_rank},
                {"other_sample", l.other_sample}});
  return out;
}

template <typename T>
void put(json& out, const char* name, const std::optional<T>& value) {
  if (value) out[name] = *value;
}

template <typename T>
void put(json& out, const char* name, const std::vector<T>& values) {
  if (!values.empty()) out[name] = values;
}

}  // namespace

json facts_json(const Facts& f) {
  json out = json::object();
  put(out, "dataset_size", f.dataset_size);
  put(out, "world_size", f.world_size);
  put(out, "batch_size", f.batch_size);
  put(out, "missing", f.missing);
  put(out, "padding_records", f.padding_records);
  put(out, "tail_repeats", f.tail_repeats);
  put(out, "overlap", f.overlap);
  put(out, "limit_batches", f.limit_batches);
  put(out, "sanity_records", f.sanity_records);
  put(out, "repeated_prefix", f.repeated_prefix);
  put(out, "samples_per_rank", f.samples_per_rank);
  put(out, "missing_at_end", f.missing_at_end);
  put(out, "batch_limited", f.batch_limited);
  put(out, "loader_drop_last", f.loader_drop_last);
  put(out, "reshuffled_each_epoch", f.reshuffled_each_epoch);
  put(out, "reported_total", f.reported_total);
  put(out, "rank_sum_total", f.rank_sum_total);
  put(out, "reporting_rank", f.reporting_rank);
  put(out, "disagreeing_ranks", f.disagreeing_ranks);
  put(out, "only_rank", f.only_rank);
  put(out, "left_out_rank", f.left_out_rank);
  put(out, "added_twice_rank", f.added_twice_rank);
  put(out, "zero_pairs", f.zero_pairs);
  put(out, "trimmed", f.trimmed);
  put(out, "padding_kept", f.padding_kept);
  if (!f.rounded.empty()) {
    json rounded = json::array();
    for (const RoundedCells& r : f.rounded)
      rounded.push_back({{"matrix", r.synced ? "synced" : "ranks"},
                         {"cells", r.cells},
                         {"too_high", r.too_high},
                         {"too_low", r.too_low},
                         {"largest", cell_json(r.largest)},
                         {"dtype", to_string(r.dtype)},
                         {"spacing", r.spacing}});
    out["rounded"] = rounded;
  }
  put(out, "unexplained_cells", f.unexplained_cells);
  if (f.first_unexplained) out["first_unexplained"] = cell_json(*f.first_unexplained);
  put(out, "ignored_classes", f.ignored_classes);
  put(out, "ignore_index", f.ignore_index);
  put(out, "invalid_records", f.invalid_records);
  put(out, "stopped_by", f.stopped_by);
  put(out, "rank_steps", f.rank_steps);
  put(out, "rank_samples", f.rank_samples);
  put(out, "sync", f.sync);
  put(out, "validations", f.validations);
  put(out, "epoch", f.epoch);
  put(out, "distinct_evaluated", f.distinct_evaluated);
  put(out, "logged_metric", f.logged_metric);
  put(out, "logged_value", f.logged_value);
  put(out, "true_value", f.true_value);
  if (f.rank_value_range)
    out["rank_value_range"] = {f.rank_value_range->first, f.rank_value_range->second};
  put(out, "logged_per_batch", f.logged_per_batch);
  if (f.lists) out["lists"] = lists_json(*f.lists);
  if (f.draw)
    out["draw"] = {{"draws", f.draw->draws},
                   {"distinct", f.draw->distinct},
                   {"repeated", f.draw->repeated},
                   {"whole", f.draw->whole}};
  return out;
}

}  // namespace shardlens
