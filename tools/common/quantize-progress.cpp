// The progress display of inferd-quantize: one line per tensor and a total.
#include "quantize-progress.h"

#include <cinttypes>

namespace {

std::string format(const char * fmt, auto... args) {
    char buf[512];
    const int n = std::snprintf(buf, sizeof(buf), fmt, args...);
    if (n < 0) return {};
    if (size_t(n) < sizeof(buf)) return std::string(buf, size_t(n));
    std::string big(size_t(n) + 1, '\0');
    std::snprintf(big.data(), big.size(), fmt, args...);
    big.resize(size_t(n));
    return big;
}

}  // namespace

std::string quantize_format_bytes(size_t bytes) {
    if (bytes < 1024) return format("%zu B", bytes);
    const char * units[] = {"KiB", "MiB", "GiB", "TiB"};
    double v = double(bytes) / 1024.0;
    size_t u = 0;
    while (v >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
        v /= 1024.0;
        ++u;
    }
    return format("%.1f %s", v, units[u]);
}

std::string quantize_format_shape(const std::vector<int64_t> & shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(shape[i]);
    }
    return s + "]";
}

std::string quantize_progress_line(size_t index, size_t count, const quantize_progress_tensor & t) {
    const int width = int(std::to_string(count).size());
    std::string line = format("[%*zu/%zu] %-32s %-14s %5s -> %-5s %10s -> %-10s", width, index, count, t.name.c_str(),
                              quantize_format_shape(t.shape).c_str(), ggml_type_name(t.from), ggml_type_name(t.to),
                              quantize_format_bytes(t.bytes_in).c_str(), quantize_format_bytes(t.bytes_out).c_str());
    if (t.converted) {
        line += format(" %8.1f ms", t.seconds * 1e3);
    } else {
        line += "  (copied)";
    }
    return line;
}

std::string quantize_progress_total_line(size_t bytes_in, size_t bytes_out, int64_t n_elements, double seconds) {
    const double percent = bytes_in ? 100.0 * double(bytes_out) / double(bytes_in) : 0.0;
    const double bpw = n_elements > 0 ? 8.0 * double(bytes_out) / double(n_elements) : 0.0;
    return format("total: %s -> %s (%.1f%% of the input, %.2f bits per weight) in %.2f s",
                  quantize_format_bytes(bytes_in).c_str(), quantize_format_bytes(bytes_out).c_str(), percent, bpw,
                  seconds);
}

void quantize_progress::tensor_done(const quantize_progress_tensor & t) {
    ++done_;
    bytes_in_ += t.bytes_in;
    bytes_out_ += t.bytes_out;
    int64_t n = t.shape.empty() ? 0 : 1;
    for (int64_t d : t.shape) n *= d;
    n_elements_ += n;
    if (!out_) return;
    std::fprintf(out_, "%s\n", quantize_progress_line(done_, count_, t).c_str());
    std::fflush(out_);
}

void quantize_progress::note(const std::string & message) {
    if (!out_) return;
    std::fprintf(out_, "%s\n", message.c_str());
    std::fflush(out_);
}

void quantize_progress::finish(double seconds) {
    if (!out_) return;
    std::fprintf(out_, "%s\n", quantize_progress_total_line(bytes_in_, bytes_out_, n_elements_, seconds).c_str());
    std::fflush(out_);
}
