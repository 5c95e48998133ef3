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

// One field of a CSV line as written: quoted (RFC 4180) when it holds a comma, a quote or a
// line break, as is otherwise.
std::string csv_field(const std::string& text);

}  // namespace shardlens
