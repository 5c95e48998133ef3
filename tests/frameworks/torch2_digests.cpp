// SHA-256 digests of ShardLens's randperm order and of each rank's DistributedSampler shard,
// as int64 little-endian bytes (what torch.Tensor.numpy().tobytes() hashes to), for
// torch2_oracle.py's full-size check: at n = 214,748,364 the lists themselves (1.7 GB as
// int64) are never printed or written, only compared by digest.
//
// Usage: torch2_digests N SEED EPOCH WORLD DROP_LAST(0|1) TORCH_VERSION|default
// Prints one JSON line: {"torch": "2.7", "order": SHA, "num_samples": K, "ranks": [SHA, ...]}.
#include <openssl/evp.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/torchsem/sampler.h"

using namespace shardlens;

namespace {

// Streams int64 values into a SHA-256, a buffer at a time.
class Int64Digest {
 public:
  Int64Digest() : m_ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
    EVP_DigestInit_ex(m_ctx.get(), EVP_sha256(), nullptr);
    m_buffer.reserve(kBuffer);
  }
  void add(int64_t v) {
    m_buffer.push_back(v);  // x86-64 is little-endian, as numpy's int64 here
    if (m_buffer.size() == kBuffer) flush();
  }
  std::string hex() {
    flush();
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(m_ctx.get(), md, &len);
    std::string out;
    char byte[3];
    for (unsigned int i = 0; i < len; ++i) {
      std::snprintf(byte, sizeof byte, "%02x", md[i]);
      out += byte;
    }
    return out;
  }

 private:
  static constexpr size_t kBuffer = 1 << 20;
  void flush() {
    EVP_DigestUpdate(m_ctx.get(), m_buffer.data(), m_buffer.size() * sizeof(int64_t));
    m_buffer.clear();
  }
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> m_ctx;
  std::vector<int64_t> m_buffer;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 7) {
    std::cerr << "usage: torch2_digests N SEED EPOCH WORLD DROP_LAST TORCH_VERSION|default\n";
    return 2;
  }
  const int64_t n = std::stoll(argv[1]);
  SamplerConfig c;
  c.kind = SamplerKind::Distributed;
  c.shuffle = true;
  c.seed = std::stoll(argv[2]);
  c.epoch = std::stoll(argv[3]);
  c.world_size = std::stoi(argv[4]);
  c.drop_last = std::string(argv[5]) == "1";
  if (std::string(argv[6]) != "default") c.torch = TorchVersion::parse(argv[6]);

  const std::vector<RankSequence> ranks = sample(n, c);
  nlohmann::json out{{"torch", c.torch.to_string()}, {"n", n}};
  // The order itself: every rank's segments walk the same permutation.
  const Order& order = *ranks.at(0).segments.at(0).order;
  Int64Digest whole;
  for (int64_t i = 0; i < n; ++i) whole.add(order.at(i));
  out["order"] = whole.hex();
  out["num_samples"] = ranks[0].size();
  for (const RankSequence& rank : ranks) {
    Int64Digest d;
    for_each_element(rank, [&](int64_t index, uint8_t) { d.add(index); });
    out["ranks"].push_back(d.hex());
  }
  std::cout << out.dump() << std::endl;
  return 0;
}
