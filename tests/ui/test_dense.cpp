// A segmentation evaluation in the GUI: five images of three classes whose (true, predicted)
// pixel histograms are written out below, on 2 ranks of an unshuffled DistributedSampler, so
// image 0 is evaluated twice (rank 1's padding). A clicked cell lists the images that gave it
// pixels with each one's count there, the words say pixels where the matrix counts and images
// where the sampler deals, and the metrics show mIoU reported, true and per rank, all checked
// against values worked out by hand from the histograms. Three multilabel items read as labels,
// and the window on a drawn segmentation set lists a clicked cell's images with their pixels.
#include <QtTest>
#include <cmath>
#include <memory>

#include "core/report/cell_index.h"
#include "core/sim/engine.h"
#include "tests/core/cell_fixtures.h"
#include "tests/ui/ui_test_util.h"
#include "ui/main_window.h"
#include "ui/models/cell_info.h"
#include "ui/panels/diagnosis_panel.h"
#include "ui/panels/matrix_panel.h"
#include "ui/panels/metrics_panel.h"
#include "ui/panels/sample_panel.h"
#include "ui/views/heatmap_view.h"

using namespace shardlens;
using namespace shardlens::ui;

namespace {

constexpr int32_t kClasses = 3;
// Image: (true, predicted) x pixels
//   0: (0,0) x 100, (0,1) x 7, (1,1) x 50      3: (2,2) x 40
//   1: (0,0) x 30,  (2,2) x 20                 4: (0,0) x 5, (0,1) x 2
//   2: (0,1) x 3,   (1,1) x 10
// DistributedSampler(shuffle=False), 2 ranks: 5 images padded to 6, indices 0 1 2 3 4 0;
// rank 0 evaluates images 0 2 4, rank 1 images 1 3 and image 0 again (padding).
std::shared_ptr<const DatasetInputs> fiveImages() {
  return fixtures::cell_dataset(kClasses,
                                {{{0, 0, 100}, {0, 1, 7}, {1, 1, 50}},
                                 {{0, 0, 30}, {2, 2, 20}},
                                 {{0, 1, 3}, {1, 1, 10}},
                                 {{2, 2, 40}},
                                 {{0, 0, 5}, {0, 1, 2}}},
                                {147, 60, 60},  // rows: 100+7+30+3+5+2, 50+10, 20+40
                                Task::Segmentation, {"road", "car", "sky"});
}

// Three multilabel items of labels cat (classes 0 absent, 1 present) and dog (2, 3), one
// cell a label: (true, predicted)
//   0: cat (1,1), dog (2,3)     1: cat (0,0), dog (3,3)     2: cat (1,0), dog (2,2)
// On 2 ranks unshuffled the sampler pads to 0 1 2 0: item 0 is counted twice.
std::shared_ptr<const DatasetInputs> threeItems() {
  return fixtures::cell_dataset(
      4, {{{1, 1, 1}, {2, 3, 1}}, {{0, 0, 1}, {3, 3, 1}}, {{1, 0, 1}, {2, 2, 1}}}, {1, 2, 2, 1},
      Task::Multilabel, multilabel_class_names({"cat", "dog"}));
}

Scenario twoRanksUnshuffled() {
  Scenario s;
  s.name = "two ranks";
  s.sampler.kind = SamplerKind::Distributed;
  s.sampler.world_size = 2;
  s.sampler.shuffle = false;
  s.loader.batch_size = 1;
  return s;
}

ResultPtr fiveImageResult() {
  Scenario s;
  s.name = "five images";
  s.sampler.kind = SamplerKind::Distributed;
  s.sampler.world_size = 2;
  s.sampler.shuffle = false;
  s.loader.batch_size = 1;
  auto r = std::make_shared<EvaluationResult>();
  r->eval = evaluate(s, fiveImages());
  return r;
}

// IoU of a class from its true-positive, false-positive and false-negative pixels.
double iou(double tp, double fp, double fn) {
  return tp / (tp + fp + fn);
}

}  // namespace

class TestDense : public QObject {
  Q_OBJECT

 private slots:
  // The images behind cell (road, car): every rank's (what the synced matrix sums), one
  // rank's, and the dataset's, each with its pixels in the cell.
  void cellListsImagesWithTheirPixels() {
    const ResultPtr r = fiveImageResult();
    const Evaluation& e = r->eval;
    QCOMPARE(e.meta.task, Task::Segmentation);
    int64_t total = 0;
    const auto all = samplesOf(e, SampleScope::AllRanks, -1, 0, 1, 100, &total);
    QCOMPARE(total, int64_t(4));
    QCOMPARE(all.size(), size_t(4));
    const std::vector<std::tuple<int, int64_t, int64_t, bool>> want = {
        {0, 0, 7, false}, {0, 2, 3, false}, {0, 4, 2, false}, {1, 0, 7, true}};
    for (size_t i = 0; i < want.size(); ++i) {
      const auto [rank, index, count, padding] = want[i];
      QCOMPARE(all[i].rank, rank);
      QCOMPARE(all[i].index, index);
      QCOMPARE(all[i].count, count);
      QCOMPARE(bool(all[i].flags & kPadding), padding);
      QCOMPARE(all[i].target, 0);
      QCOMPARE(all[i].prediction, 1);
    }
    // What the listed images add up to is the synced cell's pixels: 7 + 3 + 2 + 7.
    QCOMPARE(e.synced->at(0, 1), 19.0);
    QCOMPARE(cellCount(*r, {ViewKind::Synced, 0, 0, 1}), 19.0);
    // Rank 1 holds only the padding copy of image 0.
    const auto rank1 = samplesOf(e, SampleScope::Rank, 1, 0, 1, 100, &total);
    QCOMPARE(total, int64_t(1));
    QCOMPARE(rank1.front().index, int64_t(0));
    QCOMPARE(rank1.front().position, int64_t(2));
    // The dataset: each image once.
    const auto dataset = samplesOf(e, SampleScope::Expected, -1, 0, 1, 100, &total);
    QCOMPARE(total, int64_t(3));
    QCOMPARE(dataset[0].count + dataset[1].count + dataset[2].count, int64_t(12));
    QCOMPARE(e.expected->at(0, 1), 12.0);
    // A cell no image reaches lists nothing, though images' dominant classes sit nearby.
    QVERIFY(samplesOf(e, SampleScope::AllRanks, -1, 2, 0, 100, &total).empty());
    QCOMPARE(total, int64_t(0));
    // The limit keeps the first images and still counts them all.
    QCOMPARE(samplesOf(e, SampleScope::AllRanks, -1, 0, 0, 2, &total).size(), size_t(2));
    QCOMPARE(total, int64_t(4));  // images 0 and 4 on rank 0; 1 and 0 again on rank 1
  }

  // The same records held as a user's run (no plan, no inputs): the walk reads the cells.
  void storedRecordsListTheSameImages() {
    const ResultPtr r = fiveImageResult();
    auto stored = std::make_shared<StoredRecords>();
    stored->cells = r->eval.inputs->cells;
    stored->ranks.resize(2);
    for (int k = 0; k < 2; ++k)
      for_each_record(*r->eval.records, k,
                      [&](const Record& rec) { stored->ranks[size_t(k)].push_back(rec); });
    Evaluation run = r->eval;
    run.records = stored;
    run.plan.reset();
    run.inputs.reset();
    int64_t total = 0;
    const auto all = samplesOf(run, SampleScope::AllRanks, -1, 0, 1, 100, &total);
    QCOMPARE(total, int64_t(4));
    QCOMPARE(all.back().count, int64_t(7));
    QVERIFY(all.back().flags & kPadding);
    // Distinct evaluated images: 0 once, 2 and 4.
    samplesOf(run, SampleScope::Expected, -1, 0, 1, 100, &total);
    QCOMPARE(total, int64_t(3));
  }

  // The sample panel, the cell and row tooltips and the diagnosis: pixels where the matrix
  // counts, images where the sampler deals.
  void wordsSayPixelsAndImages() {
    const ResultPtr r = fiveImageResult();
    SamplePanel panel;
    panel.showCell(r, {ViewKind::Synced, 0, 0, 1});
    SampleModel* m = panel.model();
    QCOMPARE(m->rowCount(), 4);
    QCOMPARE(m->headerData(SampleModel::Count, Qt::Horizontal).toString(),
             QStringLiteral("Pixels"));
    QCOMPARE(m->headerData(SampleModel::Index, Qt::Horizontal).toString(),
             QStringLiteral("Image (dataset index)"));
    QCOMPARE(m->data(m->index(1, SampleModel::Count)).toLongLong(), 3LL);
    QCOMPARE(m->data(m->index(3, SampleModel::Count)).toLongLong(), 7LL);
    const auto* title = panel.findChild<QLabel*>();
    QVERIFY(title->text().contains(QStringLiteral("4 images, 19 pixels in the cell")));
    QVERIFY(!panel.findChild<QTableView*>()->isColumnHidden(SampleModel::Count));
    QVERIFY(panel.findChild<QTableView*>()->isColumnHidden(SampleModel::Target));

    const QString tip = cellTooltip(*r, {ViewKind::Synced, 0, 0, 1});
    QVERIFY2(tip.contains(QStringLiteral("Counts are pixels")), qPrintable(tip));
    QVERIFY2(
        tip.contains(QStringLiteral("Images (pixels in the cell): 0 (7), 2 (3), 4 (2), 0ᵖ (7)")),
        qPrintable(tip));
    const QString row = rowSumTooltip(*r, ViewKind::Synced, 0, 0);
    QVERIFY2(row.contains(QStringLiteral("True pixels of the class: <b>147</b>")), qPrintable(row));
    // Synced road row: 100+7+30+3+5+2 and image 0's 107 again.
    QVERIFY2(row.contains(QStringLiteral("<b>254</b> pixels")), qPrintable(row));

    const QString diagnosis = diagnosisHtml(r->eval);
    QVERIFY2(diagnosis.contains(QStringLiteral("Pixels in the dataset (expected total)")),
             qPrintable(diagnosis));
    QVERIFY(diagnosis.contains(QStringLiteral("Images evaluated more than once")));
    // Every count grouped alike, the expected total as the reported one: 10 x 1,001 samples
    // padded to 10,012 on 4 ranks read "10,012" and "10,010", not "10,012" and "10010".
    const QString grouped =
        diagnosisHtml(simulate(test::syntheticScenario("grouped", 10, 1001, 4, 16)));
    QVERIFY2(grouped.contains(QStringLiteral("<b>10,012</b>")), qPrintable(grouped));
    QVERIFY2(grouped.contains(QStringLiteral("<b>10,010</b>")), qPrintable(grouped));
    const QString table = grouped.left(grouped.indexOf(QStringLiteral("</table>")));
    QVERIFY2(!table.contains(QStringLiteral("10010")), qPrintable(table));
    QVERIFY(diagnosis.contains(QStringLiteral("Distinct images evaluated")));
    QVERIFY(!diagnosis.contains(QStringLiteral("Samples never")));

    // Classification keeps its words, and hides the count column.
    SamplePanel plain;
    auto c = std::make_shared<EvaluationResult>();
    c->eval = simulate(test::syntheticScenario("plain", 3, 10, 2, 4));
    plain.showCell(c, {ViewKind::Synced, 0, 0, 0});
    QVERIFY(plain.findChild<QTableView*>()->isColumnHidden(SampleModel::Count));
    QVERIFY(plain.findChild<QLabel*>()->text().contains(QStringLiteral(" sample")));
    QVERIFY(!plain.findChild<QLabel*>()->text().contains(QStringLiteral("pixels")));
  }

  // mIoU reported (the synced matrix, image 0's pixels twice), true (each image once) and
  // each rank's own averaged, in the metrics table and under the verdict.
  void metricsShowMiouThreeWays() {
    const ResultPtr r = fiveImageResult();
    // Classes present in a matrix count toward its mean (torchmetrics' macro average).
    const double truth = (iou(135, 0, 12) + iou(60, 12, 0) + iou(60, 0, 0)) / 3;
    const double reported = (iou(235, 0, 19) + iou(110, 19, 0) + iou(60, 0, 0)) / 3;
    const double rank0 = (iou(105, 0, 12) + iou(60, 12, 0)) / 2;  // no sky on rank 0
    const double rank1 = (iou(130, 0, 7) + iou(50, 7, 0) + iou(60, 0, 0)) / 3;
    MetricsPanel panel;
    panel.setResult(r);
    MetricsModel* m = panel.metricsModel();
    QVERIFY(m->taskMetrics());
    QVERIFY(!panel.isColumnHidden(MetricsModel::PerRankMean));
    QCOMPARE(m->data(m->index(0, MetricsModel::Metric)).toString(), QStringLiteral("mIoU"));
    QCOMPARE(m->data(m->index(0, MetricsModel::Reported)).toString(),
             QString::number(reported, 'f', 4));
    QCOMPARE(m->data(m->index(0, MetricsModel::Expected)).toString(),
             QString::number(truth, 'f', 4));
    QCOMPARE(m->data(m->index(0, MetricsModel::PerRankMean)).toString(),
             QString::number((rank0 + rank1) / 2, 'f', 4));
    QCOMPARE(m->headerData(MetricsModel::Expected, Qt::Horizontal).toString(),
             QStringLiteral("True"));
    // Pixel accuracy: the diagonal over every pixel.
    bool pixelAccuracy = false;
    for (int row = 0; row < m->rowCount(); ++row)
      if (m->data(m->index(row, MetricsModel::Metric)).toString() ==
          QLatin1String("pixel accuracy")) {
        pixelAccuracy = true;
        QCOMPARE(m->data(m->index(row, MetricsModel::Expected)).toString(),
                 QString::number(255.0 / 267.0, 'f', 4));
      }
    QVERIFY(pixelAccuracy);
    const QString diagnosis = diagnosisHtml(r->eval);
    QVERIFY(diagnosis.contains(QStringLiteral("mIoU")));
    QVERIFY(diagnosis.contains(QString::number(truth, 'f', 4)));
  }

  // A multilabel matrix reads as labels: classes named "cat absent" / "cat present", a cell of
  // a label's block names its TP, FN, FP, TN, a cell across two labels says it is never
  // counted, and the diagnosis explains the blocks.
  void multilabelReadsAsLabels() {
    auto r = std::make_shared<EvaluationResult>();
    r->eval = evaluate(twoRanksUnshuffled(), threeItems());
    QCOMPARE(r->eval.class_name(1), std::string("cat present"));
    // Synced cat block: item 0 present and predicted twice (padding), item 1 absent and
    // predicted absent, item 2 present and predicted absent.
    const QString tip = cellTooltip(*r, {ViewKind::Synced, 0, 1, 1});
    QVERIFY2(tip.contains(QStringLiteral("Label <b>cat</b> (this view): TP 2, FN 1, FP 0, TN 1")),
             qPrintable(tip));
    QVERIFY(tip.contains(QStringLiteral("Counts are label decisions; the list is of items")));
    // An item counts once a label: its count in a cell says nothing, and is not listed.
    QVERIFY2(tip.contains(QStringLiteral("Items: 0, 0ᵖ<br>")), qPrintable(tip));
    const QString across = cellTooltip(*r, {ViewKind::Synced, 0, 0, 3});
    QVERIFY2(across.contains(QStringLiteral("Two different labels")), qPrintable(across));
    QVERIFY(diagnosisHtml(r->eval).contains(QStringLiteral("MultilabelConfusionMatrix")));
    // The dog block of the dataset: one of each kind except a missed detection.
    const QString dog = cellTooltip(*r, {ViewKind::Expected, 0, 2, 3});
    QVERIFY2(dog.contains(QStringLiteral("TP 1, FN 0, FP 1, TN 1")), qPrintable(dog));
  }

  // The window on a drawn segmentation set (30 images of 8 x 8 pixels, 4 classes, on 4 ranks:
  // padded to 32): a click on a synced cell lists images whose pixels there add up to the
  // cell, the Samples dock says pixels, the Metrics dock leads with mIoU.
  void windowClickListsImagesWithPixels() {
    MainWindow w;
    test::showQuietly(w);
    Scenario s;
    s.name = "segmentation";
    s.dataset = "seg:n=30,classes=4,size=8x8";
    s.sampler.world_size = 4;
    s.loader.batch_size = 2;
    QSignalSpy shown(&w, &MainWindow::resultShown);
    w.setScenario(s);
    QVERIFY(shown.wait(30000) || shown.count() > 0);
    QVERIFY2(w.lastError().isEmpty(), qPrintable(w.lastError()));
    QCOMPARE(w.result()->eval.meta.task, Task::Segmentation);
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    HeatmapView* v = test::part<MatrixPanel>(w)->syncedView();
    const QPoint centre = v->viewport().cellRect({0, 0}).center().toPoint();
    QTest::mouseClick(v, Qt::LeftButton, {}, centre);
    const SampleModel* model = test::part<SamplePanel>(w)->model();
    QVERIFY(model->rowCount() > 0);
    const int t = model->sample(0)->target, p = model->sample(0)->prediction;
    int64_t pixels = 0;
    for (int r = 0; r < model->rowCount(); ++r) {
      QVERIFY(model->sample(r)->count > 0);
      pixels += model->sample(r)->count;
    }
    QCOMPARE(double(pixels), w.result()->eval.synced->at(t, p));
    QCOMPARE(model->headerData(SampleModel::Count, Qt::Horizontal).toString(),
             QStringLiteral("Pixels"));
    MetricsModel* metrics = test::part<MetricsPanel>(w)->metricsModel();
    QCOMPARE(metrics->data(metrics->index(0, MetricsModel::Metric)).toString(),
             QStringLiteral("mIoU"));
  }
};

QTEST_MAIN(TestDense)
#include "test_dense.moc"
