// http-session-write.cpp — the response side of a session (on its strand): what handlers post
// through http_response_impl becomes bytes in a queue, written one coalesced buffer at a time
// under write_timeout; when the response has ended and its bytes are out, the next request is
// read (keep-alive) or the connection closes.
#include "http-internal.h"

#include <spdlog/spdlog.h>

namespace http_detail {

namespace {

constexpr std::chrono::milliseconds k_linger{1000};  // reading what a closing client still sends

std::string chunk_frame(std::string_view data) {
    static const char digits[] = "0123456789abcdef";
    std::string size;
    size_t n = data.size();
    do {
        size.insert(size.begin(), digits[n & 15]);
        n >>= 4;
    } while (n != 0);
    std::string out;
    out.reserve(size.size() + data.size() + 4);
    out += size;
    out += "\r\n";
    out.append(data);
    out += "\r\n";
    return out;
}

}  // namespace

void http_session::on_respond(uint64_t id, int status, std::string ct, std::string body, http_headers extra) {
    if (closed_ || id != resp_id_ || phase_ != phase::handling) {
        return;
    }
    const bool no_body = status < 200 || status == 204 || status == 304;
    if (core_.stopping.load()) {
        keep_alive_ = false;  // shutting down: this is the connection's last response
    }
    response_head h;
    h.status = status;
    h.http10 = http10_;
    h.keep_alive = keep_alive_;
    h.content_type = ct;
    h.content_length = no_body ? -1 : (long long)body.size();
    h.extra = &extra;
    h.cors = &cors_;
    status_ = status;
    phase_ = phase::finishing;
    std::string bytes = response_head_serialize(h);
    if (!no_body && !head_only_) {
        bytes += body;
    }
    queue_bytes(bytes, 0);
}

void http_session::on_begin_stream(uint64_t id, int status, std::string ct, http_headers extra) {
    if (closed_ || id != resp_id_ || phase_ != phase::handling) {
        return;
    }
    // HTTP/1.0 has no chunked encoding: the body ends when the connection closes.
    chunked_ = !http10_;
    if (http10_ || core_.stopping.load()) {
        keep_alive_ = false;
    }
    response_head h;
    h.status = status;
    h.http10 = http10_;
    h.keep_alive = keep_alive_;
    h.chunked = chunked_;
    h.content_type = ct;
    h.extra = &extra;
    h.cors = &cors_;
    status_ = status;
    phase_ = phase::streaming;
    queue_bytes(response_head_serialize(h), 0);
}

void http_session::on_write(uint64_t id, std::string data) {
    if (closed_ || id != resp_id_ || phase_ != phase::streaming) {
        return;
    }
    if (data.empty()) {
        return;  // an empty chunk would end the body
    }
    if (head_only_) {
        if (auto r = current_.lock()) {
            r->sent(data.size());
        }
        return;
    }
    if (chunked_) {
        queue_bytes(chunk_frame(data), data.size());
    } else {
        queue_bytes(data, data.size());
    }
}

void http_session::on_end(uint64_t id) {
    if (closed_ || id != resp_id_ || phase_ != phase::streaming) {
        return;
    }
    phase_ = phase::finishing;
    if (chunked_ && !head_only_) {
        queue_bytes("0\r\n\r\n", 0);
    } else {
        maybe_finish();
    }
}

void http_session::on_overflow(uint64_t id) {
    if (closed_ || id != resp_id_) {
        return;
    }
    if (core_.log) {
        core_.log->warn("{} {} from {}: stream queue over {} bytes, closing", req_method_, req_path_, remote_,
                        core_.opts.stream_queue_limit);
    }
    close();
}

void http_session::on_abandoned(uint64_t id) {
    if (closed_ || id != resp_id_) {
        return;
    }
    if (phase_ == phase::handling) {
        if (core_.log) {
            core_.log->error("{} {}: the handler dropped its response", req_method_, req_path_);
        }
        on_respond(id, 500, "application/json", http_error_json("Internal error", "server_error", "internal_error"),
                   {});
    } else if (phase_ == phase::streaming) {
        close();  // a stream that never ended: the client must not take it as complete
    }
}

// ---- bytes ----------------------------------------------------------------------------------

void http_session::queue_bytes(std::string_view bytes, size_t raw) {
    out_.append(bytes);
    out_raw_ += raw;
    flush();
    maybe_finish();
}

void http_session::flush() {
    if (writing_ || closed_ || out_.empty()) {
        return;
    }
    writing_ = true;
    sending_.swap(out_);
    out_.clear();
    sending_raw_ = out_raw_;
    out_raw_ = 0;
    stream_.lowest().expires_after(core_.opts.write_timeout);
    net::async_write(stream_, net::buffer(sending_),
                     [self = shared_from_this()](beast::error_code ec, size_t n) { self->on_written(ec, n); });
}

void http_session::on_written(beast::error_code ec, size_t n) {
    writing_ = false;
    bytes_sent_ += n;
    if (auto r = current_.lock()) {
        r->sent(sending_raw_);
    }
    sending_raw_ = 0;
    sending_.clear();
    if (closed_) {
        return;
    }
    if (ec) {
        close();  // the client is gone, or read nothing for write_timeout
        return;
    }
    flush();
    maybe_finish();
}

void http_session::maybe_finish() {
    if (phase_ == phase::finishing && !writing_ && out_.empty() && !closed_) {
        finish_response();
    }
}

void http_session::finish_response() {
    stream_.lowest().expires_never();
    log_access(false);
    phase_ = phase::idle;
    current_.reset();
    const std::shared_ptr<http_session> self = std::move(hold_);  // alive to the end of this call
    if (counted_) {
        counted_ = false;
        core_.request_finished();
    }
    if (!keep_alive_ || core_.stopping.load()) {
        linger_close();
        return;
    }
    wait_for_request(core_.opts.idle_timeout);
}

void http_session::linger_close() {
    // Half-close, then read (and drop) what the client still sends for a moment: closing with
    // unread input would reset the connection and could destroy the response in flight.
    lingering_ = true;
    beast::error_code ec;
    stream_.lowest().socket().shutdown(tcp::socket::shutdown_send, ec);
    if (ec) {
        close();
        return;
    }
    if (!wait_pending_) {
        buf_.consume(buf_.size());  // a pending read owns the buffer's tail: its handler drops the rest
    }
    arm_timer(std::min(k_linger, core_.opts.header_timeout));
    start_wait_read();
}

void http_session::log_access(bool aborted) {
    if (!core_.log) {
        return;
    }
    access_record r;
    r.method = req_method_.empty() ? "-" : req_method_;
    r.path = req_path_.empty() ? "-" : req_path_;
    r.status = status_ == 0 ? 499 : status_;
    r.bytes = bytes_sent_;
    r.duration_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started_at_).count();
    r.remote = remote_;
    r.aborted = aborted;
    core_.access_log(r);
}

}  // namespace http_detail
