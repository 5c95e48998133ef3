#pragma once
// The first-start panel above the heatmaps: what the views mean, in a few sentences, for
// someone who has never seen a DDP confusion-matrix bug. Dismissed for the session with
// Close, for good with "Don't show again" (Settings::welcomeDismissed); Help > What am I
// looking at? brings it back.
#include <QFrame>

namespace shardlens::ui {

class WelcomePanel : public QFrame {
  Q_OBJECT
 public:
  explicit WelcomePanel(QWidget* parent = nullptr);
  // False until the user chose "Don't show again".
  static bool dismissedForGood();
  void dismiss(bool forGood);
};

}  // namespace shardlens::ui
