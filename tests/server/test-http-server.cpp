// Tests of the HTTP layer's protocol behaviour against a real server on a loopback port:
// routing, 404 / 405, body limit, keep-alive, Connection: close, CORS, timeouts, malformed input,
// the access log. Streaming, disconnects, shutdown and concurrency: test-http-stream.cpp.
#include "http-test-fixture.h"

#include <algorithm>

TEST_F(http_fixture, get_and_post_are_routed) {
    start();
    auto r = fetch(test_request("GET", "/health"));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, R"({"status":"ok"})");
    EXPECT_EQ(r->header("content-type"), "application/json");

    r = fetch(test_request("POST", "/echo?x=1&y=2", "hello body"));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "hello body");
    EXPECT_EQ(r->header("x-query"), "x=1&y=2");
    EXPECT_EQ(r->header("x-method"), "POST");
}

TEST_F(http_fixture, unknown_path_is_404_with_openai_error) {
    start();
    auto r = fetch(test_request("GET", "/nope"));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 404);
    EXPECT_EQ(r->header("content-type"), "application/json");
    EXPECT_EQ(r->body, R"({"error":{"message":"Not found: /nope","type":"not_found_error","param":null,"code":"not_found"}})");
}

TEST_F(http_fixture, wrong_method_is_405_with_allow) {
    start();
    auto r = fetch(test_request("DELETE", "/park"));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 405);
    EXPECT_EQ(r->header("allow"), "GET, POST");
    EXPECT_NE(r->body.find("\"type\":\"invalid_request_error\""), std::string::npos) << r->body;

    r = fetch(test_request("POST", "/health"));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 405);
    EXPECT_EQ(r->header("allow"), "GET");
}

TEST_F(http_fixture, router_filter_runs_before_routing) {
    router.set_filter([](const http_request & req, const std::shared_ptr<http_response> & res) {
        if (req.header("authorization") == "Bearer k") {
            return true;
        }
        res->respond(401, "application/json", http_error_json("no key", "authentication_error", "invalid_api_key"));
        return false;
    });
    start();
    auto r = fetch(test_request("GET", "/nope"));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401);
    r = fetch(test_request("GET", "/health", "", "Authorization: Bearer k\r\n"));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
}

TEST_F(http_fixture, body_over_limit_is_413_and_server_goes_on) {
    opts.max_body_size = 1024;
    start();
    {
        // Announced by Content-Length: answered after the header, the body is never read.
        test_conn c(port);
        ASSERT_TRUE(c.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"));
        auto r = c.read_response();
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 413);
        EXPECT_NE(r->body.find("\"code\":\"request_too_large\""), std::string::npos) << r->body;
        EXPECT_EQ(r->header("connection"), "close");
        EXPECT_TRUE(c.wait_closed());
    }
    {
        // Chunked: found while reading the body.
        test_conn c(port);
        const std::string chunk(2000, 'a');
        ASSERT_TRUE(c.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n7d0\r\n" + chunk + "\r\n"));
        auto r = c.read_response();
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 413);
    }
    auto r = fetch(test_request("POST", "/echo", std::string(1024, 'b')));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body.size(), 1024u);
}

TEST_F(http_fixture, keep_alive_serves_requests_in_sequence_and_pipelined) {
    start();
    test_conn c(port);
    ASSERT_TRUE(c.send(test_request("GET", "/health")));
    auto r1 = c.read_response();
    ASSERT_TRUE(r1);
    EXPECT_EQ(r1->status, 200);
    EXPECT_FALSE(r1->has_header("connection"));
    ASSERT_TRUE(c.send(test_request("POST", "/echo", "second")));
    auto r2 = c.read_response();
    ASSERT_TRUE(r2);
    EXPECT_EQ(r2->body, "second");
    // Two requests in one write.
    ASSERT_TRUE(c.send(test_request("POST", "/echo", "third") + test_request("POST", "/echo", "fourth")));
    auto r3 = c.read_response();
    auto r4 = c.read_response();
    ASSERT_TRUE(r3 && r4);
    EXPECT_EQ(r3->body, "third");
    EXPECT_EQ(r4->body, "fourth");
    EXPECT_EQ(srv->open_connections(), 1u);
}

// A request pipelined behind one whose handler answers later (as the model's routes do): the
// connection stays up with no read pending, and both are answered in order.
TEST_F(http_fixture, pipelined_request_behind_a_pending_response) {
    start();
    test_conn c(port);
    ASSERT_TRUE(c.send(test_request("GET", "/park") + test_request("POST", "/echo", "next")));
    std::shared_ptr<http_response> res = parked.take();
    ASSERT_TRUE(res);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(res->closed());
    res->respond(200, "text/plain", "parked answer");
    auto r1 = c.read_response();
    auto r2 = c.read_response();
    ASSERT_TRUE(r1 && r2);
    EXPECT_EQ(r1->body, "parked answer");
    EXPECT_EQ(r2->body, "next");
}

TEST_F(http_fixture, connection_close_is_honoured) {
    start();
    test_conn c(port);
    ASSERT_TRUE(c.send(test_request("GET", "/health", "", "Connection: close\r\n")));
    auto r = c.read_response();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->header("connection"), "close");
    EXPECT_TRUE(c.wait_closed());
}

TEST_F(http_fixture, http10_gets_http10_and_close) {
    start();
    test_conn c(port);
    ASSERT_TRUE(c.send("GET /health HTTP/1.0\r\n\r\n"));
    auto r = c.read_response();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->version, "HTTP/1.0");
    EXPECT_EQ(r->status, 200);
    EXPECT_TRUE(c.wait_closed());
}

TEST_F(http_fixture, expect_100_continue_is_answered) {
    start();
    test_conn c(port);
    ASSERT_TRUE(c.send("POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"));
    auto interim = c.read_head();
    ASSERT_TRUE(interim);
    EXPECT_EQ(interim->status, 100);
    ASSERT_TRUE(c.send("12345"));
    auto r = c.read_response();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "12345");
}

TEST_F(http_fixture, cors_preflight_and_headers_for_allowed_origin) {
    opts.cors_origins = {"http://ok.example"};
    start();
    auto r = fetch(test_request("OPTIONS", "/echo", "",
                                "Origin: http://ok.example\r\nAccess-Control-Request-Method: POST\r\n"
                                "Access-Control-Request-Headers: authorization, content-type\r\n"));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 204);
    EXPECT_EQ(r->header("access-control-allow-origin"), "http://ok.example");
    EXPECT_EQ(r->header("access-control-allow-methods"), "GET, POST, OPTIONS");
    EXPECT_EQ(r->header("access-control-allow-headers"), "Authorization, Content-Type");
    EXPECT_EQ(r->header("vary"), "Origin");
    EXPECT_FALSE(r->has_header("content-length"));

    r = fetch(test_request("GET", "/health", "", "Origin: http://ok.example\r\n"));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->header("access-control-allow-origin"), "http://ok.example");
    EXPECT_EQ(r->header("vary"), "Origin");
}

TEST_F(http_fixture, cors_not_allowed_origin_gets_no_cors_headers) {
    opts.cors_origins = {"http://ok.example"};
    start();
    auto r = fetch(test_request("OPTIONS", "/echo", "",
                                "Origin: http://evil.example\r\nAccess-Control-Request-Method: POST\r\n"));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 405);  // no preflight answer: routed, and /echo has no OPTIONS
    EXPECT_FALSE(r->has_header("access-control-allow-origin"));
    r = fetch(test_request("GET", "/health", "", "Origin: http://evil.example\r\n"));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_FALSE(r->has_header("access-control-allow-origin"));
}

TEST_F(http_fixture, cors_wildcard_echoes_the_origin) {
    opts.cors_origins = {"*"};
    start();
    auto r = fetch(test_request("GET", "/health", "", "Origin: http://any.example\r\n"));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->header("access-control-allow-origin"), "http://any.example");
}

TEST_F(http_fixture, no_cors_headers_without_configured_origins) {
    start();
    auto r = fetch(test_request("GET", "/health", "", "Origin: http://ok.example\r\n"));
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->has_header("access-control-allow-origin"));
}

TEST_F(http_fixture, header_timeout_closes_slow_header) {
    opts.header_timeout = std::chrono::milliseconds(200);
    start();
    test_conn c(port);
    ASSERT_TRUE(c.send("GET /health HTTP/1.1\r\nHost: x\r\n"));  // never finished
    EXPECT_TRUE(c.wait_closed());
    test_conn silent(port);  // connects and sends nothing
    EXPECT_TRUE(silent.wait_closed());
    EXPECT_TRUE(wait_until([&] { return srv->open_connections() == 0; }));
    auto r = fetch(test_request("GET", "/health"));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
}

TEST_F(http_fixture, body_timeout_closes_slow_body) {
    opts.body_timeout = std::chrono::milliseconds(200);
    start();
    test_conn c(port);
    ASSERT_TRUE(c.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12"));  // 8 bytes never come
    EXPECT_TRUE(c.wait_closed());
    EXPECT_TRUE(wait_until([&] { return srv->open_connections() == 0 && srv->requests_in_flight() == 0; }));
}

TEST_F(http_fixture, head_gets_headers_without_body) {
    router.add("HEAD", "/health", [](const http_request &, std::shared_ptr<http_response> res) {
        res->respond(200, "application/json", R"({"status":"ok"})");
    });
    start();
    test_conn c(port);
    ASSERT_TRUE(c.send(test_request("HEAD", "/health")));
    auto r = c.read_response(true);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->header("content-length"), "15");
    ASSERT_TRUE(c.send(test_request("GET", "/health")));  // no stray body bytes before this answer
    r = c.read_response();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, R"({"status":"ok"})");
}

TEST_F(http_fixture, idle_keep_alive_connection_is_closed) {
    opts.idle_timeout = std::chrono::milliseconds(200);
    start();
    test_conn c(port);
    ASSERT_TRUE(c.send(test_request("GET", "/health")));
    auto r = c.read_response();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_TRUE(c.wait_closed());
}

TEST_F(http_fixture, garbage_gets_400_and_close) {
    start();
    for (const std::string & garbage : {std::string("\x01\x02\x03 garbage\r\n\r\n"), std::string("GET\r\n\r\n"),
                                      std::string("GET / HTTP/1.1\r\nBad Header Line\r\n\r\n"),
                                      std::string("POST /echo HTTP/1.1\r\nContent-Length: abc\r\n\r\n")}) {
        test_conn c(port);
        ASSERT_TRUE(c.send(garbage));
        auto r = c.read_response();
        ASSERT_TRUE(r) << garbage;
        EXPECT_EQ(r->status, 400) << garbage;
        EXPECT_NE(r->body.find("\"type\":\"invalid_request_error\""), std::string::npos) << r->body;
        EXPECT_TRUE(c.wait_closed());
    }
    auto r = fetch(test_request("GET", "/health"));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
}

TEST_F(http_fixture, oversized_header_gets_431) {
    start();
    test_conn c(port);
    ASSERT_TRUE(c.send("GET /health HTTP/1.1\r\nX-Big: " + std::string(70 * 1024, 'x') + "\r\n\r\n"));
    auto r = c.read_response();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 431);
}

TEST_F(http_fixture, handler_that_throws_or_drops_gives_500) {
    start();
    auto r = fetch(test_request("GET", "/throw"));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 500);
    r = fetch(test_request("GET", "/drop"));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 500);
    EXPECT_TRUE(wait_until([&] { return srv->requests_in_flight() == 0; }));
}

TEST_F(http_fixture, handler_headers_with_newlines_are_dropped) {
    router.add("GET", "/split", [](const http_request &, std::shared_ptr<http_response> res) {
        res->respond(200, "text/plain", "x", {{"X-Good", "yes"}, {"X-Bad", "a\r\nSet-Cookie: evil=1"}});
    });
    start();
    auto r = fetch(test_request("GET", "/split"));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->header("x-good"), "yes");
    EXPECT_FALSE(r->has_header("x-bad"));
    EXPECT_FALSE(r->has_header("set-cookie"));
}

TEST_F(http_fixture, access_log_has_one_line_per_request) {
    start();
    ASSERT_TRUE(fetch(test_request("GET", "/health")));
    ASSERT_TRUE(fetch(test_request("GET", "/nope")));
    srv->shutdown(std::chrono::milliseconds(0));
    // A request's line is written when its connection finishes the response, which may come
    // after the client has read it and sent the next one: lines of two connections may come in
    // either order ("GET /health" sorts first).
    auto lines = sink->lines();
    std::sort(lines.begin(), lines.end());
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0].rfind("GET /health 200 ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find("127.0.0.1:"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("ms "), std::string::npos) << lines[0];
    EXPECT_EQ(lines[1].rfind("GET /nope 404 ", 0), 0u) << lines[1];
}

TEST_F(http_fixture, access_log_json_lines) {
    opts.log_json = true;
    start();
    ASSERT_TRUE(fetch(test_request("POST", "/echo", "abc")));
    srv->shutdown(std::chrono::milliseconds(0));
    const auto lines = sink->lines();
    ASSERT_EQ(lines.size(), 1u);
    const std::string & l = lines[0];
    EXPECT_EQ(l.rfind("{\"type\":\"access\",\"method\":\"POST\",\"path\":\"/echo\",\"status\":200,\"bytes\":", 0), 0u) << l;
    EXPECT_NE(l.find("\"duration_ms\":"), std::string::npos) << l;
    EXPECT_NE(l.find("\"remote\":\"127.0.0.1:"), std::string::npos) << l;
    EXPECT_EQ(l.back(), '}');
}

TEST_F(http_fixture, start_fails_on_a_port_in_use) {
    start();
    http_server_options o = opts;
    o.port = port;
    http_server second(o, router, logger);
    std::string err;
    EXPECT_FALSE(second.start(&err));
    EXPECT_NE(err.find("bind"), std::string::npos) << err;
    http_server_options bad = opts;
    bad.host = "192.0.2.1";  // TEST-NET-1: not an address of this machine
    http_server third(bad, router, logger);
    EXPECT_FALSE(third.start(&err));
    EXPECT_FALSE(err.empty());
}

TEST(http_json, error_json_escapes_and_null_code) {
    EXPECT_EQ(http_error_json("a \"q\"\n\x01", "t"), R"({"error":{"message":"a \"q\"\n\u0001","type":"t","param":null,"code":null}})");
    EXPECT_EQ(http_json_quote("caf\xc3\xa9 \xff"), "\"caf\xc3\xa9 \\ufffd\"");
}
