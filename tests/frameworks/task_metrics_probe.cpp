// Reads cases of per-rank and expected matrices and prints ShardLens's task metrics of each,
// for task_metrics_oracle.py to compare with torchmetrics computing the same metrics from
// the same counts.
//
// Usage: task_metrics_probe CASES.json
// CASES.json: {"cases": [{"task": "segmentation" | "tokens" | "multilabel",
//   "ignore_index": int (-1: none), "classes": C, "per_rank": [[C*C cells, row-major], ...],
//   "expected": [C*C cells]}]}. The synced matrix is the ranks' sum (an all-reduce).
// Prints {"cases": [task_metrics_json of each]} on one line.
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/report/task_metrics.h"

using namespace shardlens;
using nlohmann::json;

namespace {

Matrix matrix_of(const json& cells, int32_t classes) {
  Matrix m(classes);
  m.cells = cells.get<std::vector<double>>();
  if (m.cells.size() != size_t(classes) * size_t(classes))
    throw std::runtime_error("a matrix of " + std::to_string(m.cells.size()) + " cells");
  return m;
}

json probe(const json& c) {
  Evaluation e;
  e.meta.task = *task_from_string(c.at("task").get<std::string>());
  e.meta.ignore_index = c.at("ignore_index").get<int>();
  const auto classes = c.at("classes").get<int32_t>();
  if (e.meta.task == Task::Multilabel) {
    std::vector<std::string> labels;
    for (int32_t l = 0; l < classes / 2; ++l) labels.push_back("l" + std::to_string(l));
    e.meta.class_names = multilabel_class_names(labels);
  } else {
    e.meta.class_names = class_names_or_numbers({}, classes);
  }
  Matrix synced(classes);
  for (const json& rank : c.at("per_rank")) {
    e.per_rank.push_back(matrix_of(rank, classes));
    synced += e.per_rank.back();
  }
  e.synced = synced;
  e.expected = matrix_of(c.at("expected"), classes);
  return task_metrics_json(task_metrics(e));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: task_metrics_probe CASES.json\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  const json cases = json::parse(in);
  json out = json::array();
  for (const json& c : cases.at("cases")) out.push_back(probe(c));
  std::cout << json{{"cases", out}}.dump() << "\n";
  return 0;
}
