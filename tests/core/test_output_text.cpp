// Every writer of output text (core/io/output_text.h, csv_field) against every class of
// hostile string a file can carry: markup, control characters, bidi overrides, 100,000
// characters, invalid UTF-8. What a writer returns is checked with tools of its own: glibc's
// iconv decides what is valid UTF-8, nlohmann's parser reads JSON back, the character classes
// are spelled out here by code point.
#include <gtest/gtest.h>
#include <iconv.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/io/csv.h"
#include "core/io/output_text.h"

namespace shardlens {
namespace {

struct Hostile {
  const char* what;
  std::string text;
};

std::string repeated(const std::string& piece, size_t characters_wanted, size_t per_piece) {
  std::string out;
  for (size_t n = 0; n < characters_wanted; n += per_piece) out += piece;
  return out;
}

const std::vector<Hostile>& hostile_strings() {
  static const std::vector<Hostile> strings = {
      {"script", "<script>alert(document.domain)</script>"},
      {"attribute break", "\" onload=\"alert(1)\" x='"},
      {"cdata and entity", "]]><x/>&amp;&#0;&lt;"},
      {"NUL and ESC", std::string("title\0with NUL\x1b[2J\x1b]0;owned\x07", 30)},
      {"carriage return and backspace", "ok\rFAKE\b\b\x7f"},
      {"C1 CSI",
       "a\xc2\x9b"
       "31mred\xc2\x85"},
      {"bidi override",
       "safe\xe2\x80\xae"
       "txt.exe\xe2\x81\xa6"
       "x\xe2\x81\xa9"},
      {"invalid UTF-8", "\xff\xfe\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\x80\xe2\x82"},
      {"noncharacters", "\xef\xbf\xbe\xef\xbf\xbf"},
      {"100,000 characters", repeated("<\x1b\xe2\x80\xae\xff&\"", 100000, 6)},
      {"TeX", "\\input{/etc/passwd} $x$ 100% #1 ^_~"},
  };
  return strings;
}

// The code points of `text`, or nothing when it is not valid UTF-8 (iconv's verdict).
std::optional<std::u32string> decoded(const std::string& text) {
  iconv_t cd = iconv_open("UTF-32LE", "UTF-8");
  EXPECT_NE(cd, reinterpret_cast<iconv_t>(-1));
  std::u32string out(text.size(), U'\0');
  char* in = const_cast<char*>(text.data());
  size_t in_left = text.size();
  char* to = reinterpret_cast<char*>(out.data());
  size_t to_left = out.size() * sizeof(char32_t);
  const size_t done = iconv(cd, &in, &in_left, &to, &to_left);
  iconv_close(cd);
  if (done == size_t(-1) || in_left != 0) return std::nullopt;
  out.resize(out.size() - to_left / sizeof(char32_t));
  return out;
}

// Characters no output may carry raw: C0 but tab and line feed, DEL, C1, the bidi embeddings,
// overrides and isolates, and the two noncharacters U+FFFE and U+FFFF.
bool acts_on_display(char32_t c) {
  return (c < 0x20 && c != U'\t' && c != U'\n') || (c >= 0x7f && c <= 0x9f) ||
         (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c == 0xfffe || c == 0xffff;
}

// Valid UTF-8 with nothing that acts on a display; `also_banned` adds characters the format
// itself forbids raw (line feed in LaTeX, markup in XML).
void expect_inert(const std::string& out, const Hostile& h, const std::string& writer,
                  std::u32string also_banned = {}) {
  const auto characters = decoded(out);
  ASSERT_TRUE(characters) << writer << " of " << h.what << ": not valid UTF-8";
  for (const char32_t c : *characters) {
    ASSERT_FALSE(acts_on_display(c))
        << writer << " of " << h.what << ": U+" << std::hex << uint32_t(c);
    ASSERT_EQ(also_banned.find(c), std::u32string::npos)
        << writer << " of " << h.what << ": raw U+" << std::hex << uint32_t(c);
  }
  // Linear: an escape is a few characters, never a blow-up.
  EXPECT_LE(out.size(), 16 * h.text.size() + 64) << writer << " of " << h.what;
}

TEST(OutputText, DisplayTextIsValidUtf8WithNothingThatActsOnTheDisplay) {
  for (const auto& h : hostile_strings()) expect_inert(display_text(h.text), h, "display_text");
}

TEST(OutputText, XmlTextHasNoMarkupAndNoCharacterXmlForbids) {
  for (const auto& h : hostile_strings()) {
    const std::string out = xml_text(h.text);
    expect_inert(out, h, "xml_text", U"<>\"'");
    // Every & begins one of the five predefined entities.
    for (size_t at = out.find('&'); at != std::string::npos; at = out.find('&', at + 1)) {
      const std::string rest = out.substr(at, 6);
      EXPECT_TRUE(rest.rfind("&amp;", 0) == 0 || rest.rfind("&lt;", 0) == 0 ||
                  rest.rfind("&gt;", 0) == 0 || rest.rfind("&quot;", 0) == 0 ||
                  rest.rfind("&apos;", 0) == 0 || rest.rfind("&#39;", 0) == 0)
          << h.what << ": " << rest;
    }
  }
  EXPECT_EQ(xml_text("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
}

TEST(OutputText, HtmlTextBreaksLinesAndRendersNoTag) {
  for (const auto& h : hostile_strings()) {
    const std::string out = html_text(h.text);
    expect_inert(out, h, "html_text", U"\n\"'");
    // The only tag is the line break it adds.
    std::string without_breaks = out;
    for (size_t at; (at = without_breaks.find("<br>")) != std::string::npos;)
      without_breaks.erase(at, 4);
    EXPECT_EQ(without_breaks.find_first_of("<>"), std::string::npos) << h.what;
  }
  EXPECT_EQ(html_text("a<b\nc"), "a&lt;b<br>c");
}

TEST(OutputText, LatexTextKeepsNoLineBreakAndNoUnescapedSpecial) {
  for (const auto& h : hostile_strings()) {
    const std::string out = latex_text(h.text);
    expect_inert(out, h, "latex_text", U"\n\t");
    // With every escape of the table below taken out, no character TeX acts on remains.
    std::string rest = out;
    for (const std::string escape :
         {"\\textbackslash{}", "\\textasciicircum{}", "\\textasciitilde{}", "\\textless{}",
          "\\textgreater{}", "\\textbar{}", "\\{", "\\}", "\\$", "\\&", "\\#", "\\%", "\\_"})
      for (size_t at; (at = rest.find(escape)) != std::string::npos;) rest.erase(at, escape.size());
    EXPECT_EQ(rest.find_first_of("\\{}$&#%_^~"), std::string::npos) << h.what << ": " << out;
    EXPECT_EQ(out.find("\\input"), std::string::npos) << h.what;
  }
}

TEST(OutputText, TerminalTextShowsEveryControlAsAVisibleEscape) {
  for (const auto& h : hostile_strings()) expect_inert(terminal_text(h.text), h, "terminal_text");
  EXPECT_EQ(terminal_text("a\x1b[2Jb"), "a\\u001b[2Jb");
  EXPECT_EQ(terminal_text("\xe2\x80\xae"), "\\u202e");
  EXPECT_EQ(terminal_text("x\xffy"), "x\\xffy");
  // Text that is already clean passes as it is, line ends and tabs included.
  EXPECT_EQ(terminal_text("résumé\tclass 3\n"), "résumé\tclass 3\n");
}

TEST(OutputText, JsonTextReadsBackAsTheStringsItWasGiven) {
  for (const auto& h : hostile_strings()) {
    const nlohmann::json doc = {{"title", h.text}, {h.text, 1}};
    const std::string out = json_text(doc, 1);
    nlohmann::json back;
    ASSERT_NO_THROW(back = nlohmann::json::parse(out)) << h.what;
    const auto valid = decoded(h.text);
    if (valid) {
      // Valid UTF-8 comes back byte for byte, control characters and all (JSON escapes them).
      EXPECT_EQ(back["title"].get<std::string>(), h.text) << h.what;
      EXPECT_TRUE(back.contains(h.text)) << h.what;
    } else {
      EXPECT_NE(back["title"].get<std::string>().find("\xEF\xBF\xBD"), std::string::npos) << h.what;
    }
    // Nothing raw reaches the document's text: JSON's own escapes carry the controls.
    expect_inert(out, h, "json_text");
  }
}

TEST(OutputText, CsvFieldIsInertAndStartsNoFormula) {
  for (const auto& h : hostile_strings()) {
    const std::string out = csv_field(h.text);
    expect_inert(out, h, "csv_field");
    const size_t first = out.rfind('"', 0) == 0 ? 1 : 0;
    ASSERT_LT(first, out.size() + 1);
    if (out.size() > first)
      EXPECT_EQ(std::string("=+-@").find(out[first]), std::string::npos) << h.what;
  }
  EXPECT_EQ(csv_field("=cmd|' /C calc'!A0"), "\"'=cmd|' /C calc'!A0\"");
}

TEST(OutputText, TheTerminalBufferEscapesWhatEveryWriteCarries) {
  std::ostringstream target;
  {
    TerminalTextBuffer buffer(target.rdbuf());
    std::ostream out(&buffer);
    out << "rank 0 \x1b[31m";
    // A character cut between two writes is kept whole.
    out << "caf\xc3";
    out << "\xa9 \xe2\x80";
    out << "\xae" << std::endl;
    out << "tail \xff";
  }
  EXPECT_EQ(target.str(), "rank 0 \\u001b[31mcaf\xc3\xa9 \\u202e\ntail \\xff");
}

TEST(OutputText, TheTerminalGuardCoversAStreamAndGivesItBack) {
  std::ostringstream text;
  std::ostream& stream = text;  // the std::ostream's buffer, as std::cout's
  std::streambuf* original = stream.rdbuf();
  {
    const TerminalTextGuard guard(stream);
    stream << "bell\x07" << std::flush;
    EXPECT_NE(stream.rdbuf(), original);
  }
  EXPECT_EQ(stream.rdbuf(), original);
  EXPECT_EQ(text.str(), "bell\\u0007");
}

}  // namespace
}  // namespace shardlens
