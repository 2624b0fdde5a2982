// inferd-gguf: dequant reproduces the reference rows bit for bit, the held-out types survive a
// quantize -> write -> read -> dequant round trip exactly, info lists every shipped file, and
// bad files / missing tensors / unwritable outputs / usage errors give their exit codes.
#include "gguf-inspect.h"
#include "testdata.h"
#include "tools-test-util.h"

#include "ggml/gguf.h"
#include "ggml/quants.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

namespace {

struct tool_run {
    int rc;
    std::string out;
    std::string err;
};

tool_run run_gguf_tool(const std::vector<std::string> & args) {
    tools_capture out, err;
    const int rc = gguf_tool_main(args, out.get(), err.get());
    return {rc, out.text(), err.text()};
}

TEST(GgufToolDequant, ReproducesTheReferenceRowsBitForBit) {
    INFERD_REQUIRE_TESTDATA(dir);
    tools_scratch_dir tmp;
    std::ifstream jf(dir + "/reference/dequant/dequant.json");
    ASSERT_TRUE(jf.good());
    const nlohmann::json refs = nlohmann::json::parse(jf);
    ASSERT_GE(refs.size(), 8u);
    for (const auto & ref : refs) {
        const std::string file = ref["file"], tensor = ref["tensor"], values = ref["values"];
        SCOPED_TRACE(file + " " + tensor + " (" + std::string(ref["type"]) + ")");
        const int64_t ne0 = ref["ne"][0], ne1 = ref["ne"][1], rows = ref["rows"];
        const std::string out = tmp.file("out.f32");
        const tool_run r = run_gguf_tool({"dequant", dir + "/models/" + file, tensor, out});
        ASSERT_EQ(r.rc, 0) << r.err;
        const std::vector<char> got = tools_read_file(out);
        ASSERT_EQ(got.size(), size_t(ne0 * ne1) * sizeof(float));
        const std::vector<char> want = tools_read_file(dir + "/reference/dequant/" + values);
        ASSERT_EQ(want.size(), size_t(ne0 * rows) * sizeof(float));
        EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size()), 0) << "dequantized rows differ";
        // The reference's type is the tensor's type in the file.
        std::unique_ptr<gguf_file> f;
        ASSERT_TRUE(gguf_file::open(dir + "/models/" + file, gguf_open_options{}, &f));
        std::string type_name = ggml_type_name(f->find_tensor(tensor)->type);
        for (char & c : type_name) c = char(std::toupper(static_cast<unsigned char>(c)));
        EXPECT_EQ(type_name, std::string(ref["type"]));
    }
}

// The blocks' own dequantization, through the type's function (not the traits table).
void dequantize_reference(ggml_type type, const void * src, float * dst, int64_t n) {
    switch (type) {
        case GGML_TYPE_Q4_0: ggml_dequantize_row_q4_0(static_cast<const block_q4_0 *>(src), dst, n); break;
        case GGML_TYPE_Q4_1: ggml_dequantize_row_q4_1(static_cast<const block_q4_1 *>(src), dst, n); break;
        case GGML_TYPE_Q5_0: ggml_dequantize_row_q5_0(static_cast<const block_q5_0 *>(src), dst, n); break;
        case GGML_TYPE_Q5_1: ggml_dequantize_row_q5_1(static_cast<const block_q5_1 *>(src), dst, n); break;
        case GGML_TYPE_Q8_0: ggml_dequantize_row_q8_0(static_cast<const block_q8_0 *>(src), dst, n); break;
        case GGML_TYPE_Q2_K: ggml_dequantize_row_q2_K(static_cast<const block_q2_K *>(src), dst, n); break;
        case GGML_TYPE_Q3_K: ggml_dequantize_row_q3_K(static_cast<const block_q3_K *>(src), dst, n); break;
        case GGML_TYPE_Q4_K: ggml_dequantize_row_q4_K(static_cast<const block_q4_K *>(src), dst, n); break;
        case GGML_TYPE_Q5_K: ggml_dequantize_row_q5_K(static_cast<const block_q5_K *>(src), dst, n); break;
        case GGML_TYPE_Q6_K: ggml_dequantize_row_q6_K(static_cast<const block_q6_K *>(src), dst, n); break;
        case GGML_TYPE_F16: ggml_fp16_to_fp32_row(static_cast<const ggml_fp16_t *>(src), dst, n); break;
        case GGML_TYPE_BF16: ggml_bf16_to_fp32_row(static_cast<const ggml_bf16_t *>(src), dst, n); break;
        default: FAIL() << "no reference for " << ggml_type_name(type);
    }
}

TEST(GgufToolDequant, HeldOutTypesRoundTripExactly) {
    tools_scratch_dir tmp;
    const ggml_type types[] = {GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K,
                               GGML_TYPE_Q5_K, GGML_TYPE_Q4_0, GGML_TYPE_Q8_0, GGML_TYPE_Q4_K, GGML_TYPE_Q6_K,
                               GGML_TYPE_F16,  GGML_TYPE_BF16};
    constexpr int64_t ne0 = 512, ne1 = 6;
    std::mt19937 rng(1234);
    std::normal_distribution<float> dist(0.0f, 0.05f);
    std::vector<float> src(size_t(ne0 * ne1));
    gguf_writer w;
    std::vector<std::vector<uint8_t>> blocks;
    for (ggml_type t : types) {
        for (float & v : src) v = dist(rng);
        std::vector<uint8_t> q(ggml_row_size(t, ne0) * ne1);
        ASSERT_EQ(ggml_quantize_chunk(t, src.data(), q.data(), 0, ne1, ne0, nullptr), q.size()) << ggml_type_name(t);
        blocks.push_back(std::move(q));
        ASSERT_TRUE(w.add_tensor(std::string("t.") + ggml_type_name(t), t, {ne0, ne1}, blocks.back().data()));
    }
    const std::string path = tmp.file("held-out.gguf");
    const gguf_result wr = w.write_file(path);
    ASSERT_TRUE(wr) << wr.message;
    for (size_t i = 0; i < std::size(types); ++i) {
        const ggml_type t = types[i];
        SCOPED_TRACE(ggml_type_name(t));
        std::vector<float> want(size_t(ne0 * ne1));
        dequantize_reference(t, blocks[i].data(), want.data(), ne0 * ne1);
        const std::string out = tmp.file("out.f32");
        const tool_run r = run_gguf_tool({"dequant", path, std::string("t.") + ggml_type_name(t), out, "-t", "2"});
        ASSERT_EQ(r.rc, 0) << r.err;
        const std::vector<float> got = tools_read_f32(out);
        ASSERT_EQ(got.size(), want.size());
        EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0);
    }
}

TEST(GgufToolInfo, ListsMetadataAndTheTensorTable) {
    INFERD_REQUIRE_TESTDATA(dir);
    const tool_run r = run_gguf_tool({"info", dir + "/models/tiny-llama-q4_k_m.gguf"});
    ASSERT_EQ(r.rc, 0) << r.err;
    for (const char * part : {"version: 3", "alignment: 32", "tensor count: 39", "general.architecture", "\"llama\"",
                              "general.file_type", "tokenizer.ggml.tokens", "arr[str,4096]", "(4096 elements)",
                              "\"<unk>\", \"<s>\", \"</s>\"", "tokenizer.chat_template", "\\n",
                              "llama.attention.layer_norm_rms_epsilon", "blk.2.attn_v.weight", "q6_K", "[256, 128]",
                              "output_norm.weight", "f32", "[256]", "860160"}) {
        EXPECT_NE(r.out.find(part), std::string::npos) << "missing '" << part << "' in:\n" << r.out.substr(0, 4000);
    }
}

TEST(GgufToolInfo, EveryShippedFileLoads) {
    INFERD_REQUIRE_TESTDATA(dir);
    size_t n = 0;
    for (const char * sub : {"/models", "/vocab"}) {
        for (const auto & e : std::filesystem::directory_iterator(dir + sub)) {
            if (e.path().extension() != ".gguf") continue;
            const tool_run r = run_gguf_tool({"info", e.path().string()});
            EXPECT_EQ(r.rc, 0) << e.path() << ": " << r.err;
            EXPECT_NE(r.out.find("tensor count:"), std::string::npos) << e.path();
            ++n;
        }
    }
    EXPECT_GE(n, 14u);
}

TEST(GgufToolErrors, BadFilesMissingTensorsAndUnwritableOutputs) {
    INFERD_REQUIRE_TESTDATA(dir);
    tools_scratch_dir tmp;
    const std::string model = dir + "/models/tiny-llama-q4_0.gguf";
    tool_run r = run_gguf_tool({"info", tmp.file("does-not-exist.gguf")});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("does-not-exist.gguf"), std::string::npos) << r.err;
    // Truncated: the first 4000 bytes of a real file (inside the tokenizer metadata).
    const std::vector<char> bytes = tools_read_file(model);
    ASSERT_GT(bytes.size(), 4000u);
    for (size_t keep : {size_t(3), size_t(20), size_t(4000), bytes.size() - 1000}) {
        const std::string cut = tmp.file("cut.gguf");
        std::ofstream(cut, std::ios::binary).write(bytes.data(), std::streamsize(keep));
        r = run_gguf_tool({"info", cut});
        EXPECT_EQ(r.rc, 1) << "kept " << keep << " bytes";
        EXPECT_FALSE(r.err.empty());
    }
    r = run_gguf_tool({"dequant", model, "no.such.tensor", tmp.file("x.f32")});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("no.such.tensor"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(tmp.file("x.f32")));
    r = run_gguf_tool({"dequant", model, "output.weight", tmp.file("no-dir/x.f32")});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("no-dir/x.f32"), std::string::npos) << r.err;
}

TEST(GgufToolErrors, UsageErrorsAndHelp) {
    tool_run r = run_gguf_tool({});
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("usage:"), std::string::npos);
    EXPECT_EQ(run_gguf_tool({"bogus", "x"}).rc, 2);
    EXPECT_EQ(run_gguf_tool({"info"}).rc, 2);
    EXPECT_EQ(run_gguf_tool({"info", "a", "b"}).rc, 2);
    EXPECT_EQ(run_gguf_tool({"dequant", "a", "b"}).rc, 2);
    EXPECT_EQ(run_gguf_tool({"dequant", "a", "b", "c", "--threads", "zero"}).rc, 2);
    EXPECT_EQ(run_gguf_tool({"info", "a", "--frobnicate"}).rc, 2);
    r = run_gguf_tool({"--help"});
    EXPECT_EQ(r.rc, 0);
    EXPECT_NE(r.out.find("usage: inferd-gguf info FILE"), std::string::npos);
    EXPECT_TRUE(r.err.empty());
}

TEST(GgufToolValues, RenderingOfTypesAndValues) {
    EXPECT_EQ(gguf_inspect_value_type(gguf_value::from_u32(7)), "u32");
    EXPECT_EQ(gguf_inspect_value_text(gguf_value::from_u32(7)), "7");
    EXPECT_EQ(gguf_inspect_value_text(gguf_value::from_i32(-3)), "-3");
    EXPECT_EQ(gguf_inspect_value_text(gguf_value::from_bool(true)), "true");
    EXPECT_EQ(gguf_inspect_value_text(gguf_value::from_f32(0.5f)), "0.5");
    EXPECT_EQ(gguf_inspect_value_text(gguf_value::from_string("a\"b\nc")), "\"a\\\"b\\nc\"");
    const std::vector<int32_t> many = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    const gguf_value arr = gguf_value::from_array_i32(many);
    EXPECT_EQ(gguf_inspect_value_type(arr), "arr[i32,10]");
    EXPECT_EQ(gguf_inspect_value_text(arr), "[1, 2, 3, 4, 5, 6, ... (10 elements)]");
    const std::vector<int32_t> two = {1, 2};
    const gguf_value nested = gguf_value::from_array_arrays({gguf_value::from_array_i32(two), gguf_value::from_array_i32(two)});
    EXPECT_EQ(gguf_inspect_value_type(nested), "arr[arr,2]");
    EXPECT_EQ(gguf_inspect_value_text(nested), "[[1, 2], [1, 2]]");
    const std::string long_string(500, 'x');
    const std::string shown = gguf_inspect_value_text(gguf_value::from_string(long_string));
    EXPECT_LT(shown.size(), 120u);
    EXPECT_NE(shown.find("(500 bytes)"), std::string::npos);
}

}  // namespace
