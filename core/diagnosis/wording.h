#pragma once
// Phrases the catalogue's words are built of (internal to the diagnosis layer).
#include <cstdint>
#include <string>

#include "core/diagnosis/finding.h"

namespace shardlens::detail {

// "1 sample was" / "3 samples were": findings read as sentences.
std::string counted(int64_t n, const std::string& noun, const std::string& verb_phrase = "");
// A count as a person reads it: "4504", "0.5".
std::string num(double v);
// "rank 0, row 0 column 0: 8096 where the records' exact count is 8093"
std::string describe_cell(const CellFact& d, const std::string& exact_noun);
// The measured sentences first, then the general text.
std::string explained(const std::string& specifics, const std::string& general);

// Sentences shared by a generic pattern and the framework pattern that refines it.
std::string padding_sentence(const Facts& f);  // "3 padding records were counted."
std::string missing_sentence(const Facts& f);  // "2 samples were never evaluated (of 510)."
std::string overlap_sentence(const Facts& f);  // "4 evaluations repeated a sample ..."

}  // namespace shardlens::detail
