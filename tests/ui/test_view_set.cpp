// The fast paths of the views at ImageNet's scale against the straightforward ones they
// replace: sparse cells against every cell computed from the evaluation (core's normalize
// and the class order), images and pooled images of sparse data against those of the same
// data dense, the views prepared in the background against the per-view builders, and the
// shortcuts of the layout (shared label widths, number widths by shape) against measuring
// every text. On every lesson (10 classes) and on 1000 classes at 8 and 32 ranks.
#include <QFontMetricsF>
#include <QtTest>
#include <cmath>
#include <string>
#include <vector>

#include "core/sim/engine.h"
#include "core/sim/lessons.h"
#include "ui/render/heatmap_painter.h"
#include "ui/render/heatmap_source.h"
#include "ui/render/view_set.h"

using namespace shardlens;
using namespace shardlens::render;

namespace {

struct Case {
  std::string name;
  Evaluation eval;
};

Scenario imagenet(int world, int64_t perClass) {
  Scenario s;
  s.name = "imagenet-" + std::to_string(world);
  s.dataset = "synthetic:classes=1000,per-class=" + std::to_string(perClass);
  s.sampler.world_size = world;
  s.sampler.shuffle = true;
  s.loader.batch_size = 32;
  return s;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const LessonInfo& lesson : load_lessons(SHARDLENS_LESSON_DIR).lessons)
    out.push_back({lesson.name, simulate(lesson.scenario)});
  out.push_back({"imagenet 8 ranks", simulate(imagenet(8, 50))});
  out.push_back({"imagenet 32 ranks", simulate(imagenet(32, 20))});
  return out;
}

// Every cell of `counts` as the heatmap should show it, computed cell by cell.
std::vector<double> reference(const Matrix& shown, const std::vector<int>& order) {
  const size_t c = order.size();
  std::vector<double> cells(c * c);
  for (size_t i = 0; i < c; ++i)
    for (size_t j = 0; j < c; ++j) cells[i * c + j] = shown.at(order[i], order[j]);
  return cells;
}

HeatmapData dense(HeatmapData d) {
  d.values = d.denseValues();
  d.rowStart.clear();
  d.sparseCols.clear();
  d.sparseValues.clear();
  return d;
}

bool sameImage(const QImage& a, const QImage& b) {
  return a.size() == b.size() &&
         a.convertToFormat(QImage::Format_RGB32) == b.convertToFormat(QImage::Format_RGB32);
}

const MatrixOptions kOptions[] = {
    {Normalization::None, ClassOrder::Index}, {Normalization::True, ClassOrder::Count},
    {Normalization::Pred, ClassOrder::Error}, {Normalization::All, ClassOrder::Name},
    {Normalization::None, ClassOrder::Error},
};

}  // namespace

class TestViewSet : public QObject {
  Q_OBJECT

  std::vector<Case> m_cases = cases();

 private slots:
  void imagenetRanksAreSparse() {
    const Evaluation& e = m_cases.back().eval;
    QVERIFY(rankHeatmap(e, 0, {}).sparse());  // 20,000 samples / 32 ranks over 10^6 cells
  }

  // Sparse or dense, every cell, sum and range equals the evaluation's own, computed here.
  void cellsEqualTheEvaluation() {
    for (const Case& c : m_cases)
      for (const MatrixOptions& o : kOptions) {
        const Evaluation& e = c.eval;
        const std::vector<int> order = classOrder(e, o.order);
        const auto check = [&](const HeatmapData& d, const Matrix& counts, const Matrix& shown,
                               const char* view) {
          const std::string where = c.name + " " + view;
          QVERIFY2(d.classes == e.classes(), where.c_str());
          const std::vector<double> want = reference(shown, order);
          QVERIFY2(d.denseValues() == want, where.c_str());
          double top = 0;
          for (double v : want)
            if (std::isfinite(v)) top = std::max(top, std::abs(v));
          QVERIFY2(d.maxAbsValue() == top, where.c_str());
          const auto rows = counts.row_sums(), cols = counts.col_sums();
          for (size_t i = 0; i < order.size(); ++i) {
            QVERIFY2(d.rowObserved[i] == rows[size_t(order[i])], where.c_str());
            QVERIFY2(d.colObserved[i] == cols[size_t(order[i])], where.c_str());
          }
          // value() reads the same cells as denseValues(), sparse or not.
          const int n = d.classes;
          for (int i = 0; i < n; i += std::max(1, n / 37))
            for (int j = 0; j < n; ++j)
              QVERIFY2(d.value(i, j) == want[size_t(i) * size_t(n) + size_t(j)], where.c_str());
        };
        if (e.synced)
          check(syncedHeatmap(e, o), *e.synced, normalize(*e.synced, o.normalization), "synced");
        if (e.expected)
          check(expectedHeatmap(e, o), *e.expected, normalize(*e.expected, o.normalization),
                "expected");
        if (e.synced && e.expected) {
          Matrix diff = normalize(*e.synced, o.normalization);
          const Matrix exp = normalize(*e.expected, o.normalization);
          for (size_t i = 0; i < diff.cells.size(); ++i) diff.cells[i] -= exp.cells[i];
          check(differenceHeatmap(e, o), *e.difference(), diff, "difference");
        }
        const auto ranks = rankHeatmaps(e, o);
        for (size_t r = 0; r < ranks.size(); r += std::max<size_t>(1, ranks.size() / 8))
          if (ranks[r].classes > 0)
            check(ranks[r], e.per_rank[r], normalize(e.per_rank[r], o.normalization), "rank");
      }
  }

  // Images of sparse cells equal those of the same cells dense: whole, and pooled at sizes
  // and windows that split cells unevenly.
  void sparseImagesEqualDenseOnes() {
    for (const Case& c : m_cases) {
      const Evaluation& e = c.eval;
      std::vector<HeatmapData> views = rankHeatmaps(e, {});
      if (e.synced && e.expected) views.push_back(differenceHeatmap(e, {}));
      int sparseSeen = 0;
      for (const HeatmapData& d : views) {
        if (!d.sparse()) continue;
        ++sparseSeen;
        const HeatmapData full = dense(d);
        for (const bool log : {false, true}) {
          HeatmapStyle s;
          s.scale = log ? ColourScale::Log : ColourScale::Linear;
          QVERIFY2(sameImage(buildHeatmapImage(d, s), buildHeatmapImage(full, s)), c.name.c_str());
          const int n = d.classes;
          for (const QSize px : {QSize(1, 1), QSize(7, 5), QSize(333, 333), QSize(n, n)})
            for (const int first : {0, n / 3}) {
              const int span = n - first - (first ? 1 : 0);
              QVERIFY2(
                  sameImage(buildPooledImage(d, s, first, span, first / 2, n - first / 2, px),
                            buildPooledImage(full, s, first, span, first / 2, n - first / 2, px)),
                  c.name.c_str());
            }
        }
      }
      if (c.name.rfind("imagenet", 0) == 0) QVERIFY(sparseSeen > 0);
    }
  }

  // The views prepared together (the background job) equal the views built one by one,
  // with the shared ranges of the window and fixed ranges when asked.
  void preparedViewsEqualTheBuilders() {
    for (const Case& c : m_cases)
      for (const bool fixed : {false, true}) {
        const Evaluation& e = c.eval;
        ViewRequest request;
        request.matrix = {Normalization::None, ClassOrder::Error};
        if (fixed) request.fixed = ViewRanges{1234, 90, 56, 78};
        const ViewSetPtr set = prepareViews(e, request);
        QVERIFY(set);
        const HeatmapData synced = syncedHeatmap(e, request.matrix);
        const HeatmapData expected = expectedHeatmap(e, request.matrix);
        const auto ranks = rankHeatmaps(e, request.matrix);
        // Each view its own range, so its content shows; the ranks one between them.
        QCOMPARE(set->ranges.matrices, synced.valueMax);
        QCOMPARE(set->ranges.expected, expected.valueMax);
        QCOMPARE(set->ranges.difference, differenceHeatmap(e, request.matrix).valueMax);
        QCOMPARE(set->ranges.ranks, ranks.empty() ? 0.0 : ranks[0].valueMax);
        QCOMPARE(set->synced->denseValues(), synced.denseValues());
        QCOMPARE(set->expected->denseValues(), expected.denseValues());
        QCOMPARE(set->synced->valueMax, fixed ? 1234.0 : synced.valueMax);
        QCOMPARE(set->expected->valueMax, fixed ? 90.0 : expected.valueMax);
        QCOMPARE(int(set->ranks.size()), int(ranks.size()));
        for (size_t r = 0; r < ranks.size(); ++r) {
          QCOMPARE(set->ranks[r]->denseValues(), ranks[r].denseValues());
          QCOMPARE(set->ranks[r]->title, ranks[r].title);
          if (ranks[r].classes > 0)
            QCOMPARE(set->ranks[r]->valueMax, fixed ? 78.0 : ranks[r].valueMax);
        }
      }
  }

  // A sync strategy toggled keeps the per-rank matrices: the rank views prepared before are
  // taken over (the same objects), and equal those built from scratch; another
  // normalization, class order or a fixed range builds them anew.
  void rankViewsOfTheSameCountsAreTakenOver() {
    Scenario s = imagenet(8, 50);
    const auto inputs = load_inputs(s);
    const Evaluation before = evaluate(s, inputs);
    s.sync = SyncStrategy::Double;
    const Evaluation after = evaluate(s, inputs, nullptr, &before);
    ViewRequest request;
    request.matrix = {Normalization::None, ClassOrder::Index};
    const ViewSetPtr shown = prepareViews(before, request);
    QVERIFY(shown);
    const ViewSetPtr next = prepareViews(after, request, {}, shown.get());
    QVERIFY(next);
    QCOMPARE(int(next->ranks.size()), 8);
    const auto fresh = rankHeatmaps(after, request.matrix);
    for (size_t r = 0; r < next->ranks.size(); ++r) {
      QCOMPARE(next->ranks[r], shown->ranks[r]);
      QCOMPARE(next->ranks[r]->denseValues(), fresh[r].denseValues());
      QCOMPARE(next->ranks[r]->valueMax, fresh[r].valueMax);
    }
    QCOMPARE(next->ranges.ranks, fresh[0].valueMax);
    // The synced view is the new sync's.
    QCOMPARE(next->synced->denseValues(), syncedHeatmap(after, request.matrix).denseValues());
    QVERIFY(next->synced->valueMax > shown->synced->valueMax);
    for (const MatrixOptions& other : {MatrixOptions{Normalization::True, ClassOrder::Index},
                                       MatrixOptions{Normalization::None, ClassOrder::Count}}) {
      ViewRequest changed = request;
      changed.matrix = other;
      const ViewSetPtr anew = prepareViews(after, changed, {}, shown.get());
      QVERIFY(anew);
      QVERIFY(anew->ranks[0] != shown->ranks[0]);
      QCOMPARE(anew->ranks[0]->denseValues(), rankHeatmaps(after, other)[0].denseValues());
    }
    ViewRequest fixed = request;
    fixed.fixed = ViewRanges{10, 10, 10, 3};
    const ViewSetPtr fixedSet = prepareViews(after, fixed, {}, shown.get());
    QVERIFY(fixedSet->ranks[0] != shown->ranks[0]);
    QCOMPARE(fixedSet->ranks[0]->valueMax, 3.0);
  }

  // At 1000 classes and 32 ranks the maps of ranks off screen wait: only those shown are
  // made with the result, in the range of every rank's cells; the others, made when scrolled
  // to, equal the maps built from scratch, in the same shared (or fixed) range.
  void offScreenRanksWaitAndEqualTheBuilders() {
    const Evaluation& e = m_cases.back().eval;
    QCOMPARE(int(e.per_rank.size()), 32);
    QVERIFY(deferRanks(e));
    QVERIFY(!deferRanks(m_cases[m_cases.size() - 2].eval));  // 8 ranks: every map at once
    for (const bool fixed : {false, true}) {
      ViewRequest request;
      request.matrix = {Normalization::True, ClassOrder::Count};
      if (fixed) request.fixed = ViewRanges{10, 10, 10, 0.25};
      request.shownRanks = std::vector<int>{0, 5};
      const ViewSetPtr set = prepareViews(e, request);
      QVERIFY(set);
      const auto fresh = rankHeatmaps(e, request.matrix);
      QCOMPARE(set->ranges.ranks, fresh[0].valueMax);
      for (int r = 0; r < 32; ++r) QCOMPARE(bool(set->ranks[size_t(r)]), r == 0 || r == 5);
      const ViewSetPtr later = prepareRanks(e, *set, {1, 5, 31});
      QVERIFY(later);
      QCOMPARE(later->ranks[5], set->ranks[5]);  // made already: kept
      for (const int r : {0, 1, 5, 31}) {
        QCOMPARE(later->ranks[size_t(r)]->denseValues(), fresh[size_t(r)].denseValues());
        QCOMPARE(later->ranks[size_t(r)]->title, fresh[size_t(r)].title);
        QCOMPARE(later->ranks[size_t(r)]->valueMax, fixed ? 0.25 : fresh[size_t(r)].valueMax);
      }
      QVERIFY(!later->ranks[2]);
    }
    ViewRequest noneShown;
    noneShown.shownRanks = std::vector<int>{};
    const ViewSetPtr bare = prepareViews(e, noneShown);
    QVERIFY(bare && !bare->ranks[3]);
    QVERIFY(!prepareRanks(e, *bare, {3}, [] { return true; }));  // cancelled: nothing
  }

  void cancelledPreparationGivesNothing() {
    QVERIFY(!prepareViews(m_cases.back().eval, {}, [] { return true; }));
  }

  // The layout's shortcuts equal measuring every text: the names' widths shared by the views
  // of one axis, and numbers measured once per shape.
  void layoutShortcutsEqualMeasuringEverything() {
    for (const Case& c : m_cases) {
      const ClassAxis axis = classAxis(c.eval, ClassOrder::Index);
      for (const int px : {8, 11, 14}) {
        HeatmapStyle s;
        s.fontPixels = px;
        const QFont bold = heatmapFont(s, true);
        const QFontMetricsF fm(bold);
        double names = 0;
        for (const QString& n : axis.names) names = std::max(names, fm.horizontalAdvance(n));
        QCOMPARE(axis.nameWidths->widest(bold, axis.names), names);
        QCOMPARE(axis.nameWidths->widest(bold, {}), names);  // the shared answer, not remeasured
        const HeatmapData d = c.eval.synced ? differenceHeatmap(c.eval, {}) : HeatmapData{};
        const QFontMetricsF plain(heatmapFont(s));
        double sums = plain.horizontalAdvance(QStringLiteral("0"));
        for (const auto* v : {&d.rowObserved, &d.rowExpected, &d.colObserved})
          for (double x : *v) sums = std::max(sums, plain.horizontalAdvance(formatValue(x, false)));
        QCOMPARE(widestNumberText(heatmapFont(s), {&d.rowObserved, &d.rowExpected, &d.colObserved}),
                 sums);
      }
    }
  }
};

QTEST_MAIN(TestViewSet)
#include "test_view_set.moc"
