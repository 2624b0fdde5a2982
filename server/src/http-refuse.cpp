// http-refuse.cpp — connections over the server's limit: answered 503 with Retry-After and
// closed without reading a request, so that a flood of clients never exhausts the descriptor
// table. The answer is written, the sending side shut down, and whatever the client still
// sends is read and dropped until it closes (closing with unread data would reset the
// connection and could lose the answer), all within a short deadline.
#include "http-internal.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <sys/resource.h>

namespace http_detail {

namespace {

constexpr size_t k_max_refusing = 64;  // answers in flight; beyond, connections are closed at once
constexpr std::chrono::seconds k_refusal_deadline{2};
constexpr int64_t k_log_interval_ms = 10'000;

std::string busy_response(size_t limit) {
    const std::string body = http_error_json("Too many connections: this server holds at most " +
                                                 std::to_string(limit) + " open connections; retry later",
                                             "server_error", "too_many_connections");
    return "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\nRetry-After: 1\r\nConnection: close\r\n\r\n" + body;
}

class refusal : public std::enable_shared_from_this<refusal> {
public:
    refusal(server_core & core, tcp::socket sock) : core_(core), stream_(std::move(sock)) {}
    ~refusal() { --core_.n_refusing; }

    void start() {
        text_ = busy_response(core_.max_open);
        stream_.expires_after(k_refusal_deadline);
        net::async_write(stream_, net::buffer(text_), [self = shared_from_this()](beast::error_code ec, size_t) {
            if (ec) return self->close();
            beast::error_code ignored;
            self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
            self->drain();
        });
    }

private:
    void drain() {
        stream_.async_read_some(net::buffer(sink_), [self = shared_from_this()](beast::error_code ec, size_t) {
            if (ec) return self->close();  // end of stream, reset or the deadline
            self->drain();
        });
    }
    void close() {
        beast::error_code ignored;
        stream_.socket().close(ignored);
    }

    server_core & core_;
    beast::tcp_stream stream_;
    std::string text_;
    char sink_[4096];
};

// One warning per interval at most, with the count since the last one.
void log_refusals(server_core & core) {
    const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now().time_since_epoch()).count();
    int64_t last = core.refused_logged_at.load();
    if (last != 0 && now - last < k_log_interval_ms) return;
    if (!core.refused_logged_at.compare_exchange_strong(last, now)) return;
    const uint64_t total = core.n_refused.load();
    const uint64_t since = total - core.refused_logged.exchange(total);
    if (!core.log) return;
    try {
        core.log->warn("http: {} connection(s) refused with 503: {} open, the limit is {} (--max-connections)", since,
                       core.n_open.load(), core.max_open);
    } catch (...) {
    }
}

}  // namespace

size_t connection_limit(size_t configured) {
    if (configured > 0) return configured;
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return 65536;
    const rlim_t reserve = 64;  // model files, log files, the listener, refusals in flight
    return size_t(std::max<rlim_t>(16, lim.rlim_cur > reserve + 16 ? lim.rlim_cur - reserve : 16));
}

void refuse_connection(server_core & core, tcp::socket sock) {
    ++core.n_refused;
    if (core.opts.on_refused) {
        try {
            core.opts.on_refused();
        } catch (...) {
            // a counter that fails does not change the answer
        }
    }
    log_refusals(core);
    // Over TLS a plain answer would be noise to the client: the connection is closed at once.
    if (core.tls != nullptr || core.n_refusing.fetch_add(1) >= k_max_refusing) {
        if (core.tls == nullptr) {
            --core.n_refusing;
        }
        beast::error_code ignored;
        sock.close(ignored);
        return;
    }
    std::make_shared<refusal>(core, std::move(sock))->start();
}

}  // namespace http_detail
