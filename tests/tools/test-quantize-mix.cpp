// The quantization mix rules, the fallback for row lengths that fit no block, the argument
// parser and the progress display of the tools — no files needed.
#include "quantize-mix.h"
#include "quantize-progress.h"
#include "tool-args.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

const quantize_mix & mix(const char * name) {
    const quantize_mix * m = quantize_mix_find(name);
    EXPECT_NE(m, nullptr) << name;
    static const quantize_mix none{"none", QUANTIZE_FTYPE_ALL_F32, GGML_TYPE_F32};
    return m ? *m : none;
}

quantize_model_info llama_info(int64_t n_layers, int64_t n_gqa = 2, bool has_output = true) {
    quantize_model_info info;
    info.n_layers = n_layers;
    info.n_gqa = n_gqa;
    info.has_output = has_output;
    return info;
}

ggml_type choose(const char * mix_name, const quantize_model_info & info, const std::string & name, int64_t ne0 = 4096) {
    return quantize_mix_choose(mix(mix_name), info, name, ne0).type;
}

std::string blk(int layer, const char * what) { return "blk." + std::to_string(layer) + "." + what + ".weight"; }

// Layers whose tensor `what` gets `type` under the mix, for a model of n_layers.
std::vector<int> layers_with(const char * mix_name, int n_layers, const char * what, ggml_type type) {
    std::vector<int> out;
    for (int i = 0; i < n_layers; ++i) {
        if (choose(mix_name, llama_info(n_layers), blk(i, what)) == type) out.push_back(i);
    }
    return out;
}

TEST(QuantizeMix, FindIsCaseInsensitiveAndCoversTheIssueList) {
    for (const char * n : {"F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K_S", "Q3_K_M",
                           "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K", "IQ4_NL", "IQ4_XS"}) {
        const quantize_mix * m = quantize_mix_find(n);
        ASSERT_NE(m, nullptr) << n;
        EXPECT_STREQ(m->name, n);
    }
    EXPECT_EQ(quantize_mix_find("q4_k_m"), quantize_mix_find("Q4_K_M"));
    EXPECT_EQ(quantize_mix_find("bf16"), quantize_mix_find("BF16"));
    EXPECT_EQ(quantize_mix_find("q4_k"), nullptr);
    EXPECT_EQ(quantize_mix_find(""), nullptr);
    EXPECT_EQ(quantize_mix_find("Q4_K_MM"), nullptr);
}

TEST(QuantizeMix, StandardFileTypeNumbers) {
    const std::pair<const char *, int> expected[] = {
        {"F16", 1},     {"Q4_0", 2},    {"Q4_1", 3},    {"Q8_0", 7},    {"Q5_0", 8},    {"Q5_1", 9},
        {"Q2_K", 10},   {"Q3_K_S", 11}, {"Q3_K_M", 12}, {"Q4_K_S", 14}, {"Q4_K_M", 15}, {"Q5_K_S", 16},
        {"Q5_K_M", 17}, {"Q6_K", 18},   {"BF16", 32},   {"IQ4_NL", 25}, {"IQ4_XS", 30},
    };
    for (const auto & [name, ft] : expected) EXPECT_EQ(int(mix(name).file_type), ft) << name;
    EXPECT_EQ(mix("Q3_K_M").base_type, GGML_TYPE_Q3_K);
    EXPECT_EQ(mix("Q5_K_S").base_type, GGML_TYPE_Q5_K);
    EXPECT_EQ(mix("iq4_nl").base_type, GGML_TYPE_IQ4_NL);
    EXPECT_EQ(mix("iq4_xs").base_type, GGML_TYPE_IQ4_XS);
}

TEST(QuantizeMix, IQ4MixesKeepAttnVAndEarlyFfnDownInQ5K) {
    for (const char * m : {"IQ4_NL", "IQ4_XS"}) {
        SCOPED_TRACE(m);
        const ggml_type base = mix(m).base_type;
        // attention V in Q5_K only where 4 or more query heads share a KV head
        EXPECT_EQ(choose(m, llama_info(32, 8), blk(5, "attn_v")), GGML_TYPE_Q5_K);
        EXPECT_EQ(choose(m, llama_info(32, 4), blk(31, "attn_v")), GGML_TYPE_Q5_K);
        EXPECT_EQ(choose(m, llama_info(32, 2), blk(5, "attn_v")), base);
        // feed-forward down: the first eighth of the layers
        EXPECT_EQ(layers_with(m, 32, "ffn_down", GGML_TYPE_Q5_K), (std::vector<int>{0, 1, 2, 3}));
        EXPECT_TRUE(layers_with(m, 4, "ffn_down", GGML_TYPE_Q5_K).empty());
        for (const char * what : {"attn_q", "attn_k", "attn_output", "ffn_gate", "ffn_up"}) {
            EXPECT_EQ(layers_with(m, 32, what, base).size(), 32u) << what;
        }
    }
}

TEST(QuantizeMix, Q4KMUpgradesAttnVAndFfnDownInMoreBitsLayers) {
    // 4 layers (the shipped tiny-llama-q4_k_m): layers 2 and 3 get Q6_K.
    EXPECT_EQ(layers_with("Q4_K_M", 4, "attn_v", GGML_TYPE_Q6_K), (std::vector<int>{2, 3}));
    EXPECT_EQ(layers_with("Q4_K_M", 4, "ffn_down", GGML_TYPE_Q6_K), (std::vector<int>{2, 3}));
    // 2 layers (the shipped tiny-qwen2-q4_k_m): layer 1.
    EXPECT_EQ(layers_with("Q4_K_M", 2, "attn_v", GGML_TYPE_Q6_K), (std::vector<int>{1}));
    // 32 layers: the first and last eighth and every third layer in between.
    EXPECT_EQ(layers_with("Q4_K_M", 32, "ffn_down", GGML_TYPE_Q6_K),
              (std::vector<int>{0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31}));
    EXPECT_EQ(layers_with("Q5_K_M", 32, "attn_v", GGML_TYPE_Q6_K), layers_with("Q4_K_M", 32, "attn_v", GGML_TYPE_Q6_K));
    // The other tensors stay at the base type.
    for (const char * what : {"attn_q", "attn_k", "attn_output", "ffn_gate", "ffn_up"}) {
        EXPECT_TRUE(layers_with("Q4_K_M", 32, what, GGML_TYPE_Q4_K).size() == 32) << what;
    }
}

TEST(QuantizeMix, SmallMixesUpgradeFewerLayers) {
    EXPECT_EQ(layers_with("Q4_K_S", 32, "attn_v", GGML_TYPE_Q5_K), (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(layers_with("Q4_K_S", 32, "ffn_down", GGML_TYPE_Q5_K), (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(layers_with("Q5_K_S", 32, "attn_v", GGML_TYPE_Q5_K).size(), 32u);
    EXPECT_EQ(layers_with("Q3_K_S", 32, "attn_v", GGML_TYPE_Q3_K).size(), 32u);
    EXPECT_EQ(layers_with("Q3_K_S", 32, "ffn_down", GGML_TYPE_Q3_K).size(), 32u);
}

TEST(QuantizeMix, Q3KMAndQ2KUseQ4KAndQ5KUpgrades) {
    EXPECT_EQ(layers_with("Q3_K_M", 32, "attn_v", GGML_TYPE_Q5_K), (std::vector<int>{0, 1}));
    EXPECT_EQ(layers_with("Q3_K_M", 32, "attn_v", GGML_TYPE_Q4_K).size(), 30u);
    EXPECT_EQ(layers_with("Q3_K_M", 32, "ffn_down", GGML_TYPE_Q5_K), (std::vector<int>{0, 1}));
    EXPECT_EQ(layers_with("Q3_K_M", 32, "ffn_down", GGML_TYPE_Q4_K).size(), 30u);
    EXPECT_EQ(layers_with("Q3_K_M", 32, "attn_output", GGML_TYPE_Q4_K).size(), 32u);
    EXPECT_EQ(choose("Q3_K_M", llama_info(32), "blk.0.attn_qkv.weight"), GGML_TYPE_Q4_K);
    EXPECT_EQ(choose("Q2_K", llama_info(32, 2), blk(5, "attn_v")), GGML_TYPE_Q3_K);
    EXPECT_EQ(choose("Q2_K", llama_info(32, 8), blk(5, "attn_v")), GGML_TYPE_Q4_K);
    EXPECT_EQ(choose("Q2_K", llama_info(32), blk(5, "ffn_down")), GGML_TYPE_Q3_K);
    EXPECT_EQ(choose("Q2_K", llama_info(32), blk(5, "attn_output")), GGML_TYPE_Q3_K);
    EXPECT_EQ(choose("Q2_K", llama_info(32), blk(5, "ffn_up")), GGML_TYPE_Q2_K);
}

TEST(QuantizeMix, OutputMatrixAndEmbeddings) {
    const quantize_model_info untied = llama_info(4, 2, true);
    const quantize_model_info tied = llama_info(4, 2, false);
    for (const char * m :
         {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K_S", "Q4_K_M", "Q5_K_S", "Q6_K", "IQ4_NL", "IQ4_XS"}) {
        EXPECT_EQ(choose(m, untied, "output.weight", 256), GGML_TYPE_Q6_K) << m;
        EXPECT_EQ(choose(m, tied, "token_embd.weight", 256), GGML_TYPE_Q6_K) << m;
        EXPECT_EQ(choose(m, untied, "token_embd.weight", 256), mix(m).base_type) << m;
    }
    EXPECT_EQ(choose("Q8_0", untied, "output.weight", 256), GGML_TYPE_Q8_0);
    EXPECT_EQ(choose("Q8_0", tied, "token_embd.weight", 256), GGML_TYPE_Q8_0);
    // F16 / BF16 mixes apply no rules.
    EXPECT_EQ(choose("F16", untied, "output.weight", 256), GGML_TYPE_F16);
    EXPECT_EQ(choose("BF16", untied, blk(3, "attn_v"), 256), GGML_TYPE_BF16);
    // An output matrix whose rows do not fit the base type's block gets Q8_0.
    EXPECT_EQ(choose("Q4_K_M", untied, "output.weight", 288), GGML_TYPE_Q8_0);
}

TEST(QuantizeMix, FallbackWhenRowsFitNoBlock) {
    EXPECT_EQ(quantize_fallback_type(GGML_TYPE_Q4_K, 256), GGML_TYPE_Q4_K);
    EXPECT_EQ(quantize_fallback_type(GGML_TYPE_Q4_K, 96), GGML_TYPE_Q5_0);
    EXPECT_EQ(quantize_fallback_type(GGML_TYPE_Q5_K, 96), GGML_TYPE_Q5_1);
    EXPECT_EQ(quantize_fallback_type(GGML_TYPE_Q6_K, 96), GGML_TYPE_Q8_0);
    EXPECT_EQ(quantize_fallback_type(GGML_TYPE_Q2_K, 96), GGML_TYPE_Q4_0);
    EXPECT_EQ(quantize_fallback_type(GGML_TYPE_Q3_K, 96), GGML_TYPE_Q4_0);
    EXPECT_EQ(quantize_fallback_type(GGML_TYPE_Q4_K, 100), GGML_TYPE_F16);
    EXPECT_EQ(quantize_fallback_type(GGML_TYPE_Q8_0, 100), GGML_TYPE_F16);
    EXPECT_EQ(quantize_fallback_type(GGML_TYPE_F16, 7), GGML_TYPE_F16);
    EXPECT_EQ(quantize_fallback_type(GGML_TYPE_IQ4_XS, 96), GGML_TYPE_IQ4_NL);
    EXPECT_EQ(quantize_fallback_type(GGML_TYPE_IQ4_XS, 100), GGML_TYPE_F16);
    EXPECT_EQ(quantize_fallback_type(GGML_TYPE_IQ4_NL, 96), GGML_TYPE_IQ4_NL);
    EXPECT_EQ(quantize_fallback_type(GGML_TYPE_IQ4_NL, 100), GGML_TYPE_F16);

    const quantize_tensor_choice c = quantize_mix_choose(mix("Q4_K_M"), llama_info(4), "blk.0.ffn_up.weight", 100);
    EXPECT_TRUE(c.fallback);
    EXPECT_EQ(c.type, GGML_TYPE_F16);
    EXPECT_NE(c.message.find("100"), std::string::npos) << c.message;
    EXPECT_NE(c.message.find("q4_K"), std::string::npos) << c.message;
    EXPECT_NE(c.message.find("f16"), std::string::npos) << c.message;
    const quantize_tensor_choice ok = quantize_mix_choose(mix("Q4_K_M"), llama_info(4), "blk.0.ffn_up.weight", 512);
    EXPECT_FALSE(ok.fallback);
    EXPECT_TRUE(ok.message.empty());
}

TEST(QuantizeMix, WhichTensorsAreQuantized) {
    EXPECT_TRUE(quantize_tensor_is_quantizable("blk.0.attn_q.weight", 2));
    EXPECT_TRUE(quantize_tensor_is_quantizable("token_embd.weight", 2));
    EXPECT_TRUE(quantize_tensor_is_quantizable("blk.0.ffn_down_exps.weight", 3));
    EXPECT_FALSE(quantize_tensor_is_quantizable("blk.0.attn_q.weight", 1));
    EXPECT_FALSE(quantize_tensor_is_quantizable("blk.0.attn_norm.weight", 2));
    EXPECT_FALSE(quantize_tensor_is_quantizable("blk.0.attn_q.bias", 2));
    EXPECT_FALSE(quantize_tensor_is_quantizable("position_embd.weight", 2));
    EXPECT_FALSE(quantize_tensor_is_quantizable("blk.0.ffn_gate_inp.weight", 2));
}

TEST(QuantizeMix, LayerIndexAndModelInfo) {
    EXPECT_EQ(quantize_tensor_layer("blk.17.attn_v.weight"), 17);
    EXPECT_EQ(quantize_tensor_layer("blk.0.ffn_down.weight"), 0);
    EXPECT_EQ(quantize_tensor_layer("output.weight"), -1);
    EXPECT_EQ(quantize_tensor_layer("blk.x.attn_v.weight"), -1);
    EXPECT_EQ(quantize_tensor_layer("blk.3"), -1);
    const quantize_model_info info = quantize_model_info_from_names(
        {"token_embd.weight", "blk.0.attn_v.weight", "blk.5.attn_v.weight", "output.weight"}, 2, 4);
    EXPECT_EQ(info.n_layers, 6);
    EXPECT_EQ(info.n_gqa, 4);
    EXPECT_TRUE(info.has_output);
    EXPECT_FALSE(quantize_model_info_from_names({"token_embd.weight"}, 8, 0).has_output);
    EXPECT_EQ(quantize_model_info_from_names({"token_embd.weight"}, 8, 0).n_gqa, 1);
}

TEST(ToolArgs, ParsesPositionalsOptionsAndHelp) {
    tool_args a;
    std::string err;
    ASSERT_TRUE(tool_args_parse({"in", "-t", "3", "out", "--threads=5", "q4_0"}, {{"-t", "--threads"}}, &a, &err)) << err;
    EXPECT_EQ(a.positional, (std::vector<std::string>{"in", "out", "q4_0"}));
    ASSERT_NE(a.option("--threads"), nullptr);
    EXPECT_EQ(*a.option("--threads"), "5");
    EXPECT_FALSE(a.help);
    ASSERT_TRUE(tool_args_parse({"--help"}, {}, &a, &err));
    EXPECT_TRUE(a.help);
    ASSERT_TRUE(tool_args_parse({"--", "-x", "-"}, {}, &a, &err));
    EXPECT_EQ(a.positional, (std::vector<std::string>{"-x", "-"}));
    EXPECT_FALSE(tool_args_parse({"--bogus"}, {{"-t", "--threads"}}, &a, &err));
    EXPECT_NE(err.find("--bogus"), std::string::npos);
    EXPECT_FALSE(tool_args_parse({"-t"}, {{"-t", "--threads"}}, &a, &err));
    EXPECT_NE(err.find("wants a value"), std::string::npos);
    int v = 0;
    EXPECT_TRUE(tool_args_parse_int("12", 1, 64, &v));
    EXPECT_EQ(v, 12);
    EXPECT_FALSE(tool_args_parse_int("0", 1, 64, &v));
    EXPECT_FALSE(tool_args_parse_int("12x", 1, 64, &v));
    EXPECT_FALSE(tool_args_parse_int("", 1, 64, &v));
}

TEST(QuantizeProgress, LinesNameTensorTypesSizesAndTotal) {
    EXPECT_EQ(quantize_format_bytes(512), "512 B");
    EXPECT_EQ(quantize_format_bytes(36864), "36.0 KiB");
    EXPECT_EQ(quantize_format_bytes(size_t(3) << 20), "3.0 MiB");
    EXPECT_EQ(quantize_format_shape({256, 4096}), "[256, 4096]");
    quantize_progress_tensor t;
    t.name = "blk.0.attn_q.weight";
    t.shape = {256, 256};
    t.from = GGML_TYPE_F32;
    t.to = GGML_TYPE_Q4_K;
    t.bytes_in = 262144;
    t.bytes_out = 36864;
    t.seconds = 0.0012;
    t.converted = true;
    const std::string line = quantize_progress_line(3, 39, t);
    for (const char * part : {"[ 3/39]", "blk.0.attn_q.weight", "[256, 256]", "f32", "q4_K", "256.0 KiB", "36.0 KiB", "1.2 ms"}) {
        EXPECT_NE(line.find(part), std::string::npos) << part << " in " << line;
    }
    t.converted = false;
    EXPECT_NE(quantize_progress_line(3, 39, t).find("copied"), std::string::npos);
    const std::string total = quantize_progress_total_line(4 << 20, 1 << 20, 1 << 20, 2.5);
    for (const char * part : {"4.0 MiB", "1.0 MiB", "25.0% of the input", "8.00 bits per weight", "2.50 s"}) {
        EXPECT_NE(total.find(part), std::string::npos) << part << " in " << total;
    }
}

}  // namespace
