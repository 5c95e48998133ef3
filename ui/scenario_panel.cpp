#include "ui/scenario_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/lesson_model.h"

namespace shardlens::ui {
namespace {

QComboBox* combo(QWidget* parent, const char* name, const QStringList& items, bool editable,
                 const QString& tip) {
  auto* c = new QComboBox(parent);
  c->setObjectName(QLatin1String(name));
  c->addItems(items);
  c->setEditable(editable);
  c->setToolTip(tip);
  if (editable) c->setInsertPolicy(QComboBox::NoInsert);
  c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  c->setMinimumContentsLength(8);
  return c;
}

QSpinBox* spin(QWidget* parent, const char* name, int lo, int hi, const QString& tip) {
  auto* s = new QSpinBox(parent);
  s->setObjectName(QLatin1String(name));
  s->setRange(lo, hi);
  s->setToolTip(tip);
  s->setKeyboardTracking(false);  // typing "128" evaluates once, not for 1, 12 and 128
  return s;
}

QCheckBox* check(QWidget* parent, const char* name, const QString& text, const QString& tip) {
  auto* c = new QCheckBox(text, parent);
  c->setObjectName(QLatin1String(name));
  c->setToolTip(tip);
  return c;
}

template <class E>
QStringList enumNames(std::initializer_list<E> values) {
  QStringList out;
  for (E v : values) out << QString::fromStdString(to_string(v));
  return out;
}

template <class E, size_t N>
QStringList enumNames(const E (&values)[N]) {
  QStringList out;
  for (E v : values) out << QString::fromStdString(to_string(v));
  return out;
}

}  // namespace

ScenarioPanel::ScenarioPanel(LessonModel* lessons, QWidget* parent)
    : QWidget(parent), m_lessons(lessons) {
  build();
  wire();
  setScenario(Scenario{});
  m_play.setInterval(1200);
  connect(&m_play, &QTimer::timeout, this, [this] { stepEpoch(1); });
}

QWidget* ScenarioPanel::lessonsBox() {
  auto* box = new QGroupBox(tr("Lesson"), this);
  m_lesson = new QComboBox(box);
  m_lesson->setObjectName(QStringLiteral("lesson"));
  m_lesson->setModel(m_lessons);
  m_lesson->setToolTip(tr("Preset scenarios, each showing one DDP evaluation pitfall"));
  m_lesson->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  m_lesson->setMinimumContentsLength(16);
  m_lesson->setPlaceholderText(tr("(custom scenario)"));
  m_lessonText = new QLabel(box);
  m_lessonText->setObjectName(QStringLiteral("lessonText"));
  m_lessonText->setWordWrap(true);
  m_lessonText->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_lessonText->setMinimumHeight(60);
  m_lessonText->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  auto* v = new QVBoxLayout(box);
  v->addWidget(m_lesson);
  v->addWidget(m_lessonText);
  return box;
}

void ScenarioPanel::build() {
  auto* data = new QGroupBox(tr("Data"), this);
  m_dataset = combo(
      data, "dataset",
      {"synthetic:classes=10,per-class=50", "synthetic:classes=10,per-class=1000",
       "synthetic:classes=10,n=1000,zipf=1.2", "synthetic:classes=100,per-class=100",
       "synthetic:classes=1000,per-class=100", "fashion-mnist:test"},
      true,
      tr("Dataset spec: synthetic:…, fashion-mnist:test|train, idx:PATH, npy:PATH, csv:PATH"));
  m_predictor = combo(
      data, "predictor",
      {"noisy:accuracy=0.9,seed=1", "perfect", "noisy:accuracy=0.7,seed=1,structure=adjacent"},
      true,
      tr("Predictor spec: perfect, noisy:accuracy=…,seed=…, npy:PATH, csv:PATH, "
         "model:PATH[,device=cuda:N] (a TorchScript model; model:reference for Fashion-MNIST)"));
  auto* f1 = new QFormLayout(data);
  f1->addRow(tr("Dataset"), m_dataset);
  f1->addRow(tr("Predictor"), m_predictor);

  auto* dist = new QGroupBox(tr("Sampler and loader"), this);
  m_world = spin(dist, "worldSize", 1, 256, tr("Number of ranks (processes), WORLD_SIZE"));
  m_batch = spin(dist, "batchSize", 1, 1 << 30, tr("DataLoader batch_size per rank"));
  m_sampler =
      combo(dist, "sampler",
            enumNames({SamplerKind::Distributed, SamplerKind::Unrepeated, SamplerKind::Sequential,
                       SamplerKind::None, SamplerKind::Accelerate, SamplerKind::LightningWrapper}),
            false,
            tr("distributed: torch DistributedSampler (pads to a multiple of W); "
               "unrepeated: Lightning's predict sampler (no padding); sequential: "
               "contiguous blocks; none: every rank iterates the whole dataset; "
               "accelerate: Hugging Face Accelerate's BatchSamplerShard (whole batches "
               "round-robin); lightning-wrapper: Lightning's DistributedSamplerWrapper "
               "over the inner sampler"));
  m_splitBatches = check(dist, "splitBatches", tr("split batches (Accelerate)"),
                         tr("Accelerate split_batches=True: each batch of B is split into W "
                            "slices of B / W"));
  m_evenBatches = check(dist, "evenBatches", tr("even batches (Accelerate)"),
                        tr("Accelerate even_batches=True: the last round is completed with "
                           "samples from the start, so every rank runs the same steps"));
  m_accelerateInput =
      combo(dist, "accelerateInput",
            enumNames({AccelerateInput::Loader, AccelerateInput::DistributedSampler}), false,
            tr("What the loader given to accelerator.prepare() samples with. loader: its own "
               "sampler, sharded once by Accelerate. distributed-sampler: it already had a "
               "DistributedSampler (a common mistake): Accelerate shards each rank's shard again, "
               "so each rank keeps 1/W of it (128 of 510 samples evaluated on 4 ranks); shuffle, "
               "seed and the sampler's drop_last are then the DistributedSampler's"));
  m_accelerateShuffle =
      combo(dist, "accelerateShuffle",
            enumNames({AccelerateShuffle::GlobalRng, AccelerateShuffle::Seedable}), false,
            tr("How a shuffled Accelerate loader draws its order. global-rng: Accelerate's "
               "default (use_seedable_sampler=False): prepare() seeds the sampler's generator from "
               "the global RNG; the seed is torch.manual_seed's, exact only when nothing drew from "
               "the RNG before prepare() (a recorded run is exact). seedable: "
               "use_seedable_sampler=True (the HF Trainer's default): randperm(seed + epoch)"));
  m_inner = combo(dist, "innerSampler",
                  {QStringLiteral("sequential"), QStringLiteral("weighted-random")}, false,
                  tr("The sampler Lightning wraps (lightning-wrapper): weighted-random is a "
                     "WeightedRandomSampler with replacement, uniform weights, its generator "
                     "seeded with the rank seed (or the seed)"));
  m_shuffle = check(dist, "shuffle", tr("shuffle"),
                    tr("Shuffle with randperm(seed + epoch); Accelerate's loader as the "
                       "Accelerate shuffle says"));
  m_seed = spin(dist, "seed", std::numeric_limits<int>::min(), std::numeric_limits<int>::max(),
                tr("Sampler seed (PL_GLOBAL_SEED or 0)"));
  m_epoch = spin(dist, "epoch", 0, 1000000, tr("set_epoch(): the shuffled order changes with it"));
  m_playButton = new QToolButton(dist);
  m_playButton->setObjectName(QStringLiteral("play"));
  m_playButton->setCheckable(true);
  m_playButton->setText(QStringLiteral("▶"));
  m_playButton->setToolTip(tr("Play epochs: step the epoch every second"));
  auto* step = new QToolButton(dist);
  step->setText(QStringLiteral("+1"));
  step->setToolTip(tr("Next epoch"));
  connect(step, &QToolButton::clicked, this, [this] { stepEpoch(1); });
  auto* epochRow = new QHBoxLayout;
  epochRow->addWidget(m_epoch, 1);
  epochRow->addWidget(step);
  epochRow->addWidget(m_playButton);
  m_samplerDropLast =
      check(dist, "samplerDropLast", tr("sampler drop_last"),
            tr("DistributedSampler(drop_last=True): cut the tail instead of padding; "
               "up to W−1 samples are never evaluated"));
  m_loaderDropLast =
      check(dist, "loaderDropLast", tr("loader drop_last"),
            tr("DataLoader(drop_last=True): each rank's partial last batch is dropped"));
  m_limit = new QLineEdit(dist);
  m_limit->setObjectName(QStringLiteral("limitBatches"));
  m_limit->setPlaceholderText(tr("all"));
  m_limit->setToolTip(
      tr("limit_val_batches: an int k (k batches per rank) or a fraction (1.0 = all)"));
  m_rankSeeds = new QLineEdit(dist);
  m_rankSeeds->setObjectName(QStringLiteral("rankSeeds"));
  m_rankSeeds->setPlaceholderText(tr("same seed on every rank"));
  m_rankSeeds->setToolTip(
      tr("Per-rank sampler seeds, comma separated (models ranks whose seeds diverge)"));
  m_sanityLeak =
      check(dist, "sanityLeak", tr("sanity batches leak"),
            tr("Sanity-check batches counted into the metric (state not reset before epoch 0)"));
  m_sanitySteps = spin(dist, "sanitySteps", 0, 1000, tr("num_sanity_val_steps"));
  auto* sanityRow = new QHBoxLayout;
  sanityRow->addWidget(m_sanityLeak);
  sanityRow->addWidget(m_sanitySteps);
  auto* f2 = new QFormLayout(dist);
  f2->addRow(tr("World size"), m_world);
  f2->addRow(tr("Batch size"), m_batch);
  f2->addRow(tr("Sampler"), m_sampler);
  f2->addRow(QString(), m_shuffle);
  f2->addRow(tr("Seed"), m_seed);
  f2->addRow(tr("Epoch"), epochRow);
  f2->addRow(QString(), m_samplerDropLast);
  f2->addRow(QString(), m_loaderDropLast);
  f2->addRow(tr("Limit batches"), m_limit);
  f2->addRow(tr("Rank seeds"), m_rankSeeds);
  f2->addRow(tr("Sanity"), sanityRow);
  f2->addRow(QString(), m_splitBatches);
  f2->addRow(QString(), m_evenBatches);
  f2->addRow(tr("Prepared loader"), m_accelerateInput);
  f2->addRow(tr("Accelerate shuffle"), m_accelerateShuffle);
  f2->addRow(tr("Inner sampler"), m_inner);
  m_validations = spin(dist, "validationsPerEpoch", 1, 1000,
                       tr("Lightning val_check_interval: validations in the epoch (the last one "
                          "is shown; with a batch limit they all see the same subset)"));
  f2->addRow(tr("Validations/epoch"), m_validations);

  auto* metric = new QGroupBox(tr("Metric and sync"), this);
  m_sync = combo(metric, "sync", enumNames(kSyncStrategies), false,
                 tr("How per-rank matrices become the reported one"));
  m_dtype =
      combo(metric, "counterDtype",
            enumNames({CounterDtype::Int64, CounterDtype::Float32, CounterDtype::Float16,
                       CounterDtype::BFloat16}),
            false,
            tr("Counter dtype of the metric state. torchmetrics keeps int64 (precision='16-mixed' "
               "does not change it); float16 and bfloat16 come only from a hand-made buffer and "
               "stall at 2048 and 256."));
  m_torch =
      combo(metric, "torchVersion",
            {"1.13", "2.0", "2.7", QString::fromStdString(TorchVersion{}.to_string())}, true,
            tr("PyTorch release to imitate (randperm differs from 2.7 on for n ≥ 214,748,364); "
               "the default is a current torch from pip"));
  m_ignore = spin(metric, "ignoreIndex", -1, 100000, tr("torchmetrics ignore_index (−1: none)"));
  m_ignore->setSpecialValueText(tr("none"));
  auto* f3 = new QFormLayout(metric);
  f3->addRow(tr("Sync"), m_sync);
  f3->addRow(tr("Counter dtype"), m_dtype);
  f3->addRow(tr("Torch version"), m_torch);
  f3->addRow(tr("Ignore index"), m_ignore);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(lessonsBox());
  layout->addWidget(data);
  layout->addWidget(dist);
  layout->addWidget(metric);
  layout->addStretch();
}

bool ScenarioPanel::playing() const {
  return m_play.isActive();
}

void ScenarioPanel::setPlaying(bool on) {
  if (on)
    m_play.start();
  else
    m_play.stop();
  m_playButton->setChecked(on);
  m_playButton->setText(on ? QStringLiteral("⏸") : QStringLiteral("▶"));
}

void ScenarioPanel::stepEpoch(int delta) {
  m_epoch->setValue(m_epoch->value() + delta);
}

}  // namespace shardlens::ui
