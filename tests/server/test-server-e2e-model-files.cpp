// End-to-end model file options: inferd with --no-mmap, with --mlock and with both answers
// /v1/completions (greedy, with logprobs) exactly as with the mapped file, and a truncated file
// stops the daemon with exit code 1 and a message naming the tensor past the end (mapped or read),
// never a crash.
#include "server/inferd-process.h"
#include "testdata.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

using nlohmann::json;

namespace {

std::string q4k(const std::string & dir) { return dir + "/models/tiny-llama-q4_k_m.gguf"; }

// Text, token logprobs and finish reason of a few greedy completions.
std::vector<std::string> answers(uint16_t port) {
    std::vector<std::string> out;
    for (const char * prompt : {"Once upon a time", "The capital of", "1, 2, 3,"}) {
        const json req = {{"prompt", prompt}, {"max_tokens", 16}, {"temperature", 0}, {"logprobs", 2}};
        auto r = inferd_call(port, "POST", "/v1/completions", req.dump());
        if (!r || r->status != 200) {
            out.push_back("<failed> " + (r ? r->body : std::string("<no response>")));
            continue;
        }
        const json c = json::parse(r->body)["choices"][0];
        out.push_back(c["text"].dump() + " " + c["logprobs"].dump() + " " + c["finish_reason"].dump());
    }
    return out;
}

std::vector<std::string> answers_with(const std::string & dir, const std::vector<std::string> & flags) {
    std::string name;
    for (const std::string & f : flags) name += f + " ";
    SCOPED_TRACE(name);
    std::vector<std::string> args = {"-m", q4k(dir), "-t", "2"};
    args.insert(args.end(), flags.begin(), flags.end());
    inferd_process p(args);
    EXPECT_TRUE(p.wait_ready()) << p.log();
    std::vector<std::string> out = answers(p.port());
    EXPECT_EQ(p.terminate(), 0);
    return out;
}

}  // namespace

// Each layout of the weights (repacked, or the file's with --no-repack) against itself mapped.
TEST(server_e2e_model_files, read_and_locked_files_answer_as_the_mapped_one) {
    INFERD_REQUIRE_TESTDATA(dir);
    for (const std::vector<std::string> & layout : std::vector<std::vector<std::string>>{{}, {"--no-repack"}}) {
        const std::vector<std::string> expected = answers_with(dir, layout);
        for (const std::vector<std::string> & flags :
             std::vector<std::vector<std::string>>{{"--no-mmap"}, {"--mlock"}, {"--no-mmap", "--mlock"}}) {
            std::vector<std::string> all = layout;
            all.insert(all.end(), flags.begin(), flags.end());
            EXPECT_EQ(answers_with(dir, all), expected);
        }
    }
}

TEST(server_e2e_model_files, a_truncated_file_stops_the_daemon_with_a_clear_error) {
    INFERD_REQUIRE_TESTDATA(dir);
    std::ifstream in(q4k(dir), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_GT(bytes.size(), 100000u);
    const std::string cut = (std::filesystem::temp_directory_path() / "inferd-e2e-truncated.gguf").string();
    {
        std::ofstream out(cut, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), std::streamsize(bytes.size() * 2 / 3));
    }
    for (bool mmap : {true, false}) {
        SCOPED_TRACE(mmap ? "mapped" : "--no-mmap");
        std::vector<std::string> args = {"-m", cut, "-t", "2"};
        if (!mmap) args.push_back("--no-mmap");
        inferd_process p(args);
        EXPECT_EQ(p.wait_exit(), 1) << p.log();
        EXPECT_NE(p.log().find("extends beyond the end of the file"), std::string::npos) << p.log();
    }
    std::filesystem::remove(cut);
}
