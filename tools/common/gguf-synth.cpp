// inferd-gguf synth: shape checks, metadata and the tensor list of a synthetic model.
#include "gguf-synth.h"

#include "gguf-synth-impl.h"

#include <memory>

namespace {

bool fail(std::string * error, std::string msg) {
    *error = std::move(msg);
    return false;
}

bool positive(int v, const char * flag, std::string * error) {
    if (v > 0) return true;
    return fail(error, std::string(flag) + " is required (a positive number)");
}

// n_vocab from --vocab FILE: its token count, which must agree with a given --n-vocab.
bool synth_check_vocab_file(synth_params * p, std::string * error, bool * io_error) {
    std::unique_ptr<gguf_file> f;
    gguf_open_options o;
    o.load_tensor_data = false;
    const gguf_result r = gguf_file::open(p->vocab_path, o, &f);
    if (!r) {
        if (io_error) *io_error = true;
        return fail(error, "--vocab " + p->vocab_path + ": " + r.message);
    }
    size_t n = 0;
    if (!f->metadata().get_array_size("tokenizer.ggml.tokens", &n) || n == 0) {
        return fail(error, "--vocab " + p->vocab_path + ": no tokenizer.ggml.tokens array");
    }
    if (p->n_vocab == 0) p->n_vocab = int(n);
    if (size_t(p->n_vocab) != n) {
        return fail(error, "--n-vocab " + std::to_string(p->n_vocab) + " differs from the " + std::to_string(n) +
                               " tokens of " + p->vocab_path);
    }
    return true;
}

bool synth_check_heads(const synth_params & p, std::string * error) {
    if (p.n_embd % p.n_head != 0) {
        return fail(error, "--n-embd " + std::to_string(p.n_embd) + " is not a multiple of --n-head " +
                               std::to_string(p.n_head));
    }
    if (p.n_head % p.n_head_kv != 0) {
        return fail(error, "--n-head " + std::to_string(p.n_head) + " is not a multiple of --n-head-kv " +
                               std::to_string(p.n_head_kv));
    }
    if (p.arch == "gpt2" && p.n_head_kv != p.n_head) {
        return fail(error, "gpt2 has no grouped-query attention: --n-head-kv must equal --n-head");
    }
    if (p.arch != "gpt2" && (p.n_embd / p.n_head) % 2 != 0) {
        return fail(error, "the head size (--n-embd / --n-head = " + std::to_string(p.n_embd / p.n_head) +
                               ") must be even for RoPE");
    }
    return true;
}

}  // namespace

bool synth_params_check(synth_params * p, std::vector<std::string> * warnings, std::string * error,
                        bool * io_error) {
    if (io_error) *io_error = false;
    if (p->arch.empty()) return fail(error, "--arch is required (llama, qwen2 or gpt2)");
    if (p->arch != "llama" && p->arch != "qwen2" && p->arch != "gpt2") {
        return fail(error, "--arch '" + p->arch + "' is not one of llama, qwen2, gpt2");
    }
    if (!positive(p->n_embd, "--n-embd", error) || !positive(p->n_layer, "--n-layer", error) ||
        !positive(p->n_head, "--n-head", error) || !positive(p->n_ff, "--n-ff", error)) {
        return false;
    }
    if (p->n_head_kv < 0 || p->n_ctx < 0 || p->n_vocab < 0) return fail(error, "sizes must not be negative");
    if (p->n_head_kv == 0) p->n_head_kv = p->n_head;
    if (p->n_ctx == 0) p->n_ctx = p->arch == "gpt2" ? 1024 : 4096;
    if (p->type != GGML_TYPE_F16 && p->type != GGML_TYPE_F32) return fail(error, "--type must be f16 or f32");
    if (!synth_check_heads(*p, error)) return false;
    if (!p->chat_template.empty() && !synth_chat_template(p->chat_template, nullptr, nullptr)) {
        std::string names;
        for (const std::string & n : synth_chat_template_names()) names += (names.empty() ? "" : ", ") + n;
        return fail(error, "--chat-template '" + p->chat_template + "' is not one of " + names);
    }
    if (!p->vocab_path.empty()) {
        if (!synth_check_vocab_file(p, error, io_error)) return false;
    } else if (p->n_vocab == 0) {
        return fail(error, "--n-vocab is required without --vocab");
    } else if (p->n_vocab < synth_min_vocab(p->chat_template)) {
        return fail(error, "--n-vocab must be at least " + std::to_string(synth_min_vocab(p->chat_template)) +
                               " (256 byte tokens and the special tokens)");
    }
    if (p->out_path.empty()) return fail(error, "no output file given");
    if (p->n_embd % 256 != 0 || p->n_ff % 256 != 0) {
        warnings->push_back("--n-embd " + std::to_string(p->n_embd) + " / --n-ff " + std::to_string(p->n_ff) +
                            ": rows that are not multiples of 256 cannot use K-quants (the quantizer falls back "
                            "to other types for them)");
    }
    return true;
}

bool synth_build_metadata(const synth_params & p, gguf_metadata * md, std::string * error) {
    const std::string a = p.arch;
    md->set("general.architecture", gguf_value::from_string(a));
    md->set("general.name", gguf_value::from_string("synthetic " + a + " " + std::to_string(p.n_embd) + "x" +
                                                    std::to_string(p.n_layer)));
    md->set("general.file_type", gguf_value::from_u32(p.type == GGML_TYPE_F16 ? 1 : 0));
    md->set(a + ".context_length", gguf_value::from_u32(uint32_t(p.n_ctx)));
    md->set(a + ".embedding_length", gguf_value::from_u32(uint32_t(p.n_embd)));
    md->set(a + ".block_count", gguf_value::from_u32(uint32_t(p.n_layer)));
    md->set(a + ".feed_forward_length", gguf_value::from_u32(uint32_t(p.n_ff)));
    md->set(a + ".attention.head_count", gguf_value::from_u32(uint32_t(p.n_head)));
    md->set(a + ".attention.head_count_kv", gguf_value::from_u32(uint32_t(p.n_head_kv)));
    if (a == "gpt2") {
        md->set(a + ".attention.layer_norm_epsilon", gguf_value::from_f32(1e-5f));
    } else {
        md->set(a + ".attention.layer_norm_rms_epsilon", gguf_value::from_f32(a == "qwen2" ? 1e-6f : 1e-5f));
        md->set(a + ".rope.dimension_count", gguf_value::from_u32(uint32_t(p.n_embd / p.n_head)));
        md->set(a + ".rope.freq_base", gguf_value::from_f32(a == "qwen2" ? 1000000.0f : 10000.0f));
    }
    if (p.vocab_path.empty()) {
        synth_vocab_metadata(p.n_vocab, p.chat_template, md);
        return true;
    }
    std::unique_ptr<gguf_file> f;
    gguf_open_options o;
    o.load_tensor_data = false;
    if (const gguf_result r = gguf_file::open(p.vocab_path, o, &f); !r) {
        return fail(error, p.vocab_path + ": " + r.message);
    }
    for (const gguf_kv & kv : f->metadata().kvs()) {
        if (kv.key.rfind("tokenizer.", 0) == 0) md->set(kv.key, kv.value);
    }
    std::string jinja;
    if (!p.chat_template.empty() && synth_chat_template(p.chat_template, &jinja, nullptr)) {
        md->set("tokenizer.chat_template", gguf_value::from_string(jinja));
    }
    return true;
}

std::vector<synth_tensor> synth_tensor_list(const synth_params & p) {
    const int64_t e = p.n_embd, v = p.n_vocab, ff = p.n_ff;
    const int64_t e_kv = e / p.n_head * p.n_head_kv;
    const ggml_type m = p.type;
    const bool gpt2 = p.arch == "gpt2";
    std::vector<synth_tensor> t;
    t.push_back({"token_embd.weight", m, {e, v}, synth_init::matrix});
    if (gpt2) t.push_back({"position_embd.weight", m, {e, int64_t(p.n_ctx)}, synth_init::matrix});
    t.push_back({"output_norm.weight", GGML_TYPE_F32, {e}, synth_init::ones});
    if (gpt2) t.push_back({"output_norm.bias", GGML_TYPE_F32, {e}, synth_init::bias});
    if (p.arch == "llama") t.push_back({"output.weight", m, {e, v}, synth_init::matrix});
    for (int il = 0; il < p.n_layer; ++il) {
        const std::string b = "blk." + std::to_string(il) + ".";
        t.push_back({b + "attn_norm.weight", GGML_TYPE_F32, {e}, synth_init::ones});
        if (gpt2) {
            t.push_back({b + "attn_norm.bias", GGML_TYPE_F32, {e}, synth_init::bias});
            t.push_back({b + "attn_qkv.weight", m, {e, 3 * e}, synth_init::matrix});
            t.push_back({b + "attn_qkv.bias", GGML_TYPE_F32, {3 * e}, synth_init::bias});
            t.push_back({b + "attn_output.weight", m, {e, e}, synth_init::matrix});
            t.push_back({b + "attn_output.bias", GGML_TYPE_F32, {e}, synth_init::bias});
        } else {
            t.push_back({b + "attn_q.weight", m, {e, e}, synth_init::matrix});
            t.push_back({b + "attn_k.weight", m, {e, e_kv}, synth_init::matrix});
            t.push_back({b + "attn_v.weight", m, {e, e_kv}, synth_init::matrix});
            if (p.arch == "qwen2") {
                t.push_back({b + "attn_q.bias", GGML_TYPE_F32, {e}, synth_init::bias});
                t.push_back({b + "attn_k.bias", GGML_TYPE_F32, {e_kv}, synth_init::bias});
                t.push_back({b + "attn_v.bias", GGML_TYPE_F32, {e_kv}, synth_init::bias});
            }
            t.push_back({b + "attn_output.weight", m, {e, e}, synth_init::matrix});
        }
        t.push_back({b + "ffn_norm.weight", GGML_TYPE_F32, {e}, synth_init::ones});
        if (gpt2) t.push_back({b + "ffn_norm.bias", GGML_TYPE_F32, {e}, synth_init::bias});
        if (!gpt2) t.push_back({b + "ffn_gate.weight", m, {e, ff}, synth_init::matrix});
        t.push_back({b + "ffn_up.weight", m, {e, ff}, synth_init::matrix});
        if (gpt2) t.push_back({b + "ffn_up.bias", GGML_TYPE_F32, {ff}, synth_init::bias});
        t.push_back({b + "ffn_down.weight", m, {ff, e}, synth_init::matrix});
        if (gpt2) t.push_back({b + "ffn_down.bias", GGML_TYPE_F32, {e}, synth_init::bias});
    }
    return t;
}
