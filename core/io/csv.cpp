#include "core/io/csv.h"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <unordered_set>

#include "core/io/detail.h"
#include "core/io/files.h"
#include "core/io/output_text.h"
#include "core/vocabulary/memory_budget.h"

namespace shardlens {
namespace {

using io_detail::fail;
using io_detail::quote_excerpt;

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

std::string at_line(size_t line) {
  return "line " + std::to_string(line) + ": ";
}

size_t line_of_offset(std::string_view s, size_t offset) {
  return 1 + size_t(std::count(s.begin(), s.begin() + long(offset), '\n'));
}

// Splits RFC 4180 text into records. Quoted fields may hold commas, doubled quotes and line
// breaks, so records are not simply lines; each remembers the line it starts on.
class CsvLexer {
 public:
  CsvLexer(std::string_view s, const std::string& origin) : m_s(s), m_origin(origin) {}

  bool done() const { return m_pos >= m_s.size(); }
  size_t line() const { return m_line; }

  // Reads one record; `blank` is set when the line held nothing but whitespace.
  std::vector<std::string> record(bool* blank) {
    std::vector<std::string> fields;
    bool any_quoted = false;
    for (;;) {
      while (m_pos < m_s.size() && is_blank(m_s[m_pos])) ++m_pos;
      if (m_pos < m_s.size() && m_s[m_pos] == '"') {
        fields.push_back(quoted());
        any_quoted = true;
      } else {
        fields.push_back(unquoted());
      }
      if (m_pos < m_s.size() && m_s[m_pos] == ',') {
        ++m_pos;
        continue;
      }
      end_of_line();
      break;
    }
    *blank = !any_quoted && fields.size() == 1 && fields[0].empty();
    return fields;
  }

 private:
  bool at_line_end() const {
    return m_pos >= m_s.size() || m_s[m_pos] == '\n' || m_s[m_pos] == '\r';
  }
  void end_of_line() {
    if (m_pos < m_s.size() && m_s[m_pos] == '\r') ++m_pos;
    if (m_pos < m_s.size() && m_s[m_pos] == '\n') ++m_pos;
    ++m_line;
  }

  std::string unquoted() {
    const size_t start = m_pos;
    while (!at_line_end() && m_s[m_pos] != ',') ++m_pos;
    return std::string(trim(m_s.substr(start, m_pos - start)));
  }

  std::string quoted() {
    const size_t start_line = m_line;
    ++m_pos;  // Opening quote.
    std::string out;
    for (;;) {
      const size_t q = m_s.find('"', m_pos);
      if (q == std::string_view::npos)
        fail(m_origin, at_line(start_line) + "unterminated quoted field");
      const std::string_view piece = m_s.substr(m_pos, q - m_pos);
      m_line += size_t(std::count(piece.begin(), piece.end(), '\n'));
      out.append(piece);
      m_pos = q + 1;
      if (m_pos < m_s.size() && m_s[m_pos] == '"') {  // "" is an escaped quote.
        out += '"';
        ++m_pos;
        continue;
      }
      break;
    }
    while (m_pos < m_s.size() && is_blank(m_s[m_pos])) ++m_pos;
    if (!at_line_end() && m_s[m_pos] != ',')
      fail(m_origin, at_line(m_line) + "unexpected text after a closing quote");
    return out;
  }

  std::string_view m_s;
  const std::string& m_origin;
  size_t m_pos = 0;
  size_t m_line = 1;
};

bool is_number(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size();
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return out;
}

std::string join_names(const std::vector<std::string>& names, const char* last_sep) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += i + 1 == names.size() ? last_sep : ", ";
    out += names[i];
  }
  return out;
}

// Which column holds the integers: a header name from `names` (case-insensitive), or the
// only column there is.
int pick_column(const CsvTable& table, const std::vector<std::string>& names,
                const std::string& origin) {
  const size_t width = table.header.empty() ? table.rows.front().size() : table.header.size();
  for (const std::string& want : names)
    for (size_t c = 0; c < table.header.size(); ++c)
      if (lower(trim(table.header[c])) == lower(want)) return int(c);
  if (width == 1) return 0;
  if (table.header.empty())
    fail(origin, std::to_string(width) + " columns and no header row; add a header naming the " +
                     join_names(names, " or ") + " column");
  fail(origin, "no column named " + join_names(names, " or ") +
                   " (columns: " + join_names(table.header, ", ") + ")");
}

int64_t parse_integer(std::string_view text, const std::string& origin, size_t line,
                      const std::string& column) {
  std::string_view s = trim(text);
  if (s.empty()) fail(origin, at_line(line) + "empty value in " + column);
  if (s.size() > 1 && s[0] == '+' && s[1] != '-') s.remove_prefix(1);
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range && end == s.data() + s.size())
    fail(origin, at_line(line) + quote_excerpt(s) + " in " + column +
                     " is out of the 64-bit integer range");
  if (ec != std::errc() || end != s.data() + s.size())
    fail(origin, at_line(line) + quote_excerpt(s) + " in " + column + " is not an integer");
  return v;
}

}  // namespace

int CsvTable::column(const std::string& name) const {
  const auto it = std::find(header.begin(), header.end(), name);
  return it == header.end() ? -1 : int(it - header.begin());
}

CsvTable parse_csv(const std::string& text, const std::string& origin) {
  std::string_view s = text;
  if (s.substr(0, 3) == "\xEF\xBB\xBF") s.remove_prefix(3);  // Excel's UTF-8 byte-order mark.
  const size_t bad = invalid_utf8_offset(s);
  if (bad != std::string_view::npos)
    fail(origin, at_line(line_of_offset(s, bad)) + "not valid UTF-8");
  const size_t nul = s.find('\0');
  if (nul != std::string_view::npos)
    fail(origin, at_line(line_of_offset(s, nul)) + "NUL byte (is this a binary file?)");

  // Every field becomes a std::string in a row vector: a file of short numbers takes many
  // times its size, so the table is bounded before it is built (a field per separator).
  // Rows end where the lexer ends them: at \n, \r\n or a lone \r (30 MB of \r-only line ends
  // took 1,275 MB under a 256 MiB budget while \n alone was counted).
  uint64_t line_ends = 0;
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] == '\n' || (s[i] == '\r' && (i + 1 == s.size() || s[i + 1] != '\n'))) ++line_ends;
  const uint64_t fields = uint64_t(std::count(s.begin(), s.end(), ',')) + line_ends + 1;
  const uint64_t rows = line_ends + 1;
  check_load_budget(origin,
                    s.size() + fields * sizeof(std::string) +
                        rows * (sizeof(std::vector<std::string>) + sizeof(size_t)),
                    "its fields as a table of text");
  CsvTable table;
  CsvLexer lex(s, origin);
  size_t width = 0, first_line = 0;
  bool first = true;
  while (!lex.done()) {
    const size_t line = lex.line();
    bool blank = false;
    std::vector<std::string> fields = lex.record(&blank);
    if (blank) continue;
    if (first) {
      first = false;
      width = fields.size();
      first_line = line;
      if (!std::all_of(fields.begin(), fields.end(), is_number)) {
        // A set, not a scan of the names before each one: that was quadratic, and a
        // 1 MB header of 100,000 names took 20 s.
        std::unordered_set<std::string_view> seen;
        for (const std::string& name : fields)
          if (!seen.insert(name).second)
            fail(origin, at_line(line) + "duplicate column name " + quote_excerpt(name));
        table.header = std::move(fields);
        continue;
      }
    } else if (fields.size() != width) {
      fail(origin, at_line(line) + std::to_string(fields.size()) + " fields, expected " +
                       std::to_string(width) + " as on line " + std::to_string(first_line));
    }
    table.rows.push_back(std::move(fields));
    table.lines.push_back(line);
  }
  if (first) fail(origin, "no data (empty or only blank lines)");
  return table;
}

CsvTable read_csv(const std::string& path) {
  return parse_csv(read_file_bytes(path), path);
}

std::vector<int64_t> csv_integer_column(const CsvTable& table,
                                        const std::vector<std::string>& names,
                                        const std::string& origin) {
  if (table.rows.empty()) fail(origin, "no data rows (only a header)");
  const int col = pick_column(table, names, origin);
  const std::string column = table.header.empty()
                                 ? "column " + std::to_string(col + 1)
                                 : "column " + quote_excerpt(table.header[size_t(col)]);
  std::vector<int64_t> out;
  out.reserve(table.rows.size());
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const size_t line = r < table.lines.size() ? table.lines[r] : r + 1;
    // Tables built by hand (not by parse_csv) may be ragged; never index past a row.
    if (size_t(col) >= table.rows[r].size()) fail(origin, at_line(line) + "missing " + column);
    out.push_back(parse_integer(table.rows[r][size_t(col)], origin, line, column));
  }
  return out;
}

std::vector<int64_t> read_csv_integers(const std::string& path,
                                       const std::vector<std::string>& names) {
  return csv_integer_column(read_csv(path), names, path);
}

std::string spreadsheet_text(const std::string& text) {
  if (text.empty() || std::string_view("=+-@\t\r").find(text.front()) == std::string_view::npos)
    return text;
  return "'" + text;
}

std::string csv_field(const std::string& text) {
  const std::string shown = display_text(text);  // no escape sequence for a `cat` of the file
  const std::string safe = spreadsheet_text(shown);
  if (safe.size() == shown.size() && shown.find_first_of(",\"\n") == std::string::npos)
    return shown;
  std::string out = "\"";
  for (char ch : safe) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

}  // namespace shardlens
