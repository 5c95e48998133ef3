#pragma once
// Text from core as the GUI and the figures show it: core/io/output_text.h's escapers, as
// QStrings. Whatever a file holds (markup, escape sequences, bidi overrides, invalid UTF-8),
// a label, a tooltip or a painted figure shows it as text.
#include <QString>
#include <string>

#include "core/io/output_text.h"

namespace shardlens {

// Plain text to paint or show in a plain-text widget: deceptive characters as U+FFFD.
inline QString shownText(const std::string& text) {
  return QString::fromStdString(display_text(text));
}
// The text inside Qt rich text (a QLabel in RichText format, an HTML tooltip).
inline QString richText(const std::string& text) {
  return QString::fromStdString(html_text(text));
}
inline QString richText(const QString& text) {
  return richText(text.toStdString());
}
// A tooltip that shows the text as it is: Qt takes a tooltip that looks like markup
// (Qt::mightBeRichText) for HTML, so the text goes escaped inside a paragraph of its own.
inline QString plainToolTip(const QString& text) {
  return QStringLiteral("<p style='white-space:pre'>%1</p>").arg(richText(text));
}

}  // namespace shardlens
