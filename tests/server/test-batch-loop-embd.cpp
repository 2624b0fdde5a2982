// The batch loop's embedding requests (tiny-qwen2 as an embedder, last pooling): more inputs than
// one decode holds come back complete and in input order, each the vector it has alone (also
// while generation requests run); invalid inputs are refused at submit; a cancelled request ends
// with "cancelled"; an encoder-only loop (tiny-bert) refuses generation.
#include "batch-loop-test-util.h"
#include "engine/model.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <future>
#include <mutex>

namespace {

struct embd_result {
    std::vector<std::vector<float>> vectors;
    std::string error;
};

// Submits and waits for the answer.
std::future<embd_result> submit(batch_loop & loop, std::vector<std::vector<int32_t>> inputs, std::string * why = nullptr,
                                std::function<bool()> cancelled = nullptr) {
    auto promise = std::make_shared<std::promise<embd_result>>();
    embd_request r;
    r.inputs = std::move(inputs);
    r.cancelled = std::move(cancelled);
    r.done = [promise](std::vector<std::vector<float>> v, const std::string & e) { promise->set_value({std::move(v), e}); };
    std::string err;
    if (!loop.submit_embeddings(std::move(r), &err)) {
        if (why) *why = err;
        promise->set_value({{}, "refused: " + err});
    }
    return promise->get_future();
}

double cosine(const std::vector<float> & a, const std::vector<float> & b) {
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < a.size(); ++i) ab += double(a[i]) * b[i], aa += double(a[i]) * a[i], bb += double(b[i]) * b[i];
    return ab / std::sqrt(aa * bb);
}

// Counts generated tokens; never stops the request.
class count_sink final : public gen_sink {
public:
    bool on_token(const gen_token &) override { return ++tokens, true; }
    void on_finished(gen_finish, const gen_usage &, const std::string &) override {
        std::lock_guard<std::mutex> lk(mu);
        done = true;
        cv.notify_all();
    }
    void wait() {
        std::unique_lock<std::mutex> lk(mu);
        cv.wait(lk, [this] { return done; });
    }
    std::atomic<int> tokens{0};

private:
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
};

}  // namespace

TEST(batch_loop_embd, many_inputs_in_order_beside_generation) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = model::load(dir + "/models/tiny-qwen2-f16.gguf", {});
    batch_loop_params p = loop_params(2);
    p.embeddings = true;
    p.pooling = pooling_type::last;
    batch_loop loop(*m, p);
    loop.start();
    EXPECT_TRUE(loop.has_generation() && loop.has_embeddings());
    EXPECT_EQ(loop.embd_pooling(), pooling_type::last);
    EXPECT_EQ(loop.embd_size(), int32_t(m->hparams().n_embd));

    const auto inputs = prompts_for_test(100);  // more sequences than one decode takes (64)
    std::vector<std::vector<float>> alone;
    for (size_t i = 0; i < inputs.size(); i += 9) {
        embd_result r = submit(loop, {inputs[i]}).get();
        ASSERT_EQ(r.error, "");
        alone.push_back(r.vectors.at(0));
    }
    auto gen = std::make_shared<count_sink>();
    gen_request g;
    g.prompt = inputs[3];
    g.max_tokens = 40;
    g.sink = gen;
    std::string why;
    ASSERT_TRUE(loop.submit(std::move(g), &why)) << why;
    embd_result all = submit(loop, inputs).get();
    gen->wait();
    EXPECT_EQ(gen->tokens.load(), 40);
    ASSERT_EQ(all.error, "");
    ASSERT_EQ(all.vectors.size(), inputs.size());
    for (size_t i = 0, k = 0; i < inputs.size(); i += 9, ++k) {
        EXPECT_GT(cosine(all.vectors[i], alone[k]), 0.99999) << "input " << i;
    }
    EXPECT_LT(cosine(all.vectors[0], all.vectors[1]), 0.999) << "different inputs, different vectors";
    loop.stop();
}

TEST(batch_loop_embd, refusals_and_cancellation) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = model::load(dir + "/models/tiny-qwen2-f16.gguf", {});
    batch_loop_params p = loop_params(1, 256);
    p.embeddings = true;
    p.pooling = pooling_type::mean;
    batch_loop loop(*m, p);
    loop.start();
    EXPECT_EQ(loop.embd_max_tokens(), 256u);
    std::string why;
    submit(loop, {{1, 2}, {}}, &why).get();
    EXPECT_EQ(why, "input 1 has no tokens");
    submit(loop, {std::vector<int32_t>(257, 5)}, &why).get();
    EXPECT_EQ(why, "input 0 has 257 tokens; an input may have at most 256");
    submit(loop, {{1, 1 << 30}}, &why).get();
    EXPECT_NE(why.find("outside the vocabulary"), std::string::npos) << why;
    embd_result gone = submit(loop, prompts_for_test(50), nullptr, [] { return true; }).get();
    EXPECT_EQ(gone.error, "cancelled");
    EXPECT_TRUE(gone.vectors.empty());
    EXPECT_EQ(submit(loop, {{1, 2, 3}}).get().vectors.size(), 1u) << "the loop goes on";
    loop.stop();
    // Without an embeddings context the loop refuses embedding requests.
    batch_loop plain(*m, loop_params(1));
    submit(plain, {{1}}, &why).get();
    EXPECT_EQ(why, "this server computes no embeddings");
}

TEST(batch_loop_embd, encoder_only) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = model::load(dir + "/models/tiny-bert-f16.gguf", {});
    batch_loop_params p = loop_params(1);
    p.generation = false;
    p.embeddings = true;
    batch_loop loop(*m, p);
    loop.start();
    EXPECT_FALSE(loop.has_generation());
    EXPECT_EQ(loop.embd_pooling(), pooling_type::cls) << "the file's pooling";
    gen_request g;
    g.prompt = {101, 102};
    g.sink = std::make_shared<count_sink>();
    std::string why;
    EXPECT_FALSE(loop.submit(std::move(g), &why));
    EXPECT_EQ(why, "this model does not generate text");
    embd_result r = submit(loop, {{101, 7592, 102}}).get();
    EXPECT_EQ(r.error, "");
    ASSERT_EQ(r.vectors.size(), 1u);
    EXPECT_EQ(r.vectors[0].size(), size_t(m->hparams().n_embd));
    loop.stop();
}
