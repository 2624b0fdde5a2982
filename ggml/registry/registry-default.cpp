// The backends compiled into this build, registered in priority order of discovery: the CPU
// first (always there), then the GPU families the build has (CUDA when INFERD_HAVE_CUDA).
#include "ggml/backend.h"
#include "ggml/cpu.h"
#ifdef INFERD_HAVE_CUDA
#include "ggml/cuda.h"
#endif

ggml_backend_registry ggml_backend_registry_default() {
    ggml_backend_registry reg;
    reg.add(ggml_backend_cpu_reg());
#ifdef INFERD_HAVE_CUDA
    reg.add(ggml_backend_cuda_reg());
#endif
    return reg;
}
