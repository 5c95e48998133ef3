// What the window shows, alone: a simulation or a run file (one of its epochs), the
// transitions between them with the signals each sends, stepping a run's epochs, and the
// names and title that follow. No window, no runner: results are built here.
#include <QSignalSpy>
#include <QtTest>

#include "ui/models/shown_source.h"

using namespace shardlens;
using namespace shardlens::ui;

namespace {

ResultPtr simulation(const std::string& name) {
  auto r = std::make_shared<EvaluationResult>();
  r->eval.meta.scenario = Scenario{};
  r->eval.meta.scenario->name = name;
  return r;
}

// A run file of `epochs` epochs, its first shown; the epochs share one owner as the runner's.
ResultPtr run(const QString& path, size_t epochs) {
  struct Set {
    std::vector<EvaluationResult> results;
    std::vector<ResultPtr> views;
  };
  auto set = std::make_shared<Set>();
  set->results.resize(epochs);
  for (size_t k = 0; k < epochs; ++k) {
    EvaluationResult& r = set->results[k];
    r.eval.provenance.file = path.toStdString();
    r.eval.provenance.epochs = epochs;
    r.eval.meta.epoch = int64_t(k);
    r.runPath = path;
    r.epochIndex = k;
    set->views.push_back(ResultPtr(ResultPtr(), &r));
  }
  const std::shared_ptr<const std::vector<ResultPtr>> siblings(std::shared_ptr<void>(),
                                                               &set->views);
  for (EvaluationResult& r : set->results) r.epochs = siblings;
  return ResultPtr(set, &set->results.front());
}

}  // namespace

class TestShownSource : public QObject {
  Q_OBJECT
 private slots:
  void startsSimulatingNothing() {
    ShownSource source;
    QVERIFY(!source.showingRun());
    QVERIFY(!source.showingEpochs());
    QVERIFY(!source.result());
    QVERIFY(!source.requested());
    QVERIFY(!source.epochAfter(1));
    QCOMPARE(source.title(), QStringLiteral("Untitled scenario"));
    QCOMPARE(source.filePath(), QString());
    QCOMPARE(source.shownName(), QString());
  }

  void simulationsAreShownWithoutLeavingARun() {
    ShownSource source;
    QSignalSpy shown(&source, &ShownSource::shown);
    QSignalSpy left(&source, &ShownSource::runLeft);
    QSignalSpy entered(&source, &ShownSource::runShown);
    const ResultPtr sim = simulation("padding");
    source.show(sim);
    QCOMPARE(shown.size(), 1);
    QCOMPARE(shown.front().front().value<ResultPtr>(), sim);
    QCOMPARE(left.size(), 0);
    QCOMPARE(entered.size(), 0);
    QCOMPARE(source.result(), sim);
    QCOMPARE(source.requested(), sim);
    QCOMPARE(source.shownName(), QStringLiteral("padding"));
    QVERIFY(!source.leaveRun());
    QCOMPARE(left.size(), 0);
  }

  void aRunIsEnteredSteppedAndLeft() {
    ShownSource source;
    Scenario edited;
    edited.name = "edited";
    source.setScenario(edited);
    source.setScenarioPath(QStringLiteral("/tmp/edited.json"));
    source.show(simulation("edited"));
    QSignalSpy shown(&source, &ShownSource::shown);
    QSignalSpy left(&source, &ShownSource::runLeft);
    QSignalSpy entered(&source, &ShownSource::runShown);
    const ResultPtr first = run(QStringLiteral("/runs/three.slrun"), 3);
    source.show(first);
    QCOMPARE(entered.size(), 1);
    QCOMPARE(shown.size(), 1);
    QVERIFY(source.showingRun());
    QVERIFY(source.showingEpochs());
    QCOMPARE(source.runPath(), QStringLiteral("/runs/three.slrun"));
    QCOMPARE(source.title(), QStringLiteral("three.slrun"));
    QCOMPARE(source.filePath(), QStringLiteral("/runs/three.slrun"));
    QCOMPARE(source.shownName(), QStringLiteral("three.slrun"));
    // Steps wrap, and add up from the epoch last asked for while its views are prepared.
    QCOMPARE(source.epochAfter(-1)->epochIndex, size_t(2));
    const ResultPtr second = source.epochAfter(1);
    QCOMPARE(second->epochIndex, size_t(1));
    source.request(second);
    QCOMPARE(source.epochAfter(1)->epochIndex, size_t(2));
    QCOMPARE(source.result(), first);  // on screen until shown
    source.show(second);
    QCOMPARE(entered.size(), 2);  // another epoch of the run: its banner follows
    QCOMPARE(left.size(), 0);
    QCOMPARE(source.result()->eval.epoch(), int64_t(1));
    // Back to the simulation: the scenario edited before the run, with its file.
    QVERIFY(source.leaveRun());
    QCOMPARE(left.size(), 1);
    QVERIFY(!source.showingRun());
    QVERIFY(!source.showingEpochs());
    QCOMPARE(source.scenario().name, std::string("edited"));
    QCOMPARE(source.title(), QStringLiteral("edited"));
    QCOMPARE(source.filePath(), QStringLiteral("/tmp/edited.json"));
    QVERIFY(!source.leaveRun());
    QCOMPARE(left.size(), 1);
  }

  void aSimulationsResultLeavesTheRun() {
    ShownSource source;
    source.show(run(QStringLiteral("/runs/one.slrun"), 1));
    QVERIFY(source.showingRun());
    QVERIFY(!source.showingEpochs());  // one epoch: nothing to step
    QVERIFY(!source.epochAfter(1));
    QSignalSpy shown(&source, &ShownSource::shown);
    QSignalSpy left(&source, &ShownSource::runLeft);
    source.show(simulation("after"));
    QCOMPARE(left.size(), 1);
    QCOMPARE(shown.size(), 1);
    QVERIFY(!source.showingRun());
    QCOMPARE(source.shownName(), QStringLiteral("after"));
  }

  void theTitlePrefersTheScenariosTitle() {
    ShownSource source;
    Scenario s;
    s.name = "padding";
    source.setScenario(s);
    QCOMPARE(source.title(), QStringLiteral("padding"));
    s.title = "Padding duplicates samples";
    source.setScenario(s);
    QCOMPARE(source.title(), QStringLiteral("Padding duplicates samples"));
  }
};

QTEST_MAIN(TestShownSource)
#include "test_shown_source.moc"
