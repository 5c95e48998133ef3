#pragma once
// The diagnosis: whether the reported matrix is right, the totals, and each pattern found
// with its explanation and the fix for PyTorch, Lightning, torchmetrics and Accelerate.
#include <QTextBrowser>

#include "ui/jobs/evaluation_runner.h"

namespace shardlens::ui {

// HTML of a diagnosis (also used by the HTML/clipboard export).
QString diagnosisHtml(const Evaluation& e);

class DiagnosisPanel : public QTextBrowser {
  Q_OBJECT
 public:
  explicit DiagnosisPanel(QWidget* parent = nullptr);
  void setResult(const ResultPtr& result);

 private:
  // What is shown: a step that changes nothing the diagnosis says (an epoch of a correct
  // evaluation) keeps the laid-out document, the largest cost of a click on the GUI thread.
  QString m_html;
};

}  // namespace shardlens::ui
