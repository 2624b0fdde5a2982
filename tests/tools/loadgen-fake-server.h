// A loopback HTTP/1.1 server for the inferd-loadgen tests: one thread per connection, requests
// read whole (head and Content-Length body) and answered by a handler, keep-alive until the
// handler's response says "Connection: close" or the client leaves.
//
// Usage:
//   loadgen_fake_server s([](const std::string & head, const std::string & body) {
//       return loadgen_fake_response(200, "{}");
//   });
//   ... connect to 127.0.0.1:s.port() ...
//   std::vector<std::string> bodies = s.bodies();  // every request body received, in order
#pragma once

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

// A complete response with a Content-Length body; close adds "Connection: close".
inline std::string loadgen_fake_response(int status, const std::string & body, bool close = false) {
    std::string r = "HTTP/1.1 ";
    r.append(std::to_string(status)).append(status == 200 ? " OK" : " Error").append("\r\n");
    r.append("Content-Type: application/json\r\nContent-Length: ").append(std::to_string(body.size()));
    r.append(close ? "\r\nConnection: close\r\n\r\n" : "\r\n\r\n").append(body);
    return r;
}

class loadgen_fake_server {
public:
    // Given a request's head (request line and headers) and body, the raw response bytes.
    using handler_fn = std::function<std::string(const std::string & head, const std::string & body)>;

    explicit loadgen_fake_server(handler_fn handler) : handler_(std::move(handler)) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
        EXPECT_EQ(::listen(fd_, 64), 0);
        socklen_t len = sizeof a;
        ::getsockname(fd_, reinterpret_cast<sockaddr *>(&a), &len);
        port_ = ntohs(a.sin_port);
        acceptor_ = std::thread([this] { accept_loop(); });
    }
    ~loadgen_fake_server() {
        stop_ = true;
        ::shutdown(fd_, SHUT_RDWR);  // wakes accept
        acceptor_.join();
        std::vector<std::thread> conns;
        {
            std::lock_guard<std::mutex> lock(mu_);
            for (int c : conn_fds_) ::shutdown(c, SHUT_RDWR);  // wakes recv
            conns.swap(conns_);
        }
        for (std::thread & t : conns) t.join();
        for (int c : conn_fds_) ::close(c);
        ::close(fd_);
    }
    uint16_t port() const { return port_; }
    std::vector<std::string> heads() const {
        std::lock_guard<std::mutex> lock(mu_);
        return heads_;
    }
    std::vector<std::string> bodies() const {
        std::lock_guard<std::mutex> lock(mu_);
        return bodies_;
    }

private:
    void accept_loop() {
        while (!stop_) {
            const int c = ::accept(fd_, nullptr, nullptr);
            if (c < 0) return;
            std::lock_guard<std::mutex> lock(mu_);
            conn_fds_.push_back(c);
            conns_.emplace_back([this, c] { serve(c); });
        }
    }

    void serve(int c) {
        timeval tv{10, 0};  // a silent client cannot hang the test
        ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        std::string in;
        char b[65536];
        for (bool open = true; open;) {
            size_t head_end = std::string::npos, need = 0;
            while (true) {
                head_end = in.find("\r\n\r\n");
                if (head_end != std::string::npos) {
                    const size_t cl = in.find("Content-Length: ");
                    const size_t len = cl < head_end ? std::stoul(in.substr(cl + 16)) : 0;
                    need = head_end + 4 + len;
                    if (in.size() >= need) break;
                }
                const ssize_t n = ::recv(c, b, sizeof b, 0);
                if (n <= 0) return;
                in.append(b, size_t(n));
            }
            const std::string head = in.substr(0, head_end + 2);
            const std::string body = in.substr(head_end + 4, need - head_end - 4);
            in.erase(0, need);
            {
                std::lock_guard<std::mutex> lock(mu_);
                heads_.push_back(head);
                bodies_.push_back(body);
            }
            const std::string response = handler_(head, body);
            ::send(c, response.data(), response.size(), MSG_NOSIGNAL);
            open = response.substr(0, response.find("\r\n\r\n")).find("Connection: close") == std::string::npos;
        }
        ::shutdown(c, SHUT_WR);
    }

    handler_fn handler_;
    int fd_ = -1;
    uint16_t port_ = 0;
    std::atomic<bool> stop_{false};
    std::thread acceptor_;
    mutable std::mutex mu_;
    std::vector<int> conn_fds_;  // closed by the destructor, after their threads end
    std::vector<std::thread> conns_;
    std::vector<std::string> heads_, bodies_;
};
