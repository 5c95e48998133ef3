#include "core/dataset/dense_synthetic.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/dataset/dataset_spec.h"
#include "core/vocabulary/limits.h"
#include "core/vocabulary/memory_budget.h"
#include "core/vocabulary/types.h"

namespace shardlens {

namespace {

const std::string kFlag = "--dataset";

// SplitMix64 steps: each sample draws from its own stream, seeded by (seed, index) alone.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

class Draw {
 public:
  Draw(uint64_t seed, int64_t index)
      : m_state(mix(seed * 0x100000001B3ull ^ mix(uint64_t(index)))) {}
  uint64_t next() { return m_state = mix(m_state); }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
  int64_t between(int64_t lo, int64_t hi) { return lo + int64_t(next() % uint64_t(hi - lo + 1)); }
  double normal() {  // Box-Muller; one value a call is enough here
    const double u = std::max(uniform(), 0x1.0p-53);
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * uniform());
  }
  // An index drawn with probability proportional to `weights` (not all zero).
  size_t pick(const std::vector<double>& weights) {
    const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
    double u = uniform() * total;
    for (size_t i = 0; i < weights.size(); ++i) {
      if (u < weights[i]) return i;
      u -= weights[i];
    }
    for (size_t i = weights.size(); i-- > 0;)
      if (weights[i] > 0) return i;
    return 0;
  }

 private:
  uint64_t m_state;
};

bool any_positive(const std::vector<double>& weights) {
  return std::any_of(weights.begin(), weights.end(), [](double w) { return w > 0; });
}

// `total` split in proportion to `weights`, largest remainders first, each part >= 1 while
// there is enough to go round.
std::vector<int64_t> split(int64_t total, const std::vector<double>& weights) {
  const size_t k = weights.size();
  std::vector<int64_t> out(k, 0);
  if (k == 0 || total <= 0) return out;
  const int64_t floor_each = total >= int64_t(k) ? 1 : 0;
  const int64_t rest = total - floor_each * int64_t(k);
  const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<std::pair<double, size_t>> remainders;
  int64_t given = 0;
  for (size_t i = 0; i < k; ++i) {
    const double exact = double(rest) * weights[i] / sum;
    const auto whole = int64_t(exact);
    out[i] = floor_each + whole;
    given += whole;
    remainders.push_back({exact - double(whole), i});
  }
  std::sort(remainders.begin(), remainders.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  for (int64_t j = 0; j < rest - given; ++j) ++out[remainders[size_t(j) % k].second];
  return out;
}

// ---------------------------------------------------------------------------------------
// Segmentation: a per-image class histogram. Classes are present by a Bernoulli draw each
// (`presence`) plus 1..k picked by weight (`pick_weight`, `pick_k`); present classes share
// the labelled pixels by `area` times a log-normal jitter; a fraction of pixels is ignored.
struct SegShape {
  int64_t n = 0;
  std::vector<std::string> names;
  int32_t width_lo = 0, width_hi = 0, height_lo = 0, height_hi = 0;
  bool long_side_500 = false;  // VOC: the longer side is 500, the other drawn
  double ignored_lo = 0, ignored_hi = 0;
  std::vector<double> presence;
  std::vector<double> pick_weight;
  std::vector<double> pick_k;  // probability of 1, 2, 3 ... picked classes
  std::vector<double> area;
};

const std::vector<std::string>& voc_names() {
  static const std::vector<std::string> names = {
      "background", "aeroplane", "bicycle",     "bird",  "boat",        "bottle", "bus",
      "car",        "cat",       "chair",       "cow",   "diningtable", "dog",    "horse",
      "motorbike",  "person",    "pottedplant", "sheep", "sofa",        "train",  "tvmonitor"};
  return names;
}

SegShape voc_shape() {
  SegShape s;
  s.n = 1449;
  s.names = voc_names();
  s.long_side_500 = true;
  s.ignored_lo = 0.03, s.ignored_hi = 0.09;  // the void band around each object
  s.presence.assign(21, 0.0);
  s.presence[0] = 1.0;  // background in every image
  // Images per object class, about as many as VOC 2012 val shows (person far ahead).
  s.pick_weight = {0,  88,  65, 105, 78,  87, 78, 128, 131, 148, 64,
                   82, 121, 68, 81,  442, 82, 63, 93,  83,  84};
  s.pick_k = {0.62, 0.27, 0.11};
  s.area.assign(21, 1.0);
  s.area[0] = 3.0;  // background ~70 % of the labelled pixels
  return s;
}

SegShape cityscapes_shape() {
  SegShape s;
  s.n = 500;
  s.names = {"road", "sidewalk",      "building",     "wall",       "fence",
             "pole", "traffic light", "traffic sign", "vegetation", "terrain",
             "sky",  "person",        "rider",        "car",        "truck",
             "bus",  "train",         "motorcycle",   "bicycle"};
  s.width_lo = s.width_hi = 2048;
  s.height_lo = s.height_hi = 1024;
  s.ignored_lo = 0.06, s.ignored_hi = 0.16;  // ego vehicle, out of roi, unlabelled
  // How often each class is in a frame, and its share of the pixels where it is: road,
  // building and vegetation fill most of a frame; train, bus, truck are rare.
  s.presence = {0.98, 0.95, 0.98, 0.35, 0.45, 0.99, 0.6,  0.9,  0.98, 0.5,
                0.9,  0.75, 0.35, 0.95, 0.1,  0.1,  0.04, 0.15, 0.55};
  const std::vector<double> share = {0.37,  0.06,  0.23,  0.007, 0.009, 0.012, 0.002,
                                     0.005, 0.16,  0.008, 0.035, 0.012, 0.002, 0.07,
                                     0.003, 0.003, 0.001, 0.001, 0.004};
  for (size_t c = 0; c < share.size(); ++c) s.area.push_back(share[c] / s.presence[c]);
  return s;
}

const std::vector<std::string>& ade_names() {
  static const std::vector<std::string> names = {"wall",
                                                 "building",
                                                 "sky",
                                                 "floor",
                                                 "tree",
                                                 "ceiling",
                                                 "road",
                                                 "bed",
                                                 "windowpane",
                                                 "grass",
                                                 "cabinet",
                                                 "sidewalk",
                                                 "person",
                                                 "earth",
                                                 "door",
                                                 "table",
                                                 "mountain",
                                                 "plant",
                                                 "curtain",
                                                 "chair",
                                                 "car",
                                                 "water",
                                                 "painting",
                                                 "sofa",
                                                 "shelf",
                                                 "house",
                                                 "sea",
                                                 "mirror",
                                                 "rug",
                                                 "field",
                                                 "armchair",
                                                 "seat",
                                                 "fence",
                                                 "desk",
                                                 "rock",
                                                 "wardrobe",
                                                 "lamp",
                                                 "bathtub",
                                                 "railing",
                                                 "cushion",
                                                 "base",
                                                 "box",
                                                 "column",
                                                 "signboard",
                                                 "chest of drawers",
                                                 "counter",
                                                 "sand",
                                                 "sink",
                                                 "skyscraper",
                                                 "fireplace",
                                                 "refrigerator",
                                                 "grandstand",
                                                 "path",
                                                 "stairs",
                                                 "runway",
                                                 "case",
                                                 "pool table",
                                                 "pillow",
                                                 "screen door",
                                                 "stairway",
                                                 "river",
                                                 "bridge",
                                                 "bookcase",
                                                 "blind",
                                                 "coffee table",
                                                 "toilet",
                                                 "flower",
                                                 "book",
                                                 "hill",
                                                 "bench",
                                                 "countertop",
                                                 "stove",
                                                 "palm",
                                                 "kitchen island",
                                                 "computer",
                                                 "swivel chair",
                                                 "boat",
                                                 "bar",
                                                 "arcade machine",
                                                 "hovel",
                                                 "bus",
                                                 "towel",
                                                 "light",
                                                 "truck",
                                                 "tower",
                                                 "chandelier",
                                                 "awning",
                                                 "streetlight",
                                                 "booth",
                                                 "television receiver",
                                                 "airplane",
                                                 "dirt track",
                                                 "apparel",
                                                 "pole",
                                                 "land",
                                                 "bannister",
                                                 "escalator",
                                                 "ottoman",
                                                 "bottle",
                                                 "buffet",
                                                 "poster",
                                                 "stage",
                                                 "van",
                                                 "ship",
                                                 "fountain",
                                                 "conveyer belt",
                                                 "canopy",
                                                 "washer",
                                                 "plaything",
                                                 "swimming pool",
                                                 "stool",
                                                 "barrel",
                                                 "basket",
                                                 "waterfall",
                                                 "tent",
                                                 "bag",
                                                 "minibike",
                                                 "cradle",
                                                 "oven",
                                                 "ball",
                                                 "food",
                                                 "step",
                                                 "tank",
                                                 "trade name",
                                                 "microwave",
                                                 "pot",
                                                 "animal",
                                                 "bicycle",
                                                 "lake",
                                                 "dishwasher",
                                                 "screen",
                                                 "blanket",
                                                 "sculpture",
                                                 "hood",
                                                 "sconce",
                                                 "vase",
                                                 "traffic light",
                                                 "tray",
                                                 "ashcan",
                                                 "fan",
                                                 "pier",
                                                 "crt screen",
                                                 "plate",
                                                 "monitor",
                                                 "bulletin board",
                                                 "shower",
                                                 "radiator",
                                                 "glass",
                                                 "clock",
                                                 "flag"};
  return names;
}

SegShape ade_shape() {
  SegShape s;
  s.n = 2000;
  s.names = ade_names();
  s.width_lo = s.height_lo = 256;
  s.width_hi = s.height_hi = 768;
  s.ignored_lo = 0.02, s.ignored_hi = 0.2;  // label 0, "other", is 255 after reduce_zero_label
  // Long-tailed: the classes are listed most frequent first; ~8.6 classes an image.
  for (int c = 0; c < 150; ++c) {
    s.presence.push_back(std::min(0.9, 0.95 * std::pow(c + 1, -0.8)));
    s.area.push_back(std::pow(c + 1, -0.4));
  }
  return s;
}

int64_t parse_int(const std::string& key, const std::string& text, int64_t lo, int64_t hi) {
  Spec one;
  one.options[key] = text;
  return spec_int(one, key, kFlag, lo, hi);
}

// "A-B" or "A": an inclusive range within [lo, hi].
std::pair<int64_t, int64_t> parse_range(const Spec& spec, const std::string& key, int64_t lo,
                                        int64_t hi) {
  const std::string& text = spec.options.at(key);
  const size_t dash = text.find('-');
  const int64_t a = parse_int(key, text.substr(0, dash), lo, hi);
  const int64_t b = dash == std::string::npos ? a : parse_int(key, text.substr(dash + 1), lo, hi);
  if (b < a) throw InputError(kFlag + ": " + key + "=" + text + " runs backwards");
  return {a, b};
}

double parse_fraction(const Spec& spec, const std::string& key, double lo, double hi) {
  const double v = spec_double(spec, key, kFlag);
  if (!(v >= lo && v <= hi))
    throw InputError(kFlag + ": " + key + "=" + spec.options.at(key) + " must be in [" +
                     std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

// seg:n=N,classes=K[,size=HxW][,per-image=A-B][,zipf=S][,background=F][,ignored=F]
SegShape generic_seg_shape(const Spec& spec) {
  for (const char* key : {"n", "classes"})
    if (!spec.options.count(key))
      throw InputError(kFlag + ": seg needs n=IMAGES and classes=K (seg:n=200,classes=8)");
  SegShape s;
  s.n = spec_int(spec, "n", kFlag, 1, kMaxSamples);
  const auto k = int32_t(spec_int(spec, "classes", kFlag, 1, kMaxClasses));
  int64_t h = 64, w = 64;
  if (spec.options.count("size")) {
    const std::string& text = spec.options.at("size");
    const size_t x = text.find('x');
    if (x == std::string::npos) throw InputError(kFlag + ": size=" + text + " is not HxW");
    h = parse_int("size", text.substr(0, x), 1, 65535);
    w = parse_int("size", text.substr(x + 1), 1, 65535);
  }
  s.height_lo = s.height_hi = int32_t(h);
  s.width_lo = s.width_hi = int32_t(w);
  const double background =
      spec.options.count("background") ? parse_fraction(spec, "background", 0, 0.99) : 0.0;
  const double ignored =
      spec.options.count("ignored") ? parse_fraction(spec, "ignored", 0, 1) : 0.05;
  s.ignored_lo = ignored * 0.5, s.ignored_hi = std::min(1.0, ignored * 1.5);
  const double zipf = spec.options.count("zipf") ? parse_fraction(spec, "zipf", 0, 10) : 0.0;
  const int32_t first_object = background > 0 ? 1 : 0;
  const int64_t objects = k - first_object;
  auto [lo, hi] =
      spec.options.count("per-image")
          ? parse_range(spec, "per-image", 1, std::max<int64_t>(objects, 1))
          : std::pair<int64_t, int64_t>{1, std::min<int64_t>(3, std::max<int64_t>(objects, 1))};
  s.presence.assign(size_t(k), 0.0);
  s.area.assign(size_t(k), 1.0);
  s.pick_weight.assign(size_t(k), 0.0);
  for (int32_t c = first_object; c < k; ++c)
    s.pick_weight[size_t(c)] = std::pow(double(c - first_object + 1), -zipf);
  if (background > 0) {
    s.presence[0] = 1.0;
    // Its share of the labelled pixels is `background` with the mean number of objects.
    const double mean_objects = 0.5 * double(lo + hi);
    s.area[0] = background / (1 - background) * mean_objects;
  }
  if (objects > 0) {
    s.pick_k.assign(size_t(hi), 0.0);
    for (int64_t j = lo; j <= hi; ++j) s.pick_k[size_t(j - 1)] = 1.0;
  }
  for (int32_t c = 0; c < k; ++c) s.names.push_back(std::to_string(c));
  return s;
}

void draw_image(const SegShape& s, Draw& d, DenseTruth& out) {
  const int32_t k = int32_t(s.presence.size());
  int64_t width, height;
  if (s.long_side_500) {
    const int64_t other = d.between(281, 500);
    const bool landscape = d.uniform() < 0.7;
    width = landscape ? 500 : other;
    height = landscape ? other : 500;
  } else {
    width = d.between(s.width_lo, s.width_hi);
    height = d.between(s.height_lo, s.height_hi);
  }
  std::vector<bool> present(size_t(k), false);
  for (int32_t c = 0; c < k; ++c)
    present[size_t(c)] = s.presence[size_t(c)] > 0 && d.uniform() < s.presence[size_t(c)];
  if (!s.pick_k.empty()) {
    std::vector<double> weights = s.pick_weight;
    const size_t picks = d.pick(s.pick_k) + 1;
    for (size_t j = 0; j < picks; ++j) {
      for (int32_t c = 0; c < k; ++c)
        if (present[size_t(c)]) weights[size_t(c)] = 0;
      if (!any_positive(weights)) break;
      present[d.pick(weights)] = true;
    }
  }
  if (std::none_of(present.begin(), present.end(), [](bool p) { return p; }))
    present[d.pick(any_positive(s.pick_weight) ? s.pick_weight : s.presence)] = true;
  const int64_t pixels = width * height;
  const auto ignored =
      int64_t(double(pixels) * (s.ignored_lo + (s.ignored_hi - s.ignored_lo) * d.uniform()));
  std::vector<int32_t> classes;
  std::vector<double> weights;
  for (int32_t c = 0; c < k; ++c) {
    if (!present[size_t(c)]) continue;
    classes.push_back(c);
    weights.push_back(s.area[size_t(c)] * std::exp(0.6 * d.normal()));
  }
  const std::vector<int64_t> counts = split(pixels - ignored, weights);
  std::vector<uint32_t> keys, values;
  for (size_t j = 0; j < classes.size(); ++j) {
    if (counts[j] == 0) continue;
    keys.push_back(uint32_t(classes[j]) * uint32_t(k) + uint32_t(classes[j]));
    values.push_back(uint32_t(counts[j]));
  }
  out.truth.add_row(keys, values);
  out.sample_size.push_back(pixels);
  out.ignored.push_back(ignored);
}

// ---------------------------------------------------------------------------------------
// Tokens: a sentence's word tags in BIO (CoNLL-2003's order); each word is one counted token
// (its first sub-word), its other sub-words and [CLS] / [SEP] are -100.
struct TokenShape {
  int64_t n = 0;
  std::vector<std::string> names;
  bool conll = false;
  int64_t max_length = 40;
};

const std::vector<std::string>& conll_names() {
  static const std::vector<std::string> names = {"O",     "B-PER", "I-PER",  "B-ORG", "I-ORG",
                                                 "B-LOC", "I-LOC", "B-MISC", "I-MISC"};
  return names;
}

void draw_sentence(const TokenShape& s, Draw& d, DenseTruth& out) {
  const int32_t k = int32_t(s.names.size());
  std::vector<int64_t> tags(size_t(k), 0);
  int64_t words;
  if (s.conll) {
    // -DOCSTART- lines are one-word sentences (231 of the 3,453); the rest log-normal.
    words = d.uniform() < 0.067
                ? 1
                : std::clamp<int64_t>(std::llround(std::exp(2.45 + 0.62 * d.normal())), 2, 124);
    // Entities start at 13.5 % of the positions outside one: PER, ORG, LOC, MISC.
    static const std::vector<double> type_weight = {0.286, 0.294, 0.295, 0.124};
    static const std::vector<std::vector<double>> span_weight = {
        {0.25, 0.65, 0.1}, {0.55, 0.3, 0.15}, {0.85, 0.13, 0.02}, {0.65, 0.25, 0.1}};
    for (int64_t w = 0; w < words;) {
      if (words == 1 || d.uniform() >= 0.135) {
        ++tags[0], ++w;
        continue;
      }
      const size_t type = d.pick(type_weight);
      const int64_t span = std::min<int64_t>(int64_t(d.pick(span_weight[type])) + 1, words - w);
      ++tags[1 + 2 * type];
      tags[2 + 2 * type] += span - 1;
      w += span;
    }
  } else {
    words = d.between(1, s.max_length);
    for (int64_t w = 0; w < words; ++w)
      ++tags[k == 1 || d.uniform() < 0.8 ? 0 : size_t(d.between(1, k - 1))];
  }
  int64_t subwords = 0;
  for (int64_t w = 0; w < words; ++w) {
    const double u = d.uniform();
    subwords += u < 0.72 ? 0 : (u < 0.92 ? 1 : 2);
  }
  std::vector<uint32_t> keys, values;
  for (int32_t t = 0; t < k; ++t) {
    if (tags[size_t(t)] == 0) continue;
    keys.push_back(uint32_t(t) * uint32_t(k) + uint32_t(t));
    values.push_back(uint32_t(tags[size_t(t)]));
  }
  out.truth.add_row(keys, values);
  out.sample_size.push_back(words + subwords + 2);
  out.ignored.push_back(subwords + 2);
}

// ---------------------------------------------------------------------------------------
// Multilabel: label l present with probability presence[l] (at least one label an item);
// every label is one decision: cell (2l + t, 2l + t).
struct LabelShape {
  int64_t n = 0;
  std::vector<std::string> labels;
  std::vector<double> presence;
};

const std::vector<std::string>& coco_names() {
  static const std::vector<std::string> names = {"person",        "bicycle",      "car",
                                                 "motorcycle",    "airplane",     "bus",
                                                 "train",         "truck",        "boat",
                                                 "traffic light", "fire hydrant", "stop sign",
                                                 "parking meter", "bench",        "bird",
                                                 "cat",           "dog",          "horse",
                                                 "sheep",         "cow",          "elephant",
                                                 "bear",          "zebra",        "giraffe",
                                                 "backpack",      "umbrella",     "handbag",
                                                 "tie",           "suitcase",     "frisbee",
                                                 "skis",          "snowboard",    "sports ball",
                                                 "kite",          "baseball bat", "baseball glove",
                                                 "skateboard",    "surfboard",    "tennis racket",
                                                 "bottle",        "wine glass",   "cup",
                                                 "fork",          "knife",        "spoon",
                                                 "bowl",          "banana",       "apple",
                                                 "sandwich",      "orange",       "broccoli",
                                                 "carrot",        "hot dog",      "pizza",
                                                 "donut",         "cake",         "chair",
                                                 "couch",         "potted plant", "bed",
                                                 "dining table",  "toilet",       "tv",
                                                 "laptop",        "mouse",        "remote",
                                                 "keyboard",      "cell phone",   "microwave",
                                                 "oven",          "toaster",      "sink",
                                                 "refrigerator",  "book",         "clock",
                                                 "vase",          "scissors",     "teddy bear",
                                                 "hair drier",    "toothbrush"};
  return names;
}

void draw_item(const LabelShape& s, Draw& d, DenseTruth& out) {
  const auto labels = int32_t(s.labels.size());
  const uint32_t c = uint32_t(2 * labels);
  std::vector<bool> present(static_cast<size_t>(labels), false);
  bool any = false;
  for (int32_t l = 0; l < labels; ++l)
    any |= present[size_t(l)] = d.uniform() < s.presence[size_t(l)];
  if (!any) present[d.pick(s.presence)] = true;
  std::vector<uint32_t> keys, values(size_t(labels), 1);
  for (int32_t l = 0; l < labels; ++l) {
    const auto cls = uint32_t(multilabel_class(l, present[size_t(l)]));
    keys.push_back(cls * c + cls);
  }
  out.truth.add_row(keys, values);
  out.sample_size.push_back(labels);
  out.ignored.push_back(0);
}

// ---------------------------------------------------------------------------------------

enum class Kind { Voc, Cityscapes, Ade, Seg, Conll, Tokens, Coco, Multilabel };

struct KindName {
  const char* name;
  Kind kind;
  const char* split;  // the one split of a named set; nullptr for the generic kinds
};
constexpr KindName kKinds[] = {
    {"voc2012", Kind::Voc, "val"},          {"cityscapes", Kind::Cityscapes, "val"},
    {"ade20k", Kind::Ade, "val"},           {"seg", Kind::Seg, nullptr},
    {"conll2003", Kind::Conll, "test"},     {"tokens", Kind::Tokens, nullptr},
    {"coco-multilabel", Kind::Coco, "val"}, {"multilabel", Kind::Multilabel, nullptr}};

const KindName* kind_of(const std::string& kind) {
  for (const KindName& k : kKinds)
    if (kind == k.name) return &k;
  return nullptr;
}

struct Parsed {
  Spec spec;
  Kind kind;
  uint64_t seed = 0;
  int64_t first = 0;  // 0: all
};

Parsed parse_dense(const std::string& text) {
  Parsed p;
  const size_t colon = text.find(':');
  const KindName* k = kind_of(text.substr(0, colon));
  if (!k) throw InputError(kFlag + ": '" + text + "' is not a dense dataset");
  p.kind = k->kind;
  if (k->split) {
    // "voc2012:val,seed=1": the split, then options.
    const std::string rest = colon == std::string::npos ? "" : text.substr(colon + 1);
    const size_t comma = rest.find(',');
    const std::string split = rest.substr(0, comma);
    if (split != k->split)
      throw InputError(kFlag + ": " + k->name + ":" + split + " is not " + k->name + ":" +
                       k->split + " (the one split shaped here)");
    p.spec = parse_spec(
        std::string(k->name) + ":" + (comma == std::string::npos ? "" : rest.substr(comma + 1)),
        kFlag);
    spec_allow_only(p.spec, {"seed", "first"}, kFlag);
  } else {
    p.spec = parse_spec(text, kFlag);
    std::vector<std::string> allowed = {"seed", "first", "n"};
    if (p.kind == Kind::Seg)
      allowed.insert(allowed.end(),
                     {"classes", "size", "per-image", "zipf", "background", "ignored"});
    if (p.kind == Kind::Tokens) allowed.insert(allowed.end(), {"classes", "max-length"});
    if (p.kind == Kind::Multilabel) allowed.insert(allowed.end(), {"labels", "per-item"});
    spec_allow_only(p.spec, allowed, kFlag);
  }
  if (p.spec.options.count("seed"))
    p.seed = uint64_t(spec_int(p.spec, "seed", kFlag, 0, INT64_MAX));
  if (p.spec.options.count("first")) p.first = spec_int(p.spec, "first", kFlag, 1, kMaxSamples);
  return p;
}

TokenShape token_shape(const Parsed& p) {
  TokenShape s;
  if (p.kind == Kind::Conll) {
    s.n = 3453;
    s.names = conll_names();
    s.conll = true;
    return s;
  }
  for (const char* key : {"n", "classes"})
    if (!p.spec.options.count(key))
      throw InputError(kFlag + ": tokens needs n=SEQUENCES and classes=K (tokens:n=300,classes=9)");
  s.n = spec_int(p.spec, "n", kFlag, 1, kMaxSamples);
  const auto k = spec_int(p.spec, "classes", kFlag, 1, kMaxClasses);
  if (p.spec.options.count("max-length"))
    s.max_length = spec_int(p.spec, "max-length", kFlag, 1, 1 << 20);
  for (int64_t c = 0; c < k; ++c) s.names.push_back(std::to_string(c));
  return s;
}

LabelShape label_shape(const Parsed& p) {
  LabelShape s;
  if (p.kind == Kind::Coco) {
    s.n = 5000;
    s.labels = coco_names();
    // person in 54 % of the images, the others long-tailed: 2.9 labels an item.
    s.presence.push_back(0.54);
    // Their ranks are a fixed permutation of 1..79 (37 is prime to 79), not COCO's order.
    for (int l = 1; l < 80; ++l)
      s.presence.push_back(0.189 * std::pow((l - 1) * 37 % 79 + 1, -0.6));
    return s;
  }
  for (const char* key : {"n", "labels"})
    if (!p.spec.options.count(key))
      throw InputError(kFlag +
                       ": multilabel needs n=ITEMS and labels=L (multilabel:n=500,labels=20)");
  s.n = spec_int(p.spec, "n", kFlag, 1, kMaxSamples);
  const auto labels = spec_int(p.spec, "labels", kFlag, 1, kMaxClasses / 2);
  const int64_t per_item = p.spec.options.count("per-item")
                               ? spec_int(p.spec, "per-item", kFlag, 1, labels)
                               : std::min<int64_t>(3, labels);
  s.presence.assign(size_t(labels), double(per_item) / double(labels));
  for (int64_t l = 0; l < labels; ++l) s.labels.push_back(std::to_string(l));
  return s;
}

SegShape seg_shape(const Parsed& p) {
  switch (p.kind) {
    case Kind::Voc:
      return voc_shape();
    case Kind::Cityscapes:
      return cityscapes_shape();
    case Kind::Ade:
      return ade_shape();
    default:
      return generic_seg_shape(p.spec);
  }
}

Task task_of(Kind k) {
  switch (k) {
    case Kind::Conll:
    case Kind::Tokens:
      return Task::Tokens;
    case Kind::Coco:
    case Kind::Multilabel:
      return Task::Multilabel;
    default:
      return Task::Segmentation;
  }
}

int64_t kept(const Parsed& p, int64_t n) {
  if (p.first > n)
    throw InputError(kFlag + ": first=" + std::to_string(p.first) + " is past the dataset's " +
                     std::to_string(n) + " samples");
  return p.first > 0 ? p.first : n;
}

}  // namespace

bool is_dense_dataset(const std::string& spec) {
  return kind_of(spec.substr(0, spec.find(':'))) != nullptr;
}

DenseDeclared declared_dense(const std::string& text) {
  const Parsed p = parse_dense(text);
  DenseDeclared d;
  d.task = task_of(p.kind);
  if (d.task == Task::Segmentation) {
    const SegShape s = seg_shape(p);
    d.samples = kept(p, s.n);
    d.classes = int32_t(s.names.size());
    d.ignore_index = 255;
  } else if (d.task == Task::Tokens) {
    const TokenShape s = token_shape(p);
    d.samples = kept(p, s.n);
    d.classes = int32_t(s.names.size());
    d.ignore_index = -100;
  } else {
    const LabelShape s = label_shape(p);
    d.samples = kept(p, s.n);
    d.classes = int32_t(2 * s.labels.size());
  }
  return d;
}

DenseTruth load_dense_truth(const std::string& text) {
  const Parsed p = parse_dense(text);
  DenseTruth out;
  out.task = task_of(p.kind);
  out.source = text;
  auto reserve = [&](int64_t n) {
    // A few cells a sample (an image's classes, a sentence's tags, an item's labels), each
    // 8 bytes, and the offsets and sizes: about a record's worth per cell.
    check_evaluation_budget(kFlag, {.samples = n, .records = n * 4});
    out.truth.offsets.reserve(size_t(n) + 1);
    out.sample_size.reserve(size_t(n));
    out.ignored.reserve(size_t(n));
  };
  if (out.task == Task::Segmentation) {
    const SegShape s = seg_shape(p);
    const int64_t n = kept(p, s.n);
    out.truth.classes = int32_t(s.names.size());
    out.class_names = s.names;
    out.ignore_index = 255;
    reserve(n);
    for (int64_t i = 0; i < n; ++i) {
      Draw d(p.seed, i);
      draw_image(s, d, out);
    }
  } else if (out.task == Task::Tokens) {
    const TokenShape s = token_shape(p);
    const int64_t n = kept(p, s.n);
    out.truth.classes = int32_t(s.names.size());
    out.class_names = s.names;
    out.ignore_index = -100;
    reserve(n);
    for (int64_t i = 0; i < n; ++i) {
      Draw d(p.seed, i);
      draw_sentence(s, d, out);
    }
  } else {
    const LabelShape s = label_shape(p);
    const int64_t n = kept(p, s.n);
    out.truth.classes = int32_t(2 * s.labels.size());
    out.class_names = multilabel_class_names(s.labels);
    reserve(n);
    for (int64_t i = 0; i < n; ++i) {
      Draw d(p.seed, i);
      draw_item(s, d, out);
    }
  }
  return out;
}

}  // namespace shardlens
