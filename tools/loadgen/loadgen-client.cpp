// tools/loadgen/loadgen-client.cpp — the Beast client: synchronous calls built on async
// operations of a private io_context, so that every read and write has a deadline.
#include "loadgen/loadgen-client.h"

#include "loadgen/loadgen-embeddings.h"
#include "loadgen/loadgen-sse.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;

std::string loadgen_request_body(const loadgen_options & o, const std::string & prompt) {
    nlohmann::json j = {
        {"max_tokens", o.max_tokens},
        {"temperature", o.temperature},
        {"stream", true},
        {"stream_options", {{"include_usage", true}}},
    };
    if (o.chat) {
        j["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", prompt}}});
    } else {
        j["prompt"] = prompt;
    }
    if (!o.model.empty()) {
        j["model"] = o.model;
    }
    return j.dump();
}

struct loadgen_client::impl {
    loadgen_options o;
    asio::io_context ioc;
    beast::tcp_stream stream{ioc};
    tcp::resolver::results_type endpoints;
    beast::error_code resolve_error;
    beast::error_code connect_error;
    bool connected = false;
    beast::flat_buffer buf;

    // Starts an asynchronous operation (start(handler)) and runs the io_context until it ends;
    // the operation's deadline is o.timeout_s.
    template <class Start> beast::error_code run(Start && start) {
        beast::error_code out = asio::error::would_block;
        stream.expires_after(std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(o.timeout_s)));
        start([&out](beast::error_code ec, auto &&) { out = ec; });
        ioc.restart();
        ioc.run();
        return out;
    }

    void close() {
        beast::error_code ec;
        stream.socket().shutdown(tcp::socket::shutdown_both, ec);
        stream.close();
        buf.consume(buf.size());
        connected = false;
    }

    bool connect() {
        if (resolve_error) {
            return false;
        }
        connect_error = run([&](auto h) { stream.async_connect(endpoints, std::move(h)); });
        connected = !connect_error;
        if (connected) {
            beast::error_code ignored;  // Nagle only delays the small request: not worth failing over
            stream.socket().set_option(tcp::no_delay(true), ignored);
        }
        return connected;
    }

    // embedding_inputs > 0: an embeddings request of that many inputs, else a completion stream.
    loadgen_request_result attempt(const std::string & body, int embedding_inputs, steady::time_point t0,
                                   bool * retryable);
    void read_stream(http::response_parser<http::buffer_body> & p, steady::time_point sent, steady::time_point t0,
                     loadgen_request_result * r);
    void read_whole(http::response_parser<http::buffer_body> & p, int inputs, steady::time_point t0,
                    loadgen_request_result * r);
};

loadgen_client::loadgen_client(const loadgen_options & o) : impl_(std::make_unique<impl>()) {
    impl_->o = o;
    tcp::resolver resolver(impl_->ioc);
    impl_->endpoints = resolver.resolve(o.host, o.port, impl_->resolve_error);
}

loadgen_client::~loadgen_client() = default;

loadgen_request_result loadgen_client::stream(const std::string & body, steady::time_point t0) {
    return exchange(body, 0, t0);
}

loadgen_request_result loadgen_client::embed(const std::string & body, int inputs, steady::time_point t0) {
    return exchange(body, std::max(inputs, 1), t0);
}

loadgen_request_result loadgen_client::exchange(const std::string & body, int embedding_inputs,
                                                steady::time_point t0) {
    const bool reused = impl_->connected;
    bool retryable = false;
    loadgen_request_result r = impl_->attempt(body, embedding_inputs, t0, &retryable);
    if (reused && retryable) {
        impl_->close();
        r = impl_->attempt(body, embedding_inputs, t0, &retryable);
    }
    if (!r.error.empty()) {
        impl_->close();
    }
    return r;
}

namespace {

double seconds_between(steady::time_point a, steady::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

std::string io_error_kind(const beast::error_code & ec) {
    return ec == beast::error::timeout ? "timeout" : "io";
}

void add_detail(std::string * detail, std::string_view text) {
    constexpr size_t k_max = 300;
    detail->append(text.substr(0, k_max - std::min(k_max, detail->size())));
}

// The one error kind of a response that was read to its end (or until ec), by precedence.
void set_error_kind(bool sse, const std::string & event_error, const beast::error_code & ec, bool done, bool usage,
                    loadgen_request_result * r) {
    if (r->status != 200) {
        r->error = "http_" + std::to_string(r->status);
    } else if (!sse) {
        r->error = "malformed_sse";
    } else if (!event_error.empty()) {
        r->error = event_error;
    } else if (ec) {
        r->error = io_error_kind(ec);
        add_detail(&r->detail, ec.message());
    } else if (!done) {
        r->error = "missing_done";
        add_detail(&r->detail, "the stream ended without data: [DONE]");
    } else if (!usage) {
        r->error = "missing_usage";
        add_detail(&r->detail, "no chunk carried usage");
    }
}

}  // namespace

loadgen_request_result loadgen_client::impl::attempt(const std::string & body, int embedding_inputs,
                                                     steady::time_point t0, bool * retryable) {
    loadgen_request_result r;
    *retryable = false;
    if (!connected && !connect()) {
        r.start_s = r.end_s = seconds_between(t0, steady::now());
        r.error = "connect";
        add_detail(&r.detail, resolve_error ? resolve_error.message() : connect_error.message());
        return r;
    }
    const bool embeddings = embedding_inputs > 0;
    std::string path = o.path_prefix;
    path.append(embeddings ? "/v1/embeddings" : o.chat ? "/v1/chat/completions" : "/v1/completions");
    http::request<http::string_body> req{http::verb::post, path, 11};
    req.set(http::field::host, o.host + ":" + o.port);
    req.set(http::field::content_type, "application/json");
    req.set(http::field::accept, embeddings ? "application/json" : "text/event-stream");
    if (!o.api_key.empty()) {
        req.set(http::field::authorization, "Bearer " + o.api_key);
    }
    req.body() = body;
    req.prepare_payload();
    const steady::time_point sent = steady::now();
    r.start_s = seconds_between(t0, sent);
    beast::error_code ec = run([&](auto h) { http::async_write(stream, req, std::move(h)); });
    http::response_parser<http::buffer_body> p;
    p.body_limit(std::numeric_limits<std::uint64_t>::max());
    if (!ec) {
        ec = run([&](auto h) { http::async_read_header(stream, buf, p, std::move(h)); });
    }
    if (ec) {
        *retryable = !p.got_some() && ec != beast::error::timeout;
        r.end_s = seconds_between(t0, steady::now());
        r.error = io_error_kind(ec);
        add_detail(&r.detail, ec.message());
        return r;
    }
    if (embeddings) {
        read_whole(p, embedding_inputs, t0, &r);
    } else {
        read_stream(p, sent, t0, &r);
    }
    if (r.error.empty() && !p.get().keep_alive()) {
        close();
    }
    return r;
}

void loadgen_client::impl::read_stream(http::response_parser<http::buffer_body> & p, steady::time_point sent,
                                       steady::time_point t0, loadgen_request_result * r) {
    r->status = int(p.get().result_int());
    const bool sse = p.get()[http::field::content_type].starts_with("text/event-stream");
    sse_parser parser;
    bool done = false, usage = false;
    std::optional<steady::time_point> last;
    steady::time_point now;  // when the bytes being parsed arrived: events of one read share it
    std::string error;
    auto on_event = [&](const std::string & data) {
        const sse_chunk c = sse_classify_chunk(data, o.chat);
        if (c.has_usage) {
            usage = true;
            r->completion_tokens = c.completion_tokens;
            r->prompt_tokens = c.prompt_tokens;
            r->cached_tokens = c.cached_tokens;
        }
        if (c.kind == sse_chunk_kind::done) {
            done = true;
        } else if ((c.kind == sse_chunk_kind::malformed || c.kind == sse_chunk_kind::error) && error.empty()) {
            error = "malformed_sse";
            add_detail(&r->detail, data);
        } else if (c.kind == sse_chunk_kind::content && !done) {
            if (last) {
                r->itl_s.push_back(seconds_between(*last, now));
            } else {
                r->ttft_s = seconds_between(sent, now);
            }
            last = now;
        }
    };
    char tmp[16384];
    beast::error_code ec;
    while (!p.is_done()) {
        p.get().body().data = tmp;
        p.get().body().size = sizeof tmp;
        ec = run([&](auto h) { http::async_read_some(stream, buf, p, std::move(h)); });
        if (ec == http::error::need_buffer) {
            ec = {};
        }
        if (ec) {
            break;
        }
        now = steady::now();
        const std::string_view got(tmp, sizeof tmp - p.get().body().size);
        if (r->status == 200 && sse) {
            parser.feed(got, on_event);
        } else {
            add_detail(&r->detail, got);  // the error body, or what came instead of a stream
        }
    }
    r->end_s = seconds_between(t0, steady::now());
    if (!sse && r->status == 200) {
        r->detail = "Content-Type: " + std::string(p.get()[http::field::content_type]) + "; " + r->detail;
    }
    set_error_kind(sse, error, ec, done, usage, r);
}

void loadgen_client::impl::read_whole(http::response_parser<http::buffer_body> & p, int inputs, steady::time_point t0,
                                      loadgen_request_result * r) {
    constexpr size_t k_piece = 65536;
    std::string body;
    beast::error_code ec;
    while (!p.is_done()) {
        const size_t had = body.size();
        body.resize(had + k_piece);
        p.get().body().data = body.data() + had;
        p.get().body().size = k_piece;
        ec = run([&](auto h) { http::async_read_some(stream, buf, p, std::move(h)); });
        body.resize(had + k_piece - p.get().body().size);
        if (ec == http::error::need_buffer) {
            ec = {};
        }
        if (ec) {
            break;
        }
    }
    r->end_s = seconds_between(t0, steady::now());
    const int status = int(p.get().result_int());
    if (ec && status == 200) {
        r->status = status;
        r->error = io_error_kind(ec);
        add_detail(&r->detail, ec.message());
        return;
    }
    loadgen_check_embeddings(status, body, inputs, r);
}
