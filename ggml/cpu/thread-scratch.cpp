// Per-thread scratch memory (see thread-scratch.h).
#include "thread-scratch.h"

#include <cstdlib>

namespace {

struct thread_scratch {
    void * p = nullptr;
    size_t size = 0;
    ~thread_scratch() { std::free(p); }
};

thread_local thread_scratch t_scratch;

}  // namespace

void * ggml_cpu_thread_scratch(size_t bytes) {
    thread_scratch & s = t_scratch;
    if (bytes > s.size) {
        std::free(s.p);
        s.size = (bytes + 4095) / 4096 * 4096;
        s.p = std::aligned_alloc(64, s.size);
        if (!s.p) s.size = 0;
    }
    return s.p;
}
