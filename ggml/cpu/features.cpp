// CPU feature detection (CPUID + XGETBV) and ISA names.
#include "ggml/cpu.h"

#include <cpuid.h>
#include <cstdint>
#include <sys/syscall.h>
#include <unistd.h>

namespace {

uint64_t xgetbv0() {
    uint32_t eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return (uint64_t(edx) << 32) | eax;
}

// Linux keeps the AMX tile data state off until a process asks for it (arch_prctl
// ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA); asked once, the answer kept.
bool amx_permitted() {
    static const bool ok = [] {
#if defined(__linux__) && defined(SYS_arch_prctl)
        constexpr int k_arch_req_xcomp_perm = 0x1023, k_xfeature_xtiledata = 18;
        return syscall(SYS_arch_prctl, k_arch_req_xcomp_perm, k_xfeature_xtiledata) == 0;
#else
        return false;
#endif
    }();
    return ok;
}

}  // namespace

const char * ggml_cpu_isa_name(ggml_cpu_isa isa) {
    switch (isa) {
        case ggml_cpu_isa::scalar: return "scalar";
        case ggml_cpu_isa::avx2: return "avx2";
        case ggml_cpu_isa::avx512: return "avx512";
        case ggml_cpu_isa::amx: return "amx";
        case ggml_cpu_isa::best: return "best";
    }
    return "unknown";
}

ggml_cpu_features ggml_cpu_detect_features() {
    ggml_cpu_features f;
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
    const bool osxsave = (c >> 27) & 1;
    const bool fma = (c >> 12) & 1, f16c = (c >> 29) & 1, avx = (c >> 28) & 1;
    if (!osxsave || !avx) return f;
    const uint64_t xcr0 = xgetbv0();
    const bool os_avx = (xcr0 & 0x6) == 0x6;             // XMM and YMM state
    const bool os_avx512 = os_avx && (xcr0 & 0xe0) == 0xe0;  // opmask, ZMM hi256, hi16 ZMM
    if (!os_avx) return f;
    f.fma = fma;
    f.f16c = f16c;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        f.avx2 = (b >> 5) & 1;
        if (os_avx512) {
            f.avx512f = (b >> 16) & 1;
            f.avx512dq = (b >> 17) & 1;
            f.avx512bw = (b >> 30) & 1;
            f.avx512vl = (b >> 31) & 1;
            f.avx512_vnni = (c >> 11) & 1;
            // AMX-BF16 and AMX-TILE, with the tile config and data state enabled in XCR0
            const bool os_amx = (xcr0 & 0x60000) == 0x60000;
            f.amx_bf16 = os_amx && ((d >> 22) & 1) && ((d >> 24) & 1) && amx_permitted();
        }
    }
    if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) {
        f.avx_vnni = (a >> 4) & 1;
        if (os_avx512) f.avx512_bf16 = (a >> 5) & 1;
    }
    return f;
}

ggml_cpu_isa ggml_cpu_features::best_isa() const {
    const bool has_avx2 = avx2 && fma && f16c;
    if (has_avx2 && avx512f && avx512bw && avx512vl && avx512dq && avx512_vnni && avx512_bf16) {
        return amx_bf16 ? ggml_cpu_isa::amx : ggml_cpu_isa::avx512;
    }
    if (has_avx2) return ggml_cpu_isa::avx2;
    return ggml_cpu_isa::scalar;
}
