// engine/src/model-placement.h — where a model's layers go and what each device needs (internal).
//
// Usage (model loading):
//   layer_bytes lb = …;                                   // weight bytes per layer, from the file
//   layer_placement pl = placement_plan(hp.n_layer, n_gpu_layers, gpu_free);
//   std::vector<model_device_usage> u = placement_usage(pl, lb, hp, hint, gpus);
//   std::string err = placement_check(u);                 // "" when every device has room
//
// Placement: the last n_gpu layers go to the GPUs (all of them for n_gpu_layers < 0), as
// contiguous runs in device order, each device's share of the layers in proportion to its
// free memory (largest remainders); the output layer goes to the device of the last layer when
// n_gpu_layers < 0 or exceeds the layer count.
#pragma once

#include "engine/model.h"

#include <cstdint>
#include <string>
#include <vector>

struct layer_bytes {
    std::vector<uint64_t> layer;  // weight bytes of each block
    uint64_t output = 0;          // output norm and matrix (the matrix counted when tied too)
};

struct layer_placement {
    std::vector<int> layer_dev;  // per layer: index into the GPU list, -1 for the CPU
    int output_dev = -1;         // the output layer's GPU index, -1 for the CPU
};

layer_placement placement_plan(uint32_t n_layer, int32_t n_gpu_layers, const std::vector<size_t> & gpu_free);

// Cells of a sliding-window cache: every sequence's window and one ubatch, padded to kv_pad,
// at most n_ctx.
uint32_t kv_swa_cells(uint32_t n_swa, uint32_t n_seq_max, uint32_t n_ubatch, uint32_t kv_pad, uint32_t n_ctx);
// K and V bytes of layer il for the hint's context (0 when hint.n_ctx is 0).
uint64_t kv_layer_bytes(const model_hparams & hp, uint32_t il, const model_memory_hint & hint);
// An estimate of one device's compute buffers for the hint's context: the largest activations
// of a ubatch a few times over, the output logits when the output layer is there, and the plain
// attention path's score matrix (0 when hint.n_ctx is 0).
uint64_t compute_bytes_estimate(const model_hparams & hp, const model_memory_hint & hint, bool output_here);

// What each GPU of `gpus` would hold under pl, with its free and total memory.
std::vector<model_device_usage> placement_usage(const layer_placement & pl, const layer_bytes & lb,
                                                const model_hparams & hp, const model_memory_hint & hint,
                                                const std::vector<ggml_backend_device_i *> & gpus);
// "" when every device's weights + K/V + compute fit its free memory; otherwise a message naming
// the first device that does not, its needs and its free memory.
std::string placement_check(const std::vector<model_device_usage> & usage);
// The largest n_gpu_layers (0..n_layer + 1, where n_layer + 1 means "with the output layer")
// whose placement fits.
int32_t placement_max_fitting(const layer_bytes & lb, const model_hparams & hp, const model_memory_hint & hint,
                              const std::vector<ggml_backend_device_i *> & gpus, const std::vector<size_t> & gpu_free);
