#include "core/dataset/dataset_spec.h"

#include <cstdlib>
#include <regex>

#include "core/dataset/dense_synthetic.h"
#include "core/io/class_hierarchy.h"
#include "core/io/csv.h"
#include "core/io/files.h"
#include "core/io/idx.h"
#include "core/io/npy.h"
#include "core/vocabulary/limits.h"
#include "core/vocabulary/memory_budget.h"
#include "core/vocabulary/types.h"

namespace shardlens {

int64_t spec_int(const Spec& spec, const std::string& key, const std::string& flag, int64_t lo,
                 int64_t hi) {
  const std::string& text = spec.options.at(key);
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < lo || v > hi) {
    throw InputError(flag + ": " + key + "=" + text + " must be an integer in [" +
                     std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return v;
}

double spec_double(const Spec& spec, const std::string& key, const std::string& flag) {
  const std::string& text = spec.options.at(key);
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') {
    throw InputError(flag + ": " + key + "=" + text + " is not a number");
  }
  return v;
}

void spec_allow_only(const Spec& spec, const std::vector<std::string>& keys,
                     const std::string& flag) {
  for (const auto& [key, value] : spec.options) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      throw InputError(flag + ": unknown option '" + key + "' for " + spec.kind);
    }
  }
}

namespace {

LabelLayout parse_layout(const Spec& spec) {
  if (!spec.options.count("layout")) return LabelLayout::Shuffled;
  const std::string& v = spec.options.at("layout");
  if (v == "shuffled") return LabelLayout::Shuffled;
  if (v == "blocks") return LabelLayout::Blocks;
  if (v == "interleaved") return LabelLayout::Interleaved;
  throw InputError("--dataset: layout=" + v + " is not shuffled, blocks or interleaved");
}

// The class counts a synthetic spec declares, checked; nothing per sample is allocated.
std::vector<int64_t> synthetic_class_counts(const Spec& spec) {
  const std::string flag = "--dataset";
  spec_allow_only(spec,
                  {"classes", "per-class", "counts", "n", "zipf", "layout", "layout-seed", "names",
                   "hierarchy", "first", "indices"},
                  flag);
  std::vector<int64_t> counts;
  if (spec.options.count("counts")) {
    const std::string& text = spec.options.at("counts");
    size_t begin = 0;
    while (begin <= text.size()) {
      const size_t end = std::min(text.find(',', begin), text.size());
      Spec one;
      one.options["count"] = text.substr(begin, end - begin);
      counts.push_back(spec_int(one, "count", flag, 0, kMaxSamples));
      begin = end + 1;
    }
  } else {
    if (!spec.options.count("classes")) {
      throw InputError(flag +
                       ": synthetic needs classes=C with per-class=K or n=N,zipf=S, "
                       "or counts=a,b,c");
    }
    const int64_t classes = spec_int(spec, "classes", flag, 1, kMaxClasses);
    if (spec.options.count("zipf")) {
      if (!spec.options.count("n")) throw InputError(flag + ": zipf needs n=N");
      const double s = spec_double(spec, "zipf", flag);
      if (!(s >= 0 && s <= 10)) throw InputError(flag + ": zipf exponent must be in [0, 10]");
      counts =
          zipf_counts(static_cast<int32_t>(classes), spec_int(spec, "n", flag, 1, kMaxSamples), s);
    } else {
      if (spec.options.count("n"))
        throw InputError(flag +
                         ": synthetic n=N needs zipf=S (the exponent of the class sizes); "
                         "for equal classes give per-class=K instead");
      if (!spec.options.count("per-class"))
        throw InputError(flag +
                         ": synthetic needs per-class=K (samples per class), or n=N with "
                         "zipf=S");
      counts.assign(static_cast<size_t>(classes),
                    spec_int(spec, "per-class", flag, 1, kMaxSamples));
    }
  }
  int64_t n = 0;
  for (int64_t c : counts) n += c;
  if (counts.empty() || static_cast<int64_t>(counts.size()) > kMaxClasses) {
    throw InputError(flag + ": between 1 and " + std::to_string(kMaxClasses) +
                     " classes are supported");
  }
  if (n <= 0 || n > kMaxSamples)
    throw InputError(flag + ": the dataset must have 1 to 2^32-1 samples");
  return counts;
}

Labels synthetic_labels(const Spec& spec, Progress* progress) {
  const std::string flag = "--dataset";
  const std::vector<int64_t> counts = synthetic_class_counts(spec);
  int64_t n = 0;
  for (int64_t c : counts) n += c;
  // The labels are the first per-index array of any evaluation of them: their part of the
  // evaluation's estimate is checked before the n targets are drawn (the matrices are the
  // simulation's to check, with its world size: labels at the class cap are cheap).
  check_evaluation_budget(flag, {.samples = n});
  const auto seed =
      spec.options.count("layout-seed") ? spec_int(spec, "layout-seed", flag, 0, 0xFFFFFFFFll) : 0;
  Labels labels =
      synthetic_counts(counts, parse_layout(spec), static_cast<uint32_t>(seed), progress);
  labels.source = "synthetic";
  return labels;
}

Labels file_labels(const Spec& spec) {
  const std::string flag = "--dataset";
  spec_allow_only(spec, {"classes", "names", "hierarchy", "first", "indices"}, flag);
  const int32_t classes =
      spec.options.count("classes")
          ? static_cast<int32_t>(spec_int(spec, "classes", flag, 1, kMaxClasses))
          : 0;
  const auto too_many = [&](size_t count) {
    if (static_cast<int64_t>(count) > kMaxSamples)
      throw InputError(spec.path + ": more than 2^32-1 labels");
  };
  if (spec.kind == "npy") {
    // Chunk by chunk: a large label file is never held as int64 in full.
    LabelBuilder builder(classes, spec.path);
    read_npy_integer_column(spec.path, [&](size_t total, size_t offset, auto values) {
      if (offset == 0) too_many(total), builder.reserve(total);
      builder.add(values);
    });
    return builder.finish();
  }
  const std::vector<int64_t> values =
      spec.kind == "idx" ? read_idx_labels(spec.path)
                         : read_csv_integers(spec.path, {"label", "target", "class"});
  too_many(values.size());
  return labels_from_values(values, classes, spec.path);
}

std::vector<int64_t> read_npy_column(const std::string& path) {
  std::vector<int64_t> out;
  read_npy_integer_column(path, [&](size_t total, size_t, std::span<const int64_t> values) {
    out.reserve(total);
    out.insert(out.end(), values.begin(), values.end());
  });
  return out;
}

// ",first=N" keeps the first N samples, ",indices=FILE.npy" (or .csv) the listed ones in
// that order; each keeps its index in the full dataset in source_indices, so its image is
// still the right one. The subset's own indices run from 0, as a torch Subset's do.
void apply_subset(Labels& labels, const Spec& spec, const std::string& text) {
  const std::string flag = "--dataset";
  const bool first = spec.options.count("first"), listed = spec.options.count("indices");
  if (!first && !listed) return;
  if (first && listed) throw InputError(flag + ": give first=N or indices=FILE, not both");
  const int64_t full = labels.size();
  std::vector<int64_t> keep;
  if (first) {
    const int64_t n = spec_int(spec, "first", flag, 1, full);
    keep.resize(size_t(n));
    for (int64_t i = 0; i < n; ++i) keep[size_t(i)] = i;
  } else {
    const std::string& path = spec.options.at("indices");
    keep = path.size() > 4 && path.compare(path.size() - 4, 4, ".csv") == 0
               ? read_csv_integers(path, {"index", "indices", "idx"})
               : read_npy_column(path);
    if (keep.empty()) throw InputError(path + ": no indices");
    std::vector<bool> seen(size_t(full), false);
    for (size_t k = 0; k < keep.size(); ++k) {
      const int64_t i = keep[k];
      if (i < 0 || i >= full)
        throw InputError(path + ": index " + std::to_string(i) + " (entry " + std::to_string(k) +
                         ") is not in the dataset's [0, " + std::to_string(full) + ")");
      if (seen[size_t(i)])
        throw InputError(path + ": index " + std::to_string(i) + " is listed twice");
      seen[size_t(i)] = true;
    }
  }
  std::vector<int32_t> targets(keep.size());
  for (size_t k = 0; k < keep.size(); ++k) targets[k] = labels.targets[size_t(keep[k])];
  if (!labels.source_indices.empty())
    for (int64_t& i : keep) i = labels.source_indices[size_t(i)];
  labels.targets = std::move(targets);
  labels.source_indices = std::move(keep);
  labels.source = text;
}

Labels dense_labels(const std::string& text) {
  const DenseTruth dense = load_dense_truth(text);
  Labels labels;
  labels.num_classes = dense.classes();
  labels.class_names = dense.class_names;
  labels.source = text;
  labels.targets.reserve(size_t(dense.size()));
  for (int64_t i = 0; i < dense.size(); ++i)
    labels.targets.push_back(std::max(dense.truth.dominant(i).first, 0));
  return labels;
}

}  // namespace

std::vector<std::string> spec_files(const std::string& text) {
  Spec spec;
  try {
    spec = parse_spec(text, "spec");
  } catch (const InputError&) {
    return {};
  }
  std::vector<std::string> files;
  const bool file_kind = spec.kind == "idx" || spec.kind == "npy" || spec.kind == "csv" ||
                         (spec.kind == "model" && spec.path != "reference");
  if (file_kind && !spec.path.empty()) files.push_back(spec.path);
  for (const char* key : {"names", "hierarchy", "indices"})
    if (spec.options.count(key)) files.push_back(spec.options.at(key));
  return files;
}

Spec parse_spec(const std::string& text, const std::string& flag) {
  // A NUL would cut the path or option where the OS reads it: "npy:a.npy\0,first=5" would
  // open a.npy and drop what follows without a word.
  if (const size_t nul = text.find('\0'); nul != std::string::npos)
    throw InputError(flag + ": holds a NUL character at byte " + std::to_string(nul));
  Spec spec;
  const size_t colon = text.find(':');
  spec.kind = text.substr(0, colon);
  if (spec.kind.empty()) throw InputError(flag + ": empty value");
  if (colon == std::string::npos) return spec;
  std::string rest = text.substr(colon + 1);
  const bool has_path = spec.kind == "idx" || spec.kind == "npy" || spec.kind == "csv" ||
                        spec.kind == "fashion-mnist" || spec.kind == "model";
  if (has_path) {
    // The path runs up to the first ",key=" so paths may hold commas elsewhere.
    std::smatch m;
    static const std::regex option_start(",[a-z][a-z-]*=");
    if (std::regex_search(rest, m, option_start)) {
      spec.path = rest.substr(0, m.position(0));
      rest = rest.substr(m.position(0) + 1);
    } else {
      spec.path = rest;
      rest.clear();
    }
  }
  // key=value pairs; a part without '=' continues the previous value (counts=3,5,7).
  std::string last_key;
  size_t begin = 0;
  while (!rest.empty() && begin <= rest.size()) {
    const size_t end = std::min(rest.find(',', begin), rest.size());
    const std::string part = rest.substr(begin, end - begin);
    const size_t eq = part.find('=');
    if (eq != std::string::npos) {
      last_key = part.substr(0, eq);
      if (spec.options.count(last_key)) throw InputError(flag + ": '" + last_key + "' given twice");
      spec.options[last_key] = part.substr(eq + 1);
    } else if (!last_key.empty()) {
      spec.options[last_key] += "," + part;
    } else {
      throw InputError(flag + ": '" + part + "' is not key=value in '" + text + "'");
    }
    begin = end + 1;
  }
  return spec;
}

std::optional<DeclaredDataset> declared_dataset(const std::string& text) {
  if (is_dense_dataset(text)) {
    const DenseDeclared dense = declared_dense(text);
    return DeclaredDataset{dense.samples, dense.classes, dense.task, dense.ignore_index};
  }
  if (text.rfind("synthetic", 0) != 0) return std::nullopt;
  const Spec spec = parse_spec(text, "--dataset");
  if (spec.kind != "synthetic") return std::nullopt;
  const std::vector<int64_t> counts = synthetic_class_counts(spec);
  DeclaredDataset d;
  for (int64_t c : counts) d.samples += c;
  d.classes = int32_t(counts.size());
  return d;
}

std::string dataset_origin(const std::string& text) {
  try {
    const Spec spec = parse_spec(text, "--dataset");
    const bool file = spec.kind == "idx" || spec.kind == "npy" || spec.kind == "csv";
    if (file && !spec.path.empty()) return spec.path;
  } catch (const InputError&) {
    // No spec (an imported run's), or a broken one: the flag is what to name.
  }
  return "--dataset";
}

std::string fashion_mnist_dir() {
  const char* env = std::getenv("SHARDLENS_FASHION_MNIST_DIR");
  return env && *env ? env : "/usr/share/datasets/fashion-mnist";
}

Labels load_labels(const std::string& text, Progress* progress) {
  step(progress, "loading labels", 0.0);
  if (is_dense_dataset(text)) return dense_labels(text);
  const Spec spec = parse_spec(text, "--dataset");
  Labels labels;
  if (spec.kind == "synthetic") {
    labels = synthetic_labels(spec, progress);
  } else if (spec.kind == "fashion-mnist") {
    if (spec.path != "test" && spec.path != "train") {
      throw InputError("--dataset: fashion-mnist:" + spec.path +
                       " is not fashion-mnist:test or :train");
    }
    const std::string file = fashion_mnist_dir() + "/" + (spec.path == "test" ? "t10k" : "train") +
                             "-labels-idx1-ubyte.gz";
    spec_allow_only(spec, {"names", "hierarchy", "first", "indices"}, "--dataset");
    labels = labels_from_values(read_idx_labels(file), 10, file);
    labels.class_names = fashion_mnist_class_names();
    labels.source = text;
  } else if (spec.kind == "idx" || spec.kind == "npy" || spec.kind == "csv") {
    if (spec.path.empty()) throw InputError("--dataset: " + spec.kind + ": needs a file path");
    labels = file_labels(spec);
    labels.source = text;
  } else {
    throw InputError("--dataset: unknown kind '" + spec.kind +
                     "' (synthetic, fashion-mnist, idx, npy, csv, voc2012, cityscapes, ade20k, "
                     "seg, conll2003, tokens, coco-multilabel, multilabel)");
  }
  apply_subset(labels, spec, text);
  if (spec.options.count("names")) {
    labels.class_names = read_class_names(spec.options.at("names"));
    if (static_cast<int32_t>(labels.class_names.size()) != labels.num_classes) {
      throw InputError(spec.options.at("names") + ": " + std::to_string(labels.class_names.size()) +
                       " class names for " + std::to_string(labels.num_classes) + " classes");
    }
  }
  if (spec.options.count("hierarchy"))
    labels.hierarchy = std::make_shared<const ClassHierarchy>(
        read_class_hierarchy(spec.options.at("hierarchy"), labels.num_classes));
  return labels;
}

}  // namespace shardlens
