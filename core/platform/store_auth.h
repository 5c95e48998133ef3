#pragma once
// The secret a run's store is authenticated with, and the keyed MAC on each of its frames
// (core/platform/socket_store.h). Any process on a rank's host can connect to the store's
// port; only the run's own processes hold the secret, so only they can read or write it.
//
// The secret reaches every process of the run through its environment, never its command
// line (which every user of the host can read in /proc): SHARDLENS_STORE_SECRET (at least
// 32 hexadecimal digits), or SHARDLENS_STORE_SECRET_FILE (a file only its owner may read,
// holding the same), which is how a run across hosts shares one. ShardLens's own launcher
// makes a new secret for each run.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardlens {

using StoreSecret = std::vector<uint8_t>;

inline constexpr const char* kStoreSecretVariable = "SHARDLENS_STORE_SECRET";
inline constexpr const char* kStoreSecretFileVariable = "SHARDLENS_STORE_SECRET_FILE";
inline constexpr size_t kStoreSecretBytes = 32;  // what the launcher makes
inline constexpr size_t kStoreMinSecretBytes = 16;
inline constexpr size_t kStoreNonceBytes = 16;
inline constexpr size_t kStoreTagBytes = 32;  // HMAC-SHA256

// The secret the environment gives (nothing when neither variable is set). Throws
// InputError naming the variable (or the file) when it is set but unusable: too short, not
// hexadecimal, a file others may read or that is not a regular file.
std::optional<StoreSecret> store_secret_from_environment();

// A new random secret (getrandom), and its text for SHARDLENS_STORE_SECRET.
StoreSecret make_store_secret();
std::string store_secret_text(const StoreSecret& secret);

// Where rank 0 leaves the secret of a store it hosts on `port` for the ranks of its host that
// were given none: /tmp/shardlens-UID/store-PORT.secret, in a folder only its user may enter,
// readable by that user alone. Written before the store listens, so a rank that reaches the
// store finds the current run's; removed when the store closes.
class HostSecretFile {
 public:
  // Throws RunFailure naming the file when it cannot be written safely (the folder belongs
  // to another user or others may enter it).
  HostSecretFile(const StoreSecret& secret, int port);
  ~HostSecretFile();
  HostSecretFile(const HostSecretFile&) = delete;
  HostSecretFile& operator=(const HostSecretFile&) = delete;
  const std::string& path() const { return m_path; }

 private:
  std::string m_path;
};
std::string host_secret_path(int port);
// The secret HostSecretFile left for `port`, when there is one this user alone may read.
std::optional<StoreSecret> read_host_secret(int port);

// Random bytes for a connection's nonce.
std::array<uint8_t, kStoreNonceBytes> make_store_nonce();

// One connection's keys: derived from the run's secret and the nonce the server sent when it
// accepted, so frames recorded on one connection are worthless on another; each direction
// counts its frames, so none can be replayed, dropped or reordered unnoticed.
class FrameSigner {
 public:
  FrameSigner(const StoreSecret& secret, const uint8_t* nonce);
  // The tag of the next frame sent by the client (`from_client`) or the server.
  std::array<uint8_t, kStoreTagBytes> sign(bool from_client, const uint8_t* frame, size_t size);
  // Whether `tag` is the next frame's from that side (counted only when it is).
  bool verify(bool from_client, const uint8_t* frame, size_t size, const uint8_t* tag);

 private:
  std::array<uint8_t, kStoreTagBytes> tag(bool from_client, uint64_t seq, const uint8_t* frame,
                                          size_t size) const;
  std::array<uint8_t, kStoreTagBytes> m_key{};
  uint64_t m_client_frames = 0, m_server_frames = 0;
};

}  // namespace shardlens
