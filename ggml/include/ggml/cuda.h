// ggml/cuda.h — the CUDA backend (built when the CUDA toolkit is found: INFERD_CUDA=AUTO / ON).
//
// Usage:
//   ggml_backend_registry reg = ggml_backend_registry_default();   // CPU, then CUDA devices
//   ggml_backend_device_i * gpu = reg.device_by_type(ggml_backend_dev_type::gpu);
//   if (!gpu) fprintf(stderr, "no GPU: %s\n", ggml_backend_cuda_status().c_str());
//   ggml_backend_ptr be = gpu->init_backend();          // one CUDA stream on that device
//   ggml_backend_buffer_ptr w = ggml_backend_alloc_ctx_tensors(ctx, gpu->buffer_type());
//   be->graph_compute(gf); be->synchronize();
//
// Devices are named "CUDA0", "CUDA1", … in the driver's order; a machine without a driver or
// without a GPU gives a registry entry with no devices (never an error). Device memory comes
// from cudaMalloc (never managed memory); host_buffer_type() is pinned host memory.
#pragma once

#include "ggml/backend.h"

#include <memory>
#include <string>

std::unique_ptr<ggml_backend_reg_i> ggml_backend_cuda_reg();
// Why the CUDA registry has no device ("" when it has some): the driver's or runtime's message,
// for tests and --list-devices to print.
std::string ggml_backend_cuda_status();
