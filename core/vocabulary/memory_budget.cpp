#include "core/vocabulary/memory_budget.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "core/vocabulary/types.h"

namespace shardlens {
namespace {

// 0: not set, the default applies.
std::atomic<uint64_t> g_budget{0};

}  // namespace

uint64_t physical_memory_bytes() {
  // MemTotal is what the kernel can give (a container's cgroup limit may be lower; the
  // user then sets --max-memory).
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  while (meminfo >> key >> kib) {
    if (key == "MemTotal:") return kib * 1024;
    meminfo.ignore(1 << 10, '\n');
  }
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) return uint64_t(pages) * uint64_t(page);
  return 0;
}

uint64_t default_load_budget() {
  static const uint64_t budget = [] {
    const uint64_t total = physical_memory_bytes();
    return total > 0 ? total / 2 : uint64_t(4) << 30;
  }();
  return budget;
}

uint64_t load_budget() {
  const uint64_t set = g_budget.load(std::memory_order_relaxed);
  return set ? set : default_load_budget();
}

void set_load_budget(uint64_t bytes) {
  g_budget.store(bytes, std::memory_order_relaxed);
}

std::optional<uint64_t> parse_memory_size(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  size_t digits = 0;
  bool dot = false;
  while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) ||
                                  (text[digits] == '.' && !dot))) {
    dot = dot || text[digits] == '.';
    ++digits;
  }
  if (digits == 0 || (dot && digits == 1)) return std::nullopt;
  const double number = std::stod(std::string(text.substr(0, digits)));
  std::string unit(text.substr(digits));
  while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  for (char& c : unit) c = char(std::toupper(static_cast<unsigned char>(c)));
  // "2G", "2GB" and "2GiB" all mean 2 * 2^30: memory is counted in binary units.
  if (unit.size() == 3 && unit.compare(1, 2, "IB") == 0) unit.resize(1);
  if (unit.size() == 2 && unit[1] == 'B') unit.resize(1);
  double scale = 1;
  if (unit.empty() || unit == "B") {
    scale = 1;
  } else if (unit == "K") {
    scale = 1024.0;
  } else if (unit == "M") {
    scale = 1024.0 * 1024;
  } else if (unit == "G") {
    scale = 1024.0 * 1024 * 1024;
  } else if (unit == "T") {
    scale = 1024.0 * 1024 * 1024 * 1024;
  } else {
    return std::nullopt;
  }
  const double bytes = std::floor(number * scale);
  if (!(bytes >= 1) || bytes >= 18446744073709551615.0) return std::nullopt;
  return uint64_t(bytes);
}

std::string memory_size_text(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  double v = double(bytes);
  int unit = -1;
  while (v >= 1024 && unit < 5) {
    v /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, v < 10 ? "%.1f %s" : "%.0f %s", v, kUnits[unit]);
  return buf;
}

void check_load_budget(const std::string& origin, uint64_t need_bytes, const std::string& what) {
  const uint64_t budget = load_budget();
  if (need_bytes <= budget) return;
  std::string message = origin + ": needs " + memory_size_text(need_bytes) + " of memory";
  if (!what.empty()) message += " (" + what + ")";
  message += ", more than the " + memory_size_text(budget) +
             " memory budget for a load (set with --max-memory, or in the GUI's "
             "Settings > Memory budget)";
  throw InputError(message);
}

namespace {

uint64_t saturating_mul(uint64_t a, uint64_t b) {
  if (a != 0 && b > UINT64_MAX / a) return UINT64_MAX;
  return a * b;
}

uint64_t saturating_add(uint64_t a, uint64_t b) {
  return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

uint64_t non_negative(int64_t v) {
  return v > 0 ? uint64_t(v) : 0;
}

}  // namespace

uint64_t evaluation_memory(const EvaluationSize& s) {
  const uint64_t c = non_negative(s.classes);
  const uint64_t matrix = saturating_mul(saturating_mul(c, c), sizeof(double));
  const uint64_t matrices =
      saturating_add(saturating_mul(kEvaluationMatricesPerRank, non_negative(s.world_size)),
                     kEvaluationMatricesShared);
  uint64_t one = saturating_mul(matrix, matrices);
  one = saturating_add(one, saturating_mul(non_negative(s.samples), kEvaluationBytesPerSample));
  one = saturating_add(one, saturating_mul(non_negative(s.records), kEvaluationBytesPerRecord));
  return saturating_mul(one, std::max<uint64_t>(non_negative(s.evaluations), 1));
}

std::string evaluation_size_text(const EvaluationSize& s) {
  std::string text = std::to_string(s.samples) + (s.samples == 1 ? " sample" : " samples");
  // Classes and ranks size the matrices; an estimate of per-index arrays alone has none.
  if (s.classes > 0)
    text += ", " + std::to_string(s.classes) + (s.classes == 1 ? " class, " : " classes, ") +
            std::to_string(s.world_size) + (s.world_size == 1 ? " rank" : " ranks");
  if (s.records > 0) text += ", " + std::to_string(s.records) + " records";
  return text;
}

void check_evaluation_budget(const std::string& origin, const EvaluationSize& size,
                             uint64_t already) {
  const uint64_t need = saturating_add(evaluation_memory(size), already);
  if (need <= load_budget()) return;
  std::string what = size.evaluations > 1
                         ? std::to_string(size.evaluations) + " evaluations, each of "
                         : std::string("an evaluation of ");
  what += evaluation_size_text(size);
  if (already > 0) what += ", beside " + memory_size_text(already) + " for those loaded with it";
  check_load_budget(origin, need, what);
}

}  // namespace shardlens
