// Tests of inferd-gguf synth: the engine loads and decodes every architecture, the file depends
// on the seed only, the built-in tokenizer round-trips, --vocab copies a tokenizer, a quantized
// copy loads, and bad command lines are usage errors.
#include "engine/chat-template.h"
#include "engine/context.h"
#include "engine/model.h"
#include "gguf-inspect.h"
#include "gguf-synth-impl.h"
#include "gguf-synth.h"
#include "quantize-model.h"
#include "testdata.h"
#include "tools-test-util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

namespace {

synth_params tiny_params(const std::string & arch, const std::string & out) {
    synth_params p;
    p.arch = arch;
    p.n_embd = 64;
    p.n_layer = 2;
    p.n_head = 4;
    p.n_head_kv = arch == "gpt2" ? 4 : 2;
    p.n_ff = 128;
    p.n_vocab = 300;
    p.n_ctx = 256;
    p.seed = 7;
    p.out_path = out;
    p.n_threads = 2;
    return p;
}

void synth_ok(synth_params p) {
    std::vector<std::string> warnings;
    std::string err;
    ASSERT_TRUE(synth_params_check(&p, &warnings, &err)) << err;
    synth_stats st;
    ASSERT_TRUE(synth_model_write(p, &st, &err)) << err;
    EXPECT_GT(st.n_params, 0u);
}

// Decodes a few tokens one batch at a time and checks every logit row.
void expect_decodes(const model & m, const std::vector<int32_t> & ids) {
    context_params cp;
    cp.n_ctx = 64;
    cp.n_threads = 2;
    context ctx(m, cp);
    std::vector<float> first;
    for (size_t i = 0; i < ids.size(); ++i) {
        llm_batch b;
        b.add(ids[i], int32_t(i), 0, true);
        ASSERT_EQ(ctx.decode(b), decode_ok) << ctx.last_error();
        const float * row = ctx.logits(0);
        ASSERT_NE(row, nullptr);
        float lo = row[0], hi = row[0];
        for (int32_t v = 0; v < ctx.n_vocab(); ++v) {
            ASSERT_TRUE(std::isfinite(row[v])) << "token " << i << " logit " << v;
            lo = std::min(lo, row[v]);
            hi = std::max(hi, row[v]);
        }
        EXPECT_GT(hi - lo, 1e-3f) << "token " << i << ": all logits equal";
        if (i == 0) first.assign(row, row + ctx.n_vocab());
        if (i == 1) {
            EXPECT_NE(first, std::vector<float>(row, row + ctx.n_vocab())) << "logits ignore the input";
        }
    }
}

int run_tool(const std::vector<std::string> & args, std::string * out_text = nullptr, std::string * err_text = nullptr) {
    tools_capture out, err;
    const int rc = gguf_tool_main(args, out.get(), err.get());
    if (out_text) *out_text = out.text();
    if (err_text) *err_text = err.text();
    return rc;
}

std::vector<std::string> tiny_args(const std::string & arch, const std::string & out) {
    return {"synth", "--arch", arch, "--n-embd", "64", "--n-layer", "2", "--n-head", "4",
            "--n-ff", "128", "--n-vocab", "300", "--n-ctx", "256", "-t", "2", out};
}

}  // namespace

TEST(gguf_synth, every_arch_loads_and_decodes) {
    tools_scratch_dir dir;
    for (const char * arch : {"llama", "qwen2", "gpt2"}) {
        SCOPED_TRACE(arch);
        const std::string path = dir.file(std::string(arch) + ".gguf");
        synth_ok(tiny_params(arch, path));
        std::unique_ptr<model> m = model::load(path, model_params{});
        const model_hparams & hp = m->hparams();
        EXPECT_EQ(std::string(llm_arch_name(hp.arch)), arch);
        EXPECT_EQ(hp.n_embd, 64u);
        EXPECT_EQ(hp.n_layer, 2u);
        EXPECT_EQ(hp.n_head, 4u);
        EXPECT_EQ(hp.n_head_kv, std::string(arch) == "gpt2" ? 4u : 2u);
        EXPECT_EQ(hp.n_ff, 128u);
        EXPECT_EQ(hp.n_vocab, 300);
        EXPECT_EQ(hp.n_ctx_train, 256u);
        const bool tied = std::string(arch) != "llama";
        EXPECT_EQ(m->weights().output == m->weights().tok_embd, tied);
        if (std::string(arch) == "qwen2") {
            EXPECT_NE(m->weights().layers[0].bq, nullptr);
        }
        if (std::string(arch) == "gpt2") {
            EXPECT_NE(m->weights().pos_embd, nullptr);
        }
        EXPECT_EQ(m->weights().layers[0].attn_norm->type, GGML_TYPE_F32);
        expect_decodes(*m, {5, 260, 17, 299, 42});
    }
}

TEST(gguf_synth, f32_type_and_thread_count_do_not_change_values) {
    tools_scratch_dir dir;
    synth_params p = tiny_params("llama", dir.file("a.gguf"));
    p.type = GGML_TYPE_F32;
    synth_ok(p);
    p.out_path = dir.file("b.gguf");
    p.n_threads = 1;
    synth_ok(p);
    EXPECT_EQ(tools_read_file(dir.file("a.gguf")), tools_read_file(dir.file("b.gguf")));
    std::unique_ptr<model> m = model::load(dir.file("a.gguf"), model_params{});
    EXPECT_EQ(m->weights().layers[1].ffn_up->type, GGML_TYPE_F32);
    expect_decodes(*m, {1, 2, 3});
}

TEST(gguf_synth, same_seed_same_bytes_other_seed_other_bytes) {
    tools_scratch_dir dir;
    synth_params p = tiny_params("qwen2", dir.file("a.gguf"));
    synth_ok(p);
    p.out_path = dir.file("b.gguf");
    synth_ok(p);
    p.out_path = dir.file("c.gguf");
    p.seed = 8;
    synth_ok(p);
    const std::vector<char> a = tools_read_file(dir.file("a.gguf"));
    EXPECT_FALSE(a.empty());
    EXPECT_EQ(a, tools_read_file(dir.file("b.gguf")));
    const std::vector<char> c = tools_read_file(dir.file("c.gguf"));
    ASSERT_EQ(a.size(), c.size());
    EXPECT_NE(a, c);
    EXPECT_FALSE(std::filesystem::exists(dir.file("a.gguf.part")));
}

TEST(gguf_synth, fill_statistics) {
    synth_tensor t{"w", GGML_TYPE_F32, {1000, 300}, synth_init::matrix};
    std::vector<float> v(size_t(t.n_elements()));
    synth_fill_tensor(t, 3, 42, v.data(), 3);
    double sum = 0, sum2 = 0;
    for (float x : v) {
        sum += x;
        sum2 += double(x) * x;
        ASSERT_LT(std::fabs(x), 0.02f * 3.5f);  // Irwin-Hall (n = 4) is bounded by 2 * sqrt(3) sd
    }
    const double mean = sum / double(v.size());
    const double sd = std::sqrt(sum2 / double(v.size()) - mean * mean);
    EXPECT_NEAR(mean, 0.0, 1e-3);
    EXPECT_NEAR(sd, 0.02, 0.001);
    std::vector<float> other(v.size());
    synth_fill_tensor(t, 4, 42, other.data(), 1);  // another tensor index: other values
    EXPECT_NE(v, other);
    synth_tensor ones{"n", GGML_TYPE_F32, {17}, synth_init::ones};
    std::vector<float> o(17, 0.0f);
    synth_fill_tensor(ones, 0, 42, o.data(), 2);
    EXPECT_EQ(o, std::vector<float>(17, 1.0f));
}

TEST(gguf_synth, f16_conversion_matches_ggml) {
    // Every float whose low 13 mantissa bits are near the rounding points, across all exponents
    // (normal, subnormal, overflow, inf, NaN) and both signs.
    for (uint32_t hi = 0; hi < (1u << 19); ++hi) {
        for (uint32_t lo : {0x0000u, 0x0001u, 0x0fffu, 0x1000u, 0x1001u, 0x1fffu}) {
            const uint32_t bits = (hi << 13) | lo;
            float f;
            std::memcpy(&f, &bits, sizeof(f));
            ASSERT_EQ(synth_f32_to_f16(f), ggml_fp32_to_fp16(f)) << std::hex << bits;
        }
    }
    // F16 data written by synth reads back as the seeded values within F16 precision.
    synth_tensor t16{"w", GGML_TYPE_F16, {70000}, synth_init::matrix};
    synth_tensor t32{"w", GGML_TYPE_F32, {70000}, synth_init::matrix};
    std::vector<uint16_t> h(70000);
    std::vector<float> f(70000);
    synth_fill_tensor(t16, 1, 5, h.data(), 2);
    synth_fill_tensor(t32, 1, 5, f.data(), 2);
    for (size_t i = 0; i < f.size(); ++i) ASSERT_EQ(h[i], ggml_fp32_to_fp16(f[i])) << i;
}

TEST(gguf_synth, default_tokenizer_round_trips) {
    tools_scratch_dir dir;
    synth_params p = tiny_params("llama", dir.file("m.gguf"));
    p.n_vocab = 2000;
    synth_ok(p);
    model_params mp;
    mp.vocab_only = true;
    std::unique_ptr<model> m = model::load(p.out_path, mp);
    const tokenizer & tok = m->get_tokenizer();
    EXPECT_TRUE(tok.warnings().empty());
    for (const std::string text : {"hello world, the quick brown fox", "Numbers 123 and\ttabs\n\nnew lines",
                                   "caf\xc3\xa9 \xe6\xbc\xa2\xe5\xad\x97 \xf0\x9f\x99\x82!", " leading  spaces "}) {
        const std::vector<int32_t> ids = tok.tokenize(text, true, false);
        std::string back, err;
        ASSERT_TRUE(tok.detokenize(ids, &back, &err)) << err;
        EXPECT_EQ(back, text);
    }
    // Merges apply: common lowercase words take fewer tokens than bytes.
    const std::string words = " the tea is on the seat at ten";
    EXPECT_LT(tok.tokenize(words, false, false).size(), words.size() / 2);
    // Special tokens: <|endoftext|> is bos / eos, the ChatML markers are control tokens.
    const vocab & v = m->get_vocab();
    ASSERT_GE(v.eos_id(), 0);
    EXPECT_EQ(v.token_text(v.eos_id()), "<|endoftext|>");
    EXPECT_EQ(v.bos_id(), v.eos_id());
    const std::vector<int32_t> im = tok.tokenize("<|im_start|>user\nhi<|im_end|>", false, true);
    ASSERT_GE(im.size(), 3u);
    EXPECT_EQ(v.token_text(im.front()), "<|im_start|>");
    EXPECT_TRUE(v.is_control(im.front()));
    EXPECT_TRUE(v.is_eog(im.back()));
    EXPECT_EQ(chat_template_detect(m->chat_template()), chat_template_kind::chatml);
}

TEST(gguf_synth, chat_template_families_are_recognised) {
    for (const std::string & name : synth_chat_template_names()) {
        SCOPED_TRACE(name);
        std::string jinja;
        std::vector<std::string> tokens;
        ASSERT_TRUE(synth_chat_template(name, &jinja, &tokens));
        EXPECT_EQ(chat_template_detect(jinja), chat_template_from_name(name));
        for (const std::string & t : tokens) EXPECT_NE(jinja.find(t), std::string::npos) << t;
    }
    EXPECT_FALSE(synth_chat_template("no-such-family", nullptr, nullptr));
    tools_scratch_dir dir;
    synth_params p = tiny_params("qwen2", dir.file("m.gguf"));
    p.chat_template = "llama3";
    synth_ok(p);
    model_params mp;
    mp.vocab_only = true;
    std::unique_ptr<model> m = model::load(p.out_path, mp);
    EXPECT_EQ(chat_template_detect(m->chat_template()), chat_template_kind::llama3);
    const int32_t eot = m->get_vocab().token_id("<|eot_id|>");
    ASSERT_GE(eot, 0);
    EXPECT_TRUE(m->get_vocab().is_control(eot));
    EXPECT_TRUE(m->get_vocab().is_eog(eot));
}

TEST(gguf_synth, vocab_file_is_copied) {
    INFERD_REQUIRE_TESTDATA(data);
    const std::string vocab_path = data + "/vocab/ggml-vocab-gpt-2.gguf";
    tools_scratch_dir dir;
    const std::string out = dir.file("m.gguf");
    std::string out_text, err_text;
    ASSERT_EQ(run_tool({"synth", "--arch", "qwen2", "--n-embd", "32", "--n-layer", "1", "--n-head", "2",
                        "--n-ff", "64", "--vocab", vocab_path, out},
                       &out_text, &err_text),
              0)
        << err_text;
    std::unique_ptr<model> m = model::load(out, model_params{});
    vocab ref;
    std::string err;
    ASSERT_TRUE(ref.load_file(vocab_path, &err)) << err;
    ASSERT_EQ(m->hparams().n_vocab, ref.n_tokens());
    std::unique_ptr<gguf_file> src, dst;
    ASSERT_TRUE(gguf_file::open(vocab_path, gguf_open_options{}, &src));
    ASSERT_TRUE(gguf_file::open(out, gguf_open_options{}, &dst));
    for (const gguf_kv & kv : src->metadata().kvs()) {
        if (kv.key.rfind("tokenizer.", 0) != 0) continue;
        const gguf_value * copied = dst->metadata().find(kv.key);
        ASSERT_NE(copied, nullptr) << kv.key;
        EXPECT_TRUE(*copied == kv.value) << kv.key;
    }
    const std::string text = "Hello world, this is GPT-2's tokenizer.";
    const std::vector<int32_t> ids = m->get_tokenizer().tokenize(text, false, false);
    std::string back;
    ASSERT_TRUE(m->get_tokenizer().detokenize(ids, &back, &err)) << err;
    EXPECT_EQ(back, text);
    expect_decodes(*m, std::vector<int32_t>(ids.begin(), ids.begin() + 3));
    // A token count that disagrees is a usage error naming both counts.
    EXPECT_EQ(run_tool({"synth", "--arch", "qwen2", "--n-embd", "32", "--n-layer", "1", "--n-head", "2",
                        "--n-ff", "64", "--n-vocab", "1000", "--vocab", vocab_path, dir.file("x.gguf")},
                       nullptr, &err_text),
              2);
    EXPECT_NE(err_text.find("1000"), std::string::npos) << err_text;
    EXPECT_EQ(run_tool({"synth", "--arch", "qwen2", "--n-embd", "32", "--n-layer", "1", "--n-head", "2",
                        "--n-ff", "64", "--vocab", dir.file("missing.gguf"), dir.file("x.gguf")},
                       nullptr, &err_text),
              1);
}

TEST(gguf_synth, quantized_copy_loads) {
    tools_scratch_dir dir;
    synth_params p = tiny_params("llama", dir.file("f16.gguf"));
    p.n_embd = 256;
    p.n_ff = 512;
    p.n_layer = 1;
    synth_ok(p);
    quantize_model_params q;
    q.input_path = p.out_path;
    q.output_path = dir.file("q4_k_m.gguf");
    q.mix = quantize_mix_find("Q4_K_M");
    ASSERT_NE(q.mix, nullptr);
    q.n_threads = 2;
    quantize_model_stats st;
    std::string err;
    ASSERT_TRUE(quantize_model(q, &st, &err)) << err;
    std::unique_ptr<model> m = model::load(q.output_path, model_params{});
    EXPECT_EQ(m->weights().layers[0].ffn_gate->type, GGML_TYPE_Q4_K);
    expect_decodes(*m, {10, 200, 33});
}

TEST(gguf_synth, command_line) {
    tools_scratch_dir dir;
    const std::string out = dir.file("m.gguf");
    std::string out_text, err_text;
    ASSERT_EQ(run_tool(tiny_args("gpt2", out), &out_text, &err_text), 0) << err_text;
    EXPECT_NE(out_text.find("gpt2 64x2"), std::string::npos) << out_text;
    EXPECT_NE(err_text.find("warning"), std::string::npos) << err_text;  // 64 is no multiple of 256
    EXPECT_NE(err_text.find("synth: "), std::string::npos) << err_text;  // the last progress line
    std::unique_ptr<model> m = model::load(out, model_params{});
    EXPECT_EQ(m->hparams().n_ctx_train, 256u);
    ASSERT_EQ(run_tool({"info", out}, &out_text), 0);
    EXPECT_NE(out_text.find("position_embd.weight"), std::string::npos);
    // Unwritable output: an I/O error, nothing left behind.
    EXPECT_EQ(run_tool(tiny_args("llama", dir.file("no-dir/m.gguf")), nullptr, &err_text), 1);
    EXPECT_FALSE(std::filesystem::exists(dir.file("no-dir")));
    ASSERT_EQ(run_tool({"--help"}, &out_text), 0);
    EXPECT_NE(out_text.find("inferd-gguf synth"), std::string::npos);
}

TEST(gguf_synth, usage_errors_name_the_flag) {
    tools_scratch_dir dir;
    const std::string out = dir.file("m.gguf");
    struct bad_case {
        std::vector<std::string> args;
        const char * expect;
    };
    auto with = [&](const std::string & flag, const std::string & value) {
        std::vector<std::string> a = tiny_args("llama", out);
        for (size_t i = 0; i + 1 < a.size(); ++i) {
            if (a[i] == flag) {
                a[i + 1] = value;
                return a;
            }
        }
        a.insert(a.end() - 1, {flag, value});
        return a;
    };
    std::vector<std::string> no_arch = tiny_args("llama", out);
    no_arch.erase(no_arch.begin() + 1, no_arch.begin() + 3);
    std::vector<std::string> no_out = tiny_args("llama", out);
    no_out.pop_back();
    std::vector<std::string> gpt2_gqa = tiny_args("gpt2", out);
    gpt2_gqa.insert(gpt2_gqa.end() - 1, {"--n-head-kv", "2"});
    const std::vector<bad_case> cases = {
        {no_arch, "--arch"},
        {no_out, "output"},
        {with("--arch", "mamba"), "mamba"},
        {with("--n-embd", "abc"), "--n-embd"},
        {with("--n-embd", "0"), "--n-embd"},
        {with("--n-head", "5"), "--n-head"},
        {with("--n-head-kv", "3"), "--n-head-kv"},
        {with("--n-head", "64"), "even"},  // head size 1: no RoPE pairs
        {with("--n-vocab", "100"), "--n-vocab"},
        {with("--type", "q4_0"), "--type"},
        {with("--seed", "-1"), "--seed"},
        {with("--chat-template", "nonsense"), "--chat-template"},
        {gpt2_gqa, "--n-head-kv"},  // gpt2 has no grouped-query attention
        {{"info", out, "--n-embd", "4"}, "only for synth"},
    };
    for (size_t i = 0; i < cases.size(); ++i) {
        SCOPED_TRACE(i);
        std::string err_text;
        EXPECT_EQ(run_tool(cases[i].args, nullptr, &err_text), 2) << err_text;
        EXPECT_NE(err_text.find(cases[i].expect), std::string::npos) << err_text;
    }
    EXPECT_FALSE(std::filesystem::exists(out));
}
