// The class labels' widths are measured once for a set of names and kept for every later
// result with the same names (render::prepareViews): a setting change takes them over, and
// another dataset's names are measured anew, never given the widths of the names before.
#include <QFontMetricsF>
#include <QtTest>
#include <algorithm>

#include "core/sim/engine.h"
#include "ui/render/view_set.h"

using namespace shardlens;
using namespace shardlens::render;

namespace {

Evaluation evaluated(const std::string& dataset, int64_t epoch) {
  Scenario s;
  s.dataset = dataset;
  s.sampler.world_size = 2;
  s.sampler.shuffle = true;
  s.sampler.epoch = epoch;
  return simulate(s);
}

// The widest of the names as measured from scratch.
double measured(const QFont& font, const std::vector<QString>& names) {
  const QFontMetricsF fm(font);
  double widest = 0;
  for (const QString& n : names) widest = std::max(widest, fm.horizontalAdvance(n));
  return widest;
}

}  // namespace

class TestSharedLabelWidths : public QObject {
  Q_OBJECT
 private slots:
  void sameNamesShareTheirWidthsAndOtherNamesAreMeasuredAnew() {
    QFont font;
    font.setPointSize(9);
    ViewRequest request;
    request.labelFonts = {font};
    const Evaluation first = evaluated("synthetic:classes=12,per-class=5", 0);
    const Evaluation next = evaluated("synthetic:classes=12,per-class=5", 1);  // epoch stepped
    const ViewSetPtr a = prepareViews(first, request);
    const ViewSetPtr b = prepareViews(next, request);
    QVERIFY(a && b && a->synced->nameWidths);
    QCOMPARE(b->synced->nameWidths, a->synced->nameWidths);
    QCOMPARE(b->synced->nameWidths->widest(font, b->synced->names),
             measured(font, b->synced->names));

    // 1000 classes: the names "0" ... "999", wider than "0" ... "11".
    const Evaluation other = evaluated("synthetic:classes=1000,per-class=2", 0);
    const ViewSetPtr c = prepareViews(other, request);
    QVERIFY(c);
    QVERIFY(c->synced->nameWidths != a->synced->nameWidths);
    const double wide = c->synced->nameWidths->widest(font, c->synced->names);
    QCOMPARE(wide, measured(font, c->synced->names));
    QVERIFY(wide > measured(font, a->synced->names));
    // Back to the first names: measured again, as from scratch.
    const ViewSetPtr d = prepareViews(first, request);
    QCOMPARE(d->synced->nameWidths->widest(font, d->synced->names),
             measured(font, a->synced->names));
  }
};

QTEST_MAIN(TestSharedLabelWidths)
#include "test_shared_label_widths.moc"
