#include "core/io/npz.h"

#include <sys/stat.h>
#include <zip.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "core/io/detail.h"
#include "core/io/files.h"
#include "core/io/zip_directory.h"
#include "core/vocabulary/memory_budget.h"

namespace shardlens {
namespace {

using io_detail::fail;
using io_detail::quote_excerpt;

// Deflate cannot expand data by more than about 1032:1; a member claiming more than that is
// lying about its size, and we must not allocate what it claims.
constexpr uint64_t kMaxDeflateRatio = 1032;

std::string zip_error_text(int code) {
  zip_error_t err;
  zip_error_init_with_code(&err, code);
  std::string text = zip_error_strerror(&err);
  zip_error_fini(&err);
  return text;
}

// Owns a zip_t opened for reading; discarding never writes anything back.
struct ZipReader {
  zip_t* za = nullptr;
  ~ZipReader() {
    if (za) zip_discard(za);
  }
};

struct ZipFile {
  zip_file_t* zf = nullptr;
  ~ZipFile() {
    if (zf) zip_fclose(zf);
  }
};

constexpr const char* kNpzIsZip = "an .npz is a ZIP file";

// Opens the archive from `src` (consumed, even on failure). `is_zip` completes the message
// for a file that is not a ZIP archive ("an .npz is a ZIP file").
void open_archive(zip_source_t* src, const std::string& origin, ZipReader& reader,
                  const char* is_zip = kNpzIsZip) {
  zip_error_t err;
  zip_error_init(&err);
  reader.za = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &err);
  if (!reader.za) {
    const int code = zip_error_code_zip(&err);
    const std::string text = zip_error_strerror(&err);
    zip_error_fini(&err);
    zip_source_free(src);
    if (code == ZIP_ER_NOZIP)
      fail(origin, std::string("not a ZIP archive, or a truncated one (") + is_zip + ")");
    if (code == ZIP_ER_INCONS) fail(origin, "corrupt ZIP archive (" + text + ")");
    if (code == ZIP_ER_EXISTS) fail(origin, "corrupt ZIP archive (duplicate member names)");
    fail(origin, "cannot read ZIP archive (" + text + ")");
  }
  zip_error_fini(&err);
}

// Charges the directory an archive's end record declares before libzip lists it: a member
// costs an entry in libzip and one in the listing, whatever its size.
void charge_directory(const std::string& origin, const ZipReadAt& read_at, uint64_t archive_bytes) {
  const std::optional<ZipDirectorySize> size = zip_directory_size(read_at, archive_bytes);
  if (!size) return;  // no end record: libzip says so
  check_load_budget(
      origin, size->members * kZipBytesPerMember + size->directory_bytes * kZipCopiesOfDirectory,
      "the ZIP directory of " + std::to_string(size->members) + " members");
}

// Resizes to exactly n bytes: std::string's own growth may allocate up to twice what is
// asked, which for a member at the budget would be twice the budget.
void resize_exactly(std::string& s, size_t n) {
  if (n > s.capacity()) {
    std::string grown;
    grown.reserve(n);
    grown.assign(s);
    s.swap(grown);
  }
  s.resize(n);
}

// Inflates a member into a string that grows with the data that arrives (never past the
// declared size, checked against the budget), then reads once more so libzip reaches the
// end of the member and verifies its CRC. A member holding more than its directory entry
// says is refused at the first byte past it; one holding less, when the data runs out.
std::string read_member(zip_t* za, zip_uint64_t index, const NpzEntry& entry, size_t limit,
                        const std::string& where) {
  ZipFile file;
  file.zf = zip_fopen_index(za, index, 0);
  if (!file.zf) fail(where, std::string("cannot open (") + zip_strerror(za) + ")");
  const size_t want = std::min<uint64_t>(entry.size, limit);
  std::string out;
  constexpr size_t kFirstChunk = size_t(1) << 20;
  size_t done = 0;
  while (done < want) {
    if (done == out.size()) {
      // Double what has arrived: at most twice the real data, and never the declared size
      // of a member whose data stops short of it.
      resize_exactly(out, std::min(want, std::max(kFirstChunk, 2 * out.size())));
    }
    const zip_int64_t n = zip_fread(file.zf, out.data() + done, out.size() - done);
    if (n < 0) fail(where, std::string("corrupt data (") + zip_file_strerror(file.zf) + ")");
    if (n == 0)
      fail(where, "truncated data: " + std::to_string(done) + " of " + std::to_string(entry.size) +
                      " bytes");
    done += size_t(n);
  }
  if (want < entry.size) return out;  // a prefix: no CRC to check yet
  char extra;
  const zip_int64_t n = zip_fread(file.zf, &extra, 1);
  if (n < 0) fail(where, std::string("corrupt data (") + zip_file_strerror(file.zf) + ")");
  if (n > 0) fail(where, "holds more data than the archive directory says");
  return out;
}

// Checks one directory entry before anything is allocated for it.
void check_entry(const zip_stat_t& st, const std::string& where, uint64_t archive_bytes) {
  if (st.encryption_method != ZIP_EM_NONE) fail(where, "encrypted members are not supported");
  if (st.comp_method != ZIP_CM_STORE && st.comp_method != ZIP_CM_DEFLATE)
    fail(where, "compression method " + std::to_string(st.comp_method) +
                    " is not supported (only stored or deflated)");
  if (st.comp_size > archive_bytes)
    fail(where, "claims " + std::to_string(st.comp_size) + " compressed bytes, more than the " +
                    std::to_string(archive_bytes) + "-byte archive");
  const bool plausible = st.comp_method == ZIP_CM_STORE
                             ? st.size == st.comp_size
                             : st.size / kMaxDeflateRatio <= st.comp_size;
  if (!plausible)
    fail(where, "implausible size: " + std::to_string(st.size) + " bytes from " +
                    std::to_string(st.comp_size) + " compressed");
}

std::string member_where(const std::string& origin, const std::string& name) {
  return origin + ": member " + quote_excerpt(name);
}

}  // namespace

struct NpzArchive::Impl {
  ZipReader reader;
  std::string origin;
  std::vector<NpzEntry> entries;
  std::vector<zip_uint64_t> indices;  // libzip's index of each entry
  // Each entry's place in `entries`: a run file of 65,536 ranks holds 327,681 members, and
  // finding each by a walk over the list made reading them all quadratic (hours).
  std::unordered_map<std::string, size_t> positions;
  bool npz_names = true;  // members must be named as in an .npz (is_npz_member_name)

  void list(uint64_t archive_bytes) {
    const zip_int64_t count = zip_get_num_entries(reader.za, 0);
    for (zip_int64_t i = 0; i < count; ++i) {
      zip_stat_t st;
      zip_stat_init(&st);
      if (zip_stat_index(reader.za, zip_uint64_t(i), 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME))
        fail(origin, std::string("corrupt ZIP directory (") + zip_strerror(reader.za) + ")");
      const std::string name = st.name;
      const std::string where = member_where(origin, name);
      if (npz_names && !is_npz_member_name(name))
        fail(where, "unexpected member (an .npz holds NAME.npy arrays and meta.json)");
      if (!positions.emplace(name, entries.size()).second)
        fail(where, "appears twice in the archive");
      check_entry(st, where, archive_bytes);
      entries.push_back(NpzEntry{name, st.size, st.comp_size});
      indices.push_back(zip_uint64_t(i));
    }
  }

  size_t position(const std::string& name) const {
    const auto it = positions.find(name);
    if (it == positions.end()) fail(origin, "no member " + quote_excerpt(name));
    return it->second;
  }
};

NpzArchive::NpzArchive(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
NpzArchive::NpzArchive(NpzArchive&&) noexcept = default;
NpzArchive& NpzArchive::operator=(NpzArchive&&) noexcept = default;
NpzArchive::~NpzArchive() = default;

namespace {

// A libzip source reading the file at `path` (a regular, non-empty file), and its size.
std::pair<zip_source_t*, uint64_t> file_source(const std::string& path) {
  require_regular_file(path);
  struct stat sb {};
  if (::stat(path.c_str(), &sb) != 0)
    fail(path, std::string("cannot open (") + strerror(errno) + ")");
  if (sb.st_size == 0) fail(path, "empty file");
  zip_error_t err;
  zip_error_init(&err);
  zip_source_t* src = zip_source_file_create(path.c_str(), 0, -1, &err);
  if (!src) {
    const std::string text = zip_error_strerror(&err);
    zip_error_fini(&err);
    fail(path, "cannot open (" + text + ")");
  }
  zip_error_fini(&err);
  return {src, uint64_t(sb.st_size)};
}

// Reads pieces of the file at `path` for charge_directory.
ZipReadAt file_reader(const std::string& path) {
  return [path](uint64_t offset, size_t n) {
    std::ifstream in(path, std::ios::binary);
    std::string out(n, '\0');
    if (!in.seekg(std::streamoff(offset))) return std::string();
    in.read(out.data(), std::streamsize(n));
    out.resize(size_t(in.gcount()));
    return out;
  };
}

// Opens the ZIP file at `path` into `reader` once its directory is charged; returns the
// file's size.
uint64_t open_file_archive(const std::string& path, ZipReader& reader,
                           const char* is_zip = kNpzIsZip) {
  const auto [src, bytes] = file_source(path);
  try {
    charge_directory(path, file_reader(path), bytes);
  } catch (...) {
    zip_source_free(src);
    throw;
  }
  open_archive(src, path, reader, is_zip);
  return bytes;
}

}  // namespace

NpzArchive NpzArchive::open_file(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  impl->origin = path;
  impl->list(open_file_archive(path, impl->reader));
  return NpzArchive(std::move(impl));
}

NpzArchive NpzArchive::open_zip_file(const std::string& path, const char* is_zip) {
  auto impl = std::make_unique<Impl>();
  impl->origin = path;
  impl->npz_names = false;
  impl->list(open_file_archive(path, impl->reader, is_zip));
  return NpzArchive(std::move(impl));
}

NpzArchive NpzArchive::from_bytes(const std::string& bytes, const std::string& origin) {
  if (bytes.empty()) fail(origin, "empty file");
  charge_directory(
      origin, [&bytes](uint64_t offset, size_t n) { return bytes.substr(size_t(offset), n); },
      bytes.size());
  zip_error_t err;
  zip_error_init(&err);
  zip_source_t* src = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &err);
  zip_error_fini(&err);
  if (!src) fail(origin, "cannot read ZIP archive (out of memory)");
  auto impl = std::make_unique<Impl>();
  impl->origin = origin;
  open_archive(src, origin, impl->reader);
  impl->list(bytes.size());
  return NpzArchive(std::move(impl));
}

const std::string& NpzArchive::origin() const {
  return m_impl->origin;
}

const std::vector<NpzEntry>& NpzArchive::entries() const {
  return m_impl->entries;
}

const NpzEntry* NpzArchive::find(const std::string& name) const {
  const auto it = m_impl->positions.find(name);
  return it == m_impl->positions.end() ? nullptr : &m_impl->entries[it->second];
}

std::string NpzArchive::read_prefix(const std::string& name, size_t n) {
  const size_t k = m_impl->position(name);
  const NpzEntry& e = m_impl->entries[k];
  return read_member(m_impl->reader.za, m_impl->indices[k], e, n, member_where(origin(), name));
}

std::string NpzArchive::read(const std::string& name) {
  const size_t k = m_impl->position(name);
  const NpzEntry& e = m_impl->entries[k];
  const std::string where = member_where(origin(), name);
  check_load_budget(where, e.size, "its declared uncompressed size");
  return read_member(m_impl->reader.za, m_impl->indices[k], e, SIZE_MAX, where);
}

NpyHeader NpzArchive::npy_header(const std::string& name) {
  const NpzEntry* e = find(name);
  if (!e) fail(origin(), "no member " + quote_excerpt(name));
  const std::string where = member_where(origin(), name);
  // The fixed part first: it says how long the header dictionary is.
  std::string head = read_prefix(name, 12);
  size_t need = head.size();
  if (head.size() >= 10 && uint8_t(head[6]) >= 1 && uint8_t(head[6]) <= 3) {
    const size_t prefix = uint8_t(head[6]) == 1 ? 10 : 12;
    if (head.size() >= prefix) {
      const uint64_t len = io_detail::load_uint(
          reinterpret_cast<const unsigned char*>(head.data() + 8), prefix - 8, false);
      need = size_t(
          std::min<uint64_t>(prefix + std::min<uint64_t>(len, kMaxNpyHeaderBytes + 1), e->size));
    }
  }
  if (need > head.size()) head = read_prefix(name, need);
  NpyHeader h = parse_npy_header(head, where);
  const uint64_t data = npy_data_bytes(h, where);
  const uint64_t available = e->size - std::min<uint64_t>(e->size, h.data_offset);
  if (data > available)
    fail(where, "truncated data: header says " + std::to_string(data) +
                    " bytes of values, the member holds " + std::to_string(available) +
                    " bytes after the header");
  if (data < available)
    fail(where, std::to_string(available - data) + " bytes of trailing data after the values");
  return h;
}

bool is_npz_member_name(const std::string& name) {
  if (name == "meta.json") return true;
  // Arrays, and the metadata of one epoch of a multi-epoch run file ("epoch3_meta.json").
  const bool array = name.size() > 4 && name.ends_with(".npy");
  const bool meta = name.size() > 10 && name.ends_with("_meta.json");
  return (array || meta) && name.find('\0') == std::string::npos && is_valid_utf8(name);
}

namespace {

NpzMembers read_all_members(NpzArchive& archive, size_t max_bytes) {
  uint64_t total = 0;
  for (const NpzEntry& e : archive.entries()) total += e.size;
  if (total > max_bytes)
    fail(archive.origin(),
         "members add up to more than the " + std::to_string(max_bytes) + "-byte limit");
  check_load_budget(archive.origin(), total, "its members decompressed");
  NpzMembers members;
  for (const NpzEntry& e : archive.entries()) members.emplace(e.name, archive.read(e.name));
  return members;
}

}  // namespace

NpzMembers read_npz(const std::string& path, size_t max_bytes) {
  NpzArchive archive = NpzArchive::open_file(path);
  return read_all_members(archive, max_bytes);
}

NpzMembers npz_members_from_bytes(const std::string& bytes, const std::string& origin,
                                  size_t max_bytes) {
  NpzArchive archive = NpzArchive::from_bytes(bytes, origin);
  return read_all_members(archive, max_bytes);
}

void write_npz(const std::string& path,
               const std::vector<std::pair<std::string, std::string>>& members, bool compress) {
  std::set<std::string> seen;
  for (const auto& [name, bytes] : members) {
    if (!is_npz_member_name(name))
      throw std::invalid_argument("write_npz: invalid member name '" + name + "'");
    if (!seen.insert(name).second)
      throw std::invalid_argument("write_npz: duplicate member name '" + name + "'");
  }
  if (members.empty()) {
    // libzip deletes an archive left with no entries; numpy.savez() writes this instead:
    // just the end-of-central-directory record.
    write_file_atomic(path, std::string("PK\x05\x06", 4) + std::string(18, '\0'));
    return;
  }
  write_file_atomic_with(path, [&](const std::string& tmp) {
    int code = 0;
    zip_t* za = zip_open(tmp.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
    if (!za) fail(path, "cannot write (" + zip_error_text(code) + ")");
    const auto give_up = [&]() {
      const std::string text = zip_strerror(za);
      zip_discard(za);
      fail(path, "cannot write (" + text + ")");
    };
    for (const auto& [name, bytes] : members) {
      // The buffers outlive zip_close, so libzip may read them in place (freep = 0).
      zip_source_t* src = zip_source_buffer(za, bytes.data(), bytes.size(), 0);
      if (!src) give_up();
      const zip_int64_t index = zip_file_add(za, name.c_str(), src, ZIP_FL_ENC_UTF_8);
      if (index < 0) {
        zip_source_free(src);
        give_up();
      }
      if (zip_set_file_compression(za, zip_uint64_t(index),
                                   compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) != 0)
        give_up();
    }
    if (zip_close(za) != 0) give_up();
  });
}

}  // namespace shardlens
