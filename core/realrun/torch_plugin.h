#pragma once
// LibTorch support is a plugin (libshardlens_torch.so) loaded on first use, so the CLI and
// the GUI start in milliseconds instead of loading LibTorch (~1 s) on every invocation,
// and a machine without LibTorch still runs everything else.
#include <cstdint>
#include <string>
#include <vector>

#include "core/realrun/real_run.h"
#include "core/runfile/import.h"

namespace shardlens {

inline constexpr int kTorchPluginAbi = 3;

struct TorchPlugin {
  int abi = kTorchPluginAbi;
  RealRunResult (*real_run)(const RealRunConfig&, Progress*) = nullptr;
  DumpArrays (*read_pt_dump_arrays)(const std::string&) = nullptr;
  std::string (*libtorch_version)() = nullptr;
  // The predicted class of every image of an IDX image file (`model:` predictors, see
  // core/realrun/model_predictions.h), on `device` ("cpu" or "cuda:N"), batch by batch with
  // progress and cancel. Throws InputError naming the model when it does not load or does
  // not return [N, classes] logits.
  std::vector<int32_t> (*predict_images)(const std::string& model_path, const std::string& device,
                                         const std::string& images_path, int32_t classes,
                                         Progress* progress) = nullptr;
  // Sets the plugin's load budget (core/vocabulary/memory_budget.h): the plugin links its own
  // copy of the core, whose budget --max-memory or the GUI's setting never reaches
  // otherwise. torch_plugin() passes this process's budget on every call.
  void (*set_load_budget)(uint64_t bytes) = nullptr;
};

// Loads the plugin once: $SHARDLENS_TORCH_PLUGIN alone when set (e.g. one built against
// torch from pip by scripts/build/build-torch2-plugin.sh, even into a build without LibTorch),
// else <exe>/../lib/shardlens/, else this build tree. Returns null and says why in *why_not
// when it cannot be loaded. Every call hands the plugin this process's load budget, so what
// the plugin reads is held to the budget in force when it is asked.
const TorchPlugin* torch_plugin(std::string* why_not = nullptr);

// ImportOptions::pt_reader of every front end (the CLI's import, the GUI's Import dumps…):
// a .pt dump read through the plugin, loaded on the first call; without LibTorch an
// InputError "PATH: reading .pt dumps needs LibTorch: WHY".
DumpArrays read_pt_dump(const std::string& path);

}  // namespace shardlens

// The plugin's one exported symbol.
extern "C" const shardlens::TorchPlugin* shardlens_torch_plugin_entry();
