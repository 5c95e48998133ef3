// The scenario panel made from the setting table: one control per row with the row's name,
// range, choices and tooltip, and every control writes its setting (one row a case).
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QtTest>
#include <limits>

#include "core/evaluation/scenario_settings.h"
#include "ui/models/lesson_model.h"
#include "ui/panels/scenario_panel.h"
#include "ui/panels/setting_controls.h"

using namespace shardlens;
using namespace shardlens::ui;

Q_DECLARE_METATYPE(const ScenarioSetting*)

class TestScenarioPanel : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { qRegisterMetaType<Scenario>("shardlens::Scenario"); }

  // The names tests, style sheets and users' scripts find the controls by stay as they were.
  void objectNamesStay() {
    LessonModel lessons;
    ScenarioPanel panel(&lessons);
    for (const char* name : {"lesson",
                             "lessonText",
                             "play",
                             "dataset",
                             "predictor",
                             "worldSize",
                             "batchSize",
                             "sampler",
                             "shuffle",
                             "seed",
                             "epoch",
                             "samplerDropLast",
                             "loaderDropLast",
                             "limitBatches",
                             "rankSeeds",
                             "sanityLeak",
                             "sanitySteps",
                             "splitBatches",
                             "evenBatches",
                             "accelerateInput",
                             "accelerateShuffle",
                             "innerSampler",
                             "validationsPerEpoch",
                             "sync",
                             "counterDtype",
                             "torchVersion",
                             "ignoreIndex"})
      QVERIFY2(panel.findChild<QWidget*>(QLatin1String(name)), name);
  }

  // A scenario's title and description come from any file: shown as written, never as
  // markup (Qt's AutoText made a "<script>" title an empty line).
  void aScenariosOwnTextIsShownAsWritten() {
    LessonModel lessons;
    lessons.loadDirectory(LessonModel::defaultDirectory());
    QVERIFY(lessons.rowCount() > 0);  // else the label says "No lessons found."
    ScenarioPanel panel(&lessons);
    Scenario s = panel.scenario();
    s.name = "from-a-file";
    s.title = "<b>bold</b> & <script>alert(1)</script>";
    s.description = "<i>not italic</i>";
    panel.setScenario(s);
    auto* text = panel.findChild<QLabel*>(QStringLiteral("lessonText"));
    QVERIFY(text);
    QCOMPARE(text->textFormat(), Qt::PlainText);
    QVERIFY2(text->text().contains(QString::fromStdString(s.title)), qPrintable(text->text()));
    QVERIFY2(text->text().contains(QString::fromStdString(s.description)),
             qPrintable(text->text()));
  }

  void everySetting_data() {
    QTest::addColumn<const ScenarioSetting*>("row");
    for (const ScenarioSetting& s : scenario_settings())
      if (!s.gui_group.empty()) QTest::newRow(s.key.c_str()) << &s;
  }

  void everySetting() {
    QFETCH(const ScenarioSetting*, row);
    LessonModel lessons;
    ScenarioPanel panel(&lessons);
    auto* w = panel.findChild<QWidget*>(settingObjectName(*row));
    QVERIFY(w);
    // The tooltip is the --help text: it names every choice.
    QCOMPARE(w->toolTip(), QString::fromStdString(setting_help(*row)));
    for (const SettingChoice& c : row->choices)
      QVERIFY2(w->toolTip().contains(QString::fromStdString(c.name + ":")), c.name.c_str());
    if (auto* combo = qobject_cast<QComboBox*>(w); combo && row->kind == SettingKind::Choice) {
      QCOMPARE(combo->count(), int(row->choices.size()));
      for (const SettingChoice& c : row->choices)
        QVERIFY(combo->findText(QString::fromStdString(c.name)) >= 0);
    }
    if (auto* spin = qobject_cast<QSpinBox*>(w)) {
      const auto clamp = [](int64_t v) {
        return int(std::clamp<int64_t>(v, std::numeric_limits<int>::min(),
                                       std::numeric_limits<int>::max()));
      };
      QCOMPARE(spin->minimum(), clamp(row->min));
      QCOMPARE(spin->maximum(), clamp(row->max));
    }
    // An edit of the control writes the setting and emits changed().
    QSignalSpy changed(&panel, &ScenarioPanel::changed);
    Scenario before = panel.scenario();
    if (auto* spin = qobject_cast<QSpinBox*>(w)) {
      spin->setValue(spin->value() == spin->minimum() ? spin->minimum() + 1 : spin->minimum());
      QCOMPARE(row->get_int(panel.scenario()), int64_t(spin->value()));
    } else if (auto* check = qobject_cast<QCheckBox*>(w)) {
      check->toggle();
      QCOMPARE(row->get_bool(panel.scenario()), check->isChecked());
    } else if (auto* combo = qobject_cast<QComboBox*>(w)) {
      const int other = combo->currentIndex() == combo->count() - 1 ? 0 : combo->count() - 1;
      combo->setCurrentIndex(other);
      emit combo->activated(other);
      QCOMPARE(QString::fromStdString(setting_text(*row, panel.scenario())),
               combo->itemText(other));
    } else if (auto* edit = qobject_cast<QLineEdit*>(w)) {
      const QString text =
          row->kind == SettingKind::IntList ? QStringLiteral("1,2,3,4") : QStringLiteral("3");
      edit->setText(text);
      emit edit->editingFinished();
      QCOMPARE(QString::fromStdString(setting_text(*row, panel.scenario())), text);
    }
    QVERIFY(setting_text(*row, panel.scenario()) != setting_text(*row, before));
    QCOMPARE(changed.count(), 1);
  }
};

QTEST_MAIN(TestScenarioPanel)
#include "test_scenario_panel.moc"
