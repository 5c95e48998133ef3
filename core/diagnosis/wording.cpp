#include "core/diagnosis/wording.h"

#include <sstream>

namespace shardlens::detail {

std::string counted(int64_t n, const std::string& noun, const std::string& verb_phrase) {
  std::string out = std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
  if (!verb_phrase.empty()) out += (n == 1 ? " was " : " were ") + verb_phrase;
  return out;
}

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

std::string describe_cell(const CellFact& d, const std::string& exact_noun) {
  const std::string where =
      (d.rank < 0 ? std::string("synced") : "rank " + std::to_string(d.rank)) + ", row " +
      std::to_string(d.row) + " column " + std::to_string(d.col);
  return where + ": " + num(d.observed) + " where " + exact_noun + " is " + num(d.exact);
}

std::string explained(const std::string& specifics, const std::string& general) {
  return specifics.empty() ? general : specifics + " " + general;
}

std::string padding_sentence(const Facts& f) {
  if (f.padding_records) return counted(*f.padding_records, "padding record", "counted") + ".";
  if (f.tail_repeats)
    return counted(*f.tail_repeats, "sample",
                   "evaluated again as the last record of another rank") +
           ".";
  return "";
}

std::string missing_sentence(const Facts& f) {
  if (!f.missing) return "";
  std::string out = counted(*f.missing, "sample", "never evaluated");
  if (f.dataset_size) out += " (of " + std::to_string(*f.dataset_size) + ")";
  return out + ".";
}

std::string overlap_sentence(const Facts& f) {
  if (!f.overlap) return "";
  std::string out =
      counted(*f.overlap, "evaluation") + " repeated a sample another rank had evaluated";
  if (f.missing) out += ", and " + counted(*f.missing, "sample", "never evaluated");
  return out + ".";
}

}  // namespace shardlens::detail
