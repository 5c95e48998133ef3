// ScenarioPanel: controls <-> Scenario. Each control writes its field and commits; text
// fields are parsed by the engine's own parsers so the GUI accepts exactly what files and
// the CLI accept, and a bad value is reported instead of silently ignored.
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QToolButton>
#include <exception>

#include "core/model/types.h"
#include "ui/lesson_model.h"
#include "ui/scenario_panel.h"

namespace shardlens::ui {
namespace {

QString joinSeeds(const std::vector<int64_t>& seeds) {
  QStringList parts;
  for (int64_t s : seeds) parts << QString::number(s);
  return parts.join(QStringLiteral(","));
}

std::vector<int64_t> parseSeeds(const QString& text) {
  std::vector<int64_t> out;
  for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
    bool ok = false;
    const qlonglong v = part.trimmed().toLongLong(&ok);
    if (!ok)
      throw InputError("rank seeds: '" + part.trimmed().toStdString() + "' is not an integer");
    out.push_back(v);
  }
  return out;
}

void setComboText(QComboBox* c, const std::string& text) {
  const QString t = QString::fromStdString(text);
  const int i = c->findText(t);
  if (i >= 0)
    c->setCurrentIndex(i);
  else if (c->isEditable())
    c->setEditText(t);
}

}  // namespace

void ScenarioPanel::wire() {
  // Each binding edits one field; commit() then hands the scenario to the window.
  const auto bind = [this](auto* sender, auto signal, auto apply) {
    connect(sender, signal, this, [this, apply](auto&&... args) {
      if (m_loading) return;
      try {
        apply(args...);
        commit();
      } catch (const std::exception& e) {
        emit error(QString::fromStdString(e.what()));
      }
    });
  };
  const auto textOf = [](QComboBox* c) { return c->currentText().trimmed().toStdString(); };
  bind(m_dataset, &QComboBox::activated, [=, this](int) {
    m_scenario.dataset = textOf(m_dataset);
    updatePredictorChoices();
  });
  bind(m_dataset->lineEdit(), &QLineEdit::editingFinished, [=, this] {
    m_scenario.dataset = textOf(m_dataset);
    updatePredictorChoices();
  });
  bind(m_predictor, &QComboBox::activated,
       [=, this](int) { m_scenario.predictor = textOf(m_predictor); });
  bind(m_predictor->lineEdit(), &QLineEdit::editingFinished,
       [=, this] { m_scenario.predictor = textOf(m_predictor); });
  bind(m_world, &QSpinBox::valueChanged, [this](int v) {
    m_scenario.sampler.world_size = v;
    // Per-rank seeds follow the world size so changing it never makes the scenario invalid.
    auto& seeds = m_scenario.sampler.rank_seeds;
    if (!seeds.empty()) {
      seeds.resize(size_t(v), m_scenario.sampler.seed);
      const QSignalBlocker block(m_rankSeeds);
      m_rankSeeds->setText(joinSeeds(seeds));
    }
  });
  bind(m_batch, &QSpinBox::valueChanged, [this](int v) { m_scenario.loader.batch_size = v; });
  bind(m_sampler, &QComboBox::activated,
       [=, this](int) { m_scenario.sampler.kind = parse_sampler_kind(textOf(m_sampler)); });
  bind(m_shuffle, &QCheckBox::toggled, [this](bool on) { m_scenario.sampler.shuffle = on; });
  bind(m_seed, &QSpinBox::valueChanged, [this](int v) { m_scenario.sampler.seed = v; });
  bind(m_epoch, &QSpinBox::valueChanged, [this](int v) { m_scenario.sampler.epoch = v; });
  bind(m_samplerDropLast, &QCheckBox::toggled,
       [this](bool on) { m_scenario.sampler.drop_last = on; });
  bind(m_loaderDropLast, &QCheckBox::toggled,
       [this](bool on) { m_scenario.loader.drop_last = on; });
  bind(m_limit, &QLineEdit::editingFinished, [this] {
    const QString t = m_limit->text().trimmed();
    m_scenario.loader.limit = t.isEmpty() ? BatchLimit{} : BatchLimit::parse(t.toStdString());
  });
  bind(m_rankSeeds, &QLineEdit::editingFinished,
       [this] { m_scenario.sampler.rank_seeds = parseSeeds(m_rankSeeds->text()); });
  bind(m_sanityLeak, &QCheckBox::toggled, [this](bool on) { m_scenario.loader.sanity_leak = on; });
  bind(m_sanitySteps, &QSpinBox::valueChanged,
       [this](int v) { m_scenario.loader.sanity_steps = v; });
  bind(m_sync, &QComboBox::activated,
       [=, this](int) { m_scenario.sync = parse_sync_strategy(textOf(m_sync)); });
  bind(m_dtype, &QComboBox::activated,
       [=, this](int) { m_scenario.dtype = parse_counter_dtype(textOf(m_dtype)); });
  bind(m_torch, &QComboBox::activated,
       [=, this](int) { m_scenario.sampler.torch = TorchVersion::parse(textOf(m_torch)); });
  bind(m_torch->lineEdit(), &QLineEdit::editingFinished,
       [=, this] { m_scenario.sampler.torch = TorchVersion::parse(textOf(m_torch)); });
  bind(m_ignore, &QSpinBox::valueChanged, [this](int v) { m_scenario.ignore_index = v; });
  bind(m_splitBatches, &QCheckBox::toggled,
       [this](bool on) { m_scenario.sampler.split_batches = on; });
  bind(m_evenBatches, &QCheckBox::toggled,
       [this](bool on) { m_scenario.sampler.even_batches = on; });
  bind(m_accelerateInput, &QComboBox::activated, [=, this](int) {
    m_scenario.sampler.accelerate_input = parse_accelerate_input(textOf(m_accelerateInput));
  });
  bind(m_accelerateShuffle, &QComboBox::activated, [=, this](int) {
    m_scenario.sampler.accelerate_shuffle = parse_accelerate_shuffle(textOf(m_accelerateShuffle));
  });
  bind(m_validations, &QSpinBox::valueChanged,
       [this](int v) { m_scenario.validations_per_epoch = v; });
  bind(m_inner, &QComboBox::activated, [=, this](int) {
    m_scenario.sampler.inner.kind = parse_inner_sampler_kind(textOf(m_inner));
  });

  connect(m_lesson, &QComboBox::activated, this, [this](int row) { applyLesson(row); });
  connect(m_lesson, &QComboBox::currentIndexChanged, this, [this] { updateLessonText(); });
  connect(m_playButton, &QToolButton::toggled, this, [this](bool on) { setPlaying(on); });
}

namespace {

// Whether `s` still has the lesson's settings. The epoch does not count: stepping it is
// what several lessons ask for.
bool sameSettings(Scenario s, Scenario lesson) {
  for (Scenario* x : {&s, &lesson}) {
    x->name.clear();
    x->title.clear();
    x->description.clear();
    x->sampler.epoch = 0;
  }
  return to_json(s) == to_json(lesson);
}

}  // namespace

void ScenarioPanel::commit() {
  // A lesson whose settings were edited is no longer the lesson: its title says so (the
  // window, the figures) and its text no longer claims to describe what is shown.
  const int row = m_lessons ? m_lessons->findByName(QString::fromStdString(m_scenario.name)) : -1;
  if (const Lesson* l = m_lessons ? m_lessons->lesson(row) : nullptr) {
    const bool modified = !sameSettings(m_scenario, l->scenario);
    m_scenario.title = modified ? l->scenario.title + " (modified)" : l->scenario.title;
    m_scenario.description = modified ? std::string() : l->scenario.description;
  }
  updateLessonText();
  emit changed(m_scenario);
}

void ScenarioPanel::updatePredictorChoices() {
  // The reference model was trained on Fashion-MNIST: offered for it, and only for it.
  static const QString kReference = QStringLiteral("model:reference");
  const bool fashion = m_scenario.dataset.rfind("fashion-mnist", 0) == 0;
  const int at = m_predictor->findText(kReference);
  const QSignalBlocker block(m_predictor);
  const QString text = m_predictor->currentText();
  if (fashion && at < 0) {
    m_predictor->insertItem(0, kReference);
    m_predictor->setItemData(0,
                             tr("The Fashion-MNIST reference model, run once on every "
                                "image (LibTorch) and cached"),
                             Qt::ToolTipRole);
  } else if (!fashion && at >= 0 && text != kReference) {
    m_predictor->removeItem(at);
  }
  if (m_predictor->currentText() != text) setComboText(m_predictor, text.toStdString());
}

bool ScenarioPanel::lessonModified() const {
  const int row = m_lessons ? m_lessons->findByName(QString::fromStdString(m_scenario.name)) : -1;
  const Lesson* l = m_lessons ? m_lessons->lesson(row) : nullptr;
  return l && !sameSettings(m_scenario, l->scenario);
}

void ScenarioPanel::setScenario(const Scenario& s) {
  m_loading = true;
  m_scenario = s;
  setComboText(m_dataset, s.dataset);
  updatePredictorChoices();
  setComboText(m_predictor, s.predictor);
  m_world->setValue(s.sampler.world_size);
  m_batch->setValue(int(std::min<int64_t>(s.loader.batch_size, m_batch->maximum())));
  setComboText(m_sampler, to_string(s.sampler.kind));
  m_shuffle->setChecked(s.sampler.shuffle);
  m_seed->setValue(int(s.sampler.seed));
  m_epoch->setValue(int(s.sampler.epoch));
  m_samplerDropLast->setChecked(s.sampler.drop_last);
  m_loaderDropLast->setChecked(s.loader.drop_last);
  m_limit->setText(s.loader.limit.kind == BatchLimit::Kind::All
                       ? QString()
                       : QString::fromStdString(s.loader.limit.to_string()));
  m_rankSeeds->setText(joinSeeds(s.sampler.rank_seeds));
  m_sanityLeak->setChecked(s.loader.sanity_leak);
  m_sanitySteps->setValue(s.loader.sanity_steps);
  setComboText(m_sync, to_string(s.sync));
  m_splitBatches->setChecked(s.sampler.split_batches);
  m_evenBatches->setChecked(s.sampler.even_batches);
  setComboText(m_accelerateInput, to_string(s.sampler.accelerate_input));
  setComboText(m_accelerateShuffle, to_string(s.sampler.accelerate_shuffle));
  setComboText(m_inner, to_string(s.sampler.inner.kind));
  m_validations->setValue(s.validations_per_epoch);
  setComboText(m_dtype, to_string(s.dtype));
  setComboText(m_torch, s.sampler.torch.to_string());
  m_ignore->setValue(s.ignore_index);
  // A scenario that is no lesson leaves the lesson box empty rather than naming another.
  m_lesson->setCurrentIndex(m_lessons ? m_lessons->findByName(QString::fromStdString(s.name)) : -1);
  m_dataset->lineEdit()->setCursorPosition(0);
  m_predictor->lineEdit()->setCursorPosition(0);
  updateLessonText();
  m_loading = false;
}

void ScenarioPanel::selectLesson(int row) {
  m_lesson->setCurrentIndex(row);
  applyLesson(row);
}

void ScenarioPanel::applyLesson(int row) {
  const Lesson* l = m_lessons ? m_lessons->lesson(row) : nullptr;
  if (!l) return;
  setScenario(l->scenario);
  commit();
}

void ScenarioPanel::updateLessonText() {
  const Lesson* l = m_lessons ? m_lessons->lesson(m_lesson->currentIndex()) : nullptr;
  if (!l) {
    // A custom scenario: its own description, if it has one.
    const QString title = QString::fromStdString(m_scenario.title);
    const QString text = QString::fromStdString(m_scenario.description);
    m_lessonText->setText(!m_lessons || m_lessons->rowCount() == 0
                              ? tr("No lessons found.")
                              : tr("Custom scenario%1.%2")
                                    .arg(title.isEmpty() ? QString() : QStringLiteral(": ") + title)
                                    .arg(text.isEmpty() ? QString() : QStringLiteral("\n") + text));
    return;
  }
  // The explanation belongs to the lesson only while its scenario is the one shown.
  const bool current = l->scenario.name == m_scenario.name;
  if (current && lessonModified()) {
    m_lessonText->setText(
        tr("(modified) These are no longer the lesson's settings, so its explanation does not "
           "describe what is shown; the diagnosis does. Choose the lesson again to restore "
           "them."));
    return;
  }
  m_lessonText->setText(QString::fromStdString(l->scenario.description) +
                        (current ? QString() : tr("\n(choose it to load)")));
}

}  // namespace shardlens::ui
