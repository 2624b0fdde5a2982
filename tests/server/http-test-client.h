// http-test-client.h — a small blocking HTTP/1.1 client on raw POSIX sockets for the server
// tests: send bytes as given (malformed requests too), read a response head, its chunks one by
// one (to check that streamed data arrives while the producer still runs), or a whole response.
//
// Usage:
//   test_conn c(port);
//   c.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
//   auto r = c.read_response();           // std::nullopt on timeout / close before the end
//   EXPECT_EQ(r->status, 200);
//
// Every read waits at most recv_timeout (10 s by default), so a server that hangs fails the
// test instead of hanging it.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct test_response {
    int status = 0;
    std::string version;  // "HTTP/1.1"
    std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
    std::string body;                                          // de-chunked
    std::vector<std::string> chunks;                           // chunked bodies: each chunk

    std::string header(std::string_view name) const {
        for (const auto & [k, v] : headers) {
            if (k == name) {
                return v;
            }
        }
        return {};
    }
    bool has_header(std::string_view name) const {
        for (const auto & kv : headers) {
            if (kv.first == name) {
                return true;
            }
        }
        return false;
    }
};

class test_conn {
public:
    explicit test_conn(uint16_t port, int recv_timeout_s = 10) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        if (fd_ < 0) {
            return;
        }
        timeval tv{recv_timeout_s, 0};
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        int one = 1;
        ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(fd_, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
            connect_errno_ = errno;
            ::close(fd_);
            fd_ = -1;
        }
    }
    ~test_conn() { close(); }
    test_conn(const test_conn &) = delete;
    test_conn & operator=(const test_conn &) = delete;

    bool ok() const { return fd_ >= 0; }
    int connect_errno() const { return connect_errno_; }
    void close() {
        if (fd_ >= 0) {
            ::close(fd_);
            fd_ = -1;
        }
    }
    // Shrinks the receive buffer (before the server writes) so that a client that does not read
    // makes the server's writes block soon.
    void set_small_receive_buffer() {
        int n = 4096;
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &n, sizeof n);
    }

    bool send(std::string_view data) {
        while (!data.empty() && fd_ >= 0) {
            const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
            if (n <= 0) {
                return false;
            }
            data.remove_prefix(size_t(n));
        }
        return data.empty();
    }

    // Reads the status line and headers.
    std::optional<test_response> read_head() {
        size_t end;
        while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
            if (!fill()) {
                return std::nullopt;
            }
        }
        std::string head = buf_.substr(0, end);
        buf_.erase(0, end + 4);
        test_response r;
        size_t line_end = head.find("\r\n");
        const std::string status_line = head.substr(0, line_end);
        const size_t sp = status_line.find(' ');
        if (sp == std::string::npos) {
            return std::nullopt;
        }
        r.version = status_line.substr(0, sp);
        r.status = std::atoi(status_line.c_str() + sp + 1);
        size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
        while (pos < head.size()) {
            size_t e = head.find("\r\n", pos);
            if (e == std::string::npos) {
                e = head.size();
            }
            const std::string line = head.substr(pos, e - pos);
            const size_t colon = line.find(':');
            if (colon != std::string::npos) {
                std::string name = line.substr(0, colon);
                for (char & c : name) {
                    c = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
                }
                size_t v = colon + 1;
                while (v < line.size() && line[v] == ' ') {
                    ++v;
                }
                r.headers.emplace_back(std::move(name), line.substr(v));
            }
            pos = e + 2;
        }
        return r;
    }

    // One chunk of a chunked body: its data, "" for the last chunk, nullopt on error / timeout.
    std::optional<std::string> read_chunk() {
        size_t e;
        while ((e = buf_.find("\r\n")) == std::string::npos) {
            if (!fill()) {
                return std::nullopt;
            }
        }
        const size_t size = std::strtoul(buf_.substr(0, e).c_str(), nullptr, 16);
        buf_.erase(0, e + 2);
        if (!read_exact(size + 2)) {
            return std::nullopt;
        }
        std::string data = buf_.substr(0, size);
        buf_.erase(0, size + 2);
        return data;
    }

    // A whole response; no_body for the answer to HEAD.
    std::optional<test_response> read_response(bool no_body = false) {
        auto r = read_head();
        if (!r) {
            return std::nullopt;
        }
        if (no_body || r->status == 204 || r->status == 304 || r->status < 200) {
            return r;
        }
        if (r->header("transfer-encoding") == "chunked") {
            for (;;) {
                auto c = read_chunk();
                if (!c) {
                    return std::nullopt;
                }
                if (c->empty()) {
                    break;
                }
                r->body += *c;
                r->chunks.push_back(std::move(*c));
            }
        } else if (r->has_header("content-length")) {
            const size_t n = std::strtoul(r->header("content-length").c_str(), nullptr, 10);
            if (!read_exact(n)) {
                return std::nullopt;
            }
            r->body = buf_.substr(0, n);
            buf_.erase(0, n);
        } else {
            while (fill()) {
            }
            if (!eof_) {
                return std::nullopt;
            }
            r->body = std::move(buf_);
            buf_.clear();
        }
        return r;
    }

    // True when the server closes the connection (EOF or reset) within the receive timeout;
    // data that arrives before is dropped.
    bool wait_closed() {
        while (fill()) {
        }
        return eof_;
    }

private:
    bool read_exact(size_t n) {
        while (buf_.size() < n) {
            if (!fill()) {
                return false;
            }
        }
        return true;
    }
    // Appends what arrives; false on EOF (eof_ set), reset (eof_ set) or timeout (eof_ unset).
    bool fill() {
        if (fd_ < 0) {
            return false;
        }
        char tmp[16384];
        const ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
        if (n > 0) {
            buf_.append(tmp, size_t(n));
            return true;
        }
        eof_ = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
        return false;
    }

    int fd_ = -1;
    int connect_errno_ = 0;
    bool eof_ = false;
    std::string buf_;
};

// "METHOD path HTTP/1.1" with Host, the given extra header lines ("Name: value\r\n" each) and
// a body with its Content-Length (when non-empty or for POST).
inline std::string test_request(std::string_view method, std::string_view path, std::string_view body = {},
                                std::string_view extra_headers = {}) {
    std::string r;
    r.append(method).append(" ").append(path).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    r.append(extra_headers);
    if (!body.empty() || method == "POST") {
        r.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
    }
    r.append("\r\n").append(body);
    return r;
}
