#include "core/realrun/torch_plugin.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "core/vocabulary/memory_budget.h"
#include "core/vocabulary/types.h"
#include "shardlens/config.h"

namespace shardlens {

namespace {

namespace fs = std::filesystem;

// The plugin SHARDLENS_TORCH_PLUGIN names, or empty.
std::string named_plugin() {
  const char* env = std::getenv("SHARDLENS_TORCH_PLUGIN");
  return env ? env : "";
}

std::vector<std::string> candidate_paths() {
  // A plugin the user names is the only candidate: falling back to another would run (and
  // record) another torch than the one asked for.
  if (!named_plugin().empty()) return {named_plugin()};
  std::vector<std::string> paths;
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
  // A named plugin is tried even by a build without LibTorch: it may have been built on its
  // own against torch from pip (core/torch/standalone, scripts/build/build-torch2-plugin.sh).
  if (!SHARDLENS_HAS_TORCH && named_plugin().empty()) {
    out.why_not =
        "this build of ShardLens has no LibTorch support (scripts/setup.sh installs it and "
        "builds everything into build/default; or install libtorch-dev and libgloo-dev and "
        "run scripts/run.sh again; or build the plugin against torch from pip with "
        "scripts/build/build-torch2-plugin.sh and set SHARDLENS_TORCH_PLUGIN to it)";
    return out;
  }
  std::string tried;
  for (const std::string& path : candidate_paths()) {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      if (!named_plugin().empty()) tried = "SHARDLENS_TORCH_PLUGIN=" + path + ": no such file";
      continue;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      tried += std::string(tried.empty() ? "" : "; ") + dlerror();
      continue;
    }
    using Entry = const TorchPlugin* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(handle, "shardlens_torch_plugin_entry"));
    const TorchPlugin* plugin = entry ? entry() : nullptr;
    if (plugin && plugin->abi == kTorchPluginAbi && plugin->set_load_budget) {
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
  if (loaded.plugin) loaded.plugin->set_load_budget(load_budget());
  return loaded.plugin;
}

DumpArrays read_pt_dump(const std::string& path) {
  std::string why_not;
  const TorchPlugin* torch = torch_plugin(&why_not);
  if (!torch) throw InputError(path + ": reading .pt dumps needs LibTorch: " + why_not);
  return torch->read_pt_dump_arrays(path);
}

}  // namespace shardlens
