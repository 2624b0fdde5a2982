// Model loading: hyper-parameters of the shipped files, clear errors for broken files (unknown
// architecture, missing key, missing tensor, wrong shape, not GGUF), vocabulary-only loading,
// each model's prompt tokenization against the reference, and zero-copy CPU weights.
#include "engine/context.h"
#include "engine/model.h"
#include "engine/reference-data.h"
#include "ggml/backend.h"
#include "ggml/cpu.h"
#include "ggml/gguf.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sys/resource.h>

namespace {

// Rewrites a shipped model with a change applied to its metadata / tensor list, into a temp file.
std::string write_variant(const std::string & src, const std::string & tag,
                          const std::function<void(gguf_metadata &)> & edit_md,
                          const std::function<bool(const gguf_tensor_info &, gguf_writer &, const void *)> & edit_tensor) {
    std::unique_ptr<gguf_file> f;
    EXPECT_TRUE(gguf_file::open(src, gguf_open_options{}, &f));
    gguf_writer w;
    w.metadata() = f->metadata();
    edit_md(w.metadata());
    for (const gguf_tensor_info & t : f->tensors()) {
        if (!edit_tensor(t, w, f->tensor_data(t))) w.add_tensor(t, f->tensor_data(t));
    }
    const std::string out = (std::filesystem::temp_directory_path() / ("inferd-model-" + tag + ".gguf")).string();
    EXPECT_TRUE(w.write_file(out));
    return out;
}

std::string load_error(const std::string & path, model_params mp = {}) {
    try {
        model::load(path, mp);
    } catch (const model_load_error & e) {
        return e.what();
    }
    return "";
}

auto no_md = [](gguf_metadata &) {};
auto no_tensor = [](const gguf_tensor_info &, gguf_writer &, const void *) { return false; };

}  // namespace

TEST(model_load, hyper_parameters_of_the_shipped_files) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto l = model::load(dir + "/models/tiny-llama-q4_k_m.gguf", {});
    const model_hparams & hp = l->hparams();
    EXPECT_EQ(hp.arch, llm_arch::llama);
    EXPECT_EQ(hp.n_embd, 256u);
    EXPECT_EQ(hp.n_layer, 4u);
    EXPECT_EQ(hp.n_head, 8u);
    EXPECT_EQ(hp.n_head_kv, 4u);
    EXPECT_EQ(hp.n_ff, 768u);
    EXPECT_EQ(hp.n_embd_head_k, 32u);
    EXPECT_EQ(hp.n_vocab, 4096);
    EXPECT_EQ(hp.rope_mode, GGML_ROPE_TYPE_NORMAL);
    EXPECT_NE(l->weights().output, l->weights().tok_embd);
    EXPECT_FALSE(l->chat_template().empty());
    auto q = model::load(dir + "/models/tiny-qwen2-f16.gguf", {});
    EXPECT_EQ(q->hparams().arch, llm_arch::qwen2);
    EXPECT_EQ(q->hparams().rope_mode, GGML_ROPE_TYPE_NEOX);
    EXPECT_FLOAT_EQ(q->hparams().rope_freq_base, 1e6f);
    EXPECT_EQ(q->weights().output, q->weights().tok_embd) << "tied output";
    EXPECT_NE(q->weights().layers[0].bq, nullptr);
    auto g = model::load(dir + "/models/tiny-gpt2-f16.gguf", {});
    EXPECT_EQ(g->hparams().arch, llm_arch::gpt2);
    EXPECT_FALSE(g->hparams().use_rope);
    EXPECT_NE(g->weights().pos_embd, nullptr);
    EXPECT_NE(g->weights().layers[1].wqkv, nullptr);
}

TEST(model_load, file_type_names) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::pair<const char *, const char *> files[] = {
        {"tiny-llama-q4_k_m", "Q4_K_M"}, {"tiny-llama-q8_0", "Q8_0"}, {"tiny-llama-f16", "F16"},
        {"tiny-llama-bf16", "BF16"},     {"stories260K-f32", "F32"},  {"tiny-llama-q6_k", "Q6_K"}};
    for (const auto & [file, name] : files) {
        model_params mp;
        mp.vocab_only = true;  // the metadata is enough
        EXPECT_EQ(model::load(dir + "/models/" + file + ".gguf", mp)->file_type_name(), name) << file;
    }
}

TEST(model_load, cpu_weights_point_into_the_mapped_file) {
    INFERD_REQUIRE_TESTDATA(dir);
    model_params mp;
    mp.repack = false;
    auto m = model::load(dir + "/models/tiny-llama-q8_0.gguf", mp);
    const gguf_tensor_info * info = m->file().find_tensor("blk.2.ffn_down.weight");
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(m->weights().layers[2].ffn_down->data, m->file().tensor_data(*info));
    uint64_t bytes = 0, params = 0;
    for (const gguf_tensor_info & t : m->file().tensors()) bytes += t.size, params += uint64_t(t.n_elements);
    EXPECT_EQ(m->n_weight_bytes(), bytes);
    EXPECT_EQ(m->n_params(), params);
}

// With repacking (the default), the mul_mat weights of a repackable type live repacked in the
// CPU's repack buffer and read back as the file's bytes; the token embeddings (read by
// get_rows) stay in the file.
TEST(model_load, cpu_mul_mat_weights_repacked) {
    INFERD_REQUIRE_TESTDATA(dir);
    for (const char * file : {"tiny-llama-q8_0", "tiny-llama-q4_k_m", "tiny-llama-q6_k"}) {
        auto m = model::load(dir + "/models/" + file + ".gguf", {});
        const ggml_tensor * w = m->weights().layers[1].ffn_down;
        const gguf_tensor_info * info = m->file().find_tensor("blk.1.ffn_down.weight");
        ASSERT_NE(info, nullptr);
        if (!ggml_backend_cpu_repack_supported(w)) continue;
        EXPECT_TRUE(ggml_backend_cpu_tensor_is_repacked(w)) << file;
        std::vector<uint8_t> bytes(info->size);
        ggml_backend_tensor_get(w, bytes.data(), 0, bytes.size());
        EXPECT_EQ(std::memcmp(bytes.data(), m->file().tensor_data(*info), bytes.size()), 0) << file;
        const ggml_tensor * embd = m->weights().tok_embd;
        EXPECT_EQ(embd->data, m->file().tensor_data(*m->file().find_tensor("token_embd.weight"))) << file;
    }
}

TEST(model_load, errors_name_the_problem) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::string src = dir + "/models/tiny-llama-f16.gguf";
    std::string e = load_error(write_variant(src, "arch", [](gguf_metadata & md) {
        md.set("general.architecture", gguf_value::from_string("mamba"));
    }, no_tensor));
    EXPECT_NE(e.find("unknown architecture 'mamba' (supported: llama, qwen2, qwen3, qwen3moe, gemma2, gemma3, phi3, "
                     "gpt2, bert)"),
              std::string::npos)
        << e;
    e = load_error(write_variant(src, "key", [](gguf_metadata & md) { md.remove("llama.block_count"); }, no_tensor));
    EXPECT_NE(e.find("'llama.block_count'"), std::string::npos) << e;
    e = load_error(write_variant(src, "missing", no_md, [](const gguf_tensor_info & t, gguf_writer &, const void *) {
        return t.name == "blk.1.ffn_up.weight";
    }));
    EXPECT_NE(e.find("missing tensor 'blk.1.ffn_up.weight'"), std::string::npos) << e;
    e = load_error(write_variant(src, "shape", no_md, [](const gguf_tensor_info & t, gguf_writer & w, const void * d) {
        if (t.name != "blk.0.attn_q.weight") return false;
        w.add_tensor(t.name, t.type, {256, 128}, d);  // half the rows
        return true;
    }));
    EXPECT_NE(e.find("tensor 'blk.0.attn_q.weight' has shape [256, 128], expected [256, 256]"), std::string::npos) << e;
    e = load_error(dir + "/README.md");
    EXPECT_NE(e.find("README.md"), std::string::npos) << e;
    e = load_error(dir + "/models/no-such-file.gguf");
    EXPECT_NE(e.find("no-such-file.gguf"), std::string::npos) << e;
}

TEST(model_load, vocabulary_only_files) {
    INFERD_REQUIRE_TESTDATA(dir);
    model_params mp;
    mp.vocab_only = true;
    auto m = model::load(dir + "/vocab/ggml-vocab-gpt-2.gguf", mp);
    EXPECT_TRUE(m->vocab_only());
    EXPECT_EQ(m->get_tokenizer().tokenize("Hello world", false, false), (std::vector<int32_t>{15496, 995}));
    EXPECT_NE(load_error(dir + "/vocab/ggml-vocab-gpt-2.gguf"), "") << "weights are needed without vocab_only";
}

TEST(model_load, prompt_tokens_of_every_reference) {
    INFERD_REQUIRE_TESTDATA(dir);
    for (const std::string & name : reference_models(dir)) {
        model_params mp;
        mp.vocab_only = true;
        auto m = model::load(dir + "/models/" + name + ".gguf", mp);
        for (const char * p : {"p1", "p2"}) {
            std::ifstream jf(dir + "/reference/" + name + "." + p + ".json");
            const nlohmann::json j = nlohmann::json::parse(jf);
            const std::string text = j.at("prompt_text").get<std::string>();
            if (text.empty()) continue;  // stories260K: given token ids
            EXPECT_EQ(m->get_tokenizer().tokenize(text, true, false), j.at("prompt_tokens").get<std::vector<int32_t>>())
                << name << "." << p;
        }
    }
}

TEST(model_load, rope_frequency_factors_are_applied) {
    INFERD_REQUIRE_TESTDATA(dir);
    // Factors of 2 on every dimension divide every frequency by 2: the same as linear scaling
    // by 2 (freq_scale 0.5). Both variants must give the same logits, unlike the original.
    const std::string src = dir + "/models/tiny-llama-f32.gguf";
    static const std::vector<float> twos(16, 2.0f);  // n_rot 32 → 16 factors
    const std::string with_factors = write_variant(src, "ropefreqs", no_md, [](const gguf_tensor_info & t, gguf_writer & w, const void *) {
        if (t.name == "output_norm.weight") w.add_tensor("rope_freqs.weight", GGML_TYPE_F32, {16}, twos.data());
        return false;
    });
    const std::string linear = write_variant(src, "ropelinear", [](gguf_metadata & md) {
        md.set("llama.rope.scaling.type", gguf_value::from_string("linear"));
        md.set("llama.rope.scaling.factor", gguf_value::from_f32(2.0f));
    }, no_tensor);
    auto logits_of = [&](const std::string & path) {
        auto m = model::load(path, {});
        context_params cp;
        cp.n_ctx = 64;
        cp.n_threads = 2;
        cp.type_k = cp.type_v = GGML_TYPE_F32;
        context c(*m, cp);
        llm_batch b;
        for (int32_t i = 0; i < 12; ++i) b.add(100 + 7 * i, i, 0, i == 11);
        EXPECT_EQ(c.decode(b), 0);
        const float * r = c.logits(11);
        return std::vector<float>(r, r + m->hparams().n_vocab);
    };
    const std::vector<float> a = logits_of(with_factors), b = logits_of(linear), o = logits_of(src);
    EXPECT_LE(reference_rel_rms(a.data(), b.data(), a.size()), 1e-5);
    EXPECT_GT(reference_rel_rms(a.data(), o.data(), a.size()), 1e-3);
}

// AddressSanitizer intercepts mlock and munlock and makes them succeed without locking anything.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool k_mlock_is_a_no_op = true;
#else
constexpr bool k_mlock_is_a_no_op = false;
#endif

// Kilobytes of this process's memory locked in RAM (VmLck of /proc/self/status).
static long locked_kb() {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("VmLck:", 0) == 0) return std::stol(line.substr(6));
    }
    return -1;
}

// Read into memory (--no-mmap) and locked in RAM (--mlock), with and without repacking: the same
// weights, so the same logits bit for bit. A lock that succeeds shows in VmLck while the model
// lives (except under AddressSanitizer, where mlock locks nothing) and is gone after; one the
// limit refuses (soft RLIMIT_MEMLOCK 0 here, unless the process may lock regardless) is a
// warning naming the limit, never an error.
TEST(model_load, read_and_locked_files_give_the_mapped_logits) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::string path = dir + "/models/tiny-llama-q4_k_m.gguf";
    const long locked_before = locked_kb();
    auto logits_of = [&](bool mmap, bool mlock, bool repack) {
        model_params mp;
        mp.use_mmap = mmap;
        mp.use_mlock = mlock;
        mp.repack = repack;
        std::vector<float> out;
        {
            auto m = model::load(path, mp);
            bool refused = false;
            for (const std::string & w : m->warnings()) {
                EXPECT_NE(w.find("RLIMIT_MEMLOCK"), std::string::npos) << "unexpected warning: " << w;
                refused = true;
            }
            EXPECT_TRUE(!refused || mlock);
            if (mlock && !refused && !k_mlock_is_a_no_op) {
                EXPECT_GT(locked_kb(), locked_before + 1000);
            }
            const ggml_tensor * w = m->weights().layers[1].ffn_down;
            EXPECT_EQ(ggml_backend_cpu_tensor_is_repacked(w), repack && ggml_backend_cpu_repack_supported(w));
            context_params cp;
            cp.n_ctx = 64;
            cp.n_threads = 2;
            context c(*m, cp);
            llm_batch b;
            for (int32_t i = 0; i < 8; ++i) b.add(200 + 11 * i, i, 0, i == 7);
            EXPECT_EQ(c.decode(b), 0);
            const float * r = c.logits(7);
            out.assign(r, r + m->hparams().n_vocab);
        }
        EXPECT_EQ(locked_kb(), locked_before);
        return out;
    };
    for (bool repack : {true, false}) {
        SCOPED_TRACE(repack ? "repacked" : "file layout");
        const std::vector<float> mapped = logits_of(true, false, repack);
        EXPECT_EQ(logits_of(false, false, repack), mapped);
        EXPECT_EQ(logits_of(true, true, repack), mapped);
        EXPECT_EQ(logits_of(false, true, repack), mapped);
        rlimit old{};
        ASSERT_EQ(getrlimit(RLIMIT_MEMLOCK, &old), 0);
        rlimit none = old;
        none.rlim_cur = 0;
        ASSERT_EQ(setrlimit(RLIMIT_MEMLOCK, &none), 0);
        const std::vector<float> refused_mapped = logits_of(true, true, repack);
        const std::vector<float> refused_read = logits_of(false, true, repack);
        ASSERT_EQ(setrlimit(RLIMIT_MEMLOCK, &old), 0);
        EXPECT_EQ(refused_mapped, mapped);
        EXPECT_EQ(refused_read, mapped);
    }
}
