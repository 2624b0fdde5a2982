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
// from cudaMalloc (never managed memory); host_buffer_type() is pinned host memory (host
// tensors that copy fast; kernels do not read it: supports_buft is true only for the device's
// own buffer type, and the scheduler copies other inputs over).
//
// graph_compute returns GGML_STATUS_FAILED when a node or one of its sources is not in this
// device's memory, when an op is not supported, when a CUDA call fails, and when an index is out
// of range (GET_ROWS, SET_ROWS, MUL_MAT_ID) or a RoPE frequency factor is invalid. To report the
// last kind it waits for graphs that contain such ops; other graphs return once queued
// (synchronize() waits).
//
// Graphs seen twice with the same key (ops, types, shapes, strides, parameters, data addresses)
// are captured into a CUDA graph and replayed from then on; INFERD_CUDA_GRAPH_CACHE (default 12)
// is how many captured graphs a backend keeps, 0 turns capture off.
#pragma once

#include "ggml/backend.h"

#include <memory>
#include <string>

std::unique_ptr<ggml_backend_reg_i> ggml_backend_cuda_reg();
// Why the CUDA registry has no device ("" when it has some): the driver's or runtime's message,
// for tests and --list-devices to print.
std::string ggml_backend_cuda_status();
