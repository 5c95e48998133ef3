#include "ui/panels/run_banner.h"

#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QToolButton>
#include <QVBoxLayout>

#include "core/report/report.h"
#include "core/report/verdict.h"
#include "core/runfile/run_evaluation.h"
#include "ui/render/shown_text.h"

namespace shardlens::ui {

RunBanner::RunBanner(QWidget* parent)
    : QFrame(parent),
      m_title(new QLabel(this)),
      m_details(new QLabel(this)),
      m_back(new QPushButton(tr("Back to simulation"), this)),
      m_epochs(new QWidget(this)),
      m_play(new QToolButton(m_epochs)) {
  setObjectName(QStringLiteral("runBanner"));
  setFrameShape(QFrame::StyledPanel);
  // Preferred, not Maximum: a maximum is the size hint at the hint's width, shorter than the
  // wrapped text needs in a narrow dock (its last lines were cut).
  setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
  // A tinted panel so the read-only state is noticed before someone tries to edit.
  setStyleSheet(QStringLiteral("#runBanner { background: #fff4d6; border: 1px solid #e0b84f; }"));
  m_title->setObjectName(QStringLiteral("runBannerTitle"));
  m_title->setWordWrap(true);
  m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_details->setWordWrap(true);
  m_back->setObjectName(QStringLiteral("backToSimulation"));
  m_back->setToolTip(tr("Leave the run file and simulate the scenario shown before it"));
  connect(m_back, &QPushButton::clicked, this, &RunBanner::backToSimulation);
  // The epoch stepper of a run, as the scenario panel's is for a simulation.
  auto* previous = new QToolButton(m_epochs);
  previous->setText(QStringLiteral("−1"));
  previous->setToolTip(tr("Previous epoch (Ctrl+Left)"));
  previous->setObjectName(QStringLiteral("runPreviousEpoch"));
  auto* next = new QToolButton(m_epochs);
  next->setText(QStringLiteral("+1"));
  next->setToolTip(tr("Next epoch (Ctrl+Right)"));
  next->setObjectName(QStringLiteral("runNextEpoch"));
  m_play->setText(QStringLiteral("▶"));
  m_play->setCheckable(true);
  m_play->setToolTip(tr("Play the epochs, one a second (Ctrl+P)"));
  connect(previous, &QToolButton::clicked, this, [this] { emit stepEpoch(-1); });
  connect(next, &QToolButton::clicked, this, [this] { emit stepEpoch(1); });
  connect(m_play, &QToolButton::clicked, this, &RunBanner::togglePlay);
  auto* stepper = new QHBoxLayout(m_epochs);
  stepper->setContentsMargins(0, 0, 0, 0);
  stepper->addWidget(new QLabel(tr("Epoch"), m_epochs));
  stepper->addWidget(previous);
  stepper->addWidget(next);
  stepper->addWidget(m_play);
  stepper->addStretch(1);
  m_epochs->hide();
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(8, 6, 8, 6);
  layout->addWidget(m_title);
  layout->addWidget(m_details);
  layout->addWidget(m_epochs);
  layout->addWidget(m_back, 0, Qt::AlignLeft);
}

void RunBanner::setRun(const QString& path, const Evaluation& e) {
  const RunMetadata& meta = e.meta;
  m_title->setText(tr("<b>Run file: %1</b> (%2)")
                       .arg(richText(QFileInfo(path).fileName()), richText(run_summary(meta))));
  m_title->setToolTip(plainToolTip(path));
  QStringList lines;
  lines << (e.scenario_recorded()
                ? tr("The scenario below is the one recorded with the run (read-only).")
                : tr("No scenario was recorded with this run (imported dumps)."));
  if (e.provenance.epochs > 1) {
    QString label = QString::fromStdString(evaluation_label(e));
    label[0] = label[0].toUpper();
    lines << tr("%1 (%2 of %3 recorded; Ctrl+→/← steps, Ctrl+P plays)")
                 .arg(label)
                 .arg(e.provenance.epoch_index + 1)
                 .arg(e.provenance.epochs);
  }
  if (meta.recorded)
    lines << tr("Recorded settings: %1").arg(richText(recorded_settings_text(*meta.recorded)));
  if (!meta.dataset.empty()) lines << tr("Dataset %1").arg(richText(meta.dataset));
  // What the records cannot prove, worded as in the report (core/report/verdict.h).
  if (const std::string estimate = estimate_note(e); !estimate.empty())
    lines << tr("⚠ %1").arg(richText(estimate));
  for (const std::string& note : unchecked(e)) lines << tr("⚠ Not checked: %1").arg(richText(note));
  if (!meta.complete) lines << tr("⚠ Incomplete: %1").arg(richText(meta.incomplete_reason));
  if (!meta.sync_note.empty()) lines << tr("Note: %1").arg(richText(meta.sync_note));
  if (!e.scenario_recorded()) {
    // No scenario: what the records themselves say about the run.
    int64_t records = 0, padding = 0, sanity = 0;
    for (int r = 0; r < e.records->world_size(); ++r)
      for_each_record(*e.records, r, [&](const Record& x) {
        ++records;
        padding += (x.flags & kPadding) != 0;
        sanity += (x.flags & kSanity) != 0;
      });
    lines << tr("Recorded: %1 ranks, batch size %2, %3 records (%4 flagged padding, %5 "
                "sanity check), %6 epoch(s); the dumps do not say the counter dtype")
                 .arg(meta.world_size)
                 .arg(meta.batch_size ? QString::number(*meta.batch_size) : tr("unknown"))
                 .arg(records)
                 .arg(padding)
                 .arg(sanity)
                 .arg(e.provenance.epochs);
  }
  if (!meta.torch_version.empty() || meta.backend != "simulated")
    lines << tr("Backend %1, torch %2")
                     .arg(QString::fromStdString(meta.backend),
                          meta.torch_version.empty() ? tr("unknown")
                                                     : QString::fromStdString(meta.torch_version)) +
                 (meta.launcher.empty()
                      ? QString()
                      : QStringLiteral(", ") + QString::fromStdString(launcher_phrase(meta)));
  m_details->setText(lines.join(QStringLiteral("<br>")));
  m_epochs->setVisible(e.provenance.epochs > 1);
}

void RunBanner::setPlaying(bool playing) {
  m_play->setChecked(playing);
}

QString RunBanner::detailsText() const {
  return m_details->text();
}

QString RunBanner::text() const {
  QString t = m_title->text();
  t.remove(QStringLiteral("<b>")).remove(QStringLiteral("</b>"));
  return t;
}

}  // namespace shardlens::ui
