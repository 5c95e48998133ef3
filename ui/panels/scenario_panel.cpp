#include "ui/panels/scenario_panel.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/models/lesson_model.h"
#include "ui/panels/setting_controls.h"

namespace shardlens::ui {

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
  // Plain text: a scenario's own title and description (from any file) are shown as written,
  // not taken for markup (Qt's AutoText made "<script>..." an empty line).
  m_lessonText->setTextFormat(Qt::PlainText);
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
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(lessonsBox());
  // One box per group of the table, in the table's order; one control per setting in it.
  std::map<std::string, QFormLayout*> forms;
  for (const ScenarioSetting& row : scenario_settings()) {
    if (row.gui_group.empty()) continue;
    QFormLayout*& form = forms[row.gui_group];
    if (!form) {
      auto* box = new QGroupBox(tr(row.gui_group.c_str()), this);
      form = new QFormLayout(box);
      // In a narrow dock (a 1280 x 800 screen) a long field goes below its label instead of
      // holding the dock, and with it the heatmaps' room, at label + field.
      form->setRowWrapPolicy(QFormLayout::WrapLongRows);
      layout->addWidget(box);
    }
    QWidget* box = form->parentWidget();
    QWidget* control = makeSettingControl(row, box);
    m_controls[row.key] = control;
    if (row.kind == SettingKind::Bool)
      form->addRow(static_cast<QWidget*>(nullptr), control);  // a check box says its own text
    else if (row.key == "epoch")
      form->addRow(tr(row.gui_label.c_str()), epochRow(control, box));
    else
      form->addRow(tr(row.gui_label.c_str()), control);
  }
  layout->addStretch();
}

QLayout* ScenarioPanel::epochRow(QWidget* epoch, QWidget* parent) {
  m_playButton = new QToolButton(parent);
  m_playButton->setObjectName(QStringLiteral("play"));
  m_playButton->setCheckable(true);
  m_playButton->setText(QStringLiteral("▶"));
  m_playButton->setToolTip(tr("Play epochs: step the epoch every second"));
  auto* step = new QToolButton(parent);
  step->setText(QStringLiteral("+1"));
  step->setToolTip(tr("Next epoch"));
  connect(step, &QToolButton::clicked, this, [this] { stepEpoch(1); });
  auto* row = new QHBoxLayout;
  row->addWidget(epoch, 1);
  row->addWidget(step);
  row->addWidget(m_playButton);
  return row;
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
  auto* epoch = control<QSpinBox>("epoch");
  epoch->setValue(epoch->value() + delta);
}

}  // namespace shardlens::ui
