// MUL_MAT's path per weight type, chosen by measurement (see ggml/cpu.h): the cache file and
// the choice a backend makes from it.
#include "cpu/mul-mat.h"
#include "cpu/ops.h"

#include "ggml/cpu.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace {

constexpr const char * k_format = "inferd-cpu-kernels 1";
const char * const k_regimes[2] = {"decode", "prompt"};

bool type_by_name(const std::string & s, ggml_type * out) {
    for (int t = 0; t < GGML_TYPE_COUNT; ++t) {
        if (!ggml_type_is_supported(ggml_type(t))) continue;
        if (s == ggml_type_name(ggml_type(t))) {
            *out = ggml_type(t);
            return true;
        }
    }
    return false;
}

bool fail(std::string * err, const std::string & msg) {
    if (err) *err = msg;
    return false;
}

}  // namespace

ggml_cpu_calibration::ggml_cpu_calibration() {
    for (auto & r : mul_mat) r[0] = r[1] = ggml_cpu_isa::best;
}

ggml_cpu_isa ggml_cpu_calibration::choose(ggml_type t, int64_t n_cols, ggml_cpu_isa cap) const {
    if (int(t) < 0 || int(t) >= GGML_TYPE_COUNT) return cap;
    const ggml_cpu_isa c = mul_mat[t][n_cols >= ggml_cpu_prompt_min_cols ? 1 : 0];
    return int(c) < int(cap) ? c : cap;
}

std::string ggml_cpu_calibration_path() {
    if (const char * v = std::getenv("INFERD_CPU_CALIBRATION")) {
        const std::string s(v);
        return s == "off" ? std::string() : s;
    }
    if (const char * x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/inferd/cpu-kernels.txt";
    if (const char * h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/inferd/cpu-kernels.txt";
    return std::string();
}

bool ggml_cpu_calibration_read(const std::string & path, ggml_cpu_calibration * out, std::string * err) {
    std::ifstream f(path);
    if (!f) return fail(err, path + ": cannot be opened");
    std::string line;
    if (!std::getline(f, line) || line != k_format) return fail(err, path + ": not a " + std::string(k_format) + " file");
    if (!std::getline(f, line) || line.rfind("cpu ", 0) != 0 || line.size() == 4) {
        return fail(err, path + ": line 2 must be \"cpu <name>\"");
    }
    ggml_cpu_calibration c;
    c.cpu = line.substr(4);
    for (int n = 3; std::getline(f, line); ++n) {
        if (line.empty()) continue;
        std::istringstream ls(line);
        std::string op, type, regime, isa, extra;
        ggml_type t;
        ggml_cpu_isa i;
        const std::string where = path + ":" + std::to_string(n) + ": ";
        if (!(ls >> op >> type >> regime >> isa) || (ls >> extra) || op != "mul_mat") {
            return fail(err, where + "expected \"mul_mat <type> <decode|prompt> <isa>\"");
        }
        if (!type_by_name(type, &t)) return fail(err, where + "unknown type " + type);
        if (!ggml_cpu_isa_from_name(isa, &i)) return fail(err, where + "unknown path " + isa);
        const int r = regime == k_regimes[0] ? 0 : regime == k_regimes[1] ? 1 : -1;
        if (r < 0) return fail(err, where + "regime must be decode or prompt, not " + regime);
        c.mul_mat[t][r] = i;
    }
    if (f.bad()) return fail(err, path + ": read error");
    *out = std::move(c);
    return true;
}

bool ggml_cpu_calibration_write(const std::string & path, const ggml_cpu_calibration & c, std::string * err) {
    if (path.empty()) return fail(err, "no calibration file (INFERD_CPU_CALIBRATION=off, no HOME)");
    if (c.cpu.empty() || c.cpu.find('\n') != std::string::npos) return fail(err, "the CPU name must be one line");
    std::error_code ec;
    const std::filesystem::path p(path);
    if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
    if (ec) return fail(err, p.parent_path().string() + ": " + ec.message());
    const std::string tmp = path + ".tmp";
    {
        std::ofstream f(tmp, std::ios::trunc);
        if (!f) return fail(err, tmp + ": cannot be written");
        f << k_format << "\ncpu " << c.cpu << "\n";
        for (int t = 0; t < GGML_TYPE_COUNT; ++t) {
            for (int r = 0; r < 2; ++r) {
                if (c.mul_mat[t][r] == ggml_cpu_isa::best) continue;
                f << "mul_mat " << ggml_type_name(ggml_type(t)) << ' ' << k_regimes[r] << ' '
                  << ggml_cpu_isa_name(c.mul_mat[t][r]) << '\n';
            }
        }
        f.flush();
        if (!f) return fail(err, tmp + ": write error");
    }
    std::filesystem::rename(tmp, p, ec);
    if (ec) return fail(err, path + ": " + ec.message());
    return true;
}

const ggml_cpu_calibration * ggml_cpu_calibration_default() {
    static const ggml_cpu_calibration * the = []() -> const ggml_cpu_calibration * {
        const std::string path = ggml_cpu_calibration_path();
        static ggml_cpu_calibration c;
        std::error_code ec;
        if (path.empty() || !std::filesystem::exists(path, ec)) return nullptr;
        std::string err;
        if (!ggml_cpu_calibration_read(path, &c, &err)) {
            // a broken cache costs only the measured choice: say so once and run the default
            std::fprintf(stderr, "inferd: CPU kernel calibration ignored: %s\n", err.c_str());
            return nullptr;
        }
        return c.cpu == ggml_cpu_model_name() ? &c : nullptr;
    }();
    return the;
}
