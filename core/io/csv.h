#pragma once
// Small CSV reader for label, prediction and per-rank dump files.
#include <cstdint>
#include <string>
#include <vector>

namespace shardlens {

struct CsvTable {
  std::vector<std::string> header;  // empty when the first row is numeric
  std::vector<std::vector<std::string>> rows;
  std::vector<size_t> lines;  // 1-based line where each row starts, for error messages
  int column(const std::string& name) const;  // -1 when absent
};

// Parses comma-separated text (quotes, CRLF, BOM, blank trailing lines handled); every row
// must have the same number of fields. Throws InputError naming the file and line.
CsvTable read_csv(const std::string& path);
CsvTable parse_csv(const std::string& text, const std::string& origin);

// Integers of one column ("label", "target", "prediction", or the only column). Names the
// file, line and value on a non-integer.
std::vector<int64_t> csv_integer_column(const CsvTable& table,
                                        const std::vector<std::string>& names,
                                        const std::string& origin);
std::vector<int64_t> read_csv_integers(const std::string& path,
                                       const std::vector<std::string>& names);

// Text as a spreadsheet cell takes it without running it: text that starts with = + - @, a tab
// or a carriage return (a formula, or a DDE call: "=HYPERLINK(...)", "@SUM(A1)") gets a leading
// ' (OWASP's advice against CSV injection), which spreadsheets show as text and do not display.
// Everything else is returned as it is. The one rule for every CSV and TSV ShardLens writes.
std::string spreadsheet_text(const std::string& text);

// One field of a CSV line as written: spreadsheet_text, quoted (RFC 4180) when it holds a
// comma, a quote or a line break or when it starts like a formula, as is otherwise. A reader
// gets the text back by dropping the ' before a formula character.
std::string csv_field(const std::string& text);

}  // namespace shardlens
