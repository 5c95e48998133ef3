#pragma once
// Class groups from a hierarchy file (the dataset option ",hierarchy=FILE"): a parent per
// class, such as WordNet's for ImageNet, so a 1000-class matrix collapses to its
// superclasses, level by level. The file is text, one line a class:
//     CLASS_ID PARENT NAME
//     CLASS_ID TOP > ... > PARENT NAME
// the class's id (0 .. C-1, as the dataset's labels) and, after spaces or a tab, its parent's
// name (the rest of the line: it may hold spaces), or the path of its ancestors from the top
// down separated by " > ". Blank lines and lines starting with '#' are skipped. Every class
// has exactly one line. Paths may differ in length: on the levels below its path's end a
// class stays in its own parent. A name is one group: the same name under two different
// parents (or at the top on one line and under a parent on another) is refused, not guessed.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardlens {

// One group of the hierarchy, a name of the file.
struct HierarchyNode {
  std::string name;
  int32_t parent = -1;  // index in ClassHierarchy::nodes; -1 at the top
  int32_t depth = 0;    // 0 at the top
};

// The classes collapsed to one level: each class in its ancestor at that depth, or in its
// own parent when its path is shorter.
struct ClassGroups {
  std::vector<std::string> groups;  // the level's groups, in the order the file first names them
  std::vector<int32_t> group_of;    // class id -> index in `groups`
  std::vector<int32_t> node;        // index in `groups` -> index in ClassHierarchy::nodes

  int32_t size() const { return static_cast<int32_t>(groups.size()); }
  // The classes of group `g`, ascending.
  std::vector<int32_t> members(int32_t g) const;
  // The index in `groups` of node `n`; -1 when the node is not a group of this level.
  int32_t group_of_node(int32_t n) const;
};

struct ClassHierarchy {
  std::vector<HierarchyNode> nodes;  // every group, in the order the file first names them
  std::vector<int32_t> parent_of;    // class id -> the node its line ends with
  std::vector<ClassGroups> levels;   // [0] the top groups ... back(): every class's parent

  int32_t depth() const { return static_cast<int32_t>(levels.size()); }
  int32_t classes() const { return static_cast<int32_t>(parent_of.size()); }
  // The nodes whose parent is `n` (-1: the top), in file order.
  std::vector<int32_t> children(int32_t n) const;
  // The classes whose own parent is `n`, ascending.
  std::vector<int32_t> own_classes(int32_t n) const;
};

// Parses a hierarchy file's bytes for a dataset of `classes` classes. Throws InputError
// "ORIGIN: line N: ..." for a line that is not CLASS_ID PARENT, an id outside 0..C-1, a
// class given twice, a name that is not UTF-8, holds control characters or is longer than
// kMaxClassNameBytes, an empty name in a path, a path deeper than kMaxHierarchyLevels, a
// name under another parent than on an earlier line, and "ORIGIN: class K has no parent ..."
// for a class without a line.
ClassHierarchy parse_class_hierarchy(std::string_view text, int32_t classes,
                                     const std::string& origin);
// Reads and parses FILE (a regular file of at most kMaxClassNamesFileBytes, charged to the
// load budget; a FIFO or a directory is refused with the path named).
ClassHierarchy read_class_hierarchy(const std::string& path, int32_t classes);

}  // namespace shardlens
