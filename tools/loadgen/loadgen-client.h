// tools/loadgen/loadgen-client.h — one inferd-loadgen client: a keep-alive HTTP/1.1 connection
// (Boost.Beast) that sends streaming completion requests (or embeddings requests) and measures
// each one.
//
// Usage:
//   loadgen_client c(options);                       // resolves the host; connects lazily
//   std::string body = loadgen_request_body(options, "once upon a time");
//   loadgen_request_result r = c.stream(body, t0);   // times in seconds since t0
//   if (!r.error.empty()) ...;                        // the kinds of loadgen-stats.h
//   r = c.embed(loadgen_embeddings_body(options, inputs), int(inputs.size()), t0);
//
// stream() posts to <prefix>/v1/completions, or <prefix>/v1/chat/completions with
// options.chat; embed() posts to <prefix>/v1/embeddings (loadgen-embeddings.h). Responses are
// read as they arrive (chunked or Content-Length bodies); each read or write waits at most
// options.timeout_s. The connection is reused while the server keeps it alive; after an error it
// is closed and the next request reconnects. A request whose reused connection fails before any
// response byte (the server closed it while idle) is retried once on a fresh connection.
#pragma once

#include "loadgen/loadgen-options.h"
#include "loadgen/loadgen-stats.h"

#include <chrono>
#include <memory>
#include <string>

// The JSON body: prompt (or messages with --chat), max_tokens, temperature (--temperature, 0.8), stream true,
// stream_options.include_usage true, and model when options.model is set.
std::string loadgen_request_body(const loadgen_options & o, const std::string & prompt);

class loadgen_client {
public:
    explicit loadgen_client(const loadgen_options & o);
    ~loadgen_client();
    loadgen_client(const loadgen_client &) = delete;
    loadgen_client & operator=(const loadgen_client &) = delete;

    // Sends one request and reads its stream to the end; never throws.
    loadgen_request_result stream(const std::string & body, std::chrono::steady_clock::time_point t0);
    // Sends one embeddings request of `inputs` (>= 1) inputs, reads the whole response and checks
    // it with loadgen_check_embeddings (end_s is taken before the check); never throws.
    loadgen_request_result embed(const std::string & body, int inputs, std::chrono::steady_clock::time_point t0);

private:
    loadgen_request_result exchange(const std::string & body, int embedding_inputs,
                                    std::chrono::steady_clock::time_point t0);

    struct impl;
    std::unique_ptr<impl> impl_;
};
