// What the worker computes for the views: the shard summary behind the strip and the
// per-rank chart, the samples behind a cell, and the diagnosis panel's headline.
#include <QtTest>

#include "core/report/cell_index.h"
#include "core/report/shard_summary.h"
#include "core/runfile/run_evaluation.h"
#include "core/sim/engine.h"
#include "core/sim/lessons.h"
#include "ui/panels/diagnosis_panel.h"

using namespace shardlens;
using namespace shardlens::ui;

namespace {

Evaluation tenOnFour(bool samplerDropLast) {
  auto labels = std::make_shared<Labels>(synthetic_counts({4, 3, 3}));
  std::vector<int32_t> predictions(labels->targets.begin(), labels->targets.end());
  Scenario s;
  s.sampler.world_size = 4;
  s.sampler.drop_last = samplerDropLast;
  s.loader.batch_size = 2;
  return evaluate(s, make_inputs(labels, predictions));
}

}  // namespace

class TestSummary : public QObject {
  Q_OBJECT
 private slots:
  void paddingIsCountedPerRank() {
    // torch's vector: n=10, W=4, no shuffle -> [0,4,8] [1,5,9] [2,6,0] [3,7,1].
    const ShardSummary s = summarizeShards(tenOnFour(false));
    QCOMPARE(s.n, int64_t(10));
    QCOMPARE(s.buckets, 10);
    QCOMPARE(s.ranks[0].real, int64_t(3));
    QCOMPARE(s.ranks[2].real, int64_t(2));
    QCOMPARE(s.ranks[2].padding, int64_t(1));
    QCOMPARE(s.ranks[3].padding, int64_t(1));
    QCOMPARE(s.padding[2][0], 1u);  // rank 2's padding repeats index 0
    QCOMPARE(s.padding[3][1], 1u);
    QCOMPARE(s.real[1][9], 1u);
    QCOMPARE(s.neverTotal, int64_t(0));
    QCOMPARE(s.duplicatedTotal, int64_t(2));
    QCOMPARE(s.duplicated[0], 1u);
  }

  void dropLastLeavesSamplesUnseen() {
    const ShardSummary s = summarizeShards(tenOnFour(true));
    QCOMPARE(s.neverTotal, int64_t(2));  // 10 -> 8 on 4 ranks
    QCOMPARE(s.never[8] + s.never[9], 2u);
    for (const RankTotals& t : s.ranks) QCOMPARE(t.padding, int64_t(0));
  }

  void bucketsCoverLargeDatasets() {
    ShardSummary s;
    s.n = 1'000'003;
    s.buckets = ShardSummary::kMaxBuckets;
    QCOMPARE(s.bucketOf(0), 0);
    QCOMPARE(s.bucketOf(s.n - 1), s.buckets - 1);
    int64_t covered = 0;
    for (int b = 0; b < s.buckets; ++b) covered += s.bucketSize(b);
    QCOMPARE(covered, s.n);
  }

  // The multiply-and-correct bucket equals the exact integer division everywhere, at the
  // bucket edges in particular, with and without the cached scale.
  void bucketOfIsTheExactDivision_data() {
    QTest::addColumn<qint64>("n");
    QTest::addColumn<bool>("cachedScale");
    for (const qint64 n : {qint64(1'000'003), qint64(4'294'967'295), qint64(2049)})
      for (const bool cached : {false, true})
        QTest::addRow("n=%lld, %s", n, cached ? "cached scale" : "no scale") << n << cached;
  }

  void bucketOfIsTheExactDivision() {
    QFETCH(qint64, n);
    QFETCH(bool, cachedScale);
    ShardSummary t;
    t.n = n;
    t.buckets = ShardSummary::kMaxBuckets;
    t.bucketScale = cachedScale ? double(t.buckets) / double(n) : 0.0;
    for (int b = 0; b < t.buckets; ++b)
      for (const int64_t i : {t.bucketStart(b) - 1, t.bucketStart(b), t.bucketStart(b) + 1})
        if (i >= 0 && i < n) QCOMPARE(t.bucketOf(i), int(i * t.buckets / n));
  }

  void samplesBehindACell() {
    const Evaluation e = tenOnFour(false);
    const int cls = e.inputs->target(0);
    int64_t total = 0;
    // Rank 2 evaluates index 0 once, as the padding at the end of its shard.
    const auto onRank2 = samplesOf(e, SampleScope::Rank, 2, cls, cls, 100, &total);
    bool sawPadding = false;
    for (const CellSample& s : onRank2) {
      QCOMPARE(s.rank, 2);
      QCOMPARE(s.target, cls);
      sawPadding = sawPadding || (s.index == 0 && (s.flags & kPadding));
    }
    QVERIFY(sawPadding);
    QCOMPARE(total, int64_t(onRank2.size()));
    int64_t inDataset = 0;
    const auto all = samplesOf(e, SampleScope::Expected, -1, cls, cls, 1, &inDataset);
    QCOMPARE(all.size(), size_t(1));
    QCOMPARE(inDataset, e.meta.class_counts[size_t(cls)]);  // perfect predictions
    QVERIFY(samplesOf(e, SampleScope::Rank, 99, cls, cls, 10).empty());
  }

  // A run file of the same evaluation walks the same records: the strip, the per-rank totals
  // and every cell's samples agree; only what the loader cut is unknown without a plan.
  void runFileSummarizesLikeTheSimulation() {
    const Evaluation sim = tenOnFour(false);
    const Evaluation run = evaluation_from_run(run_from_evaluation(sim), "ten.slrun");
    const ShardSummary a = summarizeShards(sim), b = summarizeShards(run);
    QCOMPARE(b.n, a.n);
    QCOMPARE(b.real, a.real);
    QCOMPARE(b.padding, a.padding);
    QCOMPARE(b.never, a.never);
    QCOMPARE(b.duplicated, a.duplicated);
    for (int r = 0; r < 4; ++r) {
      QCOMPARE(b.ranks[size_t(r)].real, a.ranks[size_t(r)].real);
      QCOMPARE(b.ranks[size_t(r)].padding, a.ranks[size_t(r)].padding);
      QCOMPARE(b.ranks[size_t(r)].notEvaluated, int64_t(0));
    }
    for (int t = 0; t < 3; ++t)
      for (int p = 0; p < 3; ++p)
        for (int r = 0; r < 4; ++r) {
          int64_t na = 0, nb = 0;
          const auto sa = samplesOf(sim, SampleScope::Rank, r, t, p, 100, &na);
          const auto sb = samplesOf(run, SampleScope::Rank, r, t, p, 100, &nb);
          QCOMPARE(nb, na);
          QCOMPARE(sb.size(), sa.size());
          for (size_t k = 0; k < sa.size(); ++k) {
            QCOMPARE(sb[k].index, sa[k].index);
            QCOMPARE(sb[k].position, sa[k].position);
            QCOMPARE(sb[k].flags, sa[k].flags);
          }
        }
    // Without per-index predictions the expected cell lists the distinct evaluated samples,
    // which here (no drop) are the whole dataset's samples of the cell.
    const int cls = sim.inputs->target(0);
    int64_t na = 0, nb = 0;
    samplesOf(sim, SampleScope::Expected, -1, cls, cls, 100, &na);
    samplesOf(run, SampleScope::Expected, -1, cls, cls, 100, &nb);
    QCOMPARE(nb, na);
  }

  // A simulation finds a cell's records from the dataset side (keys, then positions in the
  // order, then segments); the plain walk over every record must find exactly the same, in
  // the same order, for padding, sanity copies, overlap, shuffles and drops alike.
  void cellSamplesFromTheDatasetSideEqualTheWalk_data() {
    QTest::addColumn<QString>("lesson");
    for (const char* lesson :
         {"padding-duplicates", "sanity-leak", "rank-overlap", "no-distributed-sampler",
          "shuffled-eval", "sampler-drop-last", "batch-limit-subset", "seed-lesson"})
      QTest::newRow(lesson) << QString::fromLatin1(lesson);
  }

  void cellSamplesFromTheDatasetSideEqualTheWalk() {
    QFETCH(QString, lesson);
    const Evaluation sim = simulate(load_preset(lesson.toStdString()));
    Evaluation walked = sim;
    walked.plan = nullptr;  // the same records, found by the walk
    const int classes = std::min(sim.classes(), 6);
    for (int t = 0; t < classes; ++t)
      for (int p = 0; p < classes; ++p)
        for (int r = -1; r < sim.meta.world_size; ++r) {
          const SampleScope scope = r < 0 ? SampleScope::AllRanks : SampleScope::Rank;
          int64_t na = 0, nb = 0;
          const auto fast = samplesOf(sim, scope, r, t, p, 40, &na);
          const auto slow = samplesOf(walked, scope, r, t, p, 40, &nb);
          QCOMPARE(na, nb);
          QCOMPARE(fast.size(), slow.size());
          for (size_t k = 0; k < fast.size(); ++k) {
            QCOMPARE(fast[k].index, slow[k].index);
            QCOMPARE(fast[k].position, slow[k].position);
            QCOMPARE(fast[k].rank, slow[k].rank);
            QCOMPARE(fast[k].flags, slow[k].flags);
          }
        }
  }

  // Lightning's wrapper over a weighted sampler: ranks drawing their own lists is a wrong
  // matrix; one shared list is the sampler's own draw, and the headline says so.
  void diagnosisHeadlineOfAWrappedWeightedSampler() {
    Scenario s = load_preset("wrapper-overlap");
    QVERIFY(diagnosisHtml(simulate(s)).contains("Reported matrix wrong"));
    s.sampler.rank_seeds.clear();
    const QString shared = diagnosisHtml(simulate(s));
    QVERIFY2(shared.contains("Sampler draws with replacement"), qPrintable(shared));
    QVERIFY(!shared.contains("Reported matrix wrong"));
  }

  // The wrong rows are named as classes: a bare "2" beside counts read as a number of rows.
  void diagnosisNamesTheWrongRowsAsClasses() {
    const Evaluation e = simulate(load_preset("padding-duplicates"));
    QVERIFY(!e.diagnosis.mismatched_rows.empty());
    QStringList names;
    for (int32_t c : e.diagnosis.mismatched_rows)
      names << QString::fromStdString(e.class_name(c)).toHtmlEscaped();
    const QString html = diagnosisHtml(e);
    QVERIFY2(html.contains("Wrong rows, by class: " + names.mid(0, 20).join(", ")),
             qPrintable(html));
  }
};

QTEST_GUILESS_MAIN(TestSummary)
#include "test_summary.moc"
