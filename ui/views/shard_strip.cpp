#include "ui/views/shard_strip.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

#include "ui/render/task_words.h"

namespace shardlens::ui {
namespace {

constexpr double kLabelWidth = 120;
constexpr double kHeader = 18;
constexpr QRgb kNeverInk = 0xff202020;
constexpr QRgb kDuplicateInk = 0xffd62728;

QRgb shade(QRgb ink, double fraction) {
  // Partly covered buckets fade towards white so coverage reads at a glance.
  const double f = std::clamp(fraction, 0.0, 1.0) * 0.85 + (fraction > 0 ? 0.15 : 0.0);
  const auto mix = [f](int c) { return int(255 - (255 - c) * f); };
  return qRgb(mix(qRed(ink)), mix(qGreen(ink)), mix(qBlue(ink)));
}

}  // namespace

QColor rankColor(int rank) {
  static const QRgb palette[] = {0x4e79a7, 0xf28e2b, 0x59a14f, 0xe15759, 0x76b7b2,
                                 0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac};
  return QColor(palette[rank % 10]);
}

ShardStrip::ShardStrip(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
}

QSize ShardStrip::sizeHint() const {
  const int lanes = m_lanes.isNull() ? 6 : m_lanes.height();
  return {800, headerHeight() + 16 * lanes + 8};
}
QSize ShardStrip::minimumSizeHint() const {
  const int lanes = m_lanes.isNull() ? 6 : m_lanes.height();
  return {300, headerHeight() + 10 * lanes + 8};
}

int ShardStrip::headerHeight() const {
  const int lines = int(headerLines(width()).size());
  return std::max(int(kHeader), lines * fontMetrics().height() + 4);
}

void ShardStrip::resizeEvent(QResizeEvent* e) {
  QWidget::resizeEvent(e);
  const int lines = int(headerLines(width()).size());
  if (lines == m_headerLineCount) return;
  m_headerLineCount = lines;
  updateGeometry();
  emit heightHintChanged();
}

void ShardStrip::setResult(const ResultPtr& result) {
  m_result = result;
  m_lanes = {};
  if (m_result && m_result->shards.buckets > 0) {
    const ShardSummary& s = m_result->shards;
    m_lanes = QImage(s.buckets, s.world + 2, QImage::Format_RGB32);
    for (int b = 0; b < s.buckets; ++b) {
      const double size = double(std::max<int64_t>(1, s.bucketSize(b)));
      for (int r = 0; r < s.world; ++r) {
        const double covered =
            (s.real[size_t(r)][size_t(b)] + s.padding[size_t(r)][size_t(b)]) / size;
        m_lanes.setPixel(b, r, shade(rankColor(r).rgb(), covered));
      }
      m_lanes.setPixel(b, s.world, shade(kNeverInk, s.never[size_t(b)] / size));
      m_lanes.setPixel(b, s.world + 1, shade(kDuplicateInk, s.duplicated[size_t(b)] / size));
    }
  }
  updateGeometry();
  update();
}

QRectF ShardStrip::lanesRect() const {
  const double header = headerHeight();
  return QRectF(kLabelWidth, header, std::max(10.0, width() - kLabelWidth - 8),
                std::max(10.0, height() - header - 4));
}

double ShardStrip::laneHeight() const {
  const int lanes = m_lanes.isNull() ? 1 : m_lanes.height();
  return lanesRect().height() / lanes;
}

bool ShardStrip::hit(const QPoint& p, int* lane, int* bucket) const {
  const QRectF r = lanesRect();
  if (m_lanes.isNull() || !r.contains(p)) return false;
  *lane = std::clamp(int((p.y() - r.top()) / laneHeight()), 0, m_lanes.height() - 1);
  *bucket =
      std::clamp(int((p.x() - r.left()) / r.width() * m_lanes.width()), 0, m_lanes.width() - 1);
  return true;
}

QString ShardStrip::headerText() const {
  return headerParts().join(QStringLiteral("   "));
}

QStringList ShardStrip::headerLines(int width) const {
  const QStringList parts = headerParts();
  const QFontMetrics fm = fontMetrics();
  const int room = width - 8;
  QStringList lines;
  for (const QString& part : parts) {
    if (!lines.isEmpty() &&
        fm.horizontalAdvance(lines.back() + QStringLiteral("   ") + part) <= room)
      lines.back() += QStringLiteral("   ") + part;
    else
      lines << part;
  }
  return lines;
}

QStringList ShardStrip::headerParts() const {
  if (!m_result) return {};
  const Evaluation& e = m_result->eval;
  const Scenario& sc = e.scenario();
  // A run's evaluation names its own epoch (and validation); a simulation's is its setting.
  const QString which = e.meta.epoch ? QString::fromStdString(evaluation_label(e))
                                     : tr("epoch %1").arg(sc.sampler.epoch);
  // The strip lays out what the samplers deal: images or sequences for a task of many counts.
  const QString along = render::countsCells(e)
                            ? tr("%1 (dataset index)").arg(render::samplesWord(e))
                            : tr("dataset index");
  return {tr("Shard strip — %1 0 … %2 →").arg(along).arg(m_result->shards.n - 1),
          which + (sc.sampler.shuffle ? tr(", shuffled") : QString()),
          tr("(hatched: padding duplicates)")};
}

void ShardStrip::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  p.setPen(palette().text().color());
  if (m_lanes.isNull()) {
    p.drawText(rect(), Qt::AlignCenter, tr("Shard strip: no evaluation yet"));
    return;
  }
  const ShardSummary& s = m_result->shards;
  const QStringList header = headerLines(width());
  const int line = fontMetrics().height();
  for (int i = 0; i < header.size(); ++i)
    p.drawText(QRectF(4, 2 + i * line, width() - 8, line), Qt::AlignLeft | Qt::AlignVCenter,
               header[i]);
  const QRectF lanes = lanesRect();
  const double lh = laneHeight();
  p.drawImage(lanes, m_lanes);
  // Padding duplicates: hatched over the bucket, at least 3 px wide so single ones show.
  p.setPen(Qt::NoPen);
  for (int r = 0; r < s.world; ++r)
    for (int b = 0; b < s.buckets; ++b)
      if (s.padding[size_t(r)][size_t(b)] > 0) {
        const double x = lanes.left() + lanes.width() * b / s.buckets;
        const double w = std::max(5.0, lanes.width() / s.buckets);
        const QRectF box(x, lanes.top() + r * lh, w, lh);
        p.fillRect(box, Qt::white);
        p.fillRect(box, QBrush(Qt::black, Qt::DiagCrossPattern));
        p.setPen(QPen(Qt::black, 1));
        p.drawRect(box);
        p.setPen(Qt::NoPen);
      }
  // Never-evaluated and duplicated samples: a solid mark per bucket that has any, at least
  // 3 px wide, so a single one among thousands shows at any width (the scaled lane image
  // alone fades it to white or drops its column).
  for (int lane : {s.world, s.world + 1}) {
    const auto& counts = lane == s.world ? s.never : s.duplicated;
    const QRgb ink = lane == s.world ? kNeverInk : kDuplicateInk;
    for (int b = 0; b < s.buckets; ++b)
      if (counts[size_t(b)] > 0) {
        const double x = lanes.left() + lanes.width() * b / s.buckets;
        const double w = std::max(3.0, lanes.width() / s.buckets);
        // Still fading with coverage, but never fainter than 60 %.
        const double covered = counts[size_t(b)] / double(std::max<int64_t>(1, s.bucketSize(b)));
        p.fillRect(QRectF(std::min(x, lanes.right() - w), lanes.top() + lane * lh, w, lh),
                   QColor(shade(ink, std::max(covered, 0.6))));
      }
  }
  QFont f = font();
  f.setPixelSize(std::clamp(int(lh * 0.7), 8, 12));
  p.setFont(f);
  p.setPen(palette().text().color());
  for (int lane = 0; lane < m_lanes.height(); ++lane) {
    const QRectF label(4, lanes.top() + lane * lh, kLabelWidth - 8, lh);
    QString text;
    if (lane < s.world) {
      const RankTotals& t = s.ranks[size_t(lane)];
      text = tr("rank %1 (%2)").arg(lane).arg(t.real + t.padding + t.sanity);
      p.fillRect(QRectF(label.left(), label.center().y() - 4, 8, 8), rankColor(lane));
    } else if (lane == s.world) {
      text = tr("never (%1)").arg(s.neverTotal);
    } else {
      text = tr("2× or more (%1)").arg(s.duplicatedTotal);
    }
    p.drawText(label.adjusted(12, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter, text);
  }
  p.setPen(QPen(QColor(150, 150, 150), 1));
  p.setBrush(Qt::NoBrush);
  p.drawRect(lanes);
}

QString ShardStrip::tooltipAt(const QPoint& pos) const {
  int lane = 0, bucket = 0;
  if (!hit(pos, &lane, &bucket)) return {};
  const ShardSummary& s = m_result->shards;
  const int64_t a = s.bucketStart(bucket), b = s.bucketStart(bucket + 1) - 1;
  const Evaluation& e = m_result->eval;
  QString text;
  if (render::countsCells(e))
    text = a == b ? tr("<b>%1 %2</b> (dataset index)<br>")
                        .arg(render::capitalized(render::sampleWord(e.meta.task)))
                        .arg(a)
                  : tr("<b>%1 %2 … %3</b> (dataset indices)<br>")
                        .arg(render::capitalized(render::samplesWord(e)))
                        .arg(a)
                        .arg(b);
  else
    text = a == b ? tr("<b>Dataset index %1</b><br>").arg(a)
                  : tr("<b>Dataset indices %1 … %2</b><br>").arg(a).arg(b);
  for (int r = 0; r < s.world; ++r) {
    const auto real = s.real[size_t(r)][size_t(bucket)], pad = s.padding[size_t(r)][size_t(bucket)];
    if (real + pad == 0) continue;
    text += tr("rank %1: %2 evaluated").arg(r).arg(real + pad);
    if (pad) text += tr(", %1 padding duplicate(s)").arg(pad);
    text += QStringLiteral("<br>");
  }
  if (s.never[size_t(bucket)]) text += tr("never evaluated: %1<br>").arg(s.never[size_t(bucket)]);
  if (s.duplicated[size_t(bucket)])
    text += tr("evaluated more than once: %1").arg(s.duplicated[size_t(bucket)]);
  return text;
}

bool ShardStrip::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(e);
    const QString text = tooltipAt(help->pos());
    if (text.isEmpty())
      QToolTip::hideText();
    else
      QToolTip::showText(help->globalPos(), text, this);
    return true;
  }
  return QWidget::event(e);
}

}  // namespace shardlens::ui
