#pragma once
// Class groups from a hierarchy file (the dataset option ",hierarchy=FILE"): one parent per
// class, such as WordNet's for ImageNet, so a 1000-class matrix collapses to its
// superclasses. The file is text, one line a class:
//     CLASS_ID PARENT NAME
// the class's id (0 .. C-1, as the dataset's labels) and, after spaces or a tab, its parent's
// name (the rest of the line: it may hold spaces). Blank lines and lines starting with '#'
// are skipped. Every class has exactly one line. One level: a parent's own parent is not
// read (give the level to collapse to).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardlens {

struct ClassHierarchy {
  std::vector<std::string> groups;  // the parents, in the order the file first names them
  std::vector<int32_t> group_of;    // class id -> index in `groups`

  int32_t size() const { return static_cast<int32_t>(groups.size()); }
  // The classes of group `g`, ascending.
  std::vector<int32_t> members(int32_t g) const;
};

// Parses a hierarchy file's bytes for a dataset of `classes` classes. Throws InputError
// "ORIGIN: line N: ..." for a line that is not CLASS_ID PARENT, an id outside 0..C-1, a
// class given twice, a name that is not UTF-8, holds control characters or is longer than
// kMaxClassNameBytes, and "ORIGIN: class K has no parent ..." for a class without a line.
ClassHierarchy parse_class_hierarchy(std::string_view text, int32_t classes,
                                     const std::string& origin);
// Reads and parses FILE (a regular file of at most kMaxClassNamesFileBytes, charged to the
// load budget; a FIFO or a directory is refused with the path named).
ClassHierarchy read_class_hierarchy(const std::string& path, int32_t classes);

}  // namespace shardlens
