#include "core/io/pt_pickle.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "core/io/detail.h"

namespace shardlens {
namespace {

using io_detail::fail;
using io_detail::quote_excerpt;

// What a stack slot holds, as far as the checks need to know.
enum class Kind : uint8_t {
  kOther,        // a value nothing below looks into
  kInt,          // an integer, `value` when it fits 64 bits
  kString,       // a BINUNICODE string
  kStorageType,  // torch.<Type>Storage (LibTorch pushes it as a ScalarType integer)
  kCallable,     // _rebuild_tensor_v2 or OrderedDict, what REDUCE and BUILD may call
  kPersistentId  // ('storage', torch.<Type>Storage, key, location, numel >= 0)
};

struct Slot {
  Kind kind = Kind::kOther;
  int64_t value = 0;
  uint32_t container = 0;  // index into the nesting table; 0: not a container
};

const std::set<std::string, std::less<>>& storage_types() {
  static const std::set<std::string, std::less<>> types = {
      "ByteStorage", "CharStorage",  "ShortStorage",  "IntStorage",  "LongStorage",
      "HalfStorage", "FloatStorage", "DoubleStorage", "BoolStorage", "BFloat16Storage"};
  return types;
}

class Walk {
 public:
  Walk(std::string_view p, const std::string& origin) : m_p(p), m_origin(origin) {
    m_nesting.push_back(0);  // entry 0: "not a container"
  }

  void run() {
    if (m_p.size() < 2 || uint8_t(m_p[0]) != 0x80 || uint8_t(m_p[1]) != 2)
      bad("does not start with pickle protocol 2 (PROTO 2), as torch.save writes");
    m_at = 2;
    while (true) {
      if (m_at >= m_p.size()) bad("ends without STOP");
      const size_t at = m_at;
      const uint8_t op = uint8_t(m_p[m_at++]);
      if (!step(op, at)) return;
    }
  }

 private:
  [[noreturn]] void bad(const std::string& what) const { fail(m_origin, "data.pkl " + what); }
  [[noreturn]] void bad_at(size_t at, const std::string& what) const {
    bad("at byte " + std::to_string(at) + ": " + what);
  }

  std::string_view take(size_t n, size_t at) {
    if (m_p.size() - m_at < n) bad_at(at, "an argument runs past the end of the pickle");
    const std::string_view s = m_p.substr(m_at, n);
    m_at += n;
    return s;
  }
  uint64_t take_uint(size_t n, size_t at) {
    const std::string_view s = take(n, at);
    return io_detail::load_uint(reinterpret_cast<const unsigned char*>(s.data()), n, false);
  }
  std::string_view take_line(size_t at) {
    const size_t end = m_p.find('\n', m_at);
    if (end == std::string_view::npos) bad_at(at, "a GLOBAL name runs past the end");
    const std::string_view s = m_p.substr(m_at, end - m_at);
    m_at = end + 1;
    return s;
  }

  // The stack's bottom for pops: the innermost MARK, or 0.
  size_t base() const { return m_marks.empty() ? 0 : m_marks.back(); }
  void need(size_t n, size_t at) const {
    if (m_stack.size() - base() < n)
      bad_at(at, "an opcode takes " + std::to_string(n) + " value(s) where " +
                     std::to_string(m_stack.size() - base()) +
                     (m_marks.empty() ? " are on the stack" : " are above the MARK"));
  }
  size_t pop_mark(size_t at) {
    if (m_marks.empty()) bad_at(at, "an opcode needs a MARK and there is none");
    const size_t mark = m_marks.back();
    m_marks.pop_back();
    return mark;
  }

  uint32_t nest(const Slot& s) const { return m_nesting[s.container]; }
  // A new container holding the slots [from, stack end): replaces them.
  void make_container(size_t from, size_t at, Kind kind = Kind::kOther) {
    uint32_t depth = 1;
    for (size_t i = from; i < m_stack.size(); ++i) depth = std::max(depth, nest(m_stack[i]) + 1);
    check_depth(depth, at);
    m_stack.resize(from);
    m_nesting.push_back(depth);
    m_stack.push_back(Slot{kind, 0, uint32_t(m_nesting.size() - 1)});
  }
  // Items [from, end) go into the container at `into`.
  void fill_container(size_t into, size_t from, size_t at) {
    const Slot& c = m_stack[into];
    if (c.container == 0) bad_at(at, "items are added to something that is no list or dict");
    uint32_t depth = m_nesting[c.container];
    for (size_t i = from; i < m_stack.size(); ++i) depth = std::max(depth, nest(m_stack[i]) + 1);
    check_depth(depth, at);
    m_nesting[c.container] = depth;
    m_stack.resize(from);
  }
  void check_depth(uint32_t depth, size_t at) const {
    if (depth > uint32_t(kMaxPickleNesting))
      bad_at(at, "containers nest more than " + std::to_string(kMaxPickleNesting) + " deep");
  }

  void push(Kind kind, int64_t value = 0) { m_stack.push_back(Slot{kind, value, 0}); }
  void push_container() {
    m_nesting.push_back(1);
    m_stack.push_back(Slot{Kind::kOther, 0, uint32_t(m_nesting.size() - 1)});
  }

  void put(uint64_t id, size_t at) {
    need(1, at);
    if (id > m_memo.size())
      bad_at(at, "memo index " + std::to_string(id) + " skips ahead of the " +
                     std::to_string(m_memo.size()) + " set so far");
    if (id == m_memo.size())
      m_memo.push_back(m_stack.back());
    else
      m_memo[id] = m_stack.back();
  }
  void get(uint64_t id, size_t at) {
    if (id >= m_memo.size()) bad_at(at, "memo index " + std::to_string(id) + " was never set");
    m_stack.push_back(m_memo[id]);
  }

  void global(size_t at) {
    const std::string_view module = take_line(at);
    const std::string_view name = take_line(at);
    if (module == "torch._utils" && name == "_rebuild_tensor_v2") return push(Kind::kCallable);
    if (module == "collections" && name == "OrderedDict") return push(Kind::kCallable);
    if (module == "torch" && storage_types().count(name)) return push(Kind::kStorageType);
    bad_at(at, "GLOBAL " + quote_excerpt(std::string(module) + "." + std::string(name)) +
                   " is not part of a dict of tensors (real, integer or bool)");
  }

  // A tuple of the `n` slots on top: a persistent id when it has that form.
  void tuple(size_t from, size_t at) {
    const size_t n = m_stack.size() - from;
    const Slot* s = m_stack.data() + from;
    const bool persistent_id = n == 5 && s[0].kind == Kind::kString &&
                               s[1].kind == Kind::kStorageType && s[2].kind == Kind::kString &&
                               s[3].kind == Kind::kString && s[4].kind == Kind::kInt &&
                               s[4].value >= 0;
    make_container(from, at, persistent_id ? Kind::kPersistentId : Kind::kOther);
  }

  // One opcode; false at STOP.
  bool step(uint8_t op, size_t at) {
    switch (op) {
      case '.':  // STOP
        if (!m_marks.empty() || m_stack.size() != 1)
          bad_at(at, "STOP leaves " + std::to_string(m_stack.size()) + " values and " +
                         std::to_string(m_marks.size()) + " MARK(s), not one value");
        return false;
      case ']':  // EMPTY_LIST
      case ')':  // EMPTY_TUPLE
      case '}':  // EMPTY_DICT
        push_container();
        break;
      case 'N':   // NONE
      case 0x88:  // NEWTRUE
      case 0x89:  // NEWFALSE
        push(Kind::kOther);
        break;
      case 'G':  // BINFLOAT
        take(8, at);
        push(Kind::kOther);
        break;
      case 'K':  // BININT1
        push(Kind::kInt, int64_t(take_uint(1, at)));
        break;
      case 'M':  // BININT2
        push(Kind::kInt, int64_t(take_uint(2, at)));
        break;
      case 'J':  // BININT
        push(Kind::kInt, int64_t(int32_t(uint32_t(take_uint(4, at)))));
        break;
      case 0x8a: {  // LONG1: LibTorch reads only 8-byte ones
        const size_t n = size_t(take_uint(1, at));
        if (n != 8) bad_at(at, "LONG1 of " + std::to_string(n) + " bytes (LibTorch reads 8)");
        push(Kind::kInt, int64_t(take_uint(8, at)));
        break;
      }
      case 'X':  // BINUNICODE
        take(size_t(take_uint(4, at)), at);
        push(Kind::kString);
        break;
      case 'c':  // GLOBAL
        global(at);
        break;
      case 'q':  // BINPUT
        put(take_uint(1, at), at);
        break;
      case 'r':  // LONG_BINPUT
        put(take_uint(4, at), at);
        break;
      case 'h':  // BINGET
        get(take_uint(1, at), at);
        break;
      case 'j':  // LONG_BINGET
        get(take_uint(4, at), at);
        break;
      case '(':  // MARK
        m_marks.push_back(m_stack.size());
        break;
      case 't':  // TUPLE
        tuple(pop_mark(at), at);
        break;
      case 0x85:    // TUPLE1
      case 0x86:    // TUPLE2
      case 0x87: {  // TUPLE3
        const size_t n = size_t(op - 0x85 + 1);
        need(n, at);
        tuple(m_stack.size() - n, at);
        break;
      }
      case 'l':  // LIST
        make_container(pop_mark(at), at);
        break;
      case 'd': {  // DICT
        const size_t mark = pop_mark(at);
        if ((m_stack.size() - mark) % 2) bad_at(at, "DICT of an odd number of values");
        make_container(mark, at);
        break;
      }
      case 'e':    // APPENDS
      case 'u': {  // SETITEMS
        const size_t mark = pop_mark(at);
        if (mark <= base()) bad_at(at, "no list or dict below the MARK");
        if (op == 'u' && (m_stack.size() - mark) % 2)
          bad_at(at, "SETITEMS of an odd number of values");
        fill_container(mark - 1, mark, at);
        break;
      }
      case 's':  // SETITEM
        need(3, at);
        fill_container(m_stack.size() - 3, m_stack.size() - 2, at);
        break;
      case 'R':    // REDUCE
      case 'b': {  // BUILD
        need(2, at);
        if (m_stack[m_stack.size() - 2].kind != Kind::kCallable)
          bad_at(at, "REDUCE or BUILD of something that is no tensor or OrderedDict GLOBAL");
        const uint32_t depth = nest(m_stack.back()) + 1;
        check_depth(depth, at);
        m_stack.resize(m_stack.size() - 2);
        m_nesting.push_back(depth);
        m_stack.push_back(Slot{Kind::kOther, 0, uint32_t(m_nesting.size() - 1)});
        break;
      }
      case 0x81:  // NEWOBJ: LibTorch drops the argument tuple
        need(1, at);
        m_stack.pop_back();
        break;
      case 'Q':  // BINPERSID
        need(1, at);
        if (m_stack.back().kind != Kind::kPersistentId)
          bad_at(at,
                 "a persistent id that is not ('storage', torch.<Type>Storage, key, "
                 "location, element count)");
        m_stack.back() = Slot{Kind::kOther, 0, 0};
        break;
      default:
        bad_at(at, "opcode " + std::to_string(op) + " is not one torch.save writes");
    }
    return true;
  }

  std::string_view m_p;
  const std::string& m_origin;
  size_t m_at = 0;
  std::vector<Slot> m_stack;
  std::vector<size_t> m_marks;
  std::vector<Slot> m_memo;
  std::vector<uint32_t> m_nesting;
};

}  // namespace

void check_pt_pickle(std::string_view pickle, const std::string& origin) {
  Walk(pickle, origin).run();
}

}  // namespace shardlens
