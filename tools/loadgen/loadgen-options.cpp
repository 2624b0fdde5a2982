// tools/loadgen/loadgen-options.cpp — flag parsing and the usage text.
#include "loadgen/loadgen-options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string_view>

bool loadgen_parse_url(const std::string & url, loadgen_options * o, std::string * error) {
    constexpr std::string_view scheme = "http://";
    if (url.compare(0, scheme.size(), scheme) != 0) {
        *error = "--url: only http://host[:port][/prefix] is supported: " + url;
        return false;
    }
    const std::string rest = url.substr(scheme.size());
    const size_t slash = rest.find('/');
    const std::string authority = rest.substr(0, slash);
    std::string prefix = slash == std::string::npos ? std::string() : rest.substr(slash);
    while (!prefix.empty() && prefix.back() == '/') {
        prefix.pop_back();
    }
    std::string host = authority, port = "80";
    const size_t colon = authority.rfind(':');
    if (colon != std::string::npos && authority.find(']', colon) == std::string::npos) {
        host = authority.substr(0, colon);
        port = authority.substr(colon + 1);
        char * end = nullptr;
        const long p = std::strtol(port.c_str(), &end, 10);
        if (port.empty() || *end != '\0' || p < 1 || p > 65535) {
            *error = "--url: invalid port in " + url;
            return false;
        }
    }
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    if (host.empty()) {
        *error = "--url: missing host in " + url;
        return false;
    }
    o->url = url;
    o->host = host;
    o->port = port;
    o->path_prefix = prefix;
    return true;
}

namespace {

bool parse_int(const std::string & flag, const char * text, long lo, long hi, long * out, std::string * error) {
    errno = 0;
    char * end = nullptr;
    const long v = std::strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || errno != 0 || v < lo || v > hi) {
        *error = flag + ": expected a whole number in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                 "], got '" + text + "'";
        return false;
    }
    *out = v;
    return true;
}

bool parse_seconds(const std::string & flag, const char * text, double lo, double * out, std::string * error) {
    errno = 0;
    char * end = nullptr;
    const double v = std::strtod(text, &end);
    if (*text == '\0' || *end != '\0' || errno != 0 || !std::isfinite(v) || v < lo || v > 1e7) {
        *error = flag + ": expected seconds >= " + std::to_string(lo) + ", got '" + text + "'";
        return false;
    }
    *out = v;
    return true;
}

// Applies one flag that takes a value; false with *error for an unknown flag or a bad value.
bool apply_value(const std::string & f, const char * v, loadgen_options * o, std::string * error) {
    long n = 0;
    if (f == "--url") return loadgen_parse_url(v, o, error);
    if (f == "--api-key" || f == "--model") {
        (f == "--api-key" ? o->api_key : o->model) = v;
        return true;
    }
    if (f == "-d" || f == "--duration") return parse_seconds(f, v, 0.001, &o->duration_s, error);
    if (f == "--warmup") return parse_seconds(f, v, 0, &o->warmup_s, error);
    if (f == "--timeout") return parse_seconds(f, v, 0.001, &o->timeout_s, error);
    if (f == "--temperature") {
        errno = 0;
        char * end = nullptr;
        const double t = std::strtod(v, &end);
        if (*v == '\0' || *end != '\0' || errno != 0 || !std::isfinite(t) || t < 0 || t > 100) {
            *error = f + ": expected a number in 0..100, got '" + v + "'";
            return false;
        }
        o->temperature = t;
        return true;
    }
    if (f == "--seed") {
        errno = 0;
        char * end = nullptr;
        const unsigned long long s = std::strtoull(v, &end, 10);
        if (*v == '\0' || *v == '-' || *end != '\0' || errno != 0) {
            *error = f + ": expected a non-negative whole number, got '" + v + "'";
            return false;
        }
        o->seed = s;
        return true;
    }
    int * target = nullptr;
    long lo = 0, hi = 1000000;
    if (f == "-c" || f == "--concurrency") {
        target = &o->concurrency;
        lo = 1;
        hi = 4096;
    } else if (f == "--max-tokens") {
        target = &o->max_tokens;
        lo = 1;
    } else if (f == "--inputs") {
        target = &o->inputs;
        lo = 1;
        hi = 100000;
    } else if (f == "--prompt-words") {
        target = &o->prompt_words;
    } else if (f == "--shared-prefix-words") {
        target = &o->shared_prefix_words;
    }
    if (!target) {
        *error = "unknown flag " + f + " (see --help)";
        return false;
    }
    if (!parse_int(f, v, lo, hi, &n, error)) return false;
    *target = int(n);
    return true;
}

}  // namespace

bool loadgen_parse_args(int argc, const char * const * argv, loadgen_options * o, std::string * error) {
    bool inputs_given = false;
    for (int i = 1; i < argc; ++i) {
        const std::string f = argv[i];
        if (f == "-h" || f == "--help") {
            o->help = true;
        } else if (f == "--chat") {
            o->chat = true;
        } else if (f == "--embeddings") {
            o->embeddings = true;
        } else if (f == "--json") {
            o->json = true;
        } else if (f.size() > 1 && f[0] == '-') {
            if (i + 1 >= argc) {
                *error = f + ": missing value";
                return false;
            }
            if (!apply_value(f, argv[++i], o, error)) {
                return false;
            }
            inputs_given = inputs_given || f == "--inputs";
        } else {
            *error = "unexpected argument '" + f + "' (see --help)";
            return false;
        }
    }
    if (o->prompt_words + o->shared_prefix_words == 0) {
        *error = "--prompt-words and --shared-prefix-words are both 0: the prompt would be empty";
        return false;
    }
    if (o->embeddings && o->chat) {
        *error = "--chat and --embeddings exclude each other";
        return false;
    }
    if (inputs_given && !o->embeddings) {
        *error = "--inputs applies only with --embeddings";
        return false;
    }
    return true;
}

std::string loadgen_usage() {
    return R"(inferd-loadgen: closed-loop load for an OpenAI-compatible server (streaming completions,
or embeddings with --embeddings).

  inferd-loadgen --url http://127.0.0.1:8080 [-c CONCURRENCY=8] [-d SECONDS=30]
                 [--max-tokens 64] [--prompt-words 64] [--shared-prefix-words 0]
                 [--chat | --embeddings [--inputs 32]] [--api-key KEY] [--model NAME]
                 [--seed 1] [--temperature 0.8] [--warmup SECONDS=0] [--timeout SECONDS=600]
                 [--json]

Each of the C clients (one thread and one keep-alive connection each) sends a streaming
request (POST /v1/completions, or /v1/chat/completions with --chat; --temperature, 0.8 unless given,
max_tokens, stream_options.include_usage) whose prompt is --shared-prefix-words words common to
all prompts followed by --prompt-words seeded random words of its own, reads the SSE stream to
"data: [DONE]", and at once sends the next one. Requests sent during --warmup are not counted.
Requests sent in the D seconds after it are all finished and counted; the measured window runs
from the end of the warmup to the end of the last counted request (at least D seconds), and
the rates divide by it. After a failed request a client waits 50 ms before the next.

Measured: TTFT (send -> first chunk with text), inter-token latency (gaps between chunks with
text; a chunk usually carries one token; chunks that arrive in the same read share its arrival
time, so a server that sends faster than the client reads shows gaps of 0), completion tokens
(from the usage chunk). A request fails with one kind: connect, io, timeout (no byte for
--timeout seconds), http_<code>, malformed_sse (bad JSON, error object, wrong content type),
missing_done, missing_usage.
Percentiles are nearest-rank over all samples: the sample at rank ceil(p/100 * N) of the sorted
N samples.

Output: a table, or with --json one JSON object with the fields elapsed_s, requests, ok,
errors {kind: count}, error_count, completion_tokens, prompt_tokens, cached_tokens,
tokens_per_s, requests_per_s, ttft_p50_ms, ttft_p99_ms, itl_p50_ms, itl_p99_ms (null without
samples), ttft_samples, itl_samples, error_examples {kind: what the first failure of that
kind said (response body, system error or offending event)}.

--embeddings: the clients send POST /v1/embeddings instead, not streamed, with the same closed
loop, warmup and counting: each request has --inputs N inputs (each one prompt as above, drawn
separately: no two inputs are the same), encoding_format "float" and model when --model is
set (--max-tokens is not used). The response is read whole and checked: status 200, a JSON
object whose "data" has N entries with the indices 0..N-1 (in any order), each "embedding" a
non-empty array of numbers, all of the same length, and usage.prompt_tokens a whole number.
A request fails with one kind: connect, io, timeout, http_<code>, malformed_json (the body
breaks one of these rules). Measured: latency (send -> whole response read, before the check),
the inputs and usage.prompt_tokens of the successful requests. The check costs the client
some milliseconds per MB of response before its next request: with large responses, use
enough clients to keep the server busy. The table shows requests, ok, requests/s,
inputs/s, prompt tokens/s, latency p50 and p99 and the errors; the --json object has the fields
above plus mode "embeddings", inputs, inputs_per_s, prompt_tokens_per_s, latency_p50_ms,
latency_p99_ms (null without samples) and latency_samples; of the streaming fields,
completion_tokens, cached_tokens, tokens_per_s, ttft_samples and itl_samples are 0 and
ttft_p50_ms, ttft_p99_ms, itl_p50_ms, itl_p99_ms null. (Without --embeddings the object has no
mode field and none of these.)

Exit status: 0 when every counted request succeeded, 1 when some failed, 2 for a usage error.
)";
}
