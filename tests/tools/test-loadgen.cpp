// tests/tools/test-loadgen.cpp — inferd-loadgen: nearest-rank percentiles, aggregation and
// report formats, SSE parsing on arbitrarily split input, chunk classification, the seeded
// prompt generator, flags, the client against canned (broken) servers, and a short run against
// the real inferd.
#include "loadgen/loadgen-client.h"
#include "loadgen/loadgen-options.h"
#include "loadgen/loadgen-prompt.h"
#include "loadgen/loadgen-run.h"
#include "loadgen/loadgen-sse.h"
#include "loadgen/loadgen-stats.h"
#include "server/inferd-process.h"
#include "testdata.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>
#include <sstream>

namespace {

std::vector<std::string> feed_in_pieces(const std::string & bytes, size_t piece) {
    sse_parser p;
    std::vector<std::string> events;
    for (size_t i = 0; i < bytes.size(); i += piece) {
        p.feed(std::string_view(bytes).substr(i, piece), [&](const std::string & d) { events.push_back(d); });
    }
    EXPECT_TRUE(p.at_event_boundary());
    return events;
}

std::vector<std::string> split_words(const std::string & s) {
    std::istringstream in(s);
    std::vector<std::string> w;
    for (std::string x; in >> x;) w.push_back(x);
    return w;
}

}  // namespace

TEST(LoadgenStats, PercentileIsNearestRank) {
    const std::vector<double> v = {35, 20, 50, 15, 40};  // sorted: 15 20 35 40 50
    EXPECT_EQ(loadgen_percentile(v, 1), 15);
    EXPECT_EQ(loadgen_percentile(v, 20), 15);   // rank ceil(1.0) = 1
    EXPECT_EQ(loadgen_percentile(v, 30), 20);   // rank ceil(1.5) = 2
    EXPECT_EQ(loadgen_percentile(v, 40), 20);   // rank 2
    EXPECT_EQ(loadgen_percentile(v, 50), 35);   // rank ceil(2.5) = 3
    EXPECT_EQ(loadgen_percentile(v, 99), 50);
    EXPECT_EQ(loadgen_percentile(v, 100), 50);
    std::vector<double> hundred;
    for (int i = 100; i >= 1; --i) hundred.push_back(i);
    EXPECT_EQ(loadgen_percentile(hundred, 50), 50);
    EXPECT_EQ(loadgen_percentile(hundred, 99), 99);
    hundred.push_back(101);
    EXPECT_EQ(loadgen_percentile(hundred, 99), 100);  // rank ceil(99.99) = 100
    EXPECT_EQ(loadgen_percentile({7}, 50), 7);
    EXPECT_FALSE(loadgen_percentile({}, 50));
    EXPECT_FALSE(loadgen_percentile(v, 0));
    EXPECT_FALSE(loadgen_percentile(v, 100.5));
}

TEST(LoadgenStats, SummaryCountsOnlySuccessfulWork) {
    std::vector<loadgen_request_result> rs(4);
    rs[0].ttft_s = 0.1, rs[0].itl_s = {0.01, 0.03}, rs[0].completion_tokens = 3, rs[0].prompt_tokens = 10;
    rs[1].ttft_s = 0.3, rs[1].itl_s = {0.02}, rs[1].completion_tokens = 2, rs[1].cached_tokens = 4;
    rs[2].error = "http_503", rs[2].completion_tokens = 99, rs[2].ttft_s = 9, rs[2].detail = "queue full";
    rs[3].error = "http_503", rs[3].detail = "later";
    const loadgen_summary s = loadgen_summarize(rs, 2.0);
    EXPECT_EQ(s.requests, 4);
    EXPECT_EQ(s.ok, 2);
    EXPECT_EQ(s.completion_tokens, 5);
    EXPECT_EQ(s.prompt_tokens, 10);
    EXPECT_EQ(s.cached_tokens, 4);
    EXPECT_DOUBLE_EQ(s.tokens_per_s, 2.5);
    EXPECT_DOUBLE_EQ(s.requests_per_s, 1.0);
    EXPECT_EQ(s.ttft_samples, 2);
    EXPECT_EQ(s.itl_samples, 3);
    EXPECT_EQ(s.ttft_p50_s, 0.1);
    EXPECT_EQ(s.ttft_p99_s, 0.3);
    EXPECT_EQ(s.itl_p50_s, 0.02);
    EXPECT_EQ(s.itl_p99_s, 0.03);
    ASSERT_EQ(s.errors.size(), 1u);
    EXPECT_EQ(s.errors.at("http_503"), 2);

    const nlohmann::json j = nlohmann::json::parse(loadgen_format_json(s));
    EXPECT_EQ(j["requests"], 4);
    EXPECT_EQ(j["error_count"], 2);
    EXPECT_EQ(j["errors"]["http_503"], 2);
    EXPECT_EQ(j["error_examples"]["http_503"], "queue full");
    EXPECT_DOUBLE_EQ(j["ttft_p50_ms"].get<double>(), 100.0);
    EXPECT_DOUBLE_EQ(j["itl_p99_ms"].get<double>(), 30.0);
    EXPECT_DOUBLE_EQ(j["tokens_per_s"].get<double>(), 2.5);
    const std::string table = loadgen_format_table(s);
    EXPECT_NE(table.find("generated tokens/s     2.50"), std::string::npos) << table;
    EXPECT_NE(table.find("http_503"), std::string::npos) << table;

    const loadgen_summary empty = loadgen_summarize({}, 0);
    const nlohmann::json je = nlohmann::json::parse(loadgen_format_json(empty));
    EXPECT_TRUE(je["ttft_p50_ms"].is_null());
    EXPECT_TRUE(je["itl_p99_ms"].is_null());
    EXPECT_EQ(je["tokens_per_s"], 0.0);
}

TEST(LoadgenSse, EventsAreTheSameHoweverTheBytesAreSplit) {
    const std::string stream =
        ": comment\r\n"
        "data: {\"a\":1}\r\n\r\n"
        "event: x\n"
        "id: 7\n"
        "data:{\"b\":2}\n\n"
        "data: line1\n"
        "data: line2\r\r"
        "retry: 5\n\n"  // an event without data: not reported
        "data\n\n"      // a data field without a colon: empty data
        "data: [DONE]\n\n";
    const std::vector<std::string> want = {"{\"a\":1}", "{\"b\":2}", "line1\nline2", "", "[DONE]"};
    for (size_t piece : {size_t(1), size_t(2), size_t(3), size_t(7), size_t(64), stream.size()}) {
        EXPECT_EQ(feed_in_pieces(stream, piece), want) << "pieces of " << piece;
    }
}

TEST(LoadgenSse, PartialEventIsHeldBack) {
    sse_parser p;
    int n = 0;
    p.feed("data: {\"x\"", [&](const std::string &) { ++n; });
    EXPECT_FALSE(p.at_event_boundary());
    p.feed(":1}\n", [&](const std::string &) { ++n; });
    EXPECT_EQ(n, 0);
    EXPECT_FALSE(p.at_event_boundary());
    std::string got;
    p.feed("\n", [&](const std::string & d) { got = d, ++n; });
    EXPECT_EQ(n, 1);
    EXPECT_EQ(got, "{\"x\":1}");
    EXPECT_TRUE(p.at_event_boundary());
}

TEST(LoadgenSse, ClassifiesOpenAiChunks) {
    EXPECT_EQ(sse_classify_chunk("[DONE]", false).kind, sse_chunk_kind::done);
    sse_chunk c = sse_classify_chunk(R"({"choices":[{"index":0,"text":"Hi","finish_reason":null}]})", false);
    EXPECT_EQ(c.kind, sse_chunk_kind::content);
    EXPECT_EQ(c.text, "Hi");
    EXPECT_EQ(sse_classify_chunk(R"({"choices":[{"index":0,"text":"","finish_reason":"length"}]})", false).kind,
              sse_chunk_kind::other);
    EXPECT_EQ(sse_classify_chunk(R"({"choices":[{"index":0,"delta":{"role":"assistant"}}]})", true).kind,
              sse_chunk_kind::other);
    c = sse_classify_chunk(R"({"choices":[{"index":0,"delta":{"content":"yo"}}]})", true);
    EXPECT_EQ(c.kind, sse_chunk_kind::content);
    EXPECT_EQ(c.text, "yo");
    EXPECT_EQ(sse_classify_chunk(R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})", true).kind,
              sse_chunk_kind::other);
    c = sse_classify_chunk(
        R"({"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17,)"
        R"("prompt_tokens_details":{"cached_tokens":8}}})",
        false);
    EXPECT_EQ(c.kind, sse_chunk_kind::usage);
    EXPECT_TRUE(c.has_usage);
    EXPECT_EQ(c.completion_tokens, 5);
    EXPECT_EQ(c.prompt_tokens, 12);
    EXPECT_EQ(c.cached_tokens, 8);
    EXPECT_EQ(sse_classify_chunk(R"({"error":{"message":"boom"}})", false).kind, sse_chunk_kind::error);
    EXPECT_EQ(sse_classify_chunk(R"({"choices":[{"text":"a")", false).kind, sse_chunk_kind::malformed);
    EXPECT_EQ(sse_classify_chunk(R"({"choices":[{"text":3}]})", false).kind, sse_chunk_kind::malformed);
    EXPECT_EQ(sse_classify_chunk(R"({"choices":[{"text":"a"}]})", true).kind, sse_chunk_kind::malformed);
    EXPECT_EQ(sse_classify_chunk(R"([1,2])", false).kind, sse_chunk_kind::malformed);
    EXPECT_EQ(sse_classify_chunk("", false).kind, sse_chunk_kind::malformed);
}

TEST(LoadgenPrompt, SeededAndSharedPrefix) {
    const loadgen_prompt_gen a(42, 0), b(42, 0), other(43, 0);
    EXPECT_EQ(a.prompt(0, 0, 64), b.prompt(0, 0, 64));
    EXPECT_EQ(split_words(a.prompt(0, 0, 64)).size(), 64u);
    EXPECT_NE(a.prompt(0, 0, 64), a.prompt(0, 1, 64));
    EXPECT_NE(a.prompt(0, 0, 64), a.prompt(1, 0, 64));
    EXPECT_NE(a.prompt(0, 0, 64), other.prompt(0, 0, 64));
    EXPECT_EQ(a.prompt(3, 5, 0), "");
    const std::string p = a.prompt(2, 9, 16);
    EXPECT_EQ(p.front() == ' ' || p.back() == ' ' || p.find("  ") != std::string::npos, false);

    const loadgen_prompt_gen s(42, 200), s2(42, 200);
    EXPECT_EQ(split_words(s.shared_prefix()).size(), 200u);
    EXPECT_EQ(s.shared_prefix(), s2.shared_prefix());
    EXPECT_NE(s.shared_prefix(), loadgen_prompt_gen(7, 200).shared_prefix());
    std::set<std::string> own, vocab;
    for (int client = 0; client < 4; ++client) {
        for (int req = 0; req < 3; ++req) {
            const std::string q = s.prompt(client, req, 16);
            ASSERT_EQ(q.rfind(s.shared_prefix() + " ", 0), 0u) << q;
            EXPECT_EQ(split_words(q).size(), 216u);
            own.insert(q.substr(s.shared_prefix().size()));
            for (const std::string & w : split_words(q)) vocab.insert(w);
        }
    }
    EXPECT_EQ(own.size(), 12u);  // every request has its own words
    EXPECT_LE(vocab.size(), loadgen_prompt_gen::vocabulary_size());
    EXPECT_GT(vocab.size(), loadgen_prompt_gen::vocabulary_size() / 2);
}

TEST(LoadgenOptions, ParsesFlagsAndRejectsBadOnes) {
    loadgen_options o;
    std::string err;
    const char * argv[] = {"x", "--url", "http://example.org:9000/base/", "-c", "3", "-d", "1.5", "--max-tokens", "7",
                           "--prompt-words", "5", "--shared-prefix-words", "20", "--chat", "--api-key", "k",
                           "--seed", "99", "--warmup", "0.5", "--json", "--temperature", "0"};
    ASSERT_TRUE(loadgen_parse_args(int(std::size(argv)), argv, &o, &err)) << err;
    EXPECT_EQ(o.host, "example.org");
    EXPECT_EQ(o.port, "9000");
    EXPECT_EQ(o.path_prefix, "/base");
    EXPECT_EQ(o.concurrency, 3);
    EXPECT_DOUBLE_EQ(o.duration_s, 1.5);
    EXPECT_EQ(o.max_tokens, 7);
    EXPECT_EQ(o.prompt_words, 5);
    EXPECT_EQ(o.shared_prefix_words, 20);
    EXPECT_TRUE(o.chat && o.json);
    EXPECT_EQ(o.api_key, "k");
    EXPECT_EQ(o.seed, 99u);
    EXPECT_DOUBLE_EQ(o.warmup_s, 0.5);
    EXPECT_DOUBLE_EQ(o.temperature, 0.0);

    for (std::vector<const char *> bad : std::vector<std::vector<const char *>>{
             {"x", "-c", "0"}, {"x", "-c", "2x"}, {"x", "-d"}, {"x", "-d", "-1"}, {"x", "--url", "https://h"},
             {"x", "--url", "http://h:0"}, {"x", "--url", "http://:80"}, {"x", "--bogus", "1"}, {"x", "stray"},
             {"x", "--seed", "-1"}, {"x", "--prompt-words", "0"}, {"x", "--temperature", "-1"},
             {"x", "--temperature", "warm"}}) {
        loadgen_options b;
        err.clear();
        EXPECT_FALSE(loadgen_parse_args(int(bad.size()), bad.data(), &b, &err)) << bad[1];
        EXPECT_FALSE(err.empty());
    }
    EXPECT_NE(loadgen_usage().find("ttft_p99_ms"), std::string::npos);
}

namespace {

// A loopback server that answers each connection's first request with the next canned
// response (written in the given pieces, with a short pause between them), then closes it.
class canned_server {
public:
    explicit canned_server(std::vector<std::vector<std::string>> responses, int pause_ms = 2)
        : responses_(std::move(responses)), pause_ms_(pause_ms) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
        EXPECT_EQ(::listen(fd_, 16), 0);
        timeval tv{10, 0};  // accept and recv give up after 10 s: a client that never comes cannot hang the test
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        socklen_t len = sizeof a;
        ::getsockname(fd_, reinterpret_cast<sockaddr *>(&a), &len);
        port_ = ntohs(a.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    ~canned_server() {
        thread_.join();
        ::close(fd_);
    }
    uint16_t port() const { return port_; }
    std::vector<std::string> requests;  // each request as received (pushed before its response is sent)

private:
    void serve() {
        for (const std::vector<std::string> & pieces : responses_) {
            const int c = ::accept(fd_, nullptr, nullptr);
            if (c < 0) return;
            timeval tv{10, 0};
            ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
            std::string req;
            char b[4096];
            while (true) {
                const size_t head = req.find("\r\n\r\n");
                if (head != std::string::npos) {
                    const size_t cl = req.find("Content-Length: ");
                    const size_t len = cl == std::string::npos ? 0 : std::stoul(req.substr(cl + 16));
                    if (req.size() >= head + 4 + len) break;
                }
                const ssize_t n = ::recv(c, b, sizeof b, 0);
                if (n <= 0) break;
                req.append(b, size_t(n));
            }
            requests.push_back(req);
            for (const std::string & p : pieces) {
                ::send(c, p.data(), p.size(), MSG_NOSIGNAL);
                std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms_));
            }
            ::close(c);
        }
    }
    std::vector<std::vector<std::string>> responses_;
    int pause_ms_;
    int fd_ = -1;
    uint16_t port_ = 0;
    std::thread thread_;
};

std::string hex_chunk(const std::string & s) {
    char h[16];
    std::snprintf(h, sizeof h, "%zx\r\n", s.size());
    return h + s + "\r\n";
}

const std::string k_sse_head =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
const std::string k_close_head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
const std::string k_usage = "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":3}}\n\n";

std::string text_event(const std::string & t) {
    return "data: {\"choices\":[{\"index\":0,\"text\":\"" + t + "\",\"finish_reason\":null}]}\n\n";
}

loadgen_options options_for(uint16_t port) {
    loadgen_options o;
    std::string err;
    EXPECT_TRUE(loadgen_parse_url("http://127.0.0.1:" + std::to_string(port), &o, &err)) << err;
    o.timeout_s = 10;
    o.api_key = "secret";
    return o;
}

}  // namespace

TEST(LoadgenClient, MeasuresAChunkedStreamAndNamesEachFailure) {
    const std::string events = text_event("a") + text_event("b") + text_event("c") + k_usage + "data: [DONE]\n\n";
    const std::string body = hex_chunk(events.substr(0, 30)) + hex_chunk(events.substr(30, 100)) +
                             hex_chunk(events.substr(130)) + "0\r\n\r\n";
    std::vector<std::vector<std::string>> responses = {
        {k_sse_head, body.substr(0, 17), body.substr(17, 150), body.substr(167)},
        {k_close_head, text_event("a") + k_usage},                                          // no [DONE]
        {k_close_head, text_event("a") + "data: {\"choices\":[{\"text\n\n" + "data: [DONE]\n\n"},
        {"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"},
        {k_close_head, text_event("a") + "data: [DONE]\n\n"},                               // no usage
        {"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"},
        {k_sse_head, hex_chunk(text_event("a")) + "40\r\ndata: {"},                         // cut short
        {k_close_head, "data: {\"error\":{\"message\":\"x\"}}\n\n" + k_usage + "data: [DONE]\n\n"},
    };
    const std::vector<std::string> kinds = {"", "missing_done", "malformed_sse", "http_503",
                                            "missing_usage", "malformed_sse", "io", "malformed_sse"};
    canned_server server(responses);
    loadgen_options o = options_for(server.port());
    o.max_tokens = 3;
    loadgen_client client(o);
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < kinds.size(); ++i) {
        const loadgen_request_result r = client.stream(loadgen_request_body(o, "hello there"), t0);
        EXPECT_EQ(r.error, kinds[i]) << "response " << i;
        EXPECT_LE(r.start_s, r.end_s);
        EXPECT_EQ(r.detail.empty(), kinds[i].empty()) << "response " << i << ": " << r.detail;
        if (i == 3) {
            EXPECT_EQ(r.detail, "{}");
        }
        if (i == 0) {
            EXPECT_EQ(r.status, 200);
            EXPECT_EQ(r.completion_tokens, 3);
            EXPECT_EQ(r.prompt_tokens, 4);
            ASSERT_TRUE(r.ttft_s);
            EXPECT_GT(*r.ttft_s, 0);
            EXPECT_EQ(r.itl_s.size(), 2u);
        }
    }
    ASSERT_FALSE(server.requests.empty());
    const std::string & req = server.requests[0];
    EXPECT_EQ(req.rfind("POST /v1/completions HTTP/1.1\r\n", 0), 0u) << req;
    EXPECT_NE(req.find("Authorization: Bearer secret\r\n"), std::string::npos) << req;
    const nlohmann::json j = nlohmann::json::parse(req.substr(req.find("\r\n\r\n") + 4));
    EXPECT_EQ(j["prompt"], "hello there");
    EXPECT_EQ(j["max_tokens"], 3);
    EXPECT_EQ(j["stream"], true);
    EXPECT_EQ(j["stream_options"]["include_usage"], true);
    EXPECT_DOUBLE_EQ(j["temperature"].get<double>(), 0.8);
}

// Events written separately are timed separately: the client must not wait for a full buffer.
TEST(LoadgenClient, TimesEventsAsTheyArrive) {
    std::vector<std::string> pieces = {k_sse_head};
    for (const char * t : {"a", "b", "c", "d"}) pieces.push_back(hex_chunk(text_event(t)));
    pieces.push_back(hex_chunk(k_usage + "data: [DONE]\n\n") + "0\r\n\r\n");
    canned_server server({pieces}, /*pause_ms=*/30);
    const loadgen_options o = options_for(server.port());
    loadgen_client client(o);
    const loadgen_request_result r = client.stream(loadgen_request_body(o, "x"), std::chrono::steady_clock::now());
    ASSERT_EQ(r.error, "") << r.detail;
    ASSERT_EQ(r.itl_s.size(), 3u);
    // Three pauses between four writes: unless the client was descheduled through all of them,
    // at least one gap is seen (a client reading into a large buffer until it fills sees none).
    EXPECT_GT(*std::max_element(r.itl_s.begin(), r.itl_s.end()), 0.0);
}

TEST(LoadgenClient, ConnectionRefusedIsAConnectError) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
    ::close(fd);  // nothing listens on that port now
    loadgen_client client(options_for(ntohs(a.sin_port)));
    const loadgen_request_result r = client.stream("{}", std::chrono::steady_clock::now());
    EXPECT_EQ(r.error, "connect");
    EXPECT_EQ(r.status, 0);
}

TEST(LoadgenEndToEnd, ShortRunAgainstInferd) {
    INFERD_REQUIRE_TESTDATA(dir);
    inferd_process p({"-m", dir + "/models/stories260K-f32.gguf", "--parallel", "4", "-c", "1024", "-t", "1"});
    ASSERT_TRUE(p.wait_ready()) << p.log();
    loadgen_options o = options_for(p.port());
    o.api_key.clear();
    o.concurrency = 4;
    o.duration_s = 1.0;
    o.max_tokens = 16;
    o.prompt_words = 8;
    o.shared_prefix_words = 24;
    for (bool chat : {false, true}) {
        o.chat = chat;
        const loadgen_run_result run = loadgen_run(o);
        const loadgen_summary s = loadgen_summarize(run.results, run.elapsed_s);
        SCOPED_TRACE(loadgen_format_table(s));
        EXPECT_TRUE(s.errors.empty());
        EXPECT_GE(s.requests, 4);  // every client finished at least one request
        EXPECT_EQ(s.ok, s.requests);
        EXPECT_GE(run.elapsed_s, o.duration_s);
        EXPECT_GT(s.completion_tokens, 0);
        EXPECT_LE(s.completion_tokens, s.requests * o.max_tokens);
        EXPECT_GT(s.prompt_tokens, s.requests * (o.prompt_words + o.shared_prefix_words) / 2);
        EXPECT_GT(s.cached_tokens, 0);  // the shared preamble is reused from the KV cache
        EXPECT_GT(s.ttft_samples, 0);
        EXPECT_LE(*s.ttft_p50_s, *s.ttft_p99_s);
        EXPECT_GT(*s.ttft_p50_s, 0);
        if (s.itl_samples > 0) {
            EXPECT_LE(*s.itl_p50_s, *s.itl_p99_s);
        }
        EXPECT_NEAR(s.tokens_per_s * run.elapsed_s, double(s.completion_tokens), 1e-6);
        for (const loadgen_request_result & r : run.results) {
            EXPECT_GE(r.start_s, 0);
            EXPECT_LT(r.start_s, o.duration_s);  // sent inside the window
            EXPECT_EQ(r.status, 200);
        }
    }
    o.api_key = "wrong";  // the server has no keys: a key is ignored, still no errors
    o.chat = false;
    o.duration_s = 0.3;
    o.warmup_s = 0.3;
    const loadgen_run_result run = loadgen_run(o);
    EXPECT_TRUE(loadgen_summarize(run.results, run.elapsed_s).errors.empty());
    EXPECT_GE(run.warmup_requests, o.concurrency);  // each client sent its first request in the warmup
    for (const loadgen_request_result & r : run.results) {
        EXPECT_GE(r.start_s, o.warmup_s);  // counted requests were sent after it
    }
    EXPECT_EQ(p.terminate(), 0) << p.log();
}

TEST(LoadgenEndToEnd, WrongApiKeyIsCountedAsHttp401) {
    INFERD_REQUIRE_TESTDATA(dir);
    inferd_process p({"-m", dir + "/models/stories260K-f32.gguf", "--api-key", "right"});
    ASSERT_TRUE(p.wait_ready()) << p.log();
    loadgen_options o = options_for(p.port());
    o.api_key = "wrong";
    o.concurrency = 2;
    o.duration_s = 0.2;
    o.prompt_words = 4;
    const loadgen_run_result run = loadgen_run(o);
    const loadgen_summary s = loadgen_summarize(run.results, run.elapsed_s);
    EXPECT_EQ(s.ok, 0);
    EXPECT_GE(s.requests, 2);
    ASSERT_EQ(s.errors.size(), 1u);
    EXPECT_EQ(s.errors.begin()->first, "http_401");
    EXPECT_EQ(p.terminate(), 0) << p.log();
}
