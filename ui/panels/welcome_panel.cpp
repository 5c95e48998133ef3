#include "ui/panels/welcome_panel.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include "ui/settings/settings.h"

namespace shardlens::ui {

WelcomePanel::WelcomePanel(QWidget* parent) : QFrame(parent) {
  setObjectName(QStringLiteral("welcomePanel"));
  setFrameShape(QFrame::StyledPanel);
  setStyleSheet(
      QStringLiteral("#welcomePanel { background: #eef4fb; border: 1px solid #9bb8d8; }"));
  auto* text = new QLabel(this);
  text->setObjectName(QStringLiteral("welcomeText"));
  text->setWordWrap(true);
  text->setTextFormat(Qt::RichText);
  text->setText(
      tr("<b>What you are looking at</b> — one evaluation split over several processes "
         "(ranks), as PyTorch DDP runs it. "
         "<b>Per rank</b> (below): the confusion matrix each rank counted on its shard. "
         "<b>Synced</b> (large): what the metric reports once the ranks are combined. "
         "<b>Expected</b>: one process on the whole dataset, what the report should be; "
         "<b>Synced − expected</b> shows where they differ. "
         "A row marked <font color=#b2182b><b>red and ⚠</b></font> sums to a different number "
         "than the true count of its class: the reported matrix is wrong. "
         "The <b>Diagnosis</b> on the right names each pattern and its fix. "
         "Try the lessons in the Scenario panel, or open your own run with File › Open run."));
  auto* close = new QPushButton(tr("Close"), this);
  close->setObjectName(QStringLiteral("welcomeClose"));
  auto* never = new QPushButton(tr("Don't show again"), this);
  never->setObjectName(QStringLiteral("welcomeDontShow"));
  connect(close, &QPushButton::clicked, this, [this] { dismiss(false); });
  connect(never, &QPushButton::clicked, this, [this] { dismiss(true); });
  auto* buttons = new QVBoxLayout;
  buttons->addWidget(close);
  buttons->addWidget(never);
  buttons->addStretch();
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(10, 6, 10, 6);
  layout->addWidget(text, 1);
  layout->addLayout(buttons);
}

bool WelcomePanel::dismissedForGood() {
  return Settings::welcomeDismissed();
}

void WelcomePanel::dismiss(bool forGood) {
  if (forGood) Settings::setWelcomeDismissed(true);
  hide();
}

}  // namespace shardlens::ui
