#pragma once
// LibTorch itself as an oracle for the engine's reimplementations (tests only need it; no
// LibTorch types here).
#include <cstdint>
#include <vector>

namespace shardlens {

// torch.randperm(n, generator=g) on CPU after g.manual_seed(seed), computed by the LibTorch
// this build links (negative seeds taken as their 64-bit two's complement, like Python).
std::vector<int64_t> torch_randperm(int64_t n, int64_t seed);

}  // namespace shardlens
