// Names for the rows of table tests (gtest TEST_P): each case runs as its own test, named by
// what it covers, so a failure names the case and `--gtest_filter` can run one row alone.
// gtest accepts only letters, digits and '_' in a row's name; row_name() maps the rest.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <string>
#include <vector>

namespace shardlens::test {

// `text` with each run of characters gtest refuses in a name made one '_' ("0.5" -> "0_5",
// "gather_for_metrics" stays); never empty.
inline std::string row_name(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += c;
    else if (out.empty() || out.back() != '_')
      out += '_';
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? std::string("empty") : out;
}

// Rows made from reference files (one per case of a JSON vector file) named by their
// settings: a repeated name gets "_2", "_3", ... so that gtest, which refuses two rows of one
// name, still runs every case.
template <class Row>
std::vector<Row> with_unique_names(std::vector<Row> rows) {
  std::map<std::string, int> seen;
  for (Row& row : rows) {
    row.name = row_name(row.name);
    const int n = ++seen[row.name];
    if (n > 1) row.name += "_" + std::to_string(n);
  }
  return rows;
}

// The name generator of INSTANTIATE_TEST_SUITE_P for rows that carry a `name`.
struct NamedRow {
  template <class Row>
  std::string operator()(const ::testing::TestParamInfo<Row>& info) const {
    return row_name(info.param.name);
  }
};

}  // namespace shardlens::test
