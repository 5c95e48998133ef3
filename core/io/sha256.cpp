#include "core/io/sha256.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "core/io/files.h"
#include "core/vocabulary/types.h"

namespace shardlens {

namespace {

struct DigestDeleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
using Digest = std::unique_ptr<EVP_MD_CTX, DigestDeleter>;

Digest start_digest() {
  Digest ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("libcrypto: cannot start a SHA-256 digest");
  return ctx;
}

void add(EVP_MD_CTX* ctx, const void* data, size_t size) {
  if (EVP_DigestUpdate(ctx, data, size) != 1)
    throw std::runtime_error("libcrypto: SHA-256 update failed");
}

std::string finish_hex(EVP_MD_CTX* ctx) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(ctx, digest, &size) != 1)
    throw std::runtime_error("libcrypto: SHA-256 final failed");
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(size_t(size) * 2);
  for (unsigned int i = 0; i < size; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xf]);
  }
  return out;
}

}  // namespace

std::string sha256_hex(std::string_view data) {
  const Digest ctx = start_digest();
  add(ctx.get(), data.data(), data.size());
  return finish_hex(ctx.get());
}

std::string sha256_file_hex(const std::string& path) {
  require_regular_file(path);
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) throw InputError(path + ": cannot open (" + std::strerror(errno) + ")");
  const Digest ctx = start_digest();
  std::vector<char> chunk(size_t(1) << 20);
  for (;;) {
    const size_t got = std::fread(chunk.data(), 1, chunk.size(), file.get());
    if (got > 0) add(ctx.get(), chunk.data(), got);
    if (got < chunk.size()) break;
  }
  if (std::ferror(file.get())) throw InputError(path + ": read error");
  return finish_hex(ctx.get());
}

}  // namespace shardlens
