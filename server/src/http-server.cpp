// http-server.cpp — the listener and the server's life cycle: bind / listen, the I/O threads,
// accepting connections into sessions, the bookkeeping shared with the sessions (counters,
// access log), and the graceful shutdown.
#include "http-internal.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <future>
#include <thread>

namespace http_detail {

std::string access_log_line(const access_record & r, bool json) {
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.3f", r.duration_ms);
    if (json) {
        std::string out = "{\"type\":\"access\",\"method\":" + http_json_quote(r.method);
        out += ",\"path\":" + http_json_quote(r.path);
        out += ",\"status\":" + std::to_string(r.status);
        out += ",\"bytes\":" + std::to_string(r.bytes);
        out += ",\"duration_ms\":" + std::string(ms);
        out += ",\"remote\":" + http_json_quote(r.remote);
        out += r.aborted ? ",\"aborted\":true}" : "}";
        return out;
    }
    std::string out = r.method + " " + r.path + " " + std::to_string(r.status) + " " + std::to_string(r.bytes) +
                      "B " + ms + "ms " + (r.remote.empty() ? "-" : r.remote);
    if (r.aborted) {
        out += " aborted";
    }
    return out;
}

bool server_core::origin_allowed(std::string_view origin) const {
    for (const auto & o : opts.cors_origins) {
        if (o == "*" || o == origin) {
            return true;
        }
    }
    return false;
}

void server_core::session_opened(const std::shared_ptr<http_session> & s) {
    std::lock_guard<std::mutex> lk(mu);
    sessions.emplace(s.get(), s);
    ++n_open;
}

void server_core::session_closed(http_session * s) {
    {
        std::lock_guard<std::mutex> lk(mu);
        if (sessions.erase(s) == 0) {
            return;
        }
        --n_open;
    }
    cv.notify_all();
}

void server_core::request_started() {
    std::lock_guard<std::mutex> lk(mu);
    ++n_in_flight;
}

void server_core::request_finished() {
    {
        std::lock_guard<std::mutex> lk(mu);
        --n_in_flight;
    }
    cv.notify_all();
}

void server_core::access_log(const access_record & r) {
    if (!log) {
        return;
    }
    try {
        log->info("{}", access_log_line(r, opts.log_json));
    } catch (...) {
        // A failing sink must not take the I/O thread down.
    }
}

std::vector<std::shared_ptr<http_session>> server_core::live_sessions() {
    std::vector<std::shared_ptr<http_session>> out;
    std::lock_guard<std::mutex> lk(mu);
    for (auto & [p, w] : sessions) {
        if (auto s = w.lock()) {
            out.push_back(std::move(s));
        }
    }
    return out;
}

}  // namespace http_detail

using namespace http_detail;

struct http_server::impl {
    impl(const http_server_options & o, const http_router & r, std::shared_ptr<spdlog::logger> l)
        : core(o, r, std::move(l)), acceptor(net::make_strand(ioc)), retry_timer(acceptor.get_executor()) {}

    ~impl() {
        shutdown(std::chrono::milliseconds(0));
        std::lock_guard<std::mutex> lk(core.gate->mu);
        core.gate->open = false;
    }

    bool start(std::string * error);
    void do_accept();
    void on_accept(beast::error_code ec, tcp::socket sock);
    void run_thread();
    void shutdown(std::chrono::milliseconds drain);
    void post_to_sessions(bool force);

    bool load_tls(std::string * error);

    server_core core;  // declared before ioc: sessions destroyed with ioc still use it
    std::unique_ptr<net::ssl::context> tls;  // HTTPS
    net::io_context ioc;
    tcp::acceptor acceptor;
    net::steady_timer retry_timer;
    std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
    std::vector<std::thread> threads;
    std::mutex life_mu;
    bool running = false;
    uint16_t bound_port = 0;
};

bool http_server::impl::start(std::string * error) {
    std::lock_guard<std::mutex> lk(life_mu);
    auto fail = [&](const std::string & what, const beast::error_code & ec) {
        if (error != nullptr) {
            *error = what + " " + core.opts.host + ":" + std::to_string(core.opts.port) + ": " + ec.message();
        }
        beast::error_code ignored;
        acceptor.close(ignored);
        return false;
    };
    if (running || core.stopping.load()) {
        if (error != nullptr) {
            *error = running ? "already started" : "already shut down";
        }
        return false;
    }
    if (!load_tls(error)) {
        return false;
    }
    beast::error_code ec;
    tcp::resolver resolver(ioc);
    auto results = resolver.resolve(core.opts.host, std::to_string(core.opts.port),
                                    tcp::resolver::passive | tcp::resolver::numeric_service, ec);
    if (ec || results.empty()) {
        return fail("cannot resolve", ec ? ec : net::error::host_not_found);
    }
    const tcp::endpoint ep = results.begin()->endpoint();
    if (acceptor.open(ep.protocol(), ec); ec) {
        return fail("cannot open a socket for", ec);
    }
    acceptor.set_option(net::socket_base::reuse_address(true), ec);
    if (acceptor.bind(ep, ec); ec) {
        return fail("cannot bind", ec);
    }
    if (acceptor.listen(net::socket_base::max_listen_connections, ec); ec) {
        return fail("cannot listen on", ec);
    }
    bound_port = acceptor.local_endpoint(ec).port();
    core.max_open = connection_limit(core.opts.max_connections);
    work.emplace(ioc.get_executor());
    net::post(acceptor.get_executor(), [this] { do_accept(); });
    const int n = std::max(1, core.opts.n_io_threads);
    for (int i = 0; i < n; ++i) {
        threads.emplace_back([this] { run_thread(); });
    }
    running = true;
    return true;
}

bool http_server::impl::load_tls(std::string * error) {
    const http_server_options & o = core.opts;
    if (o.tls_cert_file.empty() && o.tls_key_file.empty()) {
        return true;
    }
    std::string what = "the TLS certificate " + o.tls_cert_file;
    try {
        tls = std::make_unique<net::ssl::context>(net::ssl::context::tls_server);
        tls->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                         net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 | net::ssl::context::no_tlsv1_1 |
                         net::ssl::context::single_dh_use);
        tls->use_certificate_chain_file(o.tls_cert_file);
        what = "the TLS private key " + o.tls_key_file;
        tls->use_private_key_file(o.tls_key_file, net::ssl::context::pem);
    } catch (const std::exception & e) {
        if (error != nullptr) {
            *error = "cannot load " + what + ": " + e.what();
        }
        tls.reset();
        return false;
    }
    core.tls = tls.get();
    return true;
}

void http_server::impl::run_thread() {
    for (;;) {
        try {
            ioc.run();
            return;
        } catch (const std::exception & e) {
            if (core.log) {
                core.log->error("http: I/O thread caught: {}", e.what());
            }
        } catch (...) {
            if (core.log) {
                core.log->error("http: I/O thread caught an unknown exception");
            }
        }
    }
}

void http_server::impl::do_accept() {
    if (!acceptor.is_open()) {
        return;
    }
    acceptor.async_accept(net::make_strand(ioc),
                          [this](beast::error_code ec, tcp::socket sock) { on_accept(ec, std::move(sock)); });
}

void http_server::impl::on_accept(beast::error_code ec, tcp::socket sock) {
    if (!acceptor.is_open() || ec == net::error::operation_aborted) {
        return;
    }
    if (ec) {
        // Out of descriptors and the like: wait a little instead of spinning.
        if (core.log) {
            core.log->warn("http: accept failed: {}", ec.message());
        }
        retry_timer.expires_after(std::chrono::milliseconds(50));
        retry_timer.async_wait([this](beast::error_code ec2) {
            if (!ec2) {
                do_accept();
            }
        });
        return;
    }
    if (core.stopping.load()) {
        beast::error_code ignored;
        sock.close(ignored);
        return;
    }
    if (core.n_open.load() >= core.max_open) {
        refuse_connection(core, std::move(sock));
        do_accept();
        return;
    }
    try {
        auto s = std::make_shared<http_session>(core, std::move(sock));
        core.session_opened(s);
        s->start();
    } catch (const std::exception & e) {
        if (core.log) {
            core.log->error("http: cannot start a session: {}", e.what());
        }
    }
    do_accept();
}

void http_server::impl::post_to_sessions(bool force) {
    for (auto & s : core.live_sessions()) {
        net::post(s->executor(), [s, force] {
            if (force) {
                s->close();
            } else {
                s->begin_shutdown();
            }
        });
    }
}

void http_server::impl::shutdown(std::chrono::milliseconds drain) {
    std::lock_guard<std::mutex> lk(life_mu);
    core.stopping = true;
    if (!running) {
        return;
    }
    running = false;
    const auto deadline = std::chrono::steady_clock::now() + drain;

    std::promise<void> closed;
    net::post(acceptor.get_executor(), [this, &closed] {
        beast::error_code ignored;
        acceptor.close(ignored);
        retry_timer.cancel();
        closed.set_value();
    });
    closed.get_future().wait();
    post_to_sessions(false);  // idle connections close now, busy ones after their response
    {
        std::unique_lock<std::mutex> ul(core.mu);
        core.cv.wait_until(ul, deadline, [&] { return core.n_in_flight.load() == 0; });
    }
    post_to_sessions(true);
    work.reset();
    {
        // Sessions close promptly once their sockets are closed; do not wait forever for them.
        std::unique_lock<std::mutex> ul(core.mu);
        core.cv.wait_for(ul, std::chrono::seconds(2), [&] { return core.n_open.load() == 0; });
    }
    ioc.stop();
    for (auto & t : threads) {
        t.join();
    }
    threads.clear();
}

http_server::http_server(const http_server_options & opts, const http_router & router,
                         std::shared_ptr<spdlog::logger> log)
    : impl_(std::make_unique<impl>(opts, router, std::move(log))) {}

http_server::~http_server() = default;

bool http_server::start(std::string * error) {
    return impl_->start(error);
}

uint16_t http_server::port() const {
    return impl_->bound_port;
}

void http_server::shutdown(std::chrono::milliseconds drain) {
    impl_->shutdown(drain);
}

size_t http_server::open_connections() const {
    return impl_->core.n_open.load();
}

size_t http_server::max_connections() const {
    return impl_->core.max_open;
}

uint64_t http_server::connections_refused() const {
    return impl_->core.n_refused.load();
}

size_t http_server::requests_in_flight() const {
    return impl_->core.n_in_flight.load();
}
