// inferd-gguf synth --confident: a model whose next token is (nearly) a function of the current
// one, so that it predicts with confidence and a quantized copy agrees with it.
//
// Token t's embedding row e_t is a random vector (approximately normal entries, standard
// deviation 1). Every token t predicts next(t) = synth_bigram_next(t, …), one of the built-in
// vocabulary's merged tokens (never a byte or special token, so generation neither stops at the
// end-of-text token nor writes broken UTF-8); the merged tokens form a single cycle. The output row of token j is (16 / n_embd) times the
// sum of e_t over the tokens t with next(t) = j. The layer matrices are small (standard deviation
// 0.002), so the residual stream stays close to e_t of the current token; after the final RMS norm
// the logit of next(t) is about 16 and every other logit about 16 / sqrt(n_embd) times a standard
// normal draw (random vectors are nearly orthogonal): the model puts nearly all probability on
// next(t), and the layers still run in full (same shapes, same cost as the random-weight model).
#include "gguf-synth-impl.h"
#include "tensor-convert.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <vector>

namespace {

// The step s of synth_bigram_next: the first number from 0.618 * count on that is coprime with
// count (so that the merged tokens form one cycle and consecutive tokens lie far apart).
int64_t bigram_step(int64_t count) {
    int64_t s = std::max<int64_t>(1, count * 618 / 1000);
    while (count > 1 && std::gcd(s, count) != 1) ++s;
    return s % count;
}

template <typename T>
void store(const std::vector<float> & row, T * out) {
    for (size_t i = 0; i < row.size(); ++i) {
        if constexpr (std::is_same_v<T, float>) {
            out[i] = row[i];
        } else {
            out[i] = synth_f32_to_f16(row[i]);
        }
    }
}

// Row r of t (n_embd values) in float.
void bigram_tensor_row(const synth_tensor & t, uint64_t seed, int64_t r, std::vector<float> * row) {
    const int64_t n_embd = t.ne[0], n_vocab = t.ne[1];
    if (t.init == synth_init::bigram_embd) {
        synth_bigram_row(seed, r, row->data(), n_embd);
        return;
    }
    std::fill(row->begin(), row->end(), 0.0f);
    if (r < t.next_first || r >= t.next_first + t.next_count) return;  // never predicted
    // The tokens t with next(t) = r: u = (r - first - s) mod count, and t = first + u + k count
    // (merged and special tokens) or t = u + k count below first (byte tokens).
    const int64_t count = t.next_count, first = t.next_first;
    const int64_t u = ((r - first - bigram_step(count)) % count + count) % count;
    std::vector<float> e(static_cast<size_t>(n_embd));
    const float scale = 16.0f / float(n_embd);
    auto add = [&](int64_t src) {
        synth_bigram_row(seed, src, e.data(), n_embd);
        for (int64_t i = 0; i < n_embd; ++i) (*row)[size_t(i)] += scale * e[size_t(i)];
    };
    for (int64_t src = first + u; src < n_vocab; src += count) add(src);
    for (int64_t src = u; src < first && src < n_vocab; src += count) add(src);
}

}  // namespace

int64_t synth_bigram_next(int64_t t, int64_t first, int64_t count) {
    const int64_t u = t >= first ? t - first : t;
    return first + (u % count + bigram_step(count)) % count;
}

void synth_bigram_row(uint64_t seed, int64_t t, float * out, int64_t n_embd) {
    uint64_t s = seed ^ 0x6A09E667F3BCC908ull;
    const uint64_t h = splitmix64(&s) ^ (uint64_t(t) + 1) * 0xBB67AE8584CAA73Bull;
    synth_rng rng(h);
    for (int64_t i = 0; i < n_embd; ++i) out[i] = rng.normal(1.0f);
}

void synth_fill_bigram(const synth_tensor & t, uint64_t seed, void * dst, int n_threads) {
    const int64_t n_embd = t.ne[0], n_rows = t.ne[1];
    tools_parallel_for(n_rows, 64, n_threads, [&](int64_t r0, int64_t r1) {
        std::vector<float> row(static_cast<size_t>(n_embd));
        for (int64_t r = r0; r < r1; ++r) {
            bigram_tensor_row(t, seed, r, &row);
            if (t.type == GGML_TYPE_F32) {
                store(row, static_cast<float *>(dst) + r * n_embd);
            } else {
                store(row, static_cast<uint16_t *>(dst) + r * n_embd);
            }
        }
    });
}

void synth_confident_apply(const synth_params & p, std::vector<synth_tensor> * list) {
    const int64_t first = 256;  // after the byte tokens; the special tokens come last
    const int64_t count = int64_t(p.n_vocab) - int64_t(synth_min_vocab(p.chat_template));
    for (synth_tensor & t : *list) {
        if (t.name == "token_embd.weight" || t.name == "output.weight") {
            t.init = t.name == "output.weight" ? synth_init::bigram_output : synth_init::bigram_embd;
            t.next_first = first;
            t.next_count = count;
        } else if (t.init == synth_init::matrix) {
            t.init = synth_init::small;
        }
    }
}
