// inferd-cli: generate (greedy ids against the reference, logits dump), tokenize / detokenize on
// vocabulary-only files, chat on stdin, usage errors and exit codes.
#include "cli/cli.h"
#include "engine/reference-data.h"
#include "testdata.h"
#include "tools/tools-test-util.h"

#include <gtest/gtest.h>

#include <fstream>

namespace {

struct cli_run {
    int rc;
    std::string out;
    std::string err;
};

cli_run run_cli(const std::vector<std::string> & args, const std::string & input = "") {
    tools_capture in, out, err;
    std::fputs(input.c_str(), in.get());
    std::rewind(in.get());
    const int rc = cli_tool_main(args, in.get(), out.get(), err.get());
    return {rc, out.text(), err.text()};
}

std::vector<int32_t> parse_ids(const std::string & line) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    return j.is_array() ? j.get<std::vector<int32_t>>() : std::vector<int32_t>{};
}

}  // namespace

TEST(inferd_cli, greedy_ids_follow_the_reference) {
    INFERD_REQUIRE_TESTDATA(dir);
    reference_case ref;
    std::string e;
    ASSERT_TRUE(reference_load(dir, "stories260K-f32", "p1", &ref, &e)) << e;
    const cli_run r = run_cli({"generate", "-m", dir + "/models/stories260K-f32.gguf", "--tokens", "1", "-n", "200",
                               "--temp", "0", "--ids", "--threads", "2"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const std::vector<int32_t> ids = parse_ids(r.out);
    ASSERT_EQ(ids.size(), 200u) << r.out;
    // The whole reference continuation: the reference has one near-tie (step 37, gap 0.0014),
    // which the default (plain) attention arithmetic resolves as it does.
    EXPECT_EQ(ids, ref.greedy_tokens);
    // The fused kernel (all F32) follows it up to that near-tie at least.
    const cli_run f = run_cli({"generate", "-m", dir + "/models/stories260K-f32.gguf", "--tokens", "1", "-n", "200",
                               "--temp", "0", "--ids", "--flash-attn"});
    ASSERT_EQ(f.rc, 0) << f.err;
    const std::vector<int32_t> fused = parse_ids(f.out);
    ASSERT_EQ(fused.size(), 200u);
    for (size_t j = 0; j < fused.size() && ref.greedy_top2_gap[j] >= 1e-2; ++j) {
        ASSERT_EQ(fused[j], ref.greedy_tokens[j]) << "step " << j;
    }
    EXPECT_NE(r.err.find("t/s"), std::string::npos) << "speed is reported on stderr";
}

// The newer families through the command line: `tokenize` gives the reference's prompt tokens
// for both prompts, and `generate --ids` the reference's greedy continuation up to its first
// near-tie, plain and fused attention.
TEST(inferd_cli, newer_families_follow_the_reference) {
    INFERD_REQUIRE_TESTDATA(dir);
    for (const char * family : {"qwen3", "qwen3moe", "mixtral", "gemma2", "gemma3", "phi3"}) {
        for (const char * type : {"f16", "q4_k_m"}) {
            const std::string name = std::string("tiny-") + family + "-" + type;
            const std::string path = dir + "/models/" + name + ".gguf";
            const reference_tolerance tol = reference_tolerance_for(name);
            for (const char * prompt : {"p1", "p2"}) {
                SCOPED_TRACE(name + "." + prompt);
                reference_case ref;
                std::string e;
                ASSERT_TRUE(reference_load(dir, name, prompt, &ref, &e)) << e;
                std::ifstream jf(dir + "/reference/" + name + "." + prompt + ".json");
                const std::string text = nlohmann::json::parse(jf).at("prompt_text").get<std::string>();
                const cli_run t = run_cli({"tokenize", "-m", path, "-p", text});
                ASSERT_EQ(t.rc, 0) << t.err;
                EXPECT_EQ(parse_ids(t.out), ref.prompt_tokens);
                size_t k = 0;
                while (k < ref.greedy_tokens.size() && ref.greedy_top2_gap[k] >= tol.top2_gap) ++k;
                if (k == 0) continue;  // a near-tie at the first step: nothing to compare
                std::string list;
                for (int32_t id : ref.prompt_tokens) {
                    if (!list.empty()) list += ',';
                    list += std::to_string(id);
                }
                const std::vector<int32_t> want(ref.greedy_tokens.begin(), ref.greedy_tokens.begin() + long(k));
                for (const char * attn : {"", "--flash-attn"}) {
                    std::vector<std::string> args = {"generate", "-m", path, "--tokens", list, "-n", std::to_string(k),
                                                     "--temp", "0", "--ids", "--threads", "2"};
                    if (*attn) args.push_back(attn);
                    const cli_run g = run_cli(args);
                    ASSERT_EQ(g.rc, 0) << g.err;
                    EXPECT_EQ(parse_ids(g.out), want) << attn;
                }
            }
        }
    }
}

TEST(inferd_cli, dump_logits_writes_every_prompt_position) {
    INFERD_REQUIRE_TESTDATA(dir);
    tools_scratch_dir tmp;
    reference_case ref;
    std::string e;
    ASSERT_TRUE(reference_load(dir, "tiny-llama-f32", "p1", &ref, &e)) << e;
    std::string list;
    for (int32_t id : ref.prompt_tokens) {
        if (!list.empty()) list += ",";
        list += std::to_string(id);
    }
    const std::string path = tmp.file("logits.f32");
    const cli_run r = run_cli({"generate", "-m", dir + "/models/tiny-llama-f32.gguf", "--tokens", list, "-n", "4",
                               "--temp", "0", "--dump-logits", path});
    ASSERT_EQ(r.rc, 0) << r.err;
    const std::vector<float> got = tools_read_f32(path);
    ASSERT_EQ(got.size(), ref.logits.size());
    for (size_t p = 0; p < ref.n_rows; ++p) {
        EXPECT_LE(reference_rel_rms(got.data() + p * 4096, ref.logits.data() + p * 4096, 4096), 5e-3) << "position " << p;
    }
    // The same prompt as text gives the same tokens, hence the same file.
    const std::string path2 = tmp.file("logits2.f32");
    const cli_run r2 = run_cli({"generate", "-m", dir + "/models/tiny-llama-f32.gguf", "-p",
                                "Once upon a time, there was a little girl named Lily.", "-n", "1", "--temp", "0",
                                "--dump-logits", path2});
    ASSERT_EQ(r2.rc, 0) << r2.err;
    EXPECT_EQ(tools_read_f32(path2), got);
}

TEST(inferd_cli, tokenize_and_detokenize_on_vocabulary_files) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::string spm = dir + "/vocab/ggml-vocab-llama-spm.gguf";
    cli_run r = run_cli({"tokenize", "-m", spm, "-p", "Hello world"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(parse_ids(r.out), (std::vector<int32_t>{1, 15043, 3186}));
    r = run_cli({"tokenize", "-m", spm, "-p", "Hello world", "--no-bos"});
    EXPECT_EQ(parse_ids(r.out), (std::vector<int32_t>{15043, 3186}));
    r = run_cli({"detokenize", "-m", spm, "--tokens", "1,15043,3186"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "Hello world\n");
    const std::string qwen = dir + "/models/tiny-qwen2-f16.gguf";
    r = run_cli({"tokenize", "-m", qwen, "-p", "<|im_start|>hi", "--parse-special"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const std::vector<int32_t> special = parse_ids(r.out);
    ASSERT_FALSE(special.empty());
    EXPECT_EQ(special[0], 4094) << r.out;
    r = run_cli({"tokenize", "-m", qwen, "-p", "<|im_start|>hi"});
    EXPECT_NE(parse_ids(r.out)[0], 4094) << "special tokens are parsed only when asked";
    r = run_cli({"detokenize", "-m", spm, "--tokens", "1,99999"});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("99999"), std::string::npos);
}

TEST(inferd_cli, chat_answers_each_line) {
    INFERD_REQUIRE_TESTDATA(dir);
    const cli_run r = run_cli({"chat", "-m", dir + "/models/tiny-qwen2-q8_0.gguf", "--temp", "0", "-c", "256", "-n", "8"},
                              "Hello there\nAnd again\n\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    size_t prompts = 0;
    for (size_t p = r.out.find("> "); p != std::string::npos; p = r.out.find("> ", p + 2)) ++prompts;
    EXPECT_GE(prompts, 3u) << r.out;
}

TEST(inferd_cli, usage_errors_and_exit_codes) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::string m = dir + "/models/stories260K-f32.gguf";
    EXPECT_EQ(run_cli({}).rc, 2);
    EXPECT_EQ(run_cli({"frobnicate"}).rc, 2);
    EXPECT_EQ(run_cli({"generate", "--tokens", "1"}).rc, 2);
    EXPECT_EQ(run_cli({"generate", "-m", m, "--tokens", "1", "--temp", "hot"}).rc, 2);
    EXPECT_EQ(run_cli({"generate", "-m", m, "--tokens", "1,x"}).rc, 2);
    EXPECT_EQ(run_cli({"generate", "-m", m, "--tokens", "1", "--wat"}).rc, 2);
    EXPECT_EQ(run_cli({"generate", "-m", m, "--tokens", "1", "-p", "x"}).rc, 2);
    EXPECT_EQ(run_cli({"generate", "-m", m, "--tokens", "1", "--ids=1"}).rc, 2);
    EXPECT_EQ(run_cli({"generate", "-m", m, "--tokens", "1", "--top-p", "1.5"}).rc, 2);
    cli_run r = run_cli({"generate", "-m", m, "--tokens", "1,600"});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("600"), std::string::npos);
    EXPECT_EQ(run_cli({"generate", "-m", dir + "/nothing.gguf", "--tokens", "1"}).rc, 1);
    r = run_cli({"generate", "-m", m, "--tokens", "1", "-n", "3", "--n-gpu-layers", "5", "--ids"});
    EXPECT_EQ(r.rc, 0);
    EXPECT_NE(r.err.find("no GPU backend is available"), std::string::npos) << r.err;
    EXPECT_EQ(run_cli({"--help"}).rc, 0);
}
