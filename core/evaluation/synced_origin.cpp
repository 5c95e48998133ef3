#include "core/evaluation/synced_origin.h"

#include "core/evaluation/run_metadata.h"

namespace shardlens {

namespace {

constexpr SyncedOrigin kStored[] = {SyncedOrigin::Simulated, SyncedOrigin::Recorded,
                                    SyncedOrigin::SumOfRanks};

}  // namespace

const char* to_string(SyncedOrigin origin) {
  switch (origin) {
    case SyncedOrigin::Simulated:
      return "simulated";
    case SyncedOrigin::Recorded:
      return "recorded";
    case SyncedOrigin::SumOfRanks:
      return "sum-of-ranks";
    case SyncedOrigin::Unknown:
      break;
  }
  return "";
}

std::optional<SyncedOrigin> parse_synced_origin(std::string_view text) {
  for (SyncedOrigin origin : kStored)
    if (text == to_string(origin)) return origin;
  return std::nullopt;
}

std::string synced_origin_choices() {
  return std::string(to_string(kStored[0])) + ", " + to_string(kStored[1]) + " or " +
         to_string(kStored[2]);
}

SyncedOrigin synced_origin_of(const RunMetadata& meta) {
  if (meta.synced_origin != SyncedOrigin::Unknown) return meta.synced_origin;
  if (meta.source == "simulated") return SyncedOrigin::Simulated;
  if (meta.source == "real") return SyncedOrigin::Recorded;
  return SyncedOrigin::Unknown;
}

}  // namespace shardlens
