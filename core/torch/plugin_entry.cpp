// The plugin's entry point: a table of the LibTorch-backed functions (see
// core/realrun/torch_plugin.h). No LibTorch headers here.
#include "core/realrun/torch_plugin.h"
#include "core/torch/model.h"
#include "core/torch/pt_dump.h"
#include "core/vocabulary/memory_budget.h"

extern "C" __attribute__((visibility("default"))) const shardlens::TorchPlugin*
shardlens_torch_plugin_entry() {
  static const shardlens::TorchPlugin table = [] {
    shardlens::TorchPlugin t;
    t.real_run = &shardlens::real_run;
    t.read_pt_dump_arrays = &shardlens::read_pt_dump_arrays;
    t.libtorch_version = &shardlens::libtorch_version;
    t.predict_images = &shardlens::predict_images;
    t.set_load_budget = &shardlens::set_load_budget;
    return t;
  }();
  return &table;
}
