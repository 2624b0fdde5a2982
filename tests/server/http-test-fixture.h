// http-test-fixture.h — a real http_server on 127.0.0.1 (port 0) with short timeouts and a few
// routes, for the HTTP layer tests:
//   GET  /health  → 200 {"status":"ok"}
//   POST /echo    → 200 text/plain, the request body (query "?q" echoed in X-Query)
//   GET  /park    → parked: the test takes the response from `parked` and answers it itself
//   POST /park    → parked too (for 405 / Allow checks: GET, POST)
//   GET  /throw   → the handler throws
//   GET  /drop    → the handler drops its response without answering
#pragma once

#include "http-test-client.h"
#include "http-test-util.h"

#include <gtest/gtest.h>

#include <stdexcept>

class http_fixture : public ::testing::Test {
protected:
    void SetUp() override {
        opts.host = "127.0.0.1";
        opts.port = 0;
        opts.n_io_threads = 2;
        opts.header_timeout = std::chrono::milliseconds(3000);
        opts.idle_timeout = std::chrono::milliseconds(3000);
        opts.body_timeout = std::chrono::milliseconds(3000);
        opts.write_timeout = std::chrono::milliseconds(3000);
        sink = std::make_shared<memory_sink>();
        logger = std::make_shared<spdlog::logger>("http-test", sink);
        logger->set_level(spdlog::level::info);
        router.add("GET", "/health", [](const http_request &, std::shared_ptr<http_response> res) {
            res->respond(200, "application/json", R"({"status":"ok"})");
        });
        router.add("POST", "/echo", [](const http_request & req, std::shared_ptr<http_response> res) {
            res->respond(200, "text/plain", req.body, {{"X-Query", req.query}, {"X-Method", req.method}});
        });
        router.add("GET", "/park", [this](const http_request &, std::shared_ptr<http_response> res) {
            parked.put(std::move(res));
        });
        router.add("POST", "/park", [this](const http_request &, std::shared_ptr<http_response> res) {
            parked.put(std::move(res));
        });
        router.add("GET", "/throw", [](const http_request &, std::shared_ptr<http_response>) {
            throw std::runtime_error("handler failure");
        });
        router.add("GET", "/drop", [](const http_request &, std::shared_ptr<http_response>) {});
    }

    void TearDown() override {
        if (srv) {
            srv->shutdown(std::chrono::milliseconds(0));
        }
    }

    void start() {
        srv = std::make_unique<http_server>(opts, router, logger);
        std::string err;
        ASSERT_TRUE(srv->start(&err)) << err;
        port = srv->port();
        ASSERT_NE(port, 0);
    }

    // One request on a new connection.
    std::optional<test_response> fetch(const std::string & request) {
        test_conn c(port);
        if (!c.ok() || !c.send(request)) {
            return std::nullopt;
        }
        return c.read_response();
    }

    http_server_options opts;
    http_router router;
    std::shared_ptr<memory_sink> sink;
    std::shared_ptr<spdlog::logger> logger;
    std::unique_ptr<http_server> srv;
    response_parking parked;
    uint16_t port = 0;
};
