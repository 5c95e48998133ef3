#pragma once
// The words the GUI and its figures use for what an evaluation counts: a matrix's counts are
// pixels, tokens or label decisions for a task whose samples count many cells, while the
// samplers deal, pad, limit and duplicate images, sequences or items (sample_cells.h). One
// place, so a tooltip, a header and a status line never call a pixel a sample.
#include <QString>

#include "core/evaluation/evaluation.h"
#include "core/vocabulary/sample_cells.h"

namespace shardlens::render {

// "samples", "pixels", "tokens", "label decisions": what one count of a matrix is.
inline QString countsWord(Task t) {
  return QString::fromStdString(count_unit(t));
}
inline QString countsWord(const Evaluation& e) {
  return countsWord(e.meta.task);
}
// "sample", "image", "sequence", "item" and their plurals: what the sampler deals.
inline QString sampleWord(Task t) {
  return QString::fromStdString(sample_word(t));
}
inline QString samplesWord(Task t) {
  return sampleWord(t) + QLatin1Char('s');
}
inline QString samplesWord(const Evaluation& e) {
  return samplesWord(e.meta.task);
}
// A task whose samples count many cells: counts and samples are different words.
inline bool countsCells(const Evaluation& e) {
  return e.meta.task != Task::Classification;
}
// Whether a sample's count in one cell says anything: pixels and tokens, not a multilabel
// item's one decision a label (always 1).
inline bool countsPerSample(const Evaluation& e) {
  return e.meta.task == Task::Segmentation || e.meta.task == Task::Tokens;
}
// "Images" from "images": the start of a label or a table header.
inline QString capitalized(QString s) {
  if (!s.isEmpty()) s[0] = s[0].toUpper();
  return s;
}

}  // namespace shardlens::render
