// http-session.cpp — one HTTP/1.x connection, run on its own strand: reads requests with
// timeouts and a body limit, dispatches them, writes responses (whole or chunked) from a byte
// queue, keeps a read outstanding during a response to notice a client that leaves, and closes.
//
// Reads: between requests (and while a response is pending) one raw read_some waits for the
// next bytes, bounded by a timer (header_timeout before the first request, idle_timeout after);
// once bytes arrive the header is parsed under header_timeout and the body under body_timeout.
#include "http-internal.h"

#include <spdlog/spdlog.h>

namespace http_detail {

namespace {

constexpr size_t k_header_limit = 64 * 1024;
constexpr size_t k_wait_read_size = 4096;
const std::string k_continue = "HTTP/1.1 100 Continue\r\n\r\n";

bool is_parse_error(const beast::error_code & ec) {
    if (ec.category() != bhttp::make_error_code(bhttp::error::bad_target).category()) {
        return false;
    }
    return ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message &&
           ec != bhttp::error::need_more && ec != bhttp::error::need_buffer;
}

}  // namespace

http_session::http_session(server_core & core, tcp::socket sock)
    : core_(core), stream_(std::move(sock), core.tls), ex_(stream_.get_executor()), timer_(ex_) {
    beast::error_code ec;
    const auto ep = stream_.lowest().socket().remote_endpoint(ec);
    if (!ec) {
        remote_ = ep.address().to_string() + ":" + std::to_string(ep.port());
    }
    stream_.lowest().socket().set_option(tcp::no_delay(true), ec);  // SSE chunks leave at once
}

http_session::~http_session() {
    if (!closed_) {
        // Destroyed with the io_context (shutdown): the bookkeeping close() would have done.
        closed_ = true;
        core_.session_closed(this);
        if (phase_ != phase::idle) {
            if (auto r = current_.lock()) {
                r->mark_closed();
            }
            if (counted_) {
                core_.request_finished();
            }
        }
    }
}

void http_session::start() {
    net::dispatch(ex_, [self = shared_from_this()] {
        if (self->core_.stopping.load()) {
            self->close();
            return;
        }
        if (auto * tls = self->stream_.tls()) {  // the handshake first, within the header timeout
            self->stream_.lowest().expires_after(self->core_.opts.header_timeout);
            tls->async_handshake(net::ssl::stream_base::server,
                                 [self](beast::error_code ec) { self->on_handshake(ec); });
            return;
        }
        self->wait_for_request(self->core_.opts.header_timeout);
    });
}

void http_session::on_handshake(beast::error_code ec) {
    if (closed_) {
        return;
    }
    stream_.lowest().expires_never();
    if (ec) {
        close();  // not TLS, a certificate the client refused, or too slow
        return;
    }
    wait_for_request(core_.opts.header_timeout);
}

void http_session::begin_shutdown() {
    if (closed_) {
        return;
    }
    keep_alive_ = false;
    if (phase_ == phase::idle && !lingering_) {
        close();
    }
}

void http_session::close() {
    if (closed_) {
        return;
    }
    closed_ = true;
    cancel_timer();
    beast::error_code ec;
    stream_.lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.lowest().close();
    core_.session_closed(this);
    if (phase_ != phase::idle) {
        if (auto r = current_.lock()) {
            r->mark_closed();
        }
        log_access(true);
        if (counted_) {
            counted_ = false;
            core_.request_finished();
        }
        phase_ = phase::idle;
    }
    current_.reset();
    hold_.reset();  // last: may destroy this session
}

// ---- timers -------------------------------------------------------------------------------

void http_session::arm_timer(std::chrono::milliseconds d) {
    const uint64_t gen = ++timer_gen_;
    timer_.expires_after(d);
    timer_.async_wait([self = shared_from_this(), gen](beast::error_code ec) {
        if (ec || gen != self->timer_gen_) {
            return;
        }
        self->close();
    });
}

void http_session::cancel_timer() {
    ++timer_gen_;
    timer_.cancel();
}

// ---- reading --------------------------------------------------------------------------------

void http_session::wait_for_request(std::chrono::milliseconds timeout) {
    // Bytes already buffered (a pipelined request) are never there while a wait read is pending:
    // that read only starts on an empty buffer.
    if (buf_.size() > 0) {
        read_header();
        return;
    }
    arm_timer(timeout);
    start_wait_read();
}

void http_session::start_wait_read() {
    if (wait_pending_ || closed_) {
        return;
    }
    wait_pending_ = true;
    auto done = [self = shared_from_this()](beast::error_code ec, size_t n) { self->on_wait_read(ec, n); };
    if (auto * tls = stream_.tls()) {
        tls->async_read_some(buf_.prepare(k_wait_read_size), std::move(done));
    } else {
        // The raw socket: no expiry of the stream applies to this wait (the session's timer does).
        stream_.lowest().socket().async_read_some(buf_.prepare(k_wait_read_size), std::move(done));
    }
}

void http_session::on_wait_read(beast::error_code ec, size_t n) {
    wait_pending_ = false;
    if (closed_) {
        return;
    }
    if (ec) {
        close();  // EOF or reset: the client is gone (during a response too)
        return;
    }
    buf_.commit(n);
    if (lingering_) {
        buf_.consume(buf_.size());
        start_wait_read();
        return;
    }
    if (phase_ != phase::idle) {
        return;  // a pipelined request: read after this response
    }
    cancel_timer();
    read_header();
}

void http_session::read_header() {
    parser_.emplace();
    parser_->header_limit(k_header_limit);
    parser_->body_limit(core_.opts.max_body_size);
    stream_.lowest().expires_after(core_.opts.header_timeout);
    bhttp::async_read_header(stream_, buf_, *parser_,
                             [self = shared_from_this()](beast::error_code ec, size_t) { self->on_header(ec); });
}

void http_session::on_header(beast::error_code ec) {
    if (closed_) {
        return;
    }
    if (ec) {
        on_read_error(ec);
        return;
    }
    if (core_.stopping.load()) {
        close();
        return;
    }
    const auto & msg = parser_->get();
    const auto expect = msg[bhttp::field::expect];
    if (!parser_->is_done() && beast::iequals(expect, "100-continue")) {
        stream_.lowest().expires_after(core_.opts.write_timeout);
        net::async_write(stream_, net::buffer(k_continue), [self = shared_from_this()](beast::error_code ec2, size_t) {
            if (ec2) {
                self->close();
                return;
            }
            self->read_body();
        });
        return;
    }
    read_body();
}

void http_session::read_body() {
    if (closed_) {
        return;
    }
    if (parser_->is_done()) {
        stream_.lowest().expires_never();
        handle_request();
        return;
    }
    stream_.lowest().expires_after(core_.opts.body_timeout);
    bhttp::async_read(stream_, buf_, *parser_,
                      [self = shared_from_this()](beast::error_code ec, size_t) { self->on_body(ec); });
}

void http_session::on_body(beast::error_code ec) {
    if (closed_) {
        return;
    }
    if (ec) {
        on_read_error(ec);
        return;
    }
    stream_.lowest().expires_never();
    handle_request();
}

void http_session::on_read_error(beast::error_code ec) {
    stream_.lowest().expires_never();
    if (ec == bhttp::error::body_limit) {
        reject(413, "Request body too large (limit " + std::to_string(core_.opts.max_body_size) + " bytes)",
               "request_too_large");
    } else if (ec == bhttp::error::header_limit) {
        reject(431, "Request header too large (limit " + std::to_string(k_header_limit) + " bytes)",
               "header_too_large");
    } else if (is_parse_error(ec)) {
        reject(400, "Malformed HTTP request: " + ec.message(), "bad_request");
    } else {
        close();  // timeout, EOF, reset: nothing to answer
    }
}

// ---- requests -------------------------------------------------------------------------------

void http_session::handle_request() {
    auto & msg = parser_->get();
    http_request req;
    req.method = std::string(msg.method_string());
    req.target = std::string(msg.target());
    const size_t q = req.target.find('?');
    req.path = req.target.substr(0, q);
    req.query = q == std::string::npos ? std::string() : req.target.substr(q + 1);
    for (const auto & f : msg) {
        std::string name(f.name_string());
        for (char & c : name) {
            c = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
        }
        req.headers.emplace_back(std::move(name), std::string(f.value()));
    }
    req.body = std::move(msg.body());
    req.remote = remote_;
    keep_alive_ = msg.keep_alive() && !core_.stopping.load();
    http10_ = msg.version() < 11;
    head_only_ = msg.method() == bhttp::verb::head;
    parser_.reset();

    req_method_ = req.method;
    req_path_ = req.path;
    status_ = 0;
    bytes_sent_ = 0;
    chunked_ = false;
    started_at_ = std::chrono::steady_clock::now();
    phase_ = phase::handling;
    hold_ = shared_from_this();
    counted_ = true;
    core_.request_started();

    cors_.clear();
    const std::string origin = req.header("origin");
    if (!origin.empty() && core_.origin_allowed(origin)) {
        cors_ = {{"Access-Control-Allow-Origin", origin}, {"Vary", "Origin"}};
    }
    auto res = std::make_shared<http_response_impl>(weak_from_this(), core_.gate, ++resp_id_,
                                                    core_.opts.stream_queue_limit);
    current_ = res;
    if (buf_.size() == 0) {
        start_wait_read();  // notices a client that leaves while the response is pending
    }
    dispatch_request(req, res);
}

void http_session::dispatch_request(const http_request & req, const std::shared_ptr<http_response_impl> & res) {
    if (!cors_.empty() && req.method == "OPTIONS" && !req.header("access-control-request-method").empty()) {
        res->respond(204, "", "",
                     {{"Access-Control-Allow-Methods", "GET, POST, OPTIONS"},
                      {"Access-Control-Allow-Headers", "Authorization, Content-Type"},
                      {"Access-Control-Max-Age", "600"}});
        return;
    }
    try {
        core_.router.dispatch(req, res);
    } catch (const std::exception & e) {
        if (core_.log) {
            core_.log->error("handler for {} {} threw: {}", req.method, req.path, e.what());
        }
        res->respond(500, "application/json", http_error_json("Internal error", "server_error", "internal_error"));
    } catch (...) {
        if (core_.log) {
            core_.log->error("handler for {} {} threw", req.method, req.path);
        }
        res->respond(500, "application/json", http_error_json("Internal error", "server_error", "internal_error"));
    }
}

void http_session::reject(int status, const std::string & message, const char * code) {
    req_method_.clear();
    req_path_.clear();
    if (parser_ && parser_->is_header_done()) {
        req_method_ = std::string(parser_->get().method_string());
        req_path_ = std::string(parser_->get().target());
    }
    parser_.reset();
    started_at_ = std::chrono::steady_clock::now();
    bytes_sent_ = 0;
    keep_alive_ = false;
    http10_ = false;
    cors_.clear();
    const std::string body = http_error_json(message, "invalid_request_error", code);
    response_head h;
    h.status = status;
    h.keep_alive = false;
    h.content_length = (long long)body.size();
    h.content_type = "application/json";
    status_ = status;
    phase_ = phase::finishing;
    queue_bytes(response_head_serialize(h) + body, 0);
}

}  // namespace http_detail
