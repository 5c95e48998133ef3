#include "core/io/class_hierarchy.h"

#include <algorithm>
#include <charconv>
#include <unordered_map>

#include "core/io/detail.h"
#include "core/io/files.h"
#include "core/vocabulary/limits.h"

namespace shardlens {

using io_detail::fail;

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// At most this many missing classes are named in the error; the rest are counted.
constexpr size_t kNamedMissing = 5;

}  // namespace

std::vector<int32_t> ClassHierarchy::members(int32_t g) const {
  std::vector<int32_t> out;
  for (size_t c = 0; c < group_of.size(); ++c)
    if (group_of[c] == g) out.push_back(int32_t(c));
  return out;
}

ClassHierarchy parse_class_hierarchy(std::string_view text, int32_t classes,
                                     const std::string& origin) {
  if (classes <= 0) fail(origin, "a hierarchy needs a dataset with classes");
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  ClassHierarchy h;
  h.group_of.assign(size_t(classes), -1);
  std::vector<size_t> line_of(size_t(classes), 0);  // where each class got its parent
  std::unordered_map<std::string, int32_t> group_index;
  size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    const std::string at = "line " + std::to_string(line_no) + ": ";
    if (const size_t bad = invalid_utf8_offset(line); bad != std::string_view::npos)
      fail(origin, at + "not valid UTF-8 (byte " + std::to_string(bad + 1) + ")");
    line = trimmed(line);
    if (line.empty() || line.front() == '#') continue;
    const size_t gap = std::find_if(line.begin(), line.end(), is_space) - line.begin();
    const std::string_view id_text = line.substr(0, gap);
    int64_t id = -1;
    const auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
    if (ec != std::errc() || end != id_text.data() + id_text.size())
      fail(origin, at + "'" + std::string(id_text.substr(0, 40)) +
                       "' is not a class id (a line is CLASS_ID PARENT NAME)");
    if (id < 0 || id >= classes)
      fail(origin, at + "class " + std::string(id_text) + " is not one of the dataset's " +
                       std::to_string(classes) + " classes (0.." + std::to_string(classes - 1) +
                       ")");
    const std::string_view parent = trimmed(line.substr(gap));
    if (parent.empty())
      fail(origin, at + "class " + std::to_string(id) + " has no parent name after its id");
    if (std::any_of(parent.begin(), parent.end(),
                    [](char c) { return uint8_t(c) < 0x20 && c != '\t'; }))
      fail(origin, at + "control character in the parent name");
    if (parent.size() > kMaxClassNameBytes)
      fail(origin, at + "parent name of " + std::to_string(parent.size()) +
                       " bytes, more than the " + std::to_string(kMaxClassNameBytes) +
                       " a name may have");
    if (line_of[size_t(id)] != 0)
      fail(origin, at + "class " + std::to_string(id) + " is given a parent again (first on line " +
                       std::to_string(line_of[size_t(id)]) + ")");
    line_of[size_t(id)] = line_no;
    const auto [it, added] = group_index.emplace(std::string(parent), h.size());
    if (added) h.groups.emplace_back(parent);
    h.group_of[size_t(id)] = it->second;
  }
  std::vector<int32_t> missing;
  for (int32_t c = 0; c < classes; ++c)
    if (h.group_of[size_t(c)] < 0) missing.push_back(c);
  if (!missing.empty()) {
    std::string named;
    for (size_t i = 0; i < std::min(missing.size(), kNamedMissing); ++i)
      named += (i ? ", " : "") + std::to_string(missing[i]);
    if (missing.size() > kNamedMissing)
      named += " and " + std::to_string(missing.size() - kNamedMissing) + " more";
    fail(origin, std::string(missing.size() == 1 ? "class " : "classes ") + named +
                     (missing.size() == 1 ? " has" : " have") +
                     " no parent (every class of the dataset needs one line, CLASS_ID PARENT "
                     "NAME)");
  }
  return h;
}

ClassHierarchy read_class_hierarchy(const std::string& path, int32_t classes) {
  const std::string bytes = read_file_bytes(path, kMaxClassNamesFileBytes);
  return parse_class_hierarchy(bytes, classes, path);
}

}  // namespace shardlens
