// ggml/cpu/thread-scratch.h — per-thread scratch memory for kernels that repack an operand
// (internal; compiled without ISA flags, so that every instruction-set path may call it).
//
// Usage (inside a kernel, on any thread):
//   char * w = static_cast<char *>(ggml_cpu_thread_scratch(bytes));
//   if (!w) return false;   // out of memory: take a path that needs no scratch
//
// The block is 64-byte aligned, holds at least `bytes`, belongs to the calling thread, and stays
// valid until that thread calls again with a larger size or exits (then it is freed). Callers
// must not nest: one user at a time per thread.
#pragma once

#include <cstddef>

void * ggml_cpu_thread_scratch(size_t bytes);
