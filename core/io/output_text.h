#pragma once
// Output text: the one owner of how a string reaches each output format. Every string that a
// writer puts into SVG, PDF metadata, LaTeX, JSON, Qt rich text (tooltips, labels) or a
// terminal passes through that format's function here, at the writer, whatever its origin: a
// scenario title from a colleague's run file is as hostile as a class name from a dump. CSV
// and TSV have theirs in core/io/csv.h (csv_field, spreadsheet_text: formulas as text).
//
// Each function accepts any bytes (invalid UTF-8, NUL, escape sequences, bidi overrides,
// 100,000 characters) and runs in linear time; what it returns is valid UTF-8 that the
// format shows as text and never runs, renders as markup, or reorders.
#include <nlohmann/json_fwd.hpp>
#include <streambuf>
#include <string>
#include <string_view>

namespace shardlens {

// The text as valid UTF-8: every byte that does not begin a well-formed sequence (stray
// continuation bytes, overlong forms, surrogates, code points past U+10FFFF, a sequence cut
// short) becomes U+FFFD.
std::string valid_utf8(std::string_view text);

// Characters that make a display lie about the text around them: C0 controls other than tab
// and line feed (ESC starts a terminal sequence, CR overwrites a line), DEL, C1 controls, the
// bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069, "Trojan
// Source"), U+FFFE and U+FFFF.
bool is_deceptive_character(char32_t c);

// Plain text for a display or a document's metadata (PDF title, a window title): valid UTF-8
// with every deceptive character replaced by U+FFFD.
std::string display_text(std::string_view text);

// Text inside an XML (SVG) element or attribute value: display_text, then & < > " ' as
// entities. XML 1.0 has no tab-free C0 character, so nothing invalid remains.
std::string xml_text(std::string_view text);

// Text inside Qt rich text (QLabel rich text, tooltips that Qt takes for HTML): xml_text with
// line breaks as <br>.
std::string html_text(std::string_view text);

// Text typeset by LaTeX as written and never run: every character TeX gives a meaning is
// escaped (a class named \input{/etc/passwd} would read the file), line breaks and tabs
// become spaces (a blank line inside a tabular is an error), deceptive characters are dropped.
std::string latex_text(std::string_view text);

// Text for a terminal: valid UTF-8 kept as it is, tab and line feed kept, every other
// deceptive character written as a visible \uXXXX, every byte of invalid UTF-8 as \xHH. In a
// JSON document (where such characters only occur inside strings) \uXXXX is the character's
// own escape, so JSON printed through it stays the same JSON.
std::string terminal_text(std::string_view text);

// A JSON document as text: invalid UTF-8 in its strings (a path, a class name from a label
// file) becomes U+FFFD instead of an exception; every deceptive character is written as its
// \uXXXX escape, so the file reads back as the same strings and shows nothing raw.
std::string json_text(const nlohmann::json& j, int indent = -1);

// A stream buffer in front of another that writes everything through terminal_text: the CLI
// puts one in front of stdout and one in front of stderr, so no text from a file reaches the
// terminal raw, whichever code printed it. A character cut between two writes waits for the
// next; every line end and every flush writes what is complete.
class TerminalTextBuffer final : public std::streambuf {
 public:
  explicit TerminalTextBuffer(std::streambuf* target) : m_target(target) {}
  ~TerminalTextBuffer() override;
  TerminalTextBuffer(const TerminalTextBuffer&) = delete;
  TerminalTextBuffer& operator=(const TerminalTextBuffer&) = delete;

 protected:
  int_type overflow(int_type ch) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  // Writes the pending bytes through terminal_text, keeping a trailing incomplete character
  // unless `all`.
  bool drain(bool all);
  std::streambuf* m_target;
  std::string m_pending;
};

// Puts a TerminalTextBuffer in front of a stream for its lifetime (the CLI's main).
class TerminalTextGuard {
 public:
  explicit TerminalTextGuard(std::ostream& stream);
  ~TerminalTextGuard();
  TerminalTextGuard(const TerminalTextGuard&) = delete;
  TerminalTextGuard& operator=(const TerminalTextGuard&) = delete;

 private:
  std::ostream& m_stream;
  std::streambuf* m_original;
  TerminalTextBuffer m_buffer;
};

}  // namespace shardlens
