// The connection limit against a real http_server on a loopback port: connections beyond
// max_connections are answered 503 with Retry-After and OpenAI's error shape, then closed,
// without their request being read; on_refused counts them, a warning names the limit, the
// connections within the limit keep being served, and a slot that frees up is taken again. A
// burst of hundreds of connections over the limit neither exhausts descriptors nor stops the
// server. The automatic limit follows RLIMIT_NOFILE.
#include "http-test-fixture.h"

#include <sys/resource.h>

#include <atomic>
#include <filesystem>
#include <thread>
#include <memory>
#include <vector>

namespace {

size_t open_fds() {
    size_t n = 0;
    for ([[maybe_unused]] const auto & e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
    return n;
}

bool logged(memory_sink & sink, const std::string & text) {
    for (const std::string & l : sink.lines()) {
        if (l.find(text) != std::string::npos) return true;
    }
    return false;
}

}  // namespace

TEST_F(http_fixture, connections_over_the_limit_get_503_and_close) {
    opts.max_connections = 3;
    std::atomic<int> refused{0};
    opts.on_refused = [&] { ++refused; };
    start();
    EXPECT_EQ(srv->max_connections(), 3u);
    std::vector<std::unique_ptr<test_conn>> held;
    for (int i = 0; i < 3; ++i) {
        held.push_back(std::make_unique<test_conn>(port));
        ASSERT_TRUE(held.back()->send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
        auto r = held.back()->read_response();  // kept alive afterwards: still open
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 200);
    }
    {
        test_conn c(port);
        ASSERT_TRUE(c.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
        auto r = c.read_response();
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 503);
        EXPECT_EQ(r->header("retry-after"), "1");
        EXPECT_EQ(r->header("connection"), "close");
        EXPECT_NE(r->body.find("\"code\":\"too_many_connections\""), std::string::npos) << r->body;
        EXPECT_NE(r->body.find("at most 3 open connections"), std::string::npos) << r->body;
        EXPECT_TRUE(c.wait_closed());
    }
    EXPECT_EQ(refused.load(), 1);
    EXPECT_EQ(srv->connections_refused(), 1u);
    EXPECT_TRUE(logged(*sink, "refused with 503"));
    EXPECT_TRUE(logged(*sink, "the limit is 3 (--max-connections)"));

    // The held connections are still served.
    ASSERT_TRUE(held[0]->send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi"));
    auto r = held[0]->read_response();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->body, "hi");

    // One goes: its slot is free again.
    held.pop_back();
    for (int tries = 0; tries < 100 && srv->open_connections() >= 3; ++tries) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    r = fetch("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
}

TEST_F(http_fixture, a_burst_over_the_limit_leaves_the_server_serving) {
    opts.max_connections = 8;
    start();
    const size_t fds_before = open_fds();
    std::vector<std::unique_ptr<test_conn>> held;
    for (int i = 0; i < 8; ++i) held.push_back(std::make_unique<test_conn>(port));  // silent, held open
    std::vector<std::unique_ptr<test_conn>> burst;
    for (int i = 0; i < 300; ++i) {
        burst.push_back(std::make_unique<test_conn>(port));
        if (i % 2 == 0) burst.back()->send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    }
    int answered = 0, closed = 0;
    for (auto & c : burst) {
        auto r = c->read_response();
        if (r) {
            EXPECT_EQ(r->status, 503);
            ++answered;
        }
        closed += c->wait_closed() ? 1 : 0;
    }
    EXPECT_GT(answered, 0);
    EXPECT_EQ(closed, 300);
    EXPECT_EQ(srv->connections_refused(), 300u);
    burst.clear();
    held.clear();
    for (int tries = 0; tries < 200 && srv->open_connections() > 0; ++tries) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(srv->open_connections(), 0u);
    auto r = fetch("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    // The server's descriptors are back where they were (the client sockets of this process are
    // closed too): nothing leaked per refused connection.
    for (int tries = 0; tries < 200 && open_fds() > fds_before; ++tries) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_LE(open_fds(), fds_before);
}

TEST_F(http_fixture, the_automatic_limit_follows_the_open_file_limit) {
    start();
    rlimit lim{};
    ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &lim), 0);
    if (lim.rlim_cur == RLIM_INFINITY) {
        EXPECT_EQ(srv->max_connections(), 65536u);
    } else {
        EXPECT_EQ(srv->max_connections(), std::max<size_t>(16, size_t(lim.rlim_cur) - 64));
    }
}
