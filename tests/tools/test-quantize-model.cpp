// inferd-quantize on the shipped models: tiny-llama-f32 to Q8_0 / Q4_0 / Q4_K_M / Q6_K gives every
// tensor the type of the llama.cpp-quantized file of that mix, with a per-tensor RMSE against the
// F32 source of at most 1.05x the shipped file's; the output re-reads with metadata kept and the
// file type updated; rows that fit no block fall back with a message naming the tensor.
#include "quantize-model.h"
#include "tensor-convert.h"
#include "testdata.h"
#include "tools-test-util.h"

#include "ggml/gguf.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>

namespace {

std::unique_ptr<gguf_file> open_or_fail(const std::string & path) {
    std::unique_ptr<gguf_file> f;
    const gguf_result r = gguf_file::open(path, gguf_open_options{}, &f);
    EXPECT_TRUE(r) << path << ": " << r.message;
    return f;
}

std::vector<float> tensor_f32(const gguf_file & f, const gguf_tensor_info & t) {
    std::vector<float> out(size_t(t.n_elements));
    std::string err;
    EXPECT_TRUE(tensor_rows_to_f32(t.type, f.tensor_data(t), t.ne[0], t.n_rows(), out.data(), 2, &err)) << t.name << ": " << err;
    return out;
}

double rmse(const std::vector<float> & a, const std::vector<float> & b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    return a.empty() ? 0.0 : std::sqrt(s / double(a.size()));
}

bool run_quantize(const std::string & in, const std::string & out, const char * mix, quantize_model_stats * stats,
                  std::string * log) {
    quantize_model_params p;
    p.input_path = in;
    p.output_path = out;
    p.mix = quantize_mix_find(mix);
    p.n_threads = 2;
    tools_capture cap;
    p.log = cap.get();
    std::string err;
    const bool ok = quantize_model(p, stats, &err);
    EXPECT_TRUE(ok) << err;
    if (log) *log = cap.text();
    return ok;
}

// Every key of the source is in the output with the same value, except the two the quantizer sets.
void expect_metadata_kept(const gguf_metadata & src, const gguf_metadata & out) {
    for (const gguf_kv & kv : src.kvs()) {
        if (kv.key == "general.file_type" || kv.key == "general.quantization_version") continue;
        const gguf_value * v = out.find(kv.key);
        ASSERT_NE(v, nullptr) << kv.key;
        EXPECT_TRUE(*v == kv.value) << kv.key;
    }
}

class QuantizeShippedMix : public ::testing::TestWithParam<const char *> {};

TEST_P(QuantizeShippedMix, TypesMatchAndRmseWithin5PercentOfTheShippedFile) {
    INFERD_REQUIRE_TESTDATA(dir);
    tools_scratch_dir tmp;
    std::string mix_lower = GetParam();
    for (char & c : mix_lower) c = char(std::tolower(static_cast<unsigned char>(c)));
    const std::string out_path = tmp.file("out.gguf");
    quantize_model_stats stats;
    ASSERT_TRUE(run_quantize(dir + "/models/tiny-llama-f32.gguf", out_path, GetParam(), &stats, nullptr));
    EXPECT_EQ(stats.n_fallback, 0u);
    EXPECT_FALSE(std::filesystem::exists(out_path + ".part"));

    const auto src = open_or_fail(dir + "/models/tiny-llama-f32.gguf");
    const auto ours = open_or_fail(out_path);
    const auto shipped = open_or_fail(dir + "/models/tiny-llama-" + mix_lower + ".gguf");
    ASSERT_TRUE(src && ours && shipped);
    ASSERT_EQ(ours->n_tensors(), src->n_tensors());
    expect_metadata_kept(src->metadata(), ours->metadata());
    uint64_t ft = 0, shipped_ft = 1, qv = 0;
    EXPECT_TRUE(ours->metadata().get_uint("general.file_type", &ft));
    EXPECT_TRUE(shipped->metadata().get_uint("general.file_type", &shipped_ft));
    EXPECT_EQ(ft, shipped_ft);
    EXPECT_EQ(ft, uint64_t(quantize_mix_find(GetParam())->file_type));
    EXPECT_TRUE(ours->metadata().get_uint("general.quantization_version", &qv));
    EXPECT_EQ(qv, 2u);

    std::vector<double> ratios;
    for (size_t i = 0; i < src->n_tensors(); ++i) {
        const gguf_tensor_info & ts = src->tensor(i);
        const gguf_tensor_info & to = ours->tensor(i);
        const gguf_tensor_info * th = shipped->find_tensor(ts.name);
        ASSERT_NE(th, nullptr) << ts.name;
        EXPECT_EQ(to.name, ts.name);
        EXPECT_EQ(ggml_type_name(to.type), std::string(ggml_type_name(th->type))) << ts.name;
        EXPECT_TRUE(std::equal(to.ne, to.ne + 4, ts.ne)) << ts.name;
        const std::vector<float> ref = tensor_f32(*src, ts);
        const double e_ours = rmse(tensor_f32(*ours, to), ref);
        const double e_shipped = rmse(tensor_f32(*shipped, *th), ref);
        if (e_shipped == 0.0) {
            EXPECT_EQ(e_ours, 0.0) << ts.name;
            continue;
        }
        ratios.push_back(e_ours / e_shipped);
        EXPECT_LE(e_ours, 1.05 * e_shipped) << ts.name << " (" << ggml_type_name(to.type) << "): rmse " << e_ours
                                            << " vs shipped " << e_shipped;
    }
    ASSERT_FALSE(ratios.empty());
    std::sort(ratios.begin(), ratios.end());
    std::printf("%s: rmse ratio ours/shipped over %zu tensors: min %.4f median %.4f max %.4f\n", GetParam(),
                ratios.size(), ratios.front(), ratios[ratios.size() / 2], ratios.back());
}

INSTANTIATE_TEST_SUITE_P(Tools, QuantizeShippedMix, ::testing::Values("Q8_0", "Q4_0", "Q4_K_M", "Q6_K"));

TEST(QuantizeModel, RowsThatFitNoBlockFallBackWithAMessage) {
    INFERD_REQUIRE_TESTDATA(dir);
    tools_scratch_dir tmp;
    // stories260K: n_embd 64 and n_ff 172 fit no 256-element K block; 172 fits no 32-element block.
    const std::string in_path = dir + "/models/stories260K-f32.gguf";
    const std::string out_path = tmp.file("out.gguf");
    quantize_model_stats stats;
    std::string log;
    ASSERT_TRUE(run_quantize(in_path, out_path, "q4_k_m", &stats, &log));
    EXPECT_GT(stats.n_fallback, 0u);
    const auto src = open_or_fail(in_path);
    const auto out = open_or_fail(out_path);
    ASSERT_TRUE(src && out);
    const gguf_tensor_info * q = out->find_tensor("blk.0.attn_q.weight");
    const gguf_tensor_info * down = out->find_tensor("blk.0.ffn_down.weight");
    const gguf_tensor_info * output = out->find_tensor("output.weight");
    ASSERT_TRUE(q && down && output);
    EXPECT_EQ(q->type, GGML_TYPE_Q5_0);   // Q4_K -> Q5_0 for rows of 64
    EXPECT_EQ(down->type, GGML_TYPE_F16); // Q4_K -> Q5_0 does not fit 172 either -> F16
    EXPECT_EQ(output->type, GGML_TYPE_Q8_0);
    for (const char * part : {"blk.0.attn_q.weight: rows of 64 elements", "using q5_0", "blk.0.ffn_down.weight: rows of 172",
                              "using f16"}) {
        EXPECT_NE(log.find(part), std::string::npos) << "missing '" << part << "' in:\n" << log;
    }
    EXPECT_TRUE(std::any_of(stats.notes.begin(), stats.notes.end(),
                            [](const std::string & n) { return n.find("blk.0.ffn_down.weight") != std::string::npos; }));
    // The fallback tensors still hold the weights.
    const std::vector<float> ref = tensor_f32(*src, *src->find_tensor("blk.0.ffn_down.weight"));
    EXPECT_LT(rmse(tensor_f32(*out, *down), ref), 1e-3);
}

TEST(QuantizeModel, F16AndBF16MatchTheShippedFilesByteForByte) {
    INFERD_REQUIRE_TESTDATA(dir);
    tools_scratch_dir tmp;
    for (const char * mix : {"f16", "bf16"}) {
        SCOPED_TRACE(mix);
        quantize_model_stats stats;
        ASSERT_TRUE(run_quantize(dir + "/models/tiny-llama-f32.gguf", tmp.file("out.gguf"), mix, &stats, nullptr));
        const auto ours = open_or_fail(tmp.file("out.gguf"));
        const auto shipped = open_or_fail(dir + "/models/tiny-llama-" + mix + ".gguf");
        ASSERT_TRUE(ours && shipped);
        ASSERT_EQ(ours->n_tensors(), shipped->n_tensors());
        for (const gguf_tensor_info & t : ours->tensors()) {
            const gguf_tensor_info * s = shipped->find_tensor(t.name);
            ASSERT_NE(s, nullptr) << t.name;
            EXPECT_EQ(t.type, s->type) << t.name;
            ASSERT_EQ(t.size, s->size) << t.name;
            EXPECT_EQ(std::memcmp(ours->tensor_data(t), shipped->tensor_data(*s), t.size), 0) << t.name;
        }
    }
}

TEST(QuantizeModel, F16OutputAndRequantizingAQuantizedInput) {
    INFERD_REQUIRE_TESTDATA(dir);
    tools_scratch_dir tmp;
    quantize_model_stats stats;
    // From the shipped Q8_0 file (dequantized first) to F16: the F16 values are the Q8_0 values rounded.
    const std::string in_path = dir + "/models/tiny-qwen2-q8_0.gguf";
    ASSERT_TRUE(run_quantize(in_path, tmp.file("f16.gguf"), "F16", &stats, nullptr));
    const auto in = open_or_fail(in_path);
    const auto out = open_or_fail(tmp.file("f16.gguf"));
    ASSERT_TRUE(in && out);
    uint64_t ft = 0;
    EXPECT_TRUE(out->metadata().get_uint("general.file_type", &ft));
    EXPECT_EQ(ft, 1u);
    for (const gguf_tensor_info & t : out->tensors()) {
        const gguf_tensor_info * ti = in->find_tensor(t.name);
        ASSERT_NE(ti, nullptr);
        if (t.n_dims == 1) {
            EXPECT_EQ(t.type, ti->type) << t.name;
            EXPECT_EQ(std::memcmp(out->tensor_data(t), in->tensor_data(*ti), t.size), 0) << t.name;
            continue;
        }
        EXPECT_EQ(t.type, GGML_TYPE_F16) << t.name;
        const std::vector<float> a = tensor_f32(*in, *ti);
        const std::vector<float> b = tensor_f32(*out, t);
        size_t mismatches = 0;
        for (size_t i = 0; i < a.size(); ++i) mismatches += ggml_fp16_to_fp32(ggml_fp32_to_fp16(a[i])) != b[i];
        EXPECT_EQ(mismatches, 0u) << t.name;
    }
}

TEST(QuantizeModel, Q3KMMixOnTinyLlama) {
    INFERD_REQUIRE_TESTDATA(dir);
    tools_scratch_dir tmp;
    quantize_model_stats stats;
    ASSERT_TRUE(run_quantize(dir + "/models/tiny-llama-f32.gguf", tmp.file("q3.gguf"), "Q3_K_M", &stats, nullptr));
    const auto out = open_or_fail(tmp.file("q3.gguf"));
    ASSERT_TRUE(out);
    EXPECT_EQ(out->find_tensor("output.weight")->type, GGML_TYPE_Q6_K);
    EXPECT_EQ(out->find_tensor("token_embd.weight")->type, GGML_TYPE_Q3_K);
    EXPECT_EQ(out->find_tensor("blk.0.attn_v.weight")->type, GGML_TYPE_Q5_K);
    EXPECT_EQ(out->find_tensor("blk.2.attn_v.weight")->type, GGML_TYPE_Q4_K);
    EXPECT_EQ(out->find_tensor("blk.3.ffn_down.weight")->type, GGML_TYPE_Q4_K);
    EXPECT_EQ(out->find_tensor("blk.3.attn_output.weight")->type, GGML_TYPE_Q4_K);
    EXPECT_EQ(out->find_tensor("blk.3.ffn_up.weight")->type, GGML_TYPE_Q3_K);
    EXPECT_EQ(out->find_tensor("blk.3.ffn_norm.weight")->type, GGML_TYPE_F32);
    uint64_t ft = 0;
    EXPECT_TRUE(out->metadata().get_uint("general.file_type", &ft));
    EXPECT_EQ(ft, 12u);
}

TEST(QuantizeTool, UsageAndErrors) {
    tools_scratch_dir tmp;
    tools_capture out, err;
    EXPECT_EQ(quantize_tool_main({}, out.get(), err.get()), 2);
    EXPECT_EQ(quantize_tool_main({"a", "b", "Q4_K_X"}, out.get(), err.get()), 2);
    EXPECT_NE(err.text().find("unknown type 'Q4_K_X'"), std::string::npos);
    EXPECT_EQ(quantize_tool_main({"a", "b", "q4_0", "--threads", "0"}, out.get(), err.get()), 2);
    EXPECT_EQ(quantize_tool_main({"--help"}, out.get(), err.get()), 0);
    EXPECT_NE(out.text().find("Q4_K_M"), std::string::npos);
    EXPECT_EQ(quantize_tool_main({tmp.file("missing.gguf"), tmp.file("o.gguf"), "q4_0"}, out.get(), err.get()), 1);
    EXPECT_NE(err.text().find("missing.gguf"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(tmp.file("o.gguf")));
    EXPECT_FALSE(std::filesystem::exists(tmp.file("o.gguf.part")));
}

TEST(QuantizeTool, UnwritableOutputAndSameFile) {
    INFERD_REQUIRE_TESTDATA(dir);
    tools_scratch_dir tmp;
    tools_capture out, err;
    const std::string in = dir + "/models/stories260K-f16.gguf";
    EXPECT_EQ(quantize_tool_main({in, tmp.file("no-dir/o.gguf"), "q8_0"}, out.get(), err.get()), 1);
    EXPECT_NE(err.text().find("no-dir/o.gguf"), std::string::npos) << err.text();
    EXPECT_EQ(quantize_tool_main({in, in, "q8_0"}, out.get(), err.get()), 1);
    EXPECT_NE(err.text().find("is the input file"), std::string::npos) << err.text();
}

}  // namespace
