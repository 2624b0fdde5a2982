// CPU feature detection (CPUID + XGETBV) and ISA names.
#include "ggml/cpu.h"

#include <cpuid.h>
#include <cstdint>
#include <cstring>
#include <string>
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

// The microarchitecture of an x86 family / model pair, where the pair names one (CPUID's
// display family and model, as Linux's /proc/cpuinfo shows them); "" otherwise.
const char * microarchitecture(bool amd, unsigned family, unsigned model) {
    if (amd && family == 0x17) return model >= 0x30 ? "Zen 2" : "Zen / Zen+";
    if (amd && family == 0x19) {
        const bool zen4 = (model >= 0x10 && model <= 0x1f) || (model >= 0x60 && model <= 0x7f) ||
                          (model >= 0xa0 && model <= 0xaf);
        return zen4 ? "Zen 4" : "Zen 3";
    }
    if (amd && family == 0x1a) return "Zen 5";
    if (amd || family != 6) return "";
    switch (model) {
        case 0x55: return "Skylake-SP / Cascade Lake";
        case 0x6a:
        case 0x6c: return "Ice Lake-SP";
        case 0x8f: return "Sapphire Rapids";
        case 0xcf: return "Emerald Rapids";
        case 0xad:
        case 0xae: return "Granite Rapids";
        case 0xaf: return "Sierra Forest";
        default: return "";
    }
}

}  // namespace

std::string ggml_cpu_model_name() {
    unsigned a, b, c, d;
    char vendor[13] = {};
    if (!__get_cpuid(0, &a, &b, &c, &d)) return "unknown CPU";
    std::memcpy(vendor, &b, 4);
    std::memcpy(vendor + 4, &d, 4);
    std::memcpy(vendor + 8, &c, 4);
    std::string brand;
    if (__get_cpuid(0x80000000, &a, &b, &c, &d) && a >= 0x80000004) {
        char text[49] = {};
        for (unsigned leaf = 0; leaf < 3; ++leaf) {
            __get_cpuid(0x80000002 + leaf, &a, &b, &c, &d);
            const unsigned regs[4] = {a, b, c, d};
            std::memcpy(text + 16 * leaf, regs, 16);
        }
        brand = text;
        while (!brand.empty() && (brand.back() == ' ' || brand.back() == '\0')) brand.pop_back();
        while (!brand.empty() && brand.front() == ' ') brand.erase(brand.begin());
    }
    if (brand.empty()) brand = vendor;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return brand;
    const unsigned base_family = (a >> 8) & 0xf, base_model = (a >> 4) & 0xf;
    const unsigned family = base_family == 0xf ? base_family + ((a >> 20) & 0xff) : base_family;
    const unsigned model = base_family == 0xf || base_family == 6 ? base_model | (((a >> 16) & 0xf) << 4) : base_model;
    const bool amd = std::strcmp(vendor, "AuthenticAMD") == 0;
    const std::string uarch = microarchitecture(amd, family, model);
    return brand + " (family " + std::to_string(family) + ", model " + std::to_string(model) +
           (uarch.empty() ? "" : ": " + uarch) + ")";
}

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

bool ggml_cpu_isa_from_name(const std::string & s, ggml_cpu_isa * out) {
    for (ggml_cpu_isa i : {ggml_cpu_isa::scalar, ggml_cpu_isa::avx2, ggml_cpu_isa::avx512, ggml_cpu_isa::amx}) {
        if (s == ggml_cpu_isa_name(i)) {
            *out = i;
            return true;
        }
    }
    return false;
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
