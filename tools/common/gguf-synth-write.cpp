// inferd-gguf synth: seeded weights and the streamed write of the file.
#include "gguf-synth-impl.h"
#include "tensor-convert.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <future>
#include <memory>
#include <new>
#include <system_error>
#include <type_traits>

namespace {

uint64_t synth_block_seed(uint64_t seed, size_t index, int64_t block) {
    uint64_t s = seed;
    uint64_t h = splitmix64(&s);
    h ^= (uint64_t(index) + 1) * 0xD6E8FEB86659FD93ull;
    s = h;
    h = splitmix64(&s) ^ (uint64_t(block) + 1) * 0xA0761D6478BD642Full;
    return h;
}

// One block of values, as float (F32) or F16 bits.
template <typename T>
void synth_fill_block(const synth_tensor & t, uint64_t block_seed, T * out, int64_t n) {
    const float sd = t.init == synth_init::matrix   ? 0.02f
                     : t.init == synth_init::small  ? 0.002f
                     : t.init == synth_init::router ? 1.0f / std::sqrt(float(t.ne[0]))
                                                    : 0.01f;
    synth_rng rng(block_seed);
    for (int64_t i = 0; i < n; ++i) {
        const float v = t.init == synth_init::ones ? 1.0f : rng.normal(sd);
        if constexpr (std::is_same_v<T, float>) {
            out[i] = v;
        } else {
            out[i] = synth_f32_to_f16(v);
        }
    }
}

std::string synth_format_gib(size_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.2f GiB", double(bytes) / (1024.0 * 1024.0 * 1024.0));
    return buf;
}

// Progress lines at most every `k_interval` seconds, and a last one.
class synth_progress {
public:
    synth_progress(std::FILE * out, size_t total) : out_(out), total_(total), start_(clock::now()), last_(start_) {}
    void done(size_t bytes, const std::string & name, bool last) {
        done_ += bytes;
        const auto now = clock::now();
        if (!out_ || (!last && std::chrono::duration<double>(now - last_).count() < k_interval)) return;
        last_ = now;
        const double s = std::chrono::duration<double>(now - start_).count();
        std::fprintf(out_, "synth: %s / %s (%3.0f%%)  %.0f MiB/s  %s\n", synth_format_gib(done_).c_str(),
                     synth_format_gib(total_).c_str(), total_ ? 100.0 * double(done_) / double(total_) : 100.0,
                     s > 0 ? double(done_) / (1024.0 * 1024.0) / s : 0.0, name.c_str());
        std::fflush(out_);
    }
    double seconds() const { return std::chrono::duration<double>(clock::now() - start_).count(); }

private:
    using clock = std::chrono::steady_clock;
    static constexpr double k_interval = 3.0;
    std::FILE * out_;
    size_t total_;
    size_t done_ = 0;
    clock::time_point start_, last_;
};

// Fills every tensor and streams it out, writing tensor i while tensor i + 1 is filled.
gguf_result synth_stream_tensors(gguf_writer & w, const std::vector<synth_tensor> & list, const synth_params & p,
                                 synth_progress & progress) {
    size_t max_bytes = 0;
    for (size_t i = 0; i < list.size(); ++i) max_bytes = std::max(max_bytes, w.tensor(i).size);
    std::unique_ptr<uint8_t[]> bufs[2] = {std::make_unique_for_overwrite<uint8_t[]>(max_bytes),
                                          std::make_unique_for_overwrite<uint8_t[]>(max_bytes)};
    std::future<gguf_result> pending;
    for (size_t i = 0; i < list.size(); ++i) {
        uint8_t * buf = bufs[i % 2].get();
        synth_fill_tensor(list[i], i, p.seed, buf, p.n_threads);
        if (pending.valid()) {
            if (gguf_result r = pending.get(); !r) return r;
            progress.done(w.tensor(i - 1).size, list[i - 1].name, false);
        }
        const size_t size = w.tensor(i).size;
        pending = std::async(std::launch::async, [&w, buf, size] { return w.stream_tensor_data(buf, size); });
    }
    if (pending.valid()) {
        if (gguf_result r = pending.get(); !r) return r;
        progress.done(w.tensor(list.size() - 1).size, list.back().name, true);
    }
    return gguf_result::ok();
}

}  // namespace

void synth_fill_tensor(const synth_tensor & t, size_t index, uint64_t seed, void * dst, int n_threads) {
    if (t.init == synth_init::bigram_embd || t.init == synth_init::bigram_output) {
        synth_fill_bigram(t, seed, dst, n_threads);
        return;
    }
    const int64_t n = t.n_elements();
    const int64_t n_blocks = (n + k_synth_block - 1) / k_synth_block;
    tools_parallel_for(n_blocks, 1, n_threads, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
            const int64_t first = b * k_synth_block;
            const int64_t count = std::min(k_synth_block, n - first);
            const uint64_t block_seed = synth_block_seed(seed, index, b);
            if (t.type == GGML_TYPE_F32) {
                synth_fill_block(t, block_seed, static_cast<float *>(dst) + first, count);
            } else {
                synth_fill_block(t, block_seed, static_cast<uint16_t *>(dst) + first, count);
            }
        }
    });
}

bool synth_model_write(const synth_params & p, synth_stats * stats, std::string * error) {
    gguf_writer w;
    if (!synth_build_metadata(p, &w.metadata(), error)) return false;
    const std::vector<synth_tensor> list = synth_tensor_list(p);
    synth_stats st;
    for (const synth_tensor & t : list) {
        if (gguf_result r = w.add_tensor(t.name, t.type, t.ne); !r) {
            *error = r.message;
            return false;
        }
        st.n_params += uint64_t(t.n_elements());
    }
    for (size_t i = 0; i < w.n_tensors(); ++i) st.bytes += w.tensor(i).size;
    st.n_tensors = list.size();
    const std::string part = p.out_path + ".part";
    synth_progress progress(p.progress, st.bytes);
    gguf_result r = w.stream_begin(part);
    try {
        if (r) r = synth_stream_tensors(w, list, p, progress);
    } catch (const std::bad_alloc &) {
        r = gguf_result::error(GGUF_ERROR_IO, "out of memory: synth holds two buffers the size of the largest tensor");
    } catch (const std::system_error & e) {
        r = gguf_result::error(GGUF_ERROR_IO, std::string("cannot start the writer thread: ") + e.what());
    }
    if (r) r = w.stream_end();
    std::error_code ec;
    if (r) {
        std::filesystem::rename(part, p.out_path, ec);
        if (ec) r = gguf_result::error(GGUF_ERROR_IO, "cannot rename " + part + " to " + p.out_path + ": " + ec.message());
    }
    if (!r) {
        std::filesystem::remove(part, ec);
        *error = r.message;
        return false;
    }
    st.seconds = progress.seconds();
    if (stats) *stats = st;
    return true;
}
