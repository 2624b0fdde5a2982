// Tests of the HTTP layer with responses produced on other threads (as the batch loop does):
// streamed (chunked) bodies that reach the client while the producer runs, disconnects seen by
// write() / closed() / on_close, the stream queue limit, graceful shutdown, many clients at once.
#include "http-test-fixture.h"

#include <atomic>

TEST_F(http_fixture, streamed_chunks_arrive_before_the_next_is_written) {
    start();
    test_conn c(port);
    ASSERT_TRUE(c.send(test_request("GET", "/park")));
    auto res = parked.take();
    ASSERT_TRUE(res);
    EXPECT_EQ(srv->requests_in_flight(), 1u);
    res->begin_stream(200, "text/event-stream", {{"Cache-Control", "no-cache"}});
    EXPECT_TRUE(res->write("data: one\n\n"));
    auto head = c.read_head();
    ASSERT_TRUE(head);
    EXPECT_EQ(head->status, 200);
    EXPECT_EQ(head->header("content-type"), "text/event-stream");
    EXPECT_EQ(head->header("transfer-encoding"), "chunked");
    EXPECT_EQ(head->header("cache-control"), "no-cache");
    // The first chunk is read before the producer writes the second one.
    EXPECT_EQ(c.read_chunk(), std::optional<std::string>("data: one\n\n"));
    EXPECT_TRUE(res->write("data: two\n\n"));
    EXPECT_EQ(c.read_chunk(), std::optional<std::string>("data: two\n\n"));
    EXPECT_TRUE(res->write(""));  // nothing to send: must not end the body
    EXPECT_TRUE(res->write("data: [DONE]\n\n"));
    res->end();
    EXPECT_EQ(c.read_chunk(), std::optional<std::string>("data: [DONE]\n\n"));
    EXPECT_EQ(c.read_chunk(), std::optional<std::string>(""));
    EXPECT_FALSE(res->write("late"));  // after end()
    EXPECT_TRUE(wait_until([&] { return srv->requests_in_flight() == 0; }));
    EXPECT_FALSE(res->closed());
    // The connection stays usable.
    ASSERT_TRUE(c.send(test_request("GET", "/health")));
    auto r = c.read_response();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
}

TEST_F(http_fixture, respond_from_another_thread_and_second_respond_is_ignored) {
    start();
    test_conn c(port);
    ASSERT_TRUE(c.send(test_request("POST", "/park", "x")));
    auto res = parked.take();
    ASSERT_TRUE(res);
    std::thread t([res] {
        res->respond(201, "text/plain", "made");
        res->respond(500, "text/plain", "ignored");
        res->end();  // not a stream: ignored
    });
    t.join();
    auto r = c.read_response();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 201);
    EXPECT_EQ(r->body, "made");
    ASSERT_TRUE(c.send(test_request("GET", "/health")));
    r = c.read_response();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
}

TEST_F(http_fixture, client_disconnect_mid_stream_fires_on_close) {
    start();
    test_conn c(port);
    ASSERT_TRUE(c.send(test_request("GET", "/park")));
    auto res = parked.take();
    ASSERT_TRUE(res);
    test_flag fired;
    res->on_close([&] { fired.set(); });
    res->begin_stream(200, "text/event-stream");
    EXPECT_TRUE(res->write("data: one\n\n"));
    ASSERT_TRUE(c.read_head());
    EXPECT_EQ(c.read_chunk(), std::optional<std::string>("data: one\n\n"));
    c.close();
    ASSERT_TRUE(fired.wait());
    EXPECT_TRUE(res->closed());
    EXPECT_FALSE(res->write("data: two\n\n"));
    test_flag late;
    res->on_close([&] { late.set(); });  // already closed: runs at once
    EXPECT_EQ(late.count(), 1);
    EXPECT_EQ(fired.count(), 1);
    EXPECT_TRUE(wait_until([&] { return srv->requests_in_flight() == 0 && srv->open_connections() == 0; }));
}

TEST_F(http_fixture, client_disconnect_before_any_response_fires_on_close) {
    start();
    test_conn c(port);
    ASSERT_TRUE(c.send(test_request("GET", "/park")));
    auto res = parked.take();
    ASSERT_TRUE(res);
    test_flag fired;
    res->on_close([&] { fired.set(); });
    c.close();
    ASSERT_TRUE(fired.wait());
    EXPECT_TRUE(res->closed());
    res->respond(200, "text/plain", "nobody listens");  // ignored, no crash
    EXPECT_TRUE(wait_until([&] { return srv->requests_in_flight() == 0; }));
    srv->shutdown(std::chrono::milliseconds(0));
    const auto lines = sink->lines();
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0].rfind("GET /park 499 0B ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find("aborted"), std::string::npos) << lines[0];
}

TEST_F(http_fixture, stream_queue_limit_closes_a_client_that_does_not_read) {
    opts.stream_queue_limit = 64 * 1024;
    start();
    test_conn c(port);
    c.set_small_receive_buffer();
    ASSERT_TRUE(c.send(test_request("GET", "/park")));
    auto res = parked.take();
    ASSERT_TRUE(res);
    test_flag fired;
    res->on_close([&] { fired.set(); });
    res->begin_stream(200, "text/event-stream");
    const std::string piece(16 * 1024, 'z');
    bool refused = false;
    for (int i = 0; i < 4096 && !refused; ++i) {  // at most 64 MiB
        refused = !res->write(piece);
    }
    EXPECT_TRUE(refused);
    EXPECT_TRUE(fired.wait());
    EXPECT_TRUE(res->closed());
    EXPECT_TRUE(wait_until([&] { return srv->requests_in_flight() == 0; }));
}

TEST_F(http_fixture, write_timeout_drops_a_client_that_reads_nothing) {
    opts.write_timeout = std::chrono::milliseconds(300);
    opts.stream_queue_limit = size_t(1) << 30;  // only the timeout can end this
    start();
    test_conn c(port);
    c.set_small_receive_buffer();
    ASSERT_TRUE(c.send(test_request("GET", "/park")));
    auto res = parked.take();
    ASSERT_TRUE(res);
    test_flag fired;
    res->on_close([&] { fired.set(); });
    res->begin_stream(200, "text/event-stream");
    const std::string piece(64 * 1024, 'w');
    bool refused = false;
    for (int i = 0; i < 1000 && !refused; ++i) {  // at most 64 MiB, over 10 s
        refused = !res->write(piece);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(refused);
    EXPECT_TRUE(fired.wait());
    EXPECT_TRUE(wait_until([&] { return srv->requests_in_flight() == 0 && srv->open_connections() == 0; }));
}

TEST_F(http_fixture, shutdown_drains_in_flight_response_and_refuses_new_connections) {
    start();
    test_conn busy(port);
    ASSERT_TRUE(busy.send(test_request("GET", "/park")));
    auto res = parked.take();
    ASSERT_TRUE(res);
    test_conn idle(port);  // keep-alive connection with no request: closed at once
    ASSERT_TRUE(idle.send(test_request("GET", "/health")));
    ASSERT_TRUE(idle.read_response());

    std::atomic<bool> done{false};
    std::thread stopper([&] {
        srv->shutdown(std::chrono::seconds(10));
        done = true;
    });
    EXPECT_TRUE(idle.wait_closed());
    EXPECT_TRUE(wait_until([&] {
        test_conn probe(port);
        return !probe.ok() && probe.connect_errno() == ECONNREFUSED;
    }));
    EXPECT_FALSE(done.load());  // still draining the parked response
    res->begin_stream(200, "text/plain");
    EXPECT_TRUE(res->write("finished "));
    EXPECT_TRUE(res->write("normally"));
    res->end();
    auto r = busy.read_response();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "finished normally");
    EXPECT_EQ(r->header("connection"), "close");
    stopper.join();
    EXPECT_TRUE(done.load());
    EXPECT_EQ(srv->requests_in_flight(), 0u);
    EXPECT_EQ(srv->open_connections(), 0u);
    srv->shutdown(std::chrono::milliseconds(0));  // idempotent
}

TEST_F(http_fixture, shutdown_past_drain_closes_pending_responses) {
    start();
    test_conn busy(port);
    ASSERT_TRUE(busy.send(test_request("GET", "/park")));
    auto res = parked.take();
    ASSERT_TRUE(res);
    test_flag fired;
    res->on_close([&] { fired.set(); });
    srv->shutdown(std::chrono::milliseconds(50));
    EXPECT_TRUE(fired.wait());
    EXPECT_TRUE(res->closed());
    EXPECT_FALSE(res->write("x"));
    res->respond(200, "text/plain", "too late");  // after shutdown: ignored
    EXPECT_TRUE(busy.wait_closed());
    EXPECT_EQ(srv->requests_in_flight(), 0u);
}

TEST_F(http_fixture, responses_outliving_the_server_are_safe) {
    std::shared_ptr<http_response> res;
    {
        start();
        test_conn c(port);
        ASSERT_TRUE(c.send(test_request("GET", "/park")));
        res = parked.take();
        ASSERT_TRUE(res);
        srv.reset();  // destructor: shutdown(0)
    }
    EXPECT_TRUE(res->closed());
    EXPECT_FALSE(res->write("x"));
    res->respond(200, "text/plain", "x");
    res->end();
}

TEST_F(http_fixture, twenty_concurrent_clients) {
    opts.n_io_threads = 4;
    start();
    constexpr int n_clients = 20;
    constexpr int n_requests = 5;
    std::atomic<int> good{0};
    std::vector<std::thread> clients;
    for (int i = 0; i < n_clients; ++i) {
        clients.emplace_back([&, i] {
            test_conn c(port);
            for (int k = 0; k < n_requests; ++k) {
                const std::string body = "client " + std::to_string(i) + " request " + std::to_string(k);
                if (!c.send(test_request("POST", "/echo", body))) {
                    return;
                }
                auto r = c.read_response();
                if (r && r->status == 200 && r->body == body) {
                    ++good;
                }
            }
        });
    }
    for (auto & t : clients) {
        t.join();
    }
    EXPECT_EQ(good.load(), n_clients * n_requests);
    EXPECT_TRUE(wait_until([&] { return srv->requests_in_flight() == 0; }));
}

TEST_F(http_fixture, concurrent_streams_from_producer_threads) {
    start();
    constexpr int n = 8;
    std::vector<std::unique_ptr<test_conn>> conns;
    for (int i = 0; i < n; ++i) {
        conns.push_back(std::make_unique<test_conn>(port));
        ASSERT_TRUE(conns.back()->send(test_request("GET", "/park")));
    }
    std::vector<std::thread> producers;
    for (int i = 0; i < n; ++i) {
        auto res = parked.take();
        ASSERT_TRUE(res);
        producers.emplace_back([res] {
            res->begin_stream(200, "text/event-stream");
            for (int k = 0; k < 50; ++k) {
                res->write("data: " + std::to_string(k) + "\n\n");
            }
            res->end();
        });
    }
    for (auto & t : producers) {
        t.join();
    }
    std::string expected;
    for (int k = 0; k < 50; ++k) {
        expected += "data: " + std::to_string(k) + "\n\n";
    }
    for (auto & c : conns) {
        auto r = c->read_response();
        ASSERT_TRUE(r);
        EXPECT_EQ(r->body, expected);
    }
}

TEST_F(http_fixture, http10_stream_is_close_delimited) {
    start();
    test_conn c(port);
    ASSERT_TRUE(c.send("GET /park HTTP/1.0\r\n\r\n"));
    auto res = parked.take();
    ASSERT_TRUE(res);
    res->begin_stream(200, "text/event-stream");
    res->write("data: a\n\n");
    res->write("data: b\n\n");
    res->end();
    auto r = c.read_response();
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->has_header("transfer-encoding"));
    EXPECT_EQ(r->body, "data: a\n\ndata: b\n\n");
}
