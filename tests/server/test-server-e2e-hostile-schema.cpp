// Hostile JSON Schemas (tests/grammar/hostile-schemas.h) against the real daemon: every case as
// a chat request's response_format and as a forced tool's parameters. Each is answered (200, or a
// 400 in OpenAI's shape with a message, or 413 past the body limit), /health stays ok after each,
// and a daemon that dies on a case fails the test naming it (and is started again, so that every
// case is tried). The wall time of each request is printed (the slowest ones and the largest);
// only a generous hang bound is asserted. And a slow compile does not stall other streams: a
// streamed completion gives the same text while slow schemas compile beside it.
#include "grammar/hostile-schemas.h"
#include "hostile-suite.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <vector>

// The sanitizer build (about 10x slower) sends every 5th case: memory errors, not the daemon's
// answers to each case, are what it is for (the release build sends all of them).
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t k_suite_stride = 5;
#else
constexpr size_t k_suite_stride = 1;
#endif

class hostile_schema_e2e : public hostile_suite<hostile_schema_e2e> {
protected:
    struct outcome {
        std::string name;
        int status = 0;     // 0: no answer
        double seconds = 0;
        std::string message;  // the error's message (400), or what went wrong
    };

    // A request that never takes longer than this has not hung (a generous bound, not a speed).
    static constexpr double hang_seconds = 30;

    static std::string response_format_body(const std::string & schema) {
        return R"({"messages":[{"role":"user","content":"Hello"}],"max_tokens":8,"temperature":0,)"
               R"("response_format":{"type":"json_schema","json_schema":{"name":"x","schema":)" +
               schema + "}}}";
    }
    static std::string tool_body(const std::string & schema) {
        return R"({"messages":[{"role":"user","content":"Hello"}],"max_tokens":8,"temperature":0,)"
               R"("tool_choice":"required","tools":[{"type":"function","function":{"name":"f","parameters":)" +
               schema + "}}]}";
    }

    // One POST /v1/chat/completions on a fresh connection (an answer may take up to 60 s).
    static outcome post_timed(const std::string & name, const std::string & body) {
        outcome o;
        o.name = name;
        const auto t0 = std::chrono::steady_clock::now();
        auto r = inferd_call(port(), "POST", "/v1/chat/completions", body);
        o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (!r) {
            o.message = "no answer";
            return o;
        }
        o.status = r->status;
        const json j = json::parse(r->body, nullptr, false);
        if (j.is_object() && j.contains("error") && j["error"].is_object() && j["error"].contains("message")) {
            o.message = j["error"]["message"].is_string() ? j["error"]["message"].get<std::string>() : "";
            if (!j["error"].contains("type") || !j["error"]["type"].is_string()) o.message = "<no error type> " + o.message;
        } else if (o.status != 200) {
            o.message = "<not an OpenAI error> " + r->body.substr(0, 200);
        } else if (!j.is_object() || !j.contains("choices")) {
            o.message = "<not a chat completion> " + r->body.substr(0, 200);
        }
        return o;
    }

    // The daemon died: its exit status, and a fresh one for the cases after.
    static std::string restart() {
        const std::string log = proc_->log();
        const int status = proc_->wait_exit();
        delete proc_;
        proc_ = nullptr;
        SetUpTestSuite();
        const size_t tail = log.size() > 400 ? log.size() - 400 : 0;
        return "exit status " + std::to_string(status) + (status > 128 ? " (signal " + std::to_string(status - 128) + ")" : "") +
               "; log tail: " + log.substr(tail);
    }

    static void print_slowest(const char * what, std::vector<outcome> all) {
        std::sort(all.begin(), all.end(), [](const outcome & a, const outcome & b) { return a.seconds > b.seconds; });
        std::printf("[%s] %zu requests; the slowest:\n", what, all.size());
        for (size_t i = 0; i < std::min<size_t>(12, all.size()); ++i) {
            std::printf("  %8.3f s  %3d  %s  %s\n", all[i].seconds, all[i].status, all[i].name.c_str(),
                        all[i].message.substr(0, 120).c_str());
        }
        if (!all.empty()) std::printf("[%s] max %.3f s (%s)\n", what, all[0].seconds, all[0].name.c_str());
        size_t n200 = 0, n400 = 0, n413 = 0;
        for (const outcome & o : all) {
            n200 += o.status == 200;
            n400 += o.status == 400;
            n413 += o.status == 413;
        }
        std::printf("[%s] 200: %zu, 400: %zu, 413: %zu, other: %zu\n", what, n200, n400, n413, all.size() - n200 - n400 - n413);
        std::fflush(stdout);
    }

    // Every case through `body_of`; a crash fails the test naming the case and the daemon is
    // started again.
    void run_suite(const char * what, std::string (*body_of)(const std::string &)) {
        std::vector<outcome> all;
        std::vector<std::string> crashed;
        const std::vector<hostile_schema> suite = hostile_schemas();
        for (size_t i = 0; i < suite.size(); i += k_suite_stride) {
            const hostile_schema & h = suite[i];
            outcome o = post_timed(h.name, body_of(h.schema));
            all.push_back(o);
            std::printf("[%s] %-44s %3d %8.3f s  %s\n", what, h.name.c_str(), o.status, o.seconds, o.message.substr(0, 100).c_str());
            if (!proc_->alive()) {
                crashed.push_back(h.name);
                ADD_FAILURE() << what << " " << h.name << ": the daemon died: " << restart();
                ASSERT_TRUE(ready_) << "the daemon did not start again";
                continue;
            }
            EXPECT_TRUE(o.status == 200 || o.status == 400 || o.status == 413)
                << what << " " << h.name << ": " << o.status << " " << o.message;
            if (o.status == 400 || o.status == 413) {
                EXPECT_FALSE(o.message.empty()) << what << " " << h.name;
            } else if (o.status == 200) {
                EXPECT_TRUE(o.message.empty()) << what << " " << h.name << ": " << o.message;
            }
            EXPECT_LT(o.seconds, hang_seconds) << what << " " << h.name << ": no answer within the hang bound";
            auto health = inferd_call(port(), "GET", "/health");
            EXPECT_TRUE(health && health->status == 200) << what << " " << h.name << ": /health after it";
        }
        print_slowest(what, all);
        std::string names;
        for (const std::string & n : crashed) names += " " + n;
        EXPECT_TRUE(crashed.empty()) << what << ": the daemon died on" << names;
    }

    // The text of a streamed completion, and how many SSE events carried it.
    static std::string stream_text(const json & req, size_t * n_events) {
        test_conn c(port(), 60);
        *n_events = 0;
        if (!c.send(test_request("POST", "/v1/completions", req.dump(), "Content-Type: application/json\r\n"))) return "<send failed>";
        auto head = c.read_head();
        if (!head || head->status != 200) return "<status " + std::to_string(head ? head->status : 0) + ">";
        std::string text, pending;
        for (;;) {
            auto chunk = c.read_chunk();
            if (!chunk) return text + "<stream cut>";
            if (chunk->empty()) break;
            pending += *chunk;
            size_t e;
            while ((e = pending.find("\n\n")) != std::string::npos) {
                const std::string ev = pending.substr(0, e);
                pending.erase(0, e + 2);
                if (ev.rfind("data: ", 0) != 0 || ev == "data: [DONE]") continue;
                const json j = json::parse(ev.substr(6), nullptr, false);
                if (j.is_object() && j.contains("choices") && !j["choices"].empty()) {
                    text += j["choices"][0].value("text", "");
                    ++*n_events;
                }
            }
        }
        return text;
    }
};

TEST_F(hostile_schema_e2e, every_schema_as_a_response_format_is_answered) {
    run_suite("response_format", response_format_body);
    EXPECT_GT(metric(metrics(), "inferd_compile_errors_total"), 0.0) << "the refusals are counted";
}

TEST_F(hostile_schema_e2e, every_schema_as_a_forced_tool_is_answered) {
    run_suite("tool", tool_body);
}

// Schemas that compile slowly (wide objects, alternations), made unique per request so that the
// cache does not answer them, while a stream runs: the stream's text is the same as alone.
TEST_F(hostile_schema_e2e, a_slow_compile_does_not_stall_other_streams) {
    std::vector<std::string> slow;
    for (const hostile_schema & h : hostile_schemas()) {
        if (h.name == "properties-required-1000" || h.name == "not-properties-1000" || h.name == "anyOf-of-anyOf-10" ||
            h.name == "oneOf-of-oneOf-10" || h.name == "allOf-of-anyOf-24" || h.name == "enum-objects-1000") {
            slow.push_back(h.schema);
        }
    }
    ASSERT_FALSE(slow.empty());
    json req = normal_request();
    req["stream"] = true;
    req["max_tokens"] = 400;
    req["ignore_eos"] = true;
    size_t n_alone = 0, n_beside = 0;
    const auto t_alone = std::chrono::steady_clock::now();
    const std::string alone = stream_text(req, &n_alone);
    const double alone_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_alone).count();
    ASSERT_GT(n_alone, 0u) << alone;

    std::atomic<bool> streaming{true};
    std::vector<outcome> compiles;
    std::mutex mu;
    std::vector<std::thread> clients;
    for (int k = 0; k < 4; ++k) {  // 2 compile threads: 2 run, 2 wait (the queue holds 8)
        clients.emplace_back([&, k] {
            for (int round = 0; streaming && round < 8; ++round) {
                const std::string & s = slow[size_t(k + round) % slow.size()];
                // {"$comment": …} first: another text, the same schema
                const std::string unique = R"({"$comment":"r)" + std::to_string(k) + "-" + std::to_string(round) + "\"," + s.substr(1);
                outcome o = post_timed("slow-" + std::to_string(k) + "-" + std::to_string(round), response_format_body(unique));
                std::lock_guard<std::mutex> lk(mu);
                compiles.push_back(o);
            }
        });
    }
    // Wait until compiles run, then stream beside them.
    for (int i = 0; i < 500 && metric(metrics(), "inferd_compile_jobs_running") < 1; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    const auto t0 = std::chrono::steady_clock::now();
    const std::string beside = stream_text(req, &n_beside);
    const double stream_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double running_after = metric(metrics(), "inferd_compile_jobs_running");
    streaming = false;
    for (std::thread & t : clients) t.join();
    EXPECT_EQ(beside, alone);
    EXPECT_EQ(n_beside, n_alone);
    std::printf("stream of %zu events: alone %.3f s, beside slow compiles %.3f s; compile jobs running at its end: %.0f\n",
                n_beside, alone_seconds, stream_seconds, running_after);
    for (const outcome & o : compiles) {
        EXPECT_TRUE(o.status == 200 || o.status == 400 || o.status == 503) << o.name << ": " << o.status << " " << o.message;
        EXPECT_LT(o.seconds, hang_seconds) << o.name;
    }
    print_slowest("slow compiles", compiles);
    ASSERT_TRUE(proc_->alive()) << proc_->log();
}

// More slow compiles at once than the compile threads and their queue hold (2 + --max-queue 8):
// each is answered, the ones past the queue with OpenAI's 503 queue_full and Retry-After.
TEST_F(hostile_schema_e2e, the_compile_queue_is_bounded) {
    std::string wide;
    for (const hostile_schema & h : hostile_schemas()) {
        if (h.name == "properties-required-1000") wide = h.schema;
    }
    ASSERT_FALSE(wide.empty());
    constexpr int n = 16;
    std::vector<std::optional<test_response>> answers(n);
    std::vector<std::thread> clients;
    for (int k = 0; k < n; ++k) {
        clients.emplace_back([&, k] {
            const std::string unique = R"({"$comment":"q)" + std::to_string(k) + "\"," + wide.substr(1);
            answers[size_t(k)] = inferd_call(port(), "POST", "/v1/chat/completions", response_format_body(unique));
        });
    }
    for (std::thread & t : clients) t.join();
    int busy = 0;
    for (int k = 0; k < n; ++k) {
        ASSERT_TRUE(answers[size_t(k)].has_value()) << k;
        const test_response & r = *answers[size_t(k)];
        EXPECT_TRUE(r.status == 200 || r.status == 400 || r.status == 503) << k << ": " << r.status << " " << r.body;
        if (r.status != 503) continue;
        ++busy;
        const json j = json::parse(r.body, nullptr, false);
        EXPECT_EQ(j["error"]["code"], "queue_full") << r.body;
        EXPECT_EQ(j["error"]["type"], "unavailable_error") << r.body;
        EXPECT_FALSE(r.header("retry-after").empty());
    }
    std::printf("%d of %d concurrent slow compiles answered 503 queue_full\n", busy, n);
    const std::string m = metrics();
    EXPECT_EQ(metric(m, "inferd_compile_jobs_waiting"), 0.0);
    EXPECT_EQ(metric(m, "inferd_compile_jobs_running"), 0.0);
}
