// The codebook formats in the tools: inferd-quantize's IQ4_NL and IQ4_XS mixes on the shipped
// models (types per tensor, general.file_type 25 / 30, error against the F32 source below the
// shipped Q4_0 file's, the IQ4_XS -> IQ4_NL fallback for short rows), and inferd-gguf info /
// dequant on files holding IQ4_NL, IQ4_XS and MXFP4 tensors (the reference engine's rows bit for
// bit; a row length that fits no block is refused with a message, not a crash).
#include "gguf-inspect.h"
#include "quantize-model.h"
#include "tensor-convert.h"
#include "testdata.h"
#include "tools-test-util.h"

#include "ggml/gguf.h"
#include "ggml/quants.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <tuple>

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
    EXPECT_TRUE(tensor_rows_to_f32(t.type, f.tensor_data(t), t.ne[0], t.n_rows(), out.data(), 2, &err)) << err;
    return out;
}

double rmse(const std::vector<float> & a, const std::vector<float> & b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    return a.empty() ? 0.0 : std::sqrt(s / double(a.size()));
}

bool run_quantize(const std::string & in, const std::string & out, const char * mix, std::string * log) {
    quantize_model_params p;
    p.input_path = in;
    p.output_path = out;
    p.mix = quantize_mix_find(mix);
    p.n_threads = 2;
    tools_capture cap;
    p.log = cap.get();
    std::string err;
    quantize_model_stats stats;
    const bool ok = p.mix && quantize_model(p, &stats, &err);
    EXPECT_TRUE(ok) << err;
    if (log) *log = cap.text();
    return ok;
}

struct tool_run {
    int rc;
    std::string out, err;
};

tool_run run_gguf_tool(const std::vector<std::string> & args) {
    tools_capture out, err;
    const int rc = gguf_tool_main(args, out.get(), err.get());
    return {rc, out.text(), err.text()};
}

}  // namespace

TEST(QuantizeIq, TinyLlamaToTheIQ4Mixes) {
    INFERD_REQUIRE_TESTDATA(dir);
    tools_scratch_dir tmp;
    const auto src = open_or_fail(dir + "/models/tiny-llama-f32.gguf");
    const auto q4_0 = open_or_fail(dir + "/models/tiny-llama-q4_0.gguf");
    ASSERT_TRUE(src && q4_0);
    for (const auto & [mix, type, file_type] : {std::tuple{"IQ4_NL", GGML_TYPE_IQ4_NL, 25u},
                                                std::tuple{"IQ4_XS", GGML_TYPE_IQ4_XS, 30u}}) {
        SCOPED_TRACE(mix);
        const std::string path = tmp.file(std::string(mix) + ".gguf");
        ASSERT_TRUE(run_quantize(dir + "/models/tiny-llama-f32.gguf", path, mix, nullptr));
        const auto out = open_or_fail(path);
        ASSERT_TRUE(out);
        uint64_t ft = 0;
        EXPECT_TRUE(out->metadata().get_uint("general.file_type", &ft));
        EXPECT_EQ(ft, uint64_t(file_type));
        ASSERT_EQ(out->n_tensors(), src->n_tensors());
        // 8 query heads over 4 KV heads and 4 layers: no upgrade rule applies; output in Q6_K
        for (const gguf_tensor_info & t : out->tensors()) {
            const ggml_type want = t.n_dims == 1 ? GGML_TYPE_F32 : t.name == "output.weight" ? GGML_TYPE_Q6_K : type;
            EXPECT_EQ(t.type, want) << t.name;
        }
        // below the error of the shipped Q4_0 file (4.5 bits per weight as well)
        for (const char * name : {"token_embd.weight", "blk.0.attn_q.weight", "blk.1.attn_v.weight",
                                  "blk.3.ffn_down.weight", "blk.2.ffn_up.weight"}) {
            const std::vector<float> ref = tensor_f32(*src, *src->find_tensor(name));
            const double ours = rmse(tensor_f32(*out, *out->find_tensor(name)), ref);
            const double shipped = rmse(tensor_f32(*q4_0, *q4_0->find_tensor(name)), ref);
            EXPECT_LT(ours, shipped) << name;
            std::printf("%s %-24s rmse %.6g (shipped q4_0 %.6g, ratio %.3f)\n", mix, name, ours, shipped, ours / shipped);
        }
    }
}

TEST(QuantizeIq, ShortRowsFallBackToIQ4NLAndF16) {
    INFERD_REQUIRE_TESTDATA(dir);
    tools_scratch_dir tmp;
    // stories260K: rows of 64 fit IQ4_NL's 32-element blocks, not IQ4_XS's 256; rows of 172 fit neither
    std::string log;
    ASSERT_TRUE(run_quantize(dir + "/models/stories260K-f32.gguf", tmp.file("o.gguf"), "iq4_xs", &log));
    const auto out = open_or_fail(tmp.file("o.gguf"));
    ASSERT_TRUE(out);
    EXPECT_EQ(out->find_tensor("blk.0.attn_q.weight")->type, GGML_TYPE_IQ4_NL);
    EXPECT_EQ(out->find_tensor("blk.0.ffn_down.weight")->type, GGML_TYPE_F16);
    EXPECT_EQ(out->find_tensor("output.weight")->type, GGML_TYPE_Q8_0);
    for (const char * part : {"blk.0.attn_q.weight: rows of 64 elements", "iq4_xs block size 256", "using iq4_nl",
                              "blk.0.ffn_down.weight: rows of 172"}) {
        EXPECT_NE(log.find(part), std::string::npos) << "missing '" << part << "' in:\n" << log;
    }
}

TEST(QuantizeIq, HelpListsTheMixes) {
    tools_capture out, err;
    EXPECT_EQ(quantize_tool_main({"--help"}, out.get(), err.get()), 0);
    EXPECT_NE(out.text().find("IQ4_NL"), std::string::npos);
    EXPECT_NE(out.text().find("IQ4_XS"), std::string::npos);
}

// The reference engine's quantized rows in a file of our own: info names the type, dequant gives
// the reference floats bit for bit; every type also round-trips quantized random data exactly.
TEST(GgufToolIq, InfoAndDequantOfTheNewTypes) {
    INFERD_REQUIRE_TESTDATA(dir);
    tools_scratch_dir tmp;
    const ggml_type types[] = {GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS, GGML_TYPE_MXFP4};
    const char * files[] = {"IQ4_NL", "IQ4_XS", "MXFP4"};
    std::vector<std::vector<char>> raw;
    std::vector<std::vector<uint8_t>> random_rows;
    std::mt19937 rng(5);
    std::normal_distribution<float> g(0.0f, 0.05f);
    std::vector<float> src(512 * 3);
    gguf_writer w;
    for (size_t i = 0; i < 3; ++i) {
        raw.push_back(tools_read_file(dir + "/reference/dequant/raw/" + files[i] + ".rows.bin"));
        ASSERT_EQ(raw.back().size(), ggml_row_size(types[i], 256) * 4);
        ASSERT_TRUE(w.add_tensor(std::string("ref.") + files[i], types[i], {256, 4}, raw.back().data()));
        for (float & v : src) v = g(rng);
        random_rows.emplace_back(ggml_row_size(types[i], 512) * 3);
        ASSERT_EQ(ggml_quantize_chunk(types[i], src.data(), random_rows.back().data(), 0, 3, 512, nullptr),
                  random_rows.back().size());
        ASSERT_TRUE(w.add_tensor(std::string("rnd.") + files[i], types[i], {512, 3}, random_rows.back().data()));
    }
    const std::string path = tmp.file("iq.gguf");
    ASSERT_TRUE(w.write_file(path));
    const tool_run info = run_gguf_tool({"info", path});
    ASSERT_EQ(info.rc, 0) << info.err;
    for (const char * part : {"ref.IQ4_NL", "iq4_nl", "iq4_xs", "mxfp4", "[256, 4]", "[512, 3]", "tensor count: 6"}) {
        EXPECT_NE(info.out.find(part), std::string::npos) << "missing '" << part << "' in:\n" << info.out;
    }
    for (size_t i = 0; i < 3; ++i) {
        SCOPED_TRACE(files[i]);
        const std::string out = tmp.file("out.f32");
        tool_run r = run_gguf_tool({"dequant", path, std::string("ref.") + files[i], out});
        ASSERT_EQ(r.rc, 0) << r.err;
        const std::vector<char> want = tools_read_file(dir + "/reference/dequant/raw/" + files[i] + ".rows.f32");
        const std::vector<char> got = tools_read_file(out);
        ASSERT_EQ(got.size(), want.size());
        EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size()), 0) << "dequantized rows differ";
        r = run_gguf_tool({"dequant", path, std::string("rnd.") + files[i], out, "--threads", "2"});
        ASSERT_EQ(r.rc, 0) << r.err;
        std::vector<float> expect(512 * 3);
        ggml_get_type_traits(types[i]).to_float(random_rows[i].data(), expect.data(), 512 * 3);
        const std::vector<float> values = tools_read_f32(out);
        ASSERT_EQ(values.size(), expect.size());
        EXPECT_EQ(std::memcmp(values.data(), expect.data(), expect.size() * sizeof(float)), 0);
    }
}

// A file whose tensor of a new type has rows that are not whole blocks (ne[0] patched in the
// header) is refused by the reader, and the tools report it instead of crashing.
TEST(GgufToolIq, RowsThatAreNotWholeBlocksAreRefused) {
    tools_scratch_dir tmp;
    for (const auto & [type, good, bad] : {std::tuple{GGML_TYPE_IQ4_XS, 256, 128}, std::tuple{GGML_TYPE_IQ4_NL, 64, 48},
                                           std::tuple{GGML_TYPE_MXFP4, 64, 40}}) {
        SCOPED_TRACE(ggml_type_name(type));
        std::vector<uint8_t> data(ggml_row_size(type, good) * 2, 0x11);
        gguf_writer w;
        const std::string name = "w.bad_rows";
        ASSERT_TRUE(w.add_tensor(name, type, {int64_t(good), 2}, data.data()));
        std::vector<uint8_t> file;
        ASSERT_TRUE(w.write_to_buffer(&file));
        // tensor info: name (u64 length + bytes), n_dims (u32), then ne[0] (u64)
        const auto at = std::search(file.begin(), file.end(), name.begin(), name.end());
        ASSERT_NE(at, file.end());
        const size_t ne0_pos = size_t(at - file.begin()) + name.size() + 4;
        uint64_t ne0 = 0;
        std::memcpy(&ne0, file.data() + ne0_pos, 8);
        ASSERT_EQ(ne0, uint64_t(good));
        ne0 = uint64_t(bad);
        std::memcpy(file.data() + ne0_pos, &ne0, 8);
        const std::string path = tmp.file("bad.gguf");
        std::ofstream(path, std::ios::binary)
            .write(reinterpret_cast<const char *>(file.data()), std::streamsize(file.size()));
        std::unique_ptr<gguf_file> f;
        const gguf_result r = gguf_file::open(path, gguf_open_options{}, &f);
        EXPECT_FALSE(r);
        EXPECT_NE(r.message.find("block size"), std::string::npos) << r.message;
        for (const std::vector<std::string> & args :
             {std::vector<std::string>{"info", path}, std::vector<std::string>{"dequant", path, name, tmp.file("x.f32")}}) {
            const tool_run t = run_gguf_tool(args);
            EXPECT_EQ(t.rc, 1) << args[0];
            EXPECT_NE(t.err.find("block size"), std::string::npos) << t.err;
        }
    }
}
