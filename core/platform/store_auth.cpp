#include "core/platform/store_auth.h"

#include <fcntl.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <utility>

#include "core/platform/store.h"
#include "core/vocabulary/types.h"

namespace shardlens {
namespace {

constexpr const char* kKeyLabel = "shardlens-store-v1";

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The secret spelled in `text` (hexadecimal; surrounding white space ignored).
StoreSecret parse_secret(std::string text, const std::string& where) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  const size_t last = text.find_last_not_of(" \t\r\n");
  text = first == std::string::npos ? "" : text.substr(first, last - first + 1);
  if (text.size() % 2 != 0 || text.size() < 2 * kStoreMinSecretBytes)
    throw InputError(where + ": the store secret must be at least " +
                     std::to_string(2 * kStoreMinSecretBytes) +
                     " hexadecimal digits, an even number");
  StoreSecret out;
  for (size_t i = 0; i < text.size(); i += 2) {
    const int hi = hex_digit(text[i]), lo = hex_digit(text[i + 1]);
    if (hi < 0 || lo < 0)
      throw InputError(where + ": the store secret holds a character that is not hexadecimal");
    out.push_back(uint8_t(hi * 16 + lo));
  }
  return out;
}

void fill_random(uint8_t* out, size_t n) {
  size_t done = 0;
  while (done < n) {
    const ssize_t k = ::getrandom(out + done, n - done, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0)
      throw RunFailure(std::string("cannot make a store secret: ") + std::strerror(errno));
    done += size_t(k);
  }
}

// HMAC-SHA256 of the pieces under `key`.
std::array<uint8_t, kStoreTagBytes> hmac(
    const uint8_t* key, size_t key_size,
    std::initializer_list<std::pair<const uint8_t*, size_t>> pieces) {
  static EVP_MAC* const mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  std::array<uint8_t, kStoreTagBytes> out{};
  EVP_MAC_CTX* ctx = mac ? EVP_MAC_CTX_new(mac) : nullptr;
  char digest[] = "SHA256";
  const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                               OSSL_PARAM_construct_end()};
  bool ok = ctx && EVP_MAC_init(ctx, key, key_size, params) == 1;
  for (const auto& [data, size] : pieces) ok = ok && EVP_MAC_update(ctx, data, size) == 1;
  size_t n = 0;
  ok = ok && EVP_MAC_final(ctx, out.data(), &n, out.size()) == 1 && n == out.size();
  EVP_MAC_CTX_free(ctx);
  if (!ok) throw RunFailure("cannot compute the store's HMAC-SHA256 (OpenSSL)");
  return out;
}

}  // namespace

std::optional<StoreSecret> store_secret_from_environment() {
  if (const char* text = std::getenv(kStoreSecretVariable); text && *text)
    return parse_secret(text, kStoreSecretVariable);
  const char* path = std::getenv(kStoreSecretFileVariable);
  if (!path || !*path) return std::nullopt;
  const std::string where = std::string(kStoreSecretFileVariable) + " " + path;
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) throw InputError(where + ": cannot open (" + std::strerror(errno) + ")");
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= 4096) {
    text.resize(size_t(st.st_size));
    const ssize_t k = ::read(fd, text.data(), text.size());
    text.resize(k > 0 ? size_t(k) : 0);
  }
  ::close(fd);
  if (!S_ISREG(st.st_mode) || st.st_size > 4096)
    throw InputError(where + ": not a regular file of at most 4096 bytes");
  if ((st.st_mode & 077) != 0 || st.st_uid != ::geteuid())
    throw InputError(where + ": others may read it (it must be yours, mode 0600 or 0400)");
  return parse_secret(text, where);
}

StoreSecret make_store_secret() {
  StoreSecret secret(kStoreSecretBytes);
  fill_random(secret.data(), secret.size());
  return secret;
}

std::string store_secret_text(const StoreSecret& secret) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (uint8_t b : secret) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

namespace {

std::string host_secret_folder() {
  return "/tmp/shardlens-" + std::to_string(::geteuid());
}

// The folder, made if absent; refused unless it is this user's and closed to others.
void require_private_folder(const std::string& folder) {
  if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST)
    throw RunFailure(folder + ": cannot create (" + std::strerror(errno) + ")");
  struct stat st {};
  if (::lstat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
      (st.st_mode & 077) != 0)
    throw RunFailure(folder + ": not a folder of this user closed to others");
}

}  // namespace

std::string host_secret_path(int port) {
  return host_secret_folder() + "/store-" + std::to_string(port) + ".secret";
}

HostSecretFile::HostSecretFile(const StoreSecret& secret, int port)
    : m_path(host_secret_path(port)) {
  require_private_folder(host_secret_folder());
  const std::string tmp = m_path + ".tmp-" + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throw RunFailure(tmp + ": cannot create (" + std::strerror(errno) + ")");
  const std::string text = store_secret_text(secret) + "\n";
  const bool written = ::write(fd, text.data(), text.size()) == ssize_t(text.size());
  ::close(fd);
  if (!written || ::rename(tmp.c_str(), m_path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw RunFailure(m_path + ": cannot write (" + std::strerror(errno) + ")");
  }
}

HostSecretFile::~HostSecretFile() {
  ::unlink(m_path.c_str());
}

std::optional<StoreSecret> read_host_secret(int port) {
  const std::string path = host_secret_path(port);
  struct stat folder {};
  if (::lstat(host_secret_folder().c_str(), &folder) != 0 || !S_ISDIR(folder.st_mode) ||
      folder.st_uid != ::geteuid() || (folder.st_mode & 077) != 0)
    return std::nullopt;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::string text(200, '\0');
  ssize_t k = -1;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
      (st.st_mode & 077) == 0)
    k = ::read(fd, text.data(), text.size());
  ::close(fd);
  if (k <= 0) return std::nullopt;
  text.resize(size_t(k));
  try {
    return parse_secret(text, path);
  } catch (const InputError&) {
    return std::nullopt;
  }
}

std::array<uint8_t, kStoreNonceBytes> make_store_nonce() {
  std::array<uint8_t, kStoreNonceBytes> nonce{};
  fill_random(nonce.data(), nonce.size());
  return nonce;
}

FrameSigner::FrameSigner(const StoreSecret& secret, const uint8_t* nonce) {
  m_key = hmac(secret.data(), secret.size(),
               {{reinterpret_cast<const uint8_t*>(kKeyLabel), std::strlen(kKeyLabel)},
                {nonce, kStoreNonceBytes}});
}

std::array<uint8_t, kStoreTagBytes> FrameSigner::tag(bool from_client, uint64_t seq,
                                                     const uint8_t* frame, size_t size) const {
  uint8_t head[9];
  head[0] = from_client ? 'C' : 'S';
  for (int i = 0; i < 8; ++i) head[1 + i] = uint8_t(seq >> (8 * i));
  return hmac(m_key.data(), m_key.size(), {{head, sizeof head}, {frame, size}});
}

std::array<uint8_t, kStoreTagBytes> FrameSigner::sign(bool from_client, const uint8_t* frame,
                                                      size_t size) {
  uint64_t& seq = from_client ? m_client_frames : m_server_frames;
  return tag(from_client, seq++, frame, size);
}

bool FrameSigner::verify(bool from_client, const uint8_t* frame, size_t size,
                         const uint8_t* given) {
  uint64_t& seq = from_client ? m_client_frames : m_server_frames;
  const std::array<uint8_t, kStoreTagBytes> want = tag(from_client, seq, frame, size);
  if (CRYPTO_memcmp(want.data(), given, want.size()) != 0) return false;
  ++seq;
  return true;
}

}  // namespace shardlens
