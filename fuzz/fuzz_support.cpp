#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/io/files.h"
#include "core/io/npz.h"
#include "core/io/sha256.h"
#include "core/vocabulary/memory_budget.h"
#include "fuzz/fuzz_util.h"

namespace shardlens::fuzz {
namespace {

// Before the first input, in every target and replay driver (they all link this file).
[[maybe_unused]] const bool kBudgetSet = [] {
  set_load_budget(kFuzzLoadBudgetMb << 20);
  return true;
}();

namespace fs = std::filesystem;

// Never destroyed, so the exit handler that removes it cannot outlive it.
const fs::path& scratch_dir() {
  static const fs::path* const dir = [] {
    const fs::path base =
        fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    auto* d = new fs::path(base / ("shardlens-fuzz-" + std::to_string(::getpid())));
    fs::create_directories(*d);
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(scratch_dir(), ec);
    });
    return d;
  }();
  return *dir;
}

}  // namespace

std::string scratch_file(const std::string& name, std::string_view bytes) {
  const std::string path = (scratch_dir() / name).string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  out.close();
  if (!out) {
    std::fprintf(stderr, "fuzz: cannot write scratch file %s\n", path.c_str());
    std::abort();  // A harness problem, not a finding; stop rather than fuzz nothing.
  }
  return path;
}

void bad_message(const std::string& origin, const std::string& message) {
  std::fprintf(stderr, "fuzz: InputError does not start with the file '%s': %s\n", origin.c_str(),
               message.c_str());
  std::abort();
}

void note_rejection(const std::string& message) {
  static const bool verbose = std::getenv("SHARDLENS_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "  rejected: %s\n", message.c_str());
}

Members parse_member_list(std::string_view in) {
  Members out;
  size_t at = 0;
  while (at < in.size()) {
    const size_t name_len = uint8_t(in[at]);
    if (in.size() - at < 1 + name_len + 2) break;
    std::string name(in.substr(at + 1, name_len));
    at += 1 + name_len;
    const size_t data_len = size_t(uint8_t(in[at])) | size_t(uint8_t(in[at + 1])) << 8;
    at += 2;
    if (in.size() - at < data_len) break;
    out.emplace_back(std::move(name), std::string(in.substr(at, data_len)));
    at += data_len;
  }
  return out;
}

Members unpack_members(std::string_view in) {
  Members out;
  std::set<std::string> seen;
  for (auto& [name, data] : parse_member_list(in)) {
    // libzip refuses to store names with control characters (other than tab and line
    // breaks) as UTF-8; write_npz would fail on them, which is not what is being fuzzed.
    const bool control = std::any_of(name.begin(), name.end(), [](char c) {
      return uint8_t(c) < 0x20 && c != '\t' && c != '\n' && c != '\r';
    });
    if (control || !is_npz_member_name(name) || !seen.insert(name).second) continue;
    out.emplace_back(std::move(name), std::move(data));
  }
  return out;
}

std::string pack_members(const Members& members) {
  std::string out;
  for (const auto& [name, data] : members) {
    if (name.size() > 0xFF || data.size() > 0xFFFF) {
      std::fprintf(stderr, "fuzz: member %s too large to pack\n", name.c_str());
      std::abort();
    }
    out += char(name.size());
    out += name;
    out += char(data.size() & 0xFF);
    out += char(data.size() >> 8);
    out += data;
  }
  return out;
}

std::string npz_bytes(const Members& members) {
  const std::string path = (scratch_dir() / "repacked.npz").string();
  write_npz(path, members);
  return read_file_bytes(path);
}

void refresh_run_checksums(Members& members) {
  // meta.json lists the members beside it; in a multi-epoch file each "epoch<e>_meta.json"
  // lists that epoch's members without their prefix.
  for (auto& [name, data] : members) {
    const bool top = name == "meta.json";
    const size_t cut = name.rfind("meta.json");
    if (!top && (cut == std::string::npos || cut + 9 != name.size())) continue;
    const std::string prefix = top ? std::string() : name.substr(0, cut);
    nlohmann::json meta = nlohmann::json::parse(data, nullptr, /*allow_exceptions=*/false);
    if (!meta.is_object() || !meta.contains("members") || !meta["members"].is_object()) continue;
    for (const auto& [other, bytes] : members) {
      if (other.compare(0, prefix.size(), prefix) != 0) continue;
      auto it = meta["members"].find(other.substr(prefix.size()));
      if (it == meta["members"].end() || !it->is_object()) continue;
      (*it)["sha256"] = sha256_hex(bytes);
      (*it)["bytes"] = bytes.size();
    }
    data = meta.dump();
  }
}

}  // namespace shardlens::fuzz
