// Exports are safe to open whatever the class names hold: a CSV cell never starts a
// spreadsheet formula and reads back as the name, a LaTeX table typesets the name and runs
// nothing. The SVG side is tests/ui/test_figure_export.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/io/csv.h"
#include "core/report/export.h"
#include "core/report/metrics.h"
#include "core/sim/engine.h"
#include "core/vocabulary/matrix.h"

namespace shardlens {
namespace {

// Names a dump or a run file may carry: control characters, TeX commands, formulas.
const std::vector<std::string> kHostileNames = {
    "a\x1b[31mb\x07",
    "\\input{/etc/passwd}",
    "=HYPERLINK(\"http://x\",\"y\")",
    "+1",
    "-2",
    "@SUM(A1)",
    "with, comma",
    "say \"hi\"",
    "two\nlines",
    "\ttab first",
    "\rcarriage first",
    "plain",
    "100% of $5 & #1 under_score ^ ~ {x}",
};

// A small RFC 4180 reader, written apart from core/io/csv: fields split at commas outside
// quotes, "" inside quotes is one quote, records end at a line feed outside quotes.
std::vector<std::vector<std::string>> read_rfc4180(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false, was_quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"' && field.empty() && !was_quoted) {
      quoted = was_quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field);
      field.clear();
      was_quoted = false;
    } else if (c == '\n') {
      rows.back().push_back(field);
      field.clear();
      was_quoted = false;
      rows.emplace_back();
    } else {
      field += c;
    }
  }
  EXPECT_FALSE(quoted) << "unterminated quoted field";
  if (!field.empty() || !rows.back().empty()) rows.back().push_back(field);
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

// The text a spreadsheet shows for a cell: OWASP's ' before a formula character is dropped.
std::string shown(const std::string& cell) {
  if (cell.size() >= 2 && cell[0] == '\'' &&
      std::string("=+-@\t\r").find(cell[1]) != std::string::npos)
    return cell.substr(1);
  return cell;
}

// What a cell reads back as: the name with each control character a terminal or a viewer
// would act on (every C0 but tab and line feed, DEL) shown as U+FFFD. The names here are
// ASCII, so a byte is a character.
std::string without_controls(const std::string& name) {
  std::string out;
  for (const char c : name) {
    const auto byte = static_cast<unsigned char>(c);
    out += ((byte < 0x20 && c != '\t' && c != '\n') || byte == 0x7f) ? "\xEF\xBF\xBD"
                                                                     : std::string(1, c);
  }
  return out;
}

bool starts_like_formula(const std::string& cell) {
  return !cell.empty() && std::string("=+-@\t\r").find(cell[0]) != std::string::npos;
}

Matrix counted(int32_t classes) {
  Matrix m(classes);
  for (int32_t r = 0; r < classes; ++r)
    for (int32_t c = 0; c < classes; ++c) m.at(r, c) = r * classes + c;
  return m;
}

TEST(ExportText, SpreadsheetTextPrefixesFormulaStarts) {
  EXPECT_EQ(spreadsheet_text("=HYPERLINK(\"http://x\",\"y\")"), "'=HYPERLINK(\"http://x\",\"y\")");
  EXPECT_EQ(spreadsheet_text("+1"), "'+1");
  EXPECT_EQ(spreadsheet_text("-2"), "'-2");
  EXPECT_EQ(spreadsheet_text("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(spreadsheet_text("\tx"), "'\tx");
  EXPECT_EQ(spreadsheet_text("\rx"), "'\rx");
  EXPECT_EQ(spreadsheet_text("a=b"), "a=b");
  EXPECT_EQ(spreadsheet_text(""), "");
  EXPECT_EQ(csv_field("=1+2"), "\"'=1+2\"");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("plain"), "plain");
}

TEST(ExportText, MatrixCsvReadsBackAsTheNamesAndStartsNoFormula) {
  const int32_t n = int32_t(kHostileNames.size());
  const auto rows = read_rfc4180(matrix_csv(counted(n), kHostileNames));
  ASSERT_EQ(rows.size(), size_t(n) + 1);
  ASSERT_EQ(rows[0].size(), size_t(n) + 1);
  EXPECT_EQ(rows[0][0], "true\\pred");
  for (int32_t c = 0; c < n; ++c) {
    const std::string& header = rows[0][size_t(c) + 1];
    EXPECT_FALSE(starts_like_formula(header)) << header;
    EXPECT_EQ(shown(header), without_controls(kHostileNames[size_t(c)]));
  }
  for (int32_t r = 0; r < n; ++r) {
    const auto& row = rows[size_t(r) + 1];
    ASSERT_EQ(row.size(), size_t(n) + 1) << r;
    EXPECT_FALSE(starts_like_formula(row[0])) << row[0];
    EXPECT_EQ(shown(row[0]), without_controls(kHostileNames[size_t(r)]));
    for (int32_t c = 0; c < n; ++c) EXPECT_EQ(row[size_t(c) + 1], std::to_string(r * n + c));
  }
}

TEST(ExportText, MetricsCsvNamesReadBackAndStartNoFormula) {
  Scenario s;
  s.dataset = "synthetic:classes=" + std::to_string(kHostileNames.size()) + ",per-class=4";
  Evaluation e = simulate(s);
  e.meta.class_names = kHostileNames;
  const auto rows = read_rfc4180(metrics_csv(e));
  ASSERT_GT(rows.size(), 1u);
  EXPECT_EQ(rows[0],
            (std::vector<std::string>{"metric", "class", "reported", "expected", "difference"}));
  size_t named = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), 5u) << i;
    EXPECT_FALSE(starts_like_formula(rows[i][1])) << rows[i][1];
    if (rows[i][1].empty()) continue;
    const std::string name = shown(rows[i][1]);
    EXPECT_TRUE(std::any_of(kHostileNames.begin(), kHostileNames.end(), [&](const std::string& n) {
      return without_controls(n) == name;
    })) << name;
    ++named;
  }
  EXPECT_EQ(named, 3 * kHostileNames.size());  // precision, recall and F1 of every class
}

// What the LaTeX table makes of each name: independent expectations, character by character.
TEST(ExportText, LatexEscapesEveryCharacterTexGivesAMeaning) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"\\input{/etc/passwd}", "\\textbackslash{}input\\{/etc/passwd\\}"},
      {"100% of $5 & #1", "100\\% of \\$5 \\& \\#1"},
      {"a_b^c~d", "a\\_b\\textasciicircum{}c\\textasciitilde{}d"},
      {"a\x1b[31mb\x07", "a[31mb"},
      {"two\nlines\ttab", "two lines tab"},
      {"x<y>z|w", "x\\textless{}y\\textgreater{}z\\textbar{}w"},
      {"plain", "plain"},
  };
  for (const auto& [name, escaped] : cases) {
    const std::string tex = matrix_latex(counted(1), {name}, "caption");
    EXPECT_NE(tex.find("\n" + escaped + " & 0 \\\\\n"), std::string::npos)
        << "name " << name << " in\n"
        << tex;
  }
}

TEST(ExportText, LatexTableRunsNoCommandOfANameOrCaption) {
  const int32_t n = int32_t(kHostileNames.size());
  const std::string tex =
      matrix_latex(counted(n), kHostileNames, "\\input{/etc/shadow} \\write18{rm -rf /}");
  EXPECT_EQ(tex.find("\\input"), std::string::npos) << tex;
  EXPECT_EQ(tex.find("\\write"), std::string::npos) << tex;
  for (char c : tex) {
    const auto u = static_cast<unsigned char>(c);
    EXPECT_TRUE(u >= 0x20 || c == '\n') << "control character " << int(u) << " in the table";
  }
  // Every backslash left starts one of the table's own commands or an escape.
  for (size_t at = tex.find('\\'); at != std::string::npos; at = tex.find('\\', at + 1)) {
    const std::string rest = tex.substr(at + 1, 20);
    if (rest[0] == '\\') {  // the table's line break
      ++at;
      continue;
    }
    const bool known = std::string("{}$&#_%").find(rest[0]) != std::string::npos ||
                       rest.rfind("text", 0) == 0 || rest.rfind("begin{", 0) == 0 ||
                       rest.rfind("end{", 0) == 0 || rest.rfind("centering", 0) == 0 ||
                       rest.rfind("hline", 0) == 0 || rest.rfind("backslash", 0) == 0 ||
                       rest.rfind("caption{", 0) == 0;
    EXPECT_TRUE(known) << "\\" << rest;
  }
}

}  // namespace
}  // namespace shardlens
