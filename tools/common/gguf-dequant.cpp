// inferd-gguf dequant: a tensor as little-endian float32, streamed to a file in row chunks.
#include "gguf-inspect.h"
#include "tensor-convert.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

static_assert(std::endian::native == std::endian::little,
              "the .f32 output is little-endian float32: written as the host's floats");

namespace {

constexpr int64_t k_chunk_elements = int64_t(1) << 22;  // 16 MiB of floats per chunk

struct output_file {
    std::FILE * fp = nullptr;
    std::string path;
    bool keep = false;

    ~output_file() {
        if (fp) std::fclose(fp);
        if (!keep && !path.empty()) {
            std::error_code ec;
            std::filesystem::remove(path, ec);
        }
    }
};

bool write_rows(const gguf_file & f, const gguf_tensor_info & t, output_file & out, int n_threads,
                std::string * error) {
    const auto * bytes = static_cast<const uint8_t *>(f.tensor_data(t));
    if (!bytes && t.size > 0) {
        *error = "the tensor data of " + t.name + " is not loaded";
        return false;
    }
    const int64_t n_per_row = t.ne[0];
    const int64_t n_rows = t.n_rows();
    if (n_per_row == 0 || n_rows == 0) return true;
    const size_t row_bytes = ggml_row_size(t.type, n_per_row);
    const int64_t rows_per_chunk = std::max<int64_t>(1, k_chunk_elements / n_per_row);
    std::vector<float> buf(size_t(std::min(n_rows, rows_per_chunk) * n_per_row));
    for (int64_t r0 = 0; r0 < n_rows; r0 += rows_per_chunk) {
        const int64_t nr = std::min(rows_per_chunk, n_rows - r0);
        if (!tensor_rows_to_f32(t.type, bytes + size_t(r0) * row_bytes, n_per_row, nr, buf.data(), n_threads, error)) {
            *error = t.name + ": " + *error;
            return false;
        }
        const size_t n = size_t(nr * n_per_row);
        if (std::fwrite(buf.data(), sizeof(float), n, out.fp) != n) {
            *error = "cannot write " + out.path + ": " + std::strerror(errno);
            return false;
        }
    }
    return true;
}

}  // namespace

bool gguf_inspect_dequant(const gguf_file & f, std::string_view name, const std::string & out_path, int n_threads,
                          std::string * error) {
    std::string local_error;
    if (!error) error = &local_error;
    const gguf_tensor_info * t = f.find_tensor(name);
    if (!t) {
        *error = "no tensor called '" + std::string(name) + "' in the file";
        return false;
    }
    if (!tensor_type_has_to_f32(t->type)) {
        *error = t->name + ": tensors of type " + ggml_type_name(t->type) + " have no conversion to float";
        return false;
    }
    output_file out;
    out.fp = std::fopen(out_path.c_str(), "wb");
    if (!out.fp) {
        *error = "cannot open " + out_path + " for writing: " + std::strerror(errno);
        return false;
    }
    out.path = out_path;
    if (!write_rows(f, *t, out, n_threads, error)) return false;
    const int rc = std::fclose(out.fp);
    out.fp = nullptr;
    if (rc != 0) {
        *error = "cannot write " + out_path + ": " + std::strerror(errno);
        return false;
    }
    out.keep = true;
    return true;
}
