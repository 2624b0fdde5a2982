// http-internal.h — private parts of the HTTP layer shared by http-server.cpp, http-session.cpp
// and http-response.cpp: the state every session sees (server_core), one connection
// (http_session) and the thread-safe response handle given to handlers (http_response_impl).
//
// Threading: everything of an http_session runs on its strand. http_response_impl is called from
// any thread; it only touches atomics and its callback list itself, and posts the rest onto the
// session's strand (through a post_gate that is shut before the io_context goes away).
#pragma once

#include "server/http-server.h"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
// GCC 12 with -fsanitize flags a false -Wmaybe-uninitialized in Beast's parser (a
// boost::optional returned as boost::none, basic_parser.hpp); it is Boost's code, not ours.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <boost/beast/http.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace http_detail {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = net::ip::tcp;

class http_session;

// Open while the io_context runs or may still run handlers: posting is allowed only then.
struct post_gate {
    std::mutex mu;
    bool open = true;
};

// One finished (or abandoned) request, for the access log.
struct access_record {
    std::string method;
    std::string path;
    int status = 0;       // 499 when the client left before any status was sent
    uint64_t bytes = 0;   // bytes written to the socket for this response
    double duration_ms = 0;
    std::string remote;
    bool aborted = false;  // the connection closed before the response ended
};

// Formats one access-log line (text or JSON).
std::string access_log_line(const access_record & r, bool json);

// A response head: status line and headers, ended by the empty line. content_length < 0 means
// none (chunked or close-delimited bodies, 204 / 304). Header names or values holding CR, LF or
// NUL are dropped (no response splitting through handler-supplied headers).
struct response_head {
    int status = 200;
    bool http10 = false;
    bool keep_alive = true;
    bool chunked = false;
    long long content_length = -1;
    std::string_view content_type;
    const http_headers * extra = nullptr;
    const http_headers * cors = nullptr;
};
std::string response_head_serialize(const response_head & h);

// State shared by the server and its sessions; lives as long as the io_context.
struct server_core {
    server_core(const http_server_options & o, const http_router & r, std::shared_ptr<spdlog::logger> l)
        : opts(o), router(r), log(std::move(l)) {}

    http_server_options opts;
    const http_router & router;
    std::shared_ptr<spdlog::logger> log;
    std::shared_ptr<post_gate> gate = std::make_shared<post_gate>();
    std::atomic<bool> stopping{false};
    std::atomic<size_t> n_open{0};
    std::atomic<size_t> n_in_flight{0};
    size_t max_open = 0;                // the connection limit in force (set by start)
    net::ssl::context * tls = nullptr;  // HTTPS: the server's TLS context (set by start)
    std::atomic<size_t> n_refusing{0};  // 503 answers to connections over the limit in flight
    std::atomic<uint64_t> n_refused{0};
    std::atomic<int64_t> refused_logged_at{0};  // steady clock, ms: the last warning about refusals
    std::atomic<uint64_t> refused_logged{0};    // n_refused at that warning

    std::mutex mu;               // guards sessions; with cv, waits on the counters
    std::condition_variable cv;  // notified when a counter drops
    std::unordered_map<http_session *, std::weak_ptr<http_session>> sessions;

    bool origin_allowed(std::string_view origin) const;
    void session_opened(const std::shared_ptr<http_session> & s);
    void session_closed(http_session * s);
    void request_started();
    void request_finished();
    void access_log(const access_record & r);
    std::vector<std::shared_ptr<http_session>> live_sessions();
};

// The limit in force for opts.max_connections (0: from RLIMIT_NOFILE).
size_t connection_limit(size_t configured);
// Answers a connection over the limit with 503 + Retry-After and closes it (see http-refuse.cpp).
void refuse_connection(server_core & core, tcp::socket sock);

class http_response_impl final : public http_response {
public:
    http_response_impl(std::weak_ptr<http_session> s, std::shared_ptr<post_gate> gate, uint64_t id, size_t queue_limit)
        : session_(std::move(s)), gate_(std::move(gate)), id_(id), queue_limit_(queue_limit) {}
    ~http_response_impl() override;

    void respond(int status, std::string content_type, std::string body, http_headers extra = {}) override;
    void begin_stream(int status, std::string content_type, http_headers extra = {}) override;
    bool write(std::string data) override;
    void end() override;
    bool closed() const override;
    void on_close(std::function<void()> cb) override;

    // Strand side (called by the session).
    void mark_closed();                                       // closed_ = true, runs the callbacks once
    void sent(size_t raw_bytes) { queued_ -= raw_bytes; }  // queued data that reached the socket

private:
    // Runs f(session) on the session's strand; false when the session or the server is gone.
    bool post(std::function<void(http_session &)> f);

    std::weak_ptr<http_session> session_;
    std::shared_ptr<post_gate> gate_;
    const uint64_t id_;
    const size_t queue_limit_;
    std::atomic<bool> started_{false};
    std::atomic<bool> ended_{false};
    std::atomic<bool> closed_{false};
    std::atomic<size_t> queued_{0};
    std::mutex cb_mu_;
    bool fired_ = false;
    std::vector<std::function<void()>> callbacks_;
};

// The bytes of one connection: plain TCP, or TLS over it. An AsyncStream for Beast's HTTP
// operations; lowest() is the TCP layer (socket, expiry) either way.
class session_stream {
public:
    using executor_type = net::any_io_executor;
    session_stream(tcp::socket sock, net::ssl::context * tls) {
        if (tls) {
            tls_.emplace(beast::tcp_stream(std::move(sock)), *tls);
        } else {
            plain_.emplace(std::move(sock));
        }
    }
    executor_type get_executor() { return lowest().get_executor(); }
    beast::tcp_stream & lowest() { return tls_ ? beast::get_lowest_layer(*tls_) : *plain_; }
    beast::ssl_stream<beast::tcp_stream> * tls() { return tls_ ? &*tls_ : nullptr; }
    template <class Buffers, class Handler>
    void async_read_some(const Buffers & b, Handler && h) {
        if (tls_) {
            tls_->async_read_some(b, std::forward<Handler>(h));
        } else {
            plain_->async_read_some(b, std::forward<Handler>(h));
        }
    }
    template <class Buffers, class Handler>
    void async_write_some(const Buffers & b, Handler && h) {
        if (tls_) {
            tls_->async_write_some(b, std::forward<Handler>(h));
        } else {
            plain_->async_write_some(b, std::forward<Handler>(h));
        }
    }

private:
    std::optional<beast::tcp_stream> plain_;
    std::optional<beast::ssl_stream<beast::tcp_stream>> tls_;
};

class http_session : public std::enable_shared_from_this<http_session> {
public:
    http_session(server_core & core, tcp::socket sock);
    ~http_session();
    http_session(const http_session &) = delete;
    http_session & operator=(const http_session &) = delete;

    const net::any_io_executor & executor() const { return ex_; }
    void start();  // any thread

    // Strand side.
    void begin_shutdown();  // idle: close now; busy: close after the response
    void close();           // idempotent; marks the pending response closed
    void on_respond(uint64_t id, int status, std::string ct, std::string body, http_headers extra);
    void on_begin_stream(uint64_t id, int status, std::string ct, http_headers extra);
    void on_write(uint64_t id, std::string data);
    void on_end(uint64_t id);
    void on_overflow(uint64_t id);
    void on_abandoned(uint64_t id);

private:
    enum class phase { idle, handling, streaming, finishing };

    void wait_for_request(std::chrono::milliseconds timeout);
    void start_wait_read();
    void on_handshake(beast::error_code ec);
    void on_wait_read(beast::error_code ec, size_t n);
    void arm_timer(std::chrono::milliseconds d);
    void cancel_timer();
    void read_header();
    void on_header(beast::error_code ec);
    void read_body();
    void on_body(beast::error_code ec);
    void on_read_error(beast::error_code ec);
    void handle_request();
    void dispatch_request(const http_request & req, const std::shared_ptr<http_response_impl> & res);
    void reject(int status, const std::string & message, const char * code);
    void queue_bytes(std::string_view bytes, size_t raw);
    void flush();
    void on_written(beast::error_code ec, size_t n);
    void maybe_finish();
    void finish_response();
    void linger_close();
    void log_access(bool aborted);

    server_core & core_;
    session_stream stream_;
    net::any_io_executor ex_;
    net::steady_timer timer_;
    uint64_t timer_gen_ = 0;
    beast::flat_buffer buf_;
    std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
    std::string remote_;
    bool closed_ = false;
    bool wait_pending_ = false;
    bool lingering_ = false;
    bool writing_ = false;
    bool keep_alive_ = true;
    bool http10_ = false;
    bool head_only_ = false;
    bool chunked_ = false;
    bool counted_ = false;  // the request counts in requests_in_flight
    phase phase_ = phase::idle;
    // Keeps the session alive while a request is handled: with pipelined bytes buffered no read
    // is pending, and the response holds the session only weakly. Released when the response
    // ends or the connection closes.
    std::shared_ptr<http_session> hold_;

    // The current request / response.
    uint64_t resp_id_ = 0;
    std::weak_ptr<http_response_impl> current_;
    http_headers cors_;
    std::string req_method_, req_path_;
    int status_ = 0;
    uint64_t bytes_sent_ = 0;
    std::chrono::steady_clock::time_point started_at_;

    std::string out_;      // queued bytes
    size_t out_raw_ = 0;   // handler bytes (before chunk framing) in out_
    std::string sending_;  // bytes being written
    size_t sending_raw_ = 0;
};

}  // namespace http_detail
