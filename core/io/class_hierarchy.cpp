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

// The elements of a path (the text after the id), each trimmed, split at every '>' with a
// space or tab (or the path's end) on both sides: "a>b" stays one name, as in a one-level file
// written before paths were read, and "> a", "a >" and "a > > b" have an empty element. At
// most `limit` + 1 elements are returned: enough to refuse a path over the limit without
// holding millions of them.
std::vector<std::string_view> path_elements(std::string_view path, size_t limit) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i < path.size() && out.size() <= limit; ++i) {
    if (path[i] != '>') continue;
    if ((i > 0 && !is_space(path[i - 1])) || (i + 1 < path.size() && !is_space(path[i + 1])))
      continue;
    out.push_back(trimmed(path.substr(start, i - start)));
    start = i + 1;
  }
  if (out.size() <= limit) out.push_back(trimmed(path.substr(start)));
  return out;
}

std::string where(const std::vector<HierarchyNode>& nodes, int32_t parent) {
  return parent < 0 ? "at the top" : "under '" + nodes[size_t(parent)].name + "'";
}

// levels[l]: every class in its ancestor at depth l (its own parent below its path's end),
// the groups in node order, which is the order the file first names them.
std::vector<ClassGroups> collapse_levels(const ClassHierarchy& h) {
  int32_t depth = 0;
  for (const HierarchyNode& n : h.nodes) depth = std::max(depth, n.depth + 1);
  std::vector<ClassGroups> levels(static_cast<size_t>(depth));
  for (int32_t l = depth - 1; l >= 0; --l) {
    ClassGroups& level = levels[size_t(l)];
    std::vector<int32_t> node_of(size_t(h.classes()));
    std::vector<int32_t> index(h.nodes.size(), -1);
    for (int32_t c = 0; c < h.classes(); ++c) {
      int32_t n = h.parent_of[size_t(c)];
      while (h.nodes[size_t(n)].depth > l) n = h.nodes[size_t(n)].parent;
      node_of[size_t(c)] = n;
      index[size_t(n)] = 0;
    }
    for (size_t n = 0; n < h.nodes.size(); ++n) {
      if (index[n] < 0) continue;
      index[n] = level.size();
      level.groups.push_back(h.nodes[n].name);
      level.node.push_back(int32_t(n));
    }
    level.group_of.reserve(node_of.size());
    for (int32_t n : node_of) level.group_of.push_back(index[size_t(n)]);
  }
  return levels;
}

}  // namespace

std::vector<int32_t> ClassGroups::members(int32_t g) const {
  std::vector<int32_t> out;
  for (size_t c = 0; c < group_of.size(); ++c)
    if (group_of[c] == g) out.push_back(int32_t(c));
  return out;
}

int32_t ClassGroups::group_of_node(int32_t n) const {
  const auto it = std::find(node.begin(), node.end(), n);
  return it == node.end() ? -1 : int32_t(it - node.begin());
}

std::vector<int32_t> ClassHierarchy::children(int32_t n) const {
  std::vector<int32_t> out;
  for (size_t k = 0; k < nodes.size(); ++k)
    if (nodes[k].parent == n) out.push_back(int32_t(k));
  return out;
}

std::vector<int32_t> ClassHierarchy::own_classes(int32_t n) const {
  std::vector<int32_t> out;
  for (size_t c = 0; c < parent_of.size(); ++c)
    if (parent_of[c] == n) out.push_back(int32_t(c));
  return out;
}

ClassHierarchy parse_class_hierarchy(std::string_view text, int32_t classes,
                                     const std::string& origin) {
  if (classes <= 0) fail(origin, "a hierarchy needs a dataset with classes");
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  ClassHierarchy h;
  h.parent_of.assign(size_t(classes), -1);
  std::vector<size_t> line_of(size_t(classes), 0);  // where each class got its parent
  std::unordered_map<std::string, int32_t> node_index;
  std::vector<size_t> node_line;  // where each node was first named
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
    if (line_of[size_t(id)] != 0)
      fail(origin, at + "class " + std::to_string(id) + " is given a parent again (first on line " +
                       std::to_string(line_of[size_t(id)]) + ")");
    line_of[size_t(id)] = line_no;
    const std::vector<std::string_view> path = path_elements(parent, kMaxHierarchyLevels);
    if (path.size() > kMaxHierarchyLevels)
      fail(origin, at + "a path of more than the " + std::to_string(kMaxHierarchyLevels) +
                       " levels a hierarchy may have");
    int32_t above = -1;
    for (size_t i = 0; i < path.size(); ++i) {
      const std::string_view name = path[i];
      const std::string element = path.size() > 1 ? "group " + std::to_string(i + 1) + " of " +
                                                        std::to_string(path.size()) + " in the path"
                                                  : "parent name";
      if (name.empty())
        fail(origin, at + "empty " + element + " (ancestors are separated by ' > ')");
      if (name.size() > kMaxClassNameBytes)
        fail(origin, at + element + " of " + std::to_string(name.size()) +
                         " bytes, more than the " + std::to_string(kMaxClassNameBytes) +
                         " a name may have");
      const auto [it, added] = node_index.emplace(std::string(name), int32_t(h.nodes.size()));
      if (added) {
        h.nodes.push_back({std::string(name), above, int32_t(i)});
        node_line.push_back(line_no);
      } else if (h.nodes[size_t(it->second)].parent != above) {
        fail(origin, at + "'" + std::string(name) + "' is " + where(h.nodes, above) + " here but " +
                         where(h.nodes, h.nodes[size_t(it->second)].parent) + " on line " +
                         std::to_string(node_line[size_t(it->second)]) +
                         " (a name is one group: give the two their own names)");
      }
      above = it->second;
    }
    h.parent_of[size_t(id)] = above;
  }
  std::vector<int32_t> missing;
  for (int32_t c = 0; c < classes; ++c)
    if (h.parent_of[size_t(c)] < 0) missing.push_back(c);
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
  h.levels = collapse_levels(h);
  return h;
}

ClassHierarchy read_class_hierarchy(const std::string& path, int32_t classes) {
  const std::string bytes = read_file_bytes(path, kMaxClassNamesFileBytes);
  return parse_class_hierarchy(bytes, classes, path);
}

}  // namespace shardlens
