#include "core/runs/torch_plugin.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "shardlens/config.h"

namespace shardlens {

namespace {

namespace fs = std::filesystem;

std::vector<std::string> candidate_paths() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("SHARDLENS_TORCH_PLUGIN"); env && *env) paths.push_back(env);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    paths.push_back(
        (exe.parent_path().parent_path() / "lib" / "shardlens" / "libshardlens_torch.so").string());
  }
  paths.push_back(SHARDLENS_TORCH_PLUGIN_BUILD_PATH);
  return paths;
}

struct Loaded {
  const TorchPlugin* plugin = nullptr;
  std::string why_not;
};

Loaded load() {
  Loaded out;
  if (!SHARDLENS_HAS_TORCH) {
    out.why_not =
        "this build of ShardLens has no LibTorch support (install libtorch-dev and "
        "libgloo-dev, then rebuild)";
    return out;
  }
  std::string tried;
  for (const std::string& path : candidate_paths()) {
    std::error_code ec;
    if (!fs::exists(path, ec)) continue;
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      tried += std::string(tried.empty() ? "" : "; ") + dlerror();
      continue;
    }
    using Entry = const TorchPlugin* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(handle, "shardlens_torch_plugin_entry"));
    const TorchPlugin* plugin = entry ? entry() : nullptr;
    if (plugin && plugin->abi == kTorchPluginAbi) {
      out.plugin = plugin;
      return out;
    }
    tried += (tried.empty() ? "" : "; ") + path + ": not a matching ShardLens LibTorch plugin";
  }
  out.why_not = "the LibTorch plugin libshardlens_torch.so could not be loaded" +
                (tried.empty() ? std::string(" (not found)") : " (" + tried + ")");
  return out;
}

}  // namespace

const TorchPlugin* torch_plugin(std::string* why_not) {
  static const Loaded loaded = load();
  if (!loaded.plugin && why_not) *why_not = loaded.why_not;
  return loaded.plugin;
}

}  // namespace shardlens
