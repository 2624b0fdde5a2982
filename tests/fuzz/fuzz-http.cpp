// libFuzzer target for the HTTP request path, driven through the server's own code: one
// http_server (the listener, sessions, parser limits, chunked bodies, keep-alive, pipelining,
// Expect: 100-continue, CORS) runs in this process on a loopback port, and each input is written
// to a fresh connection as raw bytes, the sending side then shut down. Routes: GET /health, POST
// /echo (the body back), GET /stream (a chunked stream of three writes). Checked, besides
// crashes and sanitizer reports: the server closes every connection within a few seconds (no
// hang on a half-closed connection), every response it sends starts with a status line, and no
// session outlives its connection (the open count returns to 0).
#include "server/http-server.h"

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

namespace {

[[noreturn]] void finding(const char * what, const std::string & detail = "") {
    std::fprintf(stderr, "fuzz-http: %s %s\n", what, detail.substr(0, 200).c_str());
    std::abort();
}

struct fixture {
    http_router router;
    std::unique_ptr<http_server> server;

    fixture() {
        router.add("GET", "/health", [](const http_request &, std::shared_ptr<http_response> res) {
            res->respond(200, "application/json", R"({"status":"ok"})");
        });
        router.add("POST", "/echo", [](const http_request & req, std::shared_ptr<http_response> res) {
            res->respond(200, "text/plain", req.body);
        });
        router.add("GET", "/stream", [](const http_request &, std::shared_ptr<http_response> res) {
            res->begin_stream(200, "text/event-stream");
            for (int i = 0; i < 3; ++i) res->write("data: " + std::to_string(i) + "\n\n");
            res->end();
        });
        http_server_options o;
        o.host = "127.0.0.1";
        o.port = 0;
        o.n_io_threads = 2;
        o.max_body_size = 4096;
        o.header_timeout = std::chrono::milliseconds(1000);
        o.idle_timeout = std::chrono::milliseconds(1000);
        o.body_timeout = std::chrono::milliseconds(1000);
        o.write_timeout = std::chrono::milliseconds(1000);
        o.cors_origins = {"http://a.example"};
        auto log = std::make_shared<spdlog::logger>("fuzz-http", std::make_shared<spdlog::sinks::null_sink_mt>());
        server = std::make_unique<http_server>(o, router, log);
        std::string err;
        if (!server->start(&err)) finding("cannot start the server:", err);
    }
};

fixture & the_server() {
    static fixture f;
    return f;
}

// Milliseconds from now to deadline (0 or less once it has passed), for poll().
int ms_left(std::chrono::steady_clock::time_point deadline) {
    return int(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
}

// The outcome of a connect() still under way on fd: 0 or an errno.
int await_connect(int fd) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (;;) {
        pollfd p{fd, POLLOUT, 0};
        const int left = ms_left(deadline);
        if (left <= 0) return ETIMEDOUT;
        const int r = ::poll(&p, 1, left);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return errno;
        if (r == 0) continue;
        int err = 0;
        socklen_t len = sizeof err;
        if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
        return err;
    }
}

// Each connection comes from its own loopback source address (127.0.0.2 up, round robin over
// 127.0.0.0/8): the client shuts its side first, so every input leaves a TIME_WAIT socket behind,
// and from one source address a few thousand inputs a second use up the ephemeral ports within a
// minute (connect() then fails with EADDRNOTAVAIL, which is the machine, not the server).
int connect_to(uint16_t port) {
    static uint32_t next_source = 0;
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) finding("socket() failed:", std::strerror(errno));
    sockaddr_in src{};
    src.sin_family = AF_INET;
    src.sin_addr.s_addr = htonl(0x7f000002u + (next_source++ % 0xfffffdu));
    if (::bind(fd, reinterpret_cast<sockaddr *>(&src), sizeof src) != 0) {
        finding("bind() to a loopback source failed:", std::strerror(errno));
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int err = ::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0 ? 0 : errno;
    // A signal (libFuzzer's timers) interrupted the wait: the connection goes on being made;
    // wait for it and take its outcome.
    if (err == EINTR) err = await_connect(fd);
    if (err != 0) finding("connect() failed:", std::strerror(err));
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

// Reads until the server closes (or resets) the connection; a finding when it has not within
// the deadline.
std::string read_to_close(int fd, const uint8_t * data, size_t size) {
    std::string got;
    size_t sent = 0;
    bool shut = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    char buf[16384];
    for (;;) {
        if (!shut && sent == size) {
            ::shutdown(fd, SHUT_WR);
            shut = true;
        }
        pollfd p{fd, short(POLLIN | (shut ? 0 : POLLOUT)), 0};
        const int left = ms_left(deadline);
        if (left <= 0) finding("the server kept the connection open after the request ended:", got);
        if (::poll(&p, 1, left) <= 0) continue;
        if ((p.revents & POLLOUT) && !shut) {
            const ssize_t n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0) sent += size_t(n);
            if (n < 0 && errno != EAGAIN) shut = true;  // reset by the server (e.g. after a 413)
        }
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EAGAIN)) return got;
            if (n > 0) got.append(buf, size_t(n));
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    fixture & f = the_server();
    const int fd = connect_to(f.server->port());
    const std::string got = read_to_close(fd, data, size);
    ::close(fd);
    if (!got.empty() && got.rfind("HTTP/1.", 0) != 0) finding("a response without a status line:", got);
    for (int i = 0; f.server->open_connections() > 0; ++i) {
        if (i == 2000) finding("a session outlived its connection by 2 s");
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return 0;
}
