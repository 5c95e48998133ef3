// Every item model of the application under QAbstractItemModelTester.
#include <QAbstractItemModelTester>
#include <QtTest>

#include "core/sim/engine.h"
#include "core/torchsem/sampler.h"
#include "ui/controllers/data_export.h"
#include "ui/models/lesson_model.h"
#include "ui/models/sample_model.h"
#include "ui/panels/metrics_panel.h"

using namespace shardlens;
using namespace shardlens::ui;

class TestModels : public QObject {
  Q_OBJECT
 private slots:
  // "Copy as table" pastes into a spreadsheet: a class name that starts like a formula is
  // pasted as text (OWASP's leading '), tabs and line breaks never shift the cells.
  void tableCopyStartsNoFormula() {
    render::HeatmapData d;
    d.classes = 4;
    d.names = {QStringLiteral("=HYPERLINK(\"http://x\",\"y\")"), QStringLiteral("+1"),
               QStringLiteral("@SUM(A1)"), QStringLiteral("a\tb\nc")};
    d.values.assign(16, 3.0);
    const QStringList lines = heatmapTsv(d).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 5);
    const QStringList header = lines[0].split(QLatin1Char('\t'));
    QCOMPARE(header.size(), 5);
    const QStringList want = {QStringLiteral("'=HYPERLINK(\"http://x\",\"y\")"),
                              QStringLiteral("'+1"), QStringLiteral("'@SUM(A1)"),
                              QStringLiteral("a b c")};
    for (int c = 0; c < 4; ++c) {
      QCOMPARE(header[c + 1], want[c]);
      const QStringList row = lines[c + 1].split(QLatin1Char('\t'));
      QCOMPARE(row.size(), 5);
      QCOMPARE(row[0], want[c]);
      QCOMPARE(row[4], QStringLiteral("3"));
    }
  }

  void lessonModel() {
    LessonModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.loadDirectory(QStringLiteral(SHARDLENS_LESSON_DIR));
    QVERIFY2(model.errors().isEmpty(), qPrintable(model.errors().join('\n')));
    QVERIFY(model.rowCount() >= 10);
    const int padding = model.findByName(QStringLiteral("padding-duplicates"));
    QVERIFY(padding >= 0);
    const QModelIndex idx = model.index(padding, 0);
    QVERIFY(!model.data(idx).toString().isEmpty());
    QVERIFY(!model.data(idx, LessonModel::DescriptionRole).toString().isEmpty());
    QCOMPARE(model.data(idx, LessonModel::NameRole).toString(),
             QStringLiteral("padding-duplicates"));
    QVERIFY(model.data(idx, LessonModel::PathRole).toString().endsWith(".json"));
    // Every lesson carries its explanation.
    for (int r = 0; r < model.rowCount(); ++r)
      QVERIFY2(!model.lesson(r)->scenario.description.empty(),
               qPrintable(model.data(model.index(r, 0)).toString()));
    model.loadDirectory(QStringLiteral("/nonexistent"));
    QCOMPARE(model.rowCount(), 0);
  }

  void lessonModelSkipsBrokenFiles() {
    QTemporaryDir dir;
    QFile good(dir.filePath("good.json"));
    QVERIFY(good.open(QIODevice::WriteOnly));
    good.write(R"({"name": "good", "title": "Good", "world_size": 2})");
    good.close();
    QFile bad(dir.filePath("bad.json"));
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write(R"({"name": "bad", "no_such_key": 1})");
    bad.close();
    LessonModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.loadDirectory(dir.path());
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.errors().size(), 1);
    QVERIFY(model.errors().first().contains("bad.json"));
  }

  void sampleModel() {
    SampleModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    std::vector<CellSample> samples;
    for (int i = 0; i < 25; ++i)
      samples.push_back({i * 3, i, i % 4, 1, 2, uint8_t(i == 7 ? kPadding : 0)});
    model.setSamples(samples, {"zero", "one", "two"});
    QCOMPARE(model.rowCount(), 25);
    QCOMPARE(model.columnCount(), int(SampleModel::ColumnCount));
    QCOMPARE(model.data(model.index(2, SampleModel::Index)).toLongLong(), 6);
    QCOMPARE(model.data(model.index(2, SampleModel::Target)).toString(), QStringLiteral("1 (one)"));
    QCOMPARE(model.data(model.index(2, SampleModel::Prediction), Qt::UserRole).toInt(), 2);
    QVERIFY(model.data(model.index(7, SampleModel::Flags)).toString().contains("padding"));
    QVERIFY(model.data(model.index(6, SampleModel::Flags)).toString().isEmpty());
    QCOMPARE(model.headerData(SampleModel::Index, Qt::Horizontal).toString(),
             QStringLiteral("Dataset index"));
    samples.resize(3);
    samples[0].rank = -1;  // dataset-level sample (expected matrix)
    model.setSamples(samples, {});
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.data(model.index(0, SampleModel::Rank)).toString(), QStringLiteral("dataset"));
    QCOMPARE(model.data(model.index(0, SampleModel::Target)).toString(), QStringLiteral("1"));
    model.setSamples({}, {});
    QCOMPARE(model.rowCount(), 0);
  }

  // The metrics table beside the diagnosis: Accelerate's plain gather on 25 samples, 4 ranks.
  void metricsModel() {
    MetricsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    Scenario s;
    s.dataset = "synthetic:counts=20,5";
    s.predictor = "noisy:accuracy=0.8,seed=3";
    s.sampler.kind = SamplerKind::Accelerate;
    s.sampler.world_size = 4;
    s.loader.batch_size = 2;
    s.sync = SyncStrategy::Gather;
    const Evaluation e = simulate(s);
    model.setEvaluation(&e);
    // accuracy, macro F1, weighted F1, and 3 per class: no logged value, as the run logs none.
    QCOMPARE(model.rowCount(), 3 + 3 * 2);
    // A run that logs its accuracy with sync_dist at epoch end and per batch: both rows too.
    Scenario logging = s;
    logging.logged_accuracy = LoggedAccuracy::Both;
    const Evaluation logged = simulate(logging);
    model.setEvaluation(&logged);
    QCOMPARE(model.rowCount(), 5 + 3 * 2);
    QCOMPARE(model.columnCount(), int(MetricsModel::ColumnCount));
    // The largest change first.
    const auto& rows = model.rows();
    for (size_t i = 1; i < rows.size(); ++i)
      QVERIFY(std::abs(rows[i - 1].difference.value_or(0)) >=
              std::abs(rows[i].difference.value_or(0)));
    QVERIFY(std::abs(rows.front().difference.value_or(0)) > 0);
    const Metrics want = compute_metrics(*e.expected);
    for (int r = 0; r < model.rowCount(); ++r) {
      if (model.data(model.index(r, MetricsModel::Metric)).toString() == QLatin1String("accuracy"))
        QCOMPARE(model.data(model.index(r, MetricsModel::Expected)).toString(),
                 QString::number(want.accuracy, 'f', 4));
    }
    QCOMPARE(model.headerData(MetricsModel::Difference, Qt::Horizontal).toString(),
             QStringLiteral("Difference"));
    model.setEvaluation(nullptr);
    QCOMPARE(model.rowCount(), 0);
  }
};

QTEST_GUILESS_MAIN(TestModels)
#include "test_models.moc"
