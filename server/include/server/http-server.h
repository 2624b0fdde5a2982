// server/http-server.h — the HTTP layer of the daemon (Boost.Beast over Asio): listener,
// sessions, routing, streaming responses. Knows nothing of models or of the OpenAI API.
//
// Usage:
//   http_router router;
//   router.add("GET", "/health", [](const http_request & req, std::shared_ptr<http_response> res) {
//       res->respond(200, "application/json", R"({"status":"ok"})");
//   });
//   http_server_options o; o.host = "127.0.0.1"; o.port = 0;        // 0: any free port
//   http_server srv(o, router, logger);
//   std::string err;
//   if (!srv.start(&err)) { ... }                                     // bind / listen failed
//   uint16_t port = srv.port();
//   ...                                                                // SIGTERM:
//   srv.shutdown(std::chrono::seconds(30));  // stop accepting, let in-flight responses finish
//
// Threads: n_io_threads run the Asio io_context; each connection is served on its own strand.
// Handlers run on an I/O thread and must not block: a handler that needs the model hands the
// request and its http_response to another thread (the batch loop) and returns; that thread
// calls respond() / begin_stream() / write() / end() whenever it likes (every method of
// http_response is thread-safe and never blocks for the network).
//
// Protocol behaviour: HTTP/1.1 keep-alive (and 1.0); a request body over max_body_size gets 413;
// a request whose headers do not arrive within header_timeout, or an idle keep-alive connection
// past idle_timeout, is closed; an unknown path gets 404, a known path with another method 405
// (with Allow); OPTIONS preflight and Access-Control-Allow-* headers when the Origin is in
// cors_origins ("*" allows every origin); errors produced here have OpenAI's shape
// {"error":{"message":…,"type":…,"param":null,"code":…}}. One access-log line per request
// (method, path, status, bytes, duration, remote) through the logger; JSON lines when
// log_json.
//
// HTTPS when tls_cert_file / tls_key_file are set (the same protocol inside TLS).
// Connections beyond max_connections get 503 with Retry-After (then the connection closes),
// never an exhausted descriptor table.
// Errors answered here (then the connection closes): 400 malformed request line / headers /
// framing, 413 body over max_body_size (found from Content-Length before the body is read, or
// while reading a chunked body), 431 header block over 64 KiB. A handler that throws, or drops
// its response without answering, gets 500. "Expect: 100-continue" is answered before the body
// is read. HTTP/1.0 streams are close-delimited (no chunked encoding).
//
// Access log (info level), text:  GET /health 200 15B 0.120ms 127.0.0.1:50312
//   JSON: {"type":"access","method":"GET","path":"/health","status":200,"bytes":15,
//          "duration_ms":0.120,"remote":"127.0.0.1:50312"}
// A connection that closed before its response ended logs " aborted" / "aborted":true, and
// status 499 when no status had been sent.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace spdlog {
class logger;
}

struct http_request {
    std::string method;  // "GET", "POST", …
    std::string target;  // as sent: path and query
    std::string path;    // without the query
    std::string query;   // after '?', "" when none
    std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
    std::string body;
    std::string remote;  // "ip:port" of the client
    // The first header of that (case-insensitive) name, "" when absent.
    std::string header(std::string_view name) const;
};

using http_headers = std::vector<std::pair<std::string, std::string>>;

// OpenAI's error body: {"error":{"message":…,"type":…,"param":null,"code":…}}; an empty code
// is written as null. Strings are JSON-escaped.
std::string http_error_json(std::string_view message, std::string_view type, std::string_view code = {});
// A JSON string literal (with the quotes) holding s; invalid UTF-8 bytes become U+FFFD.
std::string http_json_quote(std::string_view s);

// One response, written from any thread. Either respond() once, or begin_stream() once, then
// write() any number of times, then end(). Calls after the connection closed are ignored.
class http_response {
public:
    virtual ~http_response() = default;
    virtual void respond(int status, std::string content_type, std::string body, http_headers extra = {}) = 0;
    // A streamed body (chunked transfer encoding), e.g. text/event-stream.
    virtual void begin_stream(int status, std::string content_type, http_headers extra = {}) = 0;
    // Queues data; false when the client is gone (or queued data exceeds the stream limit, which
    // closes the connection): the producer should stop (cancel the request).
    virtual bool write(std::string data) = 0;
    virtual void end() = 0;
    // True once the client disconnected (or the connection was closed by a timeout / shutdown).
    virtual bool closed() const = 0;
    // cb runs once (on an I/O thread) when the connection closes before the response ended; at
    // once if it already has.
    virtual void on_close(std::function<void()> cb) = 0;
};

using http_handler = std::function<void(const http_request &, std::shared_ptr<http_response>)>;

class http_router {
public:
    void add(std::string method, std::string path, http_handler h);
    // Called for every request before routing (e.g. the API-key check); returning false means
    // the filter responded itself.
    void set_filter(std::function<bool(const http_request &, const std::shared_ptr<http_response> &)> f);
    // The handler for requests of `method` whose path no route names (e.g. the web page's
    // files); it answers 404 itself when it has nothing. Without one such requests get 404.
    void set_fallback(std::string method, http_handler h);
    // Routes one request: 404 / 405 when nothing matches, else the handler.
    void dispatch(const http_request & req, std::shared_ptr<http_response> res) const;

private:
    struct route {
        std::string method, path;
        http_handler handler;
    };
    std::vector<route> routes_;
    route fallback_;  // path unused
    std::function<bool(const http_request &, const std::shared_ptr<http_response> &)> filter_;
};

struct http_server_options {
    std::string host = "127.0.0.1";
    uint16_t port = 8080;  // 0: any free port (see http_server::port)
    int n_io_threads = 2;
    size_t max_body_size = 16u << 20;
    // A new connection must send its first bytes within header_timeout, and a header block must
    // be complete within header_timeout of its first bytes; between requests a keep-alive
    // connection may stay silent for idle_timeout. Past any of them the connection is closed.
    std::chrono::milliseconds header_timeout{10'000};
    std::chrono::milliseconds idle_timeout{60'000};
    std::chrono::milliseconds body_timeout{60'000};   // the whole body must arrive within this after its header
    std::chrono::milliseconds write_timeout{60'000};  // one socket write may take this long (client not reading)
    // Bytes written by the producer but not yet handed to the socket, per response; beyond it
    // write() returns false and the connection closes.
    size_t stream_queue_limit = 8u << 20;
    std::vector<std::string> cors_origins;            // empty: no CORS headers
    bool log_json = false;
    // Open connections at most; 0: the descriptor limit (RLIMIT_NOFILE) less 64, at least 16.
    // A connection beyond it is accepted, answered 503 with Retry-After and closed, without
    // reading its request; while 64 such answers are in flight, further ones are closed at once.
    size_t max_connections = 0;
    // HTTPS: a PEM certificate chain and its private key (both, or neither for plain HTTP). The
    // TLS handshake must finish within header_timeout; TLS 1.2 and 1.3 only.
    std::string tls_cert_file, tls_key_file;
    std::function<void()> on_refused;  // called (on an I/O thread) for each connection refused
};

class http_server {
public:
    http_server(const http_server_options & opts, const http_router & router, std::shared_ptr<spdlog::logger> log);
    ~http_server();  // shutdown(0) when still running
    http_server(const http_server &) = delete;
    http_server & operator=(const http_server &) = delete;

    // Binds, listens and starts the I/O threads. False with *error (address in use, bad host, a
    // certificate or key that cannot be loaded).
    bool start(std::string * error);
    uint16_t port() const;  // the bound port
    // Stops accepting; responses in flight may finish within drain; then every connection is
    // closed and the I/O threads are joined. Idempotent. Safe from any thread but the I/O ones.
    void shutdown(std::chrono::milliseconds drain);
    size_t open_connections() const;
    size_t max_connections() const;     // the limit in force (max_connections, or the automatic one)
    uint64_t connections_refused() const;
    size_t requests_in_flight() const;  // handlers called whose response has not ended

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};
