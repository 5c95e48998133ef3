#pragma once
// Dataset and predictor spec strings, as the CLI and scenario files write them:
//   dataset:   synthetic:classes=10,per-class=50 | synthetic:counts=3,5,7 |
//              synthetic:classes=10,n=1000,zipf=1.2 | fashion-mnist:test | fashion-mnist:train |
//              idx:PATH | npy:PATH | csv:PATH; every kind takes ",names=PATH" (class names)
//              and ",first=N" or ",indices=FILE.npy" (a subset, indexed from 0 like a
//              torch Subset)
//   predictor: perfect | noisy:accuracy=0.9,seed=1[,structure=adjacent] | npy:PATH | csv:PATH
#include <map>
#include <string>
#include <vector>

#include "core/model/labels.h"
#include "core/model/progress.h"

namespace shardlens {

struct Spec {
  std::string kind;                            // text before the first ':'
  std::string path;                            // for file kinds: text after ':' up to options
  std::map<std::string, std::string> options;  // key=value pairs
};

// Parses "kind:key=value,key=value" or "kind:PATH[,key=value...]". `flag` names the flag in
// errors ("--dataset").
Spec parse_spec(const std::string& text, const std::string& flag);

std::string fashion_mnist_dir();  // /usr/share/datasets/fashion-mnist unless overridden

Labels load_labels(const std::string& spec, Progress* progress = nullptr);
std::vector<int32_t> load_predictions(const std::string& spec, const Labels& labels,
                                      Progress* progress = nullptr);

}  // namespace shardlens
