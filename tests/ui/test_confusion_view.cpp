// The views that read many classes at a glance: the Most confused dock, the "confusion" class
// order and the most-confused figure, and the Groups dock and figure of a class hierarchy,
// on matrices worked out by hand and on a 1000-class evaluation.
#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QSet>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTreeWidget>
#include <QtTest>

#include "core/diagnosis/row_check.h"
#include "core/report/confusion_ranking.h"
#include "core/report/metrics.h"
#include "core/report/report.h"
#include "core/sim/engine.h"
#include "core/sim/lessons.h"
#include "ui/jobs/evaluation_runner.h"
#include "ui/panels/confusion_panel.h"
#include "ui/panels/groups_panel.h"
#include "ui/panels/metrics_panel.h"
#include "ui/render/confusion_figure.h"
#include "ui/render/figures.h"
#include "ui/render/group_heatmaps.h"
#include "ui/render/heatmap_source.h"
#include "ui/views/heatmap_view.h"

using namespace shardlens;
using namespace shardlens::ui;

namespace {

Matrix matrix(int32_t classes, const std::vector<double>& cells) {
  Matrix m(classes);
  m.cells = cells;
  return m;
}

// Two ranks, three classes (cat, dog, fox):
//   rank 0          rank 1          synced (sum)    expected
//   4 1 0           3 0 0           7 1 0           7 1 0
//   0 3 0           1 4 0           1 7 0           1 6 0
//   0 2 5           0 2 4           0 4 9           0 2 8
// Row sums 8, 8, 13 against true counts 8, 7, 10: dog +1, fox +3. Confusions, largest
// first: fox->dog 4, cat->dog 1, dog->cat 1; the confusion order is fox, dog, cat.
ResultPtr handMade() {
  auto r = std::make_shared<EvaluationResult>();
  Evaluation& e = r->eval;
  e.meta.class_names = {"cat", "dog", "fox"};
  e.meta.class_counts = {8, 7, 10};
  e.per_rank = {matrix(3, {4, 1, 0, 0, 3, 0, 0, 2, 5}), matrix(3, {3, 0, 0, 1, 4, 0, 0, 2, 4})};
  e.synced = matrix(3, {7, 1, 0, 1, 7, 0, 0, 4, 9});
  e.expected = matrix(3, {7, 1, 0, 1, 6, 0, 0, 2, 8});
  e.row_check = check_rows(*e.synced, e.meta.class_counts);
  return r;
}

// Four classes, two groups: dog, wolf (canine) and car, bus (vehicle).
//   true \ pred  dog wolf car bus      row   true count
//   dog           5    1   0   0        6        5   (+1)
//   wolf          0    3   0   0        3        4   (-1)
//   car           0    0   4   2        6        4   (+2)
//   bus           0    0   1   3        4        4
// canine 9 against 9 (the +1 and -1 cancel), vehicle 10 against 8 (+2).
ResultPtr grouped() {
  auto r = std::make_shared<EvaluationResult>();
  Evaluation& e = r->eval;
  e.meta.class_names = {"dog", "wolf", "car", "bus"};
  e.meta.class_counts = {5, 4, 4, 4};
  e.synced = matrix(4, {5, 1, 0, 0, 0, 3, 0, 0, 0, 0, 4, 2, 0, 0, 1, 3});
  e.per_rank = {*e.synced};
  e.row_check = check_rows(*e.synced, e.meta.class_counts);
  e.class_groups = std::make_shared<const ClassHierarchy>(
      parse_class_hierarchy("0 canine\n1 canine\n2 vehicle\n3 vehicle\n", 4, "h.txt"));
  return r;
}

// Six classes, three levels (the core test's, tests/core/test_class_hierarchy.cpp), 4 true
// samples each; paths of three, two and one group:
//   dog, wolf animal > mammal > canine; cat animal > mammal > feline; sparrow animal > bird;
//   car, bus vehicle.
//   true \ pred   dog wolf cat spar car bus   row   off
//   dog             4   1    0   0    0   0     5    +1
//   wolf            0   4    0   0    0   0     4
//   cat             0   0    2   0    0   0     2    -2
//   sparrow         0   0    1   4    0   0     5    +1
//   car             0   0    0   0    4   0     4
//   bus             0   0    0   0    2   4     6    +2
// Level 1: animal 16/16 (right), vehicle 10/8. Level 2: mammal 11/12 (-1), bird 5/4 (+1),
// vehicle 10/8 (+2). Level 3: canine 9/8 (+1), feline 2/4 (-2), bird 5/4, vehicle 10/8.
ResultPtr threeLevels() {
  auto r = std::make_shared<EvaluationResult>();
  Evaluation& e = r->eval;
  e.meta.class_names = {"dog", "wolf", "cat", "sparrow", "car", "bus"};
  e.meta.class_counts = {4, 4, 4, 4, 4, 4};
  e.synced = matrix(6, {4, 1, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0,
                        0, 0, 1, 4, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 2, 4});
  e.per_rank = {*e.synced};
  e.row_check = check_rows(*e.synced, e.meta.class_counts);
  e.class_groups = std::make_shared<const ClassHierarchy>(
      parse_class_hierarchy("0 animal > mammal > canine\n1 animal > mammal > canine\n"
                            "2 animal > mammal > feline\n3 animal > bird\n4 vehicle\n5 vehicle\n",
                            6, "h.txt"));
  return r;
}

// 1000 classes in three levels: 10 superclasses of 100 classes, each of 5 kinds of 20, each of
// 4 groups of 5; the last superclass's paths end at its kinds (two levels). As a WordNet file
// for ImageNet would be read, at a tenth of its depth.
const char* const kSuperclasses[] = {"animal",     "plant",         "vehicle",  "structure",
                                     "instrument", "food",          "clothing", "device",
                                     "container",  "natural object"};
QString superOf(int c) {
  return QString::fromLatin1(kSuperclasses[c / 100]);
}
QString kindOf(int c) {
  return superOf(c) + QStringLiteral(", kind %1").arg(c % 100 / 20 + 1);
}
std::string thousandInThreeLevels() {
  std::string text;
  for (int c = 0; c < 1000; ++c) {
    QString path = superOf(c) + QStringLiteral(" > ") + kindOf(c);
    if (c < 900)
      path +=
          QStringLiteral(" > %1 %2.%3").arg(superOf(c)).arg(c % 100 / 20 + 1).arg(c % 20 / 5 + 1);
    text += std::to_string(c) + " " + path.toStdString() + "\n";
  }
  return text;
}

QStringList childNames(const QTreeWidgetItem* item) {
  QStringList out;
  for (int i = 0; i < item->childCount(); ++i) out << item->child(i)->text(0);
  return out;
}

QString text(QTableWidget* t, int row, int col) {
  return t->item(row, col) ? t->item(row, col)->text() : QString();
}

// What the dock writes for each rank's share: "r0: 2, r1: 2", "none" when no rank.
QString ranksOf(const std::vector<RankCount>& ranks) {
  QStringList parts;
  for (const RankCount& r : ranks)
    parts << QStringLiteral("r%1: %2").arg(r.rank).arg(QString::fromStdString(count_text(r.count)));
  return parts.isEmpty() ? QStringLiteral("none") : parts.join(QStringLiteral(", "));
}

QString name(const Evaluation& e, int32_t c) {
  return QString::fromStdString(e.class_name(c));
}

// A wrong result at 1000 classes computed by the job runner, as the window gets it: 5,000
// samples on 3 ranks, one padded, so a row sums one too many and its repeat is attributed.
ResultPtr runnersResult() {
  Scenario s = load_preset("padding-duplicates");
  s.dataset = "synthetic:classes=1000,per-class=5";
  s.sampler.world_size = 3;
  EvaluationRunner runner;
  QSignalSpy finished(&runner, &EvaluationRunner::finished);
  runner.start(s);
  if (!finished.wait(60000)) return nullptr;
  return finished.at(0).at(0).value<ResultPtr>();
}

}  // namespace

class TestConfusionView : public QObject {
  Q_OBJECT
 private slots:
  void panelListsPairsAndWrongRowsWithTheirRanks() {
    ConfusionPanel panel;
    panel.show();
    panel.setResult(handMade());
    QTableWidget* pairs = panel.pairsTable();
    QCOMPARE(pairs->rowCount(), 3);
    QCOMPARE(text(pairs, 0, 0), QStringLiteral("fox"));
    QCOMPARE(text(pairs, 0, 1), QStringLiteral("dog"));
    QCOMPARE(text(pairs, 0, 2), QStringLiteral("4"));
    QCOMPARE(text(pairs, 0, 3), QStringLiteral("2"));  // expected
    QCOMPARE(text(pairs, 0, 4), QStringLiteral("r0: 2, r1: 2"));
    QCOMPARE(text(pairs, 1, 0), QStringLiteral("cat"));
    QCOMPARE(text(pairs, 1, 4), QStringLiteral("r0: 1"));
    QTableWidget* rows = panel.rowsTable();
    QCOMPARE(rows->rowCount(), 2);
    QCOMPARE(text(rows, 0, 0), QStringLiteral("fox"));
    QCOMPARE(text(rows, 0, 1), QStringLiteral("13"));
    QCOMPARE(text(rows, 0, 2), QStringLiteral("10"));
    QCOMPARE(text(rows, 0, 3), QStringLiteral("+3"));
    QCOMPARE(text(rows, 0, 4), QStringLiteral("–"));  // no records to tell repeats by
    QCOMPARE(text(rows, 0, 5), QStringLiteral("r0: 7, r1: 6"));
    QCOMPARE(text(rows, 1, 0), QStringLiteral("dog"));
    QCOMPARE(text(rows, 1, 3), QStringLiteral("+1"));
  }

  // The job ranks the confusions (repeats read from the records) and computes the metrics
  // with the result; the docks list exactly what the core functions give on that evaluation.
  void docksListWhatTheCoreComputesOnTheRunnersResult() {
    const ResultPtr result = runnersResult();
    QVERIFY(result);
    QVERIFY(result->tables);  // made in the worker, not by the docks
    const Evaluation& e = result->eval;
    const ConfusionRanking direct = rank_confusion(e, 25, 1, Repeats::FromRecords);
    QVERIFY(!direct.wrong_rows.empty());
    QVERIFY(!direct.wrong_rows.front().repeated.empty());  // the records walk is covered

    ConfusionPanel panel;
    panel.show();
    panel.setResult(result);
    QTableWidget* pairs = panel.pairsTable();
    QCOMPARE(pairs->rowCount(), int(direct.pairs.size()));
    for (int i = 0; i < pairs->rowCount(); ++i) {
      const ConfusedPair& p = direct.pairs[size_t(i)];
      QCOMPARE(text(pairs, i, 0), name(e, p.true_class));
      QCOMPARE(text(pairs, i, 1), name(e, p.predicted));
      QCOMPARE(text(pairs, i, 2), QString::fromStdString(count_text(p.count)));
      QCOMPARE(text(pairs, i, 4), ranksOf(p.ranks));
    }
    QTableWidget* rows = panel.rowsTable();
    QCOMPARE(rows->rowCount(), int(direct.wrong_rows.size()));
    for (int i = 0; i < rows->rowCount(); ++i) {
      const WrongRow& w = direct.wrong_rows[size_t(i)];
      QCOMPARE(text(rows, i, 0), name(e, w.row));
      QCOMPARE(text(rows, i, 1), QString::fromStdString(count_text(w.observed)));
      QCOMPARE(text(rows, i, 4), w.repeated.empty() ? QStringLiteral("–") : ranksOf(w.repeated));
      QCOMPARE(text(rows, i, 5), ranksOf(w.ranks));
    }

    MetricsPanel metrics;
    metrics.setResult(result);
    const std::vector<MetricRow> expected = metric_rows(e);
    const std::vector<MetricRow>& shown = metrics.metricsModel()->rows();
    QCOMPARE(shown.size(), expected.size());
    QVERIFY(shown.size() > 3000);  // accuracy, F1s and each class's precision, recall, F1
    for (size_t i = 0; i < shown.size(); ++i) {
      QCOMPARE(shown[i].name, expected[i].name);
      QCOMPARE(shown[i].reported, expected[i].reported);
      QCOMPARE(shown[i].expected, expected[i].expected);
      QCOMPARE(shown[i].difference, expected[i].difference);
    }
  }

  // Applying a result only fills the tables: the docks list the job's tables and never rank
  // or compute again (here tables that differ from what the evaluation would give).
  void docksListTheJobsTablesWithoutComputingAgain() {
    auto result = std::make_shared<EvaluationResult>(*handMade());
    auto tables = std::make_shared<ResultTables>();
    ConfusedPair foxAsCat;
    foxAsCat.true_class = 2;
    foxAsCat.predicted = 0;
    foxAsCat.count = 9;
    tables->confusion.pairs = {foxAsCat};
    tables->confusion.confused_cells = 1;
    tables->metrics.rows = {{"made-up metric", 0.5, 0.25, 0.25}};
    result->tables = tables;

    ConfusionPanel panel;
    panel.show();
    panel.setResult(result);
    QCOMPARE(panel.pairsTable()->rowCount(), 1);
    QCOMPARE(text(panel.pairsTable(), 0, 0), QStringLiteral("fox"));
    QCOMPARE(text(panel.pairsTable(), 0, 1), QStringLiteral("cat"));
    QCOMPARE(text(panel.pairsTable(), 0, 2), QStringLiteral("9"));
    QCOMPARE(panel.rowsTable()->rowCount(), 0);  // the evaluation has 2 wrong rows

    MetricsPanel metrics;
    metrics.setResult(result);
    QCOMPARE(metrics.metricsModel()->rowCount(), 1);
    QCOMPARE(metrics.metricsModel()->rows().front().name, std::string("made-up metric"));
  }

  void clickingAPairOrARowActivatesItsCell() {
    ConfusionPanel panel;
    panel.show();
    panel.setResult(handMade());
    std::vector<CellRef> activated;
    connect(&panel, &ConfusionPanel::cellActivated,
            [&](const CellRef& cell) { activated.push_back(cell); });
    emit panel.pairsTable()->cellClicked(0, 3);
    QCOMPARE(activated.size(), size_t(1));
    QVERIFY(activated[0].kind == ViewKind::Synced);
    QCOMPARE(activated[0].trueClass, 2);
    QCOMPARE(activated[0].predClass, 1);
    emit panel.rowsTable()->cellClicked(1, 0);  // dog's row: its diagonal cell
    QCOMPARE(activated.size(), size_t(2));
    QCOMPARE(activated[1].trueClass, 1);
    QCOMPARE(activated[1].predClass, 1);
  }

  void aCorrectEvaluationHasNoWrongRows() {
    auto r = std::const_pointer_cast<EvaluationResult>(handMade());
    r->eval.synced = r->eval.expected;
    r->eval.meta.class_counts = {8, 7, 10};
    r->eval.row_check = check_rows(*r->eval.synced, r->eval.meta.class_counts);
    ConfusionPanel panel;
    panel.show();
    panel.setResult(r);
    QCOMPARE(panel.rowsTable()->rowCount(), 0);
    QVERIFY(panel.findChildren<QLabel*>().size() >= 2);
    panel.setResult(nullptr);
    QCOMPARE(panel.pairsTable()->rowCount(), 0);
  }

  void confusionOrderPutsEachLargeConfusionsClassesSideBySide() {
    QVERIFY(render::parseClassOrder(QStringLiteral("confusion")) == render::ClassOrder::Confusion);
    QCOMPARE(render::classOrderName(render::ClassOrder::Confusion), QStringLiteral("confusion"));
    QVERIFY(render::classOrderNames().contains(QStringLiteral("confusion")));
    const ResultPtr result = handMade();
    const Evaluation& e = result->eval;
    QCOMPARE(render::classOrder(e, render::ClassOrder::Confusion), (std::vector<int>{2, 1, 0}));
    render::MatrixOptions o;
    o.order = render::ClassOrder::Confusion;
    const render::HeatmapData d = render::syncedHeatmap(e, o);
    QCOMPARE(d.names[0], QStringLiteral("fox"));
    QCOMPARE(d.value(0, 1), 4.0);  // fox -> dog beside the diagonal
    QVERIFY(d.rowWrong[0]);        // fox's +3 stays marked in its new place
  }

  void focusingClassesPutsTheCursorOnTheirDisplayedCell() {
    const ResultPtr result = handMade();
    const Evaluation& e = result->eval;
    render::MatrixOptions o;
    o.order = render::ClassOrder::Confusion;  // display: fox, dog, cat
    HeatmapView view;
    view.resize(400, 400);
    view.setData(render::syncedHeatmap(e, o));
    view.focusClasses(0, 1);  // cat -> dog
    QVERIFY(view.currentCell());
    QCOMPARE(view.currentCell()->row, 2);
    QCOMPARE(view.currentCell()->col, 1);
    view.focusClasses(7, 1);  // no such class: the cursor stays
    QCOMPARE(view.currentCell()->row, 2);
  }

  // At 1000 classes the figure shows the 30 most confused, named, their rows' whole sums.
  void mostConfusedFigureAtAThousandClasses() {
    Scenario s = load_preset("padding-duplicates");
    s.dataset = "synthetic:classes=1000,per-class=5";  // 5,000 samples
    s.sampler.world_size = 3;                          // 5,000 = 3 x 1,666 + 2: 1 padded
    const Evaluation e = simulate(s);
    QVERIFY(!e.row_check.wrong_rows.empty());
    const render::HeatmapData d = render::mostConfusedHeatmap(e);
    QCOMPARE(d.classes, render::kConfusionFigureClasses);
    const std::vector<int32_t> order = order_by_confusion(*e.synced);
    for (int i = 0; i < d.classes; ++i) {
      const int c = order[size_t(i)];
      QCOMPARE(d.classOf[size_t(i)], c);
      QCOMPARE(d.names[size_t(i)], QString::fromStdString(e.class_name(c)));
      double row = 0;
      for (int j = 0; j < e.classes(); ++j) row += e.synced->at(c, j);
      QCOMPARE(d.rowObserved[size_t(i)], row);  // the whole row, not the 30 columns shown
      QCOMPARE(d.rowExpected[size_t(i)], double(e.meta.class_counts[size_t(c)]));
      for (int j = 0; j < d.classes; ++j)
        QCOMPARE(d.value(i, j), e.synced->at(c, order[size_t(j)]));
    }
    const auto figures = render::figureSet(e, {}, render::HeatmapStyle{}, {});
    QCOMPARE(figures.back().first, QStringLiteral("most-confused"));
    QVERIFY(figures.back().second.panels.front().title.contains(QStringLiteral("30 of 1000")));
  }

  void smallEvaluationsHaveNoMostConfusedFigure() {
    const Evaluation e = simulate(load_preset("padding-duplicates"));  // 10 classes
    for (const auto& [name, figure] : render::figureSet(e, {}, render::HeatmapStyle{}, {}))
      QVERIFY(name != QStringLiteral("most-confused"));
  }

  // A perfect predictor confuses no two classes: no figure titled "most confused" that would
  // show the first 30 classes by id (counter-precision at 1000 classes did).
  void noConfusionNoMostConfusedFigure() {
    Scenario s = load_preset("padding-duplicates");
    s.dataset = "synthetic:classes=40,per-class=5";  // 200 = 3 x 66 + 2: one padded
    s.sampler.world_size = 3;
    s.predictor = "perfect";
    const Evaluation e = simulate(s);
    QVERIFY(!e.row_check.wrong_rows.empty());  // padded rows are wrong, yet none confused
    for (const auto& [name, figure] : render::figureSet(e, {}, render::HeatmapStyle{}, {}))
      QVERIFY(name != QStringLiteral("most-confused"));
  }

  void groupsHeatmapCollapsesAndChecksEachGroup() {
    const render::HeatmapData d = render::groupsHeatmap(grouped()->eval);
    QCOMPARE(d.classes, 2);
    QCOMPARE(d.names, (std::vector<QString>{QStringLiteral("canine"), QStringLiteral("vehicle")}));
    QCOMPARE(d.denseValues(), (std::vector<double>{9, 0, 0, 10}));
    QCOMPARE(d.rowExpected, (std::vector<double>{9, 8}));
    QCOMPARE(d.rowWrong, (std::vector<bool>{false, true}));
    const render::HeatmapData vehicle = render::groupChildrenHeatmap(grouped()->eval, 0, 1);
    QCOMPARE(vehicle.names, (std::vector<QString>{QStringLiteral("car"), QStringLiteral("bus")}));
    QCOMPARE(vehicle.denseValues(), (std::vector<double>{4, 2, 1, 3}));
    QCOMPARE(vehicle.rowWrong, (std::vector<bool>{true, false}));
    QCOMPARE(render::groupsHeatmap(handMade()->eval).classes, 0);  // no hierarchy
  }

  void groupsPanelListsGroupsWorstFirstAndExpandsOnClick() {
    GroupsPanel panel;
    panel.resize(500, 700);
    panel.setResult(grouped());  // hidden: filled when shown
    QCOMPARE(panel.tree()->topLevelItemCount(), 0);
    panel.show();
    QTreeWidget* tree = panel.tree();
    QCOMPARE(tree->topLevelItemCount(), 2);
    QTreeWidgetItem* vehicle = tree->topLevelItem(0);  // +2 first
    QCOMPARE(vehicle->text(0), QStringLiteral("⚠ vehicle"));
    QCOMPARE(vehicle->text(1), QStringLiteral("10 ≠ 8"));
    QCOMPARE(vehicle->text(2), QStringLiteral("+2"));
    QCOMPARE(vehicle->childCount(), 2);
    QCOMPARE(vehicle->child(0)->text(0), QStringLiteral("⚠ car"));
    QCOMPARE(tree->topLevelItem(1)->text(0), QStringLiteral("canine"));  // right as a group
    QCOMPARE(tree->topLevelItem(1)->child(1)->text(2), QStringLiteral("-1"));
    QCOMPARE(tree->topLevelItem(1)->text(1), QStringLiteral("9 = 9"));
    QCOMPARE(panel.heatmap()->data().classes, 2);  // the groups
    emit tree->itemClicked(vehicle, 0);
    QCOMPARE(panel.shownGroup(), 1);
    QVERIFY(vehicle->isExpanded());
    QCOMPARE(panel.heatmap()->data().names.front(), QStringLiteral("car"));
    QVERIFY(panel.levelBox()->isHidden());  // one level: nothing to choose
    panel.drillInto(0, -1);
    QCOMPARE(panel.heatmap()->data().classes, 2);
    emit panel.heatmap()->cellClicked(0, 1);  // canine's row of the collapsed matrix
    QCOMPARE(panel.shownGroup(), 0);
    QCOMPARE(panel.heatmap()->data().names.front(), QStringLiteral("dog"));
  }

  void groupsHeatmapsOfEveryLevelAndOfAGroupsChildren() {
    const ResultPtr result = threeLevels();
    const Evaluation& e = result->eval;
    const render::HeatmapData level2 = render::groupsHeatmap(e, 1);
    QCOMPARE(level2.names, (std::vector<QString>{QStringLiteral("mammal"), QStringLiteral("bird"),
                                                 QStringLiteral("vehicle")}));
    QCOMPARE(level2.denseValues(), (std::vector<double>{11, 0, 0, 1, 4, 0, 0, 0, 10}));
    QCOMPARE(level2.rowExpected, (std::vector<double>{12, 4, 8}));
    QCOMPARE(level2.rowWrong, (std::vector<bool>{true, true, true}));
    QVERIFY(level2.title.contains(QStringLiteral("level 2 of 3")));
    // animal's children on level 2: its cells among them, rows checked over every column.
    const render::HeatmapData animal = render::groupChildrenHeatmap(e, 0, 0);
    QCOMPARE(animal.names,
             (std::vector<QString>{QStringLiteral("mammal"), QStringLiteral("bird")}));
    QCOMPARE(animal.denseValues(), (std::vector<double>{11, 0, 1, 4}));
    QCOMPARE(animal.rowObserved, (std::vector<double>{11, 5}));
    QCOMPARE(animal.rowExpected, (std::vector<double>{12, 4}));
    QVERIFY(animal.classOf.empty());  // names, never numbers meaning nothing to a reader
    QCOMPARE(render::groupChildren(*e.class_groups, 0, 0), (std::vector<int32_t>{0, 1}));
    QCOMPARE(render::groupChildren(*e.class_groups, 1, 2), std::vector<int32_t>{3});  // vehicle
    QVERIFY(render::groupChildren(*e.class_groups, 2, 0).empty());  // the deepest level
    const render::HeatmapData mammal = render::groupChildrenHeatmap(e, 1, 0);
    QCOMPARE(mammal.names,
             (std::vector<QString>{QStringLiteral("canine"), QStringLiteral("feline")}));
    QCOMPARE(mammal.denseValues(), (std::vector<double>{9, 0, 0, 2}));
    QCOMPARE(mammal.rowWrong, (std::vector<bool>{true, true}));
    // Below the deepest level: the classes.
    const render::HeatmapData canine = render::groupChildrenHeatmap(e, 2, 0);
    QCOMPARE(canine.names, (std::vector<QString>{QStringLiteral("dog"), QStringLiteral("wolf")}));
    QCOMPARE(canine.denseValues(), (std::vector<double>{4, 1, 0, 4}));
    QCOMPARE(render::groupsHeatmap(e, 3).classes, 0);  // no fourth level
    QStringList names;
    for (const auto& [name, figure] : render::figureSet(e, {}, render::HeatmapStyle{}, {}))
      names << name;
    QVERIFY2(names.contains(QStringLiteral("groups")) &&
                 names.contains(QStringLiteral("groups-level-2")) &&
                 names.contains(QStringLiteral("groups-level-3")) &&
                 !names.contains(QStringLiteral("groups-level-4")),
             qPrintable(names.join(',')));
  }

  void groupsPanelNestsTheTreeByLevelAndDrillsDown() {
    GroupsPanel panel;
    panel.resize(500, 700);
    panel.show();
    panel.setResult(threeLevels());
    QTreeWidget* tree = panel.tree();
    // Worst first on every level: vehicle (+2) before animal (right).
    QCOMPARE(tree->topLevelItemCount(), 2);
    QTreeWidgetItem* vehicle = tree->topLevelItem(0);
    QTreeWidgetItem* animal = tree->topLevelItem(1);
    QCOMPARE(vehicle->text(0), QStringLiteral("⚠ vehicle"));
    QCOMPARE(animal->text(0), QStringLiteral("animal"));
    QCOMPARE(animal->text(1), QStringLiteral("16 = 16"));
    QCOMPARE(animal->text(2), QStringLiteral("0"));
    // Right as a group, wrong below: mammal -1 and bird +1 (ties in the file's order).
    QCOMPARE(childNames(animal),
             (QStringList{QStringLiteral("⚠ mammal"), QStringLiteral("⚠ bird")}));
    QCOMPARE(animal->child(0)->text(1), QStringLiteral("11 ≠ 12"));
    QCOMPARE(animal->child(1)->text(2), QStringLiteral("+1"));
    QTreeWidgetItem* mammal = animal->child(0);
    QCOMPARE(childNames(mammal),
             (QStringList{QStringLiteral("⚠ feline"), QStringLiteral("⚠ canine")}));
    QCOMPARE(childNames(mammal->child(1)),
             (QStringList{QStringLiteral("⚠ dog"), QStringLiteral("wolf")}));
    QCOMPARE(childNames(animal->child(1)), QStringList{QStringLiteral("⚠ sparrow")});
    // A path of one group: vehicle holds its classes directly, worst first.
    QCOMPARE(childNames(vehicle), (QStringList{QStringLiteral("⚠ bus"), QStringLiteral("car")}));

    QCOMPARE(panel.levelBox()->count(), 3);
    QVERIFY(panel.levelBox()->isVisible());
    QCOMPARE(panel.levelBox()->itemText(0), QStringLiteral("Level 1 of 3: 2 groups, 1 wrong"));
    QCOMPARE(panel.heatmap()->data().classes, 2);  // level 1: animal, vehicle
    // Tree click: animal's subgroups in the heatmap.
    emit tree->itemClicked(animal, 0);
    QCOMPARE(panel.shownLevel(), 0);
    QCOMPARE(panel.shownGroup(), 0);
    QCOMPARE(panel.heatmap()->data().names,
             (std::vector<QString>{QStringLiteral("mammal"), QStringLiteral("bird")}));
    // Heatmap clicks drill down: mammal, then feline's classes; among classes nothing changes.
    emit panel.heatmap()->cellClicked(0, 1);
    QCOMPARE(panel.shownLevel(), 1);
    QCOMPARE(panel.heatmap()->data().names,
             (std::vector<QString>{QStringLiteral("canine"), QStringLiteral("feline")}));
    QVERIFY(mammal->isExpanded());
    emit panel.heatmap()->cellClicked(1, 0);
    QCOMPARE(panel.shownLevel(), 2);
    QCOMPARE(panel.heatmap()->data().names, std::vector<QString>{QStringLiteral("cat")});
    emit panel.heatmap()->cellClicked(0, 0);
    QCOMPARE(panel.shownLevel(), 2);
    // Up, level by level, to the chosen level's groups.
    auto* up = panel.findChild<QPushButton*>(QStringLiteral("groupUp"));
    QVERIFY(up && up->isVisible());
    QCOMPARE(up->text(), QStringLiteral("Up to mammal"));
    up->click();
    QCOMPARE(panel.heatmap()->data().names.front(), QStringLiteral("canine"));
    up->click();
    QCOMPARE(panel.heatmap()->data().names.front(), QStringLiteral("mammal"));
    up->click();
    QCOMPARE(panel.shownGroup(), -1);
    QCOMPARE(panel.heatmap()->data().classes, 2);
    QVERIFY(up->isHidden());
    // The level selector: every group of level 3.
    panel.showLevel(2);
    QCOMPARE(panel.heatmap()->data().names,
             (std::vector<QString>{QStringLiteral("canine"), QStringLiteral("feline"),
                                   QStringLiteral("bird"), QStringLiteral("vehicle")}));
    emit panel.heatmap()->cellClicked(3, 3);  // vehicle on the deepest level: its classes
    QCOMPARE(panel.heatmap()->data().names,
             (std::vector<QString>{QStringLiteral("car"), QStringLiteral("bus")}));
    QCOMPARE(up->text(), QStringLiteral("Up to level 3"));
  }

  // 1000 classes, 6 ranks padding 4 duplicates (each +1 to its class): on every level the
  // wrong groups are exactly those holding a wrong class, and a drill from the top reaches it.
  void groupsPanelAtAThousandClassesInThreeLevels() {
    Scenario s = load_preset("padding-duplicates");
    s.dataset = "synthetic:classes=1000,per-class=5";  // 5,000 samples
    s.sampler.world_size = 6;                          // 6 x 834 = 5,004: 4 padded
    auto result = std::make_shared<EvaluationResult>();
    result->eval = simulate(s);
    result->eval.class_groups = std::make_shared<const ClassHierarchy>(
        parse_class_hierarchy(thousandInThreeLevels(), 1000, "h.txt"));
    const std::vector<int32_t>& wrong = result->eval.row_check.wrong_rows;
    QVERIFY(!wrong.empty());
    GroupsPanel panel;
    panel.resize(420, 760);
    panel.show();
    panel.setResult(result);
    QTreeWidget* tree = panel.tree();
    QCOMPARE(tree->topLevelItemCount(), 10);
    QCOMPARE(panel.levelBox()->count(), 3);
    QSet<QString> wrongSupers, markedSupers;
    for (int32_t c : wrong) wrongSupers << superOf(c);
    for (int i = 0; i < tree->topLevelItemCount(); ++i) {
      const QString name = tree->topLevelItem(i)->text(0);
      if (name.startsWith(QStringLiteral("⚠ "))) markedSupers << name.mid(2);
      // Worst first: the wrong ones before every right one.
      QCOMPARE(name.startsWith(QStringLiteral("⚠ ")), i < int(wrongSupers.size()));
    }
    QCOMPARE(markedSupers, wrongSupers);
    // Drill from the top to the first wrong class: superclass, kind, group of five.
    const int c = wrong.front();
    panel.drillInto(0, c / 100);  // the file names the superclasses in class order
    QCOMPARE(panel.heatmap()->data().classes, 5);
    QCOMPARE(panel.heatmap()->data().names[size_t(c % 100 / 20)], kindOf(c));
    QVERIFY(panel.heatmap()->data().rowWrong[size_t(c % 100 / 20)]);
    emit panel.heatmap()->cellClicked(c % 100 / 20, 0);
    QCOMPARE(panel.shownLevel(), 1);
    if (c < 900) {  // a kind of four groups, then the group's five classes
      QCOMPARE(panel.heatmap()->data().classes, 4);
      emit panel.heatmap()->cellClicked(c % 20 / 5, 0);
      QCOMPARE(panel.shownLevel(), 2);
    }
    const render::HeatmapData& classes = panel.heatmap()->data();
    const auto at = std::find(classes.classOf.begin(), classes.classOf.end(), c);
    QVERIFY(at != classes.classOf.end());
    QVERIFY(classes.rowWrong[size_t(at - classes.classOf.begin())]);
    // The deepest level: 9 x 5 x 4 groups of five and the 5 kinds of the two-level paths.
    panel.showLevel(2);
    QCOMPARE(panel.heatmap()->data().classes, 185);
  }

  void groupsPanelWithoutAHierarchySaysHowToGiveOne() {
    GroupsPanel panel;
    panel.show();
    panel.setResult(handMade());
    QCOMPARE(panel.tree()->topLevelItemCount(), 0);
    bool said = false;
    for (const QLabel* l : panel.findChildren<QLabel*>())
      said = said || l->text().contains(QStringLiteral("hierarchy=FILE"));
    QVERIFY(said);
  }

  void figureSetHasTheGroupsFigureWithAHierarchy() {
    QStringList names;
    for (const auto& [name, figure] :
         render::figureSet(grouped()->eval, {}, render::HeatmapStyle{}, {}))
      names << name;
    QVERIFY2(names.contains(QStringLiteral("groups")), qPrintable(names.join(',')));
  }
};

QTEST_MAIN(TestConfusionView)
#include "test_confusion_view.moc"
