// http-response.cpp — the thread-safe response handle given to handlers, and the serializer of
// response heads. Data flows: handler thread → post onto the session's strand → socket.
#include "http-internal.h"

#include <spdlog/spdlog.h>

namespace http_detail {

namespace {

bool header_token_ok(std::string_view name) {
    if (name.empty()) {
        return false;
    }
    for (char c : name) {
        const auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u >= 0x7F || c == ':') {
            return false;
        }
    }
    return true;
}

bool header_value_ok(std::string_view v) {
    for (char c : v) {
        if (c == '\r' || c == '\n' || c == '\0') {
            return false;
        }
    }
    return true;
}

void append_header(std::string & out, std::string_view name, std::string_view value) {
    if (!header_token_ok(name) || !header_value_ok(value)) {
        return;
    }
    out.append(name);
    out += ": ";
    out.append(value);
    out += "\r\n";
}

}  // namespace

std::string response_head_serialize(const response_head & h) {
    int status = h.status;
    if (status < 100 || status > 999) {
        status = 500;
    }
    std::string out = h.http10 ? "HTTP/1.0 " : "HTTP/1.1 ";
    out += std::to_string(status);
    out += ' ';
    const auto reason = bhttp::obsolete_reason(bhttp::int_to_status(unsigned(status)));
    out.append(reason.data(), reason.size());
    out += "\r\n";
    append_header(out, "Server", "inferd");
    if (!h.content_type.empty()) {
        append_header(out, "Content-Type", h.content_type);
    }
    if (h.chunked) {
        append_header(out, "Transfer-Encoding", "chunked");
    } else if (h.content_length >= 0) {
        append_header(out, "Content-Length", std::to_string(h.content_length));
    }
    if (!h.keep_alive) {
        append_header(out, "Connection", "close");
    } else if (h.http10) {
        append_header(out, "Connection", "keep-alive");
    }
    for (const http_headers * list : {h.cors, h.extra}) {
        if (list != nullptr) {
            for (const auto & [k, v] : *list) {
                append_header(out, k, v);
            }
        }
    }
    out += "\r\n";
    return out;
}

http_response_impl::~http_response_impl() {
    if (!ended_.load() && !closed_.load()) {
        // The handler dropped its response: the session answers 500 or closes the stream.
        const uint64_t id = id_;
        post([id](http_session & s) { s.on_abandoned(id); });
    }
}

bool http_response_impl::post(std::function<void(http_session &)> f) {
    std::lock_guard<std::mutex> lk(gate_->mu);
    if (!gate_->open) {
        return false;
    }
    std::shared_ptr<http_session> s = session_.lock();
    if (!s) {
        return false;
    }
    net::post(s->executor(), [s, f = std::move(f)]() { f(*s); });
    return true;
}

void http_response_impl::respond(int status, std::string content_type, std::string body, http_headers extra) {
    if (started_.exchange(true)) {
        return;
    }
    ended_ = true;
    const uint64_t id = id_;
    post([id, status, ct = std::move(content_type), b = std::move(body), x = std::move(extra)](http_session & s) mutable {
        s.on_respond(id, status, std::move(ct), std::move(b), std::move(x));
    });
}

void http_response_impl::begin_stream(int status, std::string content_type, http_headers extra) {
    if (started_.exchange(true)) {
        return;
    }
    const uint64_t id = id_;
    post([id, status, ct = std::move(content_type), x = std::move(extra)](http_session & s) mutable {
        s.on_begin_stream(id, status, std::move(ct), std::move(x));
    });
}

bool http_response_impl::write(std::string data) {
    if (closed()) {
        return false;
    }
    if (!started_.load() || ended_.load()) {
        return false;  // write() outside begin_stream() … end()
    }
    const size_t n = data.size();
    const size_t queued = (queued_ += n);
    const uint64_t id = id_;
    if (queued > queue_limit_) {
        // The client does not read fast enough: give up on it.
        closed_ = true;
        post([id](http_session & s) { s.on_overflow(id); });
        return false;
    }
    const bool ok = post([id, d = std::move(data)](http_session & s) mutable { s.on_write(id, std::move(d)); });
    if (!ok) {
        closed_ = true;
    }
    return ok;
}

void http_response_impl::end() {
    if (!started_.load() || ended_.exchange(true)) {
        return;
    }
    const uint64_t id = id_;
    post([id](http_session & s) { s.on_end(id); });
}

bool http_response_impl::closed() const {
    return closed_.load() || session_.expired();
}

void http_response_impl::on_close(std::function<void()> cb) {
    if (!cb) {
        return;
    }
    {
        std::lock_guard<std::mutex> lk(cb_mu_);
        if (!fired_) {
            callbacks_.push_back(std::move(cb));
            return;
        }
    }
    cb();
}

void http_response_impl::mark_closed() {
    closed_ = true;
    std::vector<std::function<void()>> cbs;
    {
        std::lock_guard<std::mutex> lk(cb_mu_);
        if (fired_) {
            return;
        }
        fired_ = true;
        cbs.swap(callbacks_);
    }
    for (auto & cb : cbs) {
        try {
            cb();
        } catch (...) {
            // A callback's failure must not take the I/O thread down.
        }
    }
}

}  // namespace http_detail
