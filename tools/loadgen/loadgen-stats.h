// tools/loadgen/loadgen-stats.h — what inferd-loadgen measures per request, the aggregate over a
// run, and its two report formats (a table for people, one JSON object for scripts).
//
// Usage:
//   std::vector<loadgen_request_result> results = ...;          // from loadgen_run
//   loadgen_summary s = loadgen_summarize(results, elapsed_s);  // (.., true) for --embeddings
//   std::fputs(loadgen_format_table(s).c_str(), stdout);        // or loadgen_format_json(s)
//   std::optional<double> p99 = loadgen_percentile(samples, 99); // nearest rank, exact
//
// Percentiles use the nearest-rank definition on all samples: sort the N samples ascending and
// take the one at rank ceil(p/100 * N) (1-based, at least 1). No interpolation; every reported
// value is a measured sample. An empty sample set has no percentile (std::nullopt; the table
// prints "-", the JSON null).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

// Error kinds (the keys of loadgen_summary::errors):
//   "connect"       the TCP connection could not be made (resolve or connect failed)
//   "io"            read/write failure or the server closed the connection mid-response
//   "timeout"       no byte arrived within the read timeout
//   "http_<code>"   a response status other than 200 (e.g. "http_503")
//   "malformed_sse" a data line that is not JSON, an unexpected content type, an error object
//   "missing_done"  the stream ended without "data: [DONE]"
//   "missing_usage" the stream ended without the usage chunk (include_usage was requested)
//   "malformed_json" an embeddings response that is not the expected JSON (loadgen-embeddings.h)
struct loadgen_request_result {
    double start_s = 0;               // send time, seconds since the run started
    double end_s = 0;                 // time the response ended (or failed)
    std::optional<double> ttft_s;     // send → first content chunk; none when no content came
    std::vector<double> itl_s;        // gaps between consecutive content chunks
    int64_t completion_tokens = 0;    // from the usage chunk
    int64_t prompt_tokens = 0;        // from the usage chunk
    int64_t cached_tokens = 0;        // usage.prompt_tokens_details.cached_tokens when present
    int64_t inputs = 0;               // embeddings: the inputs embedded (0 for a completion)
    int status = 0;                   // HTTP status, 0 when none was received
    std::string error;                // empty on success, else one of the kinds above
    std::string detail;               // for an error: the response body, the system message or
                                      // the offending event (at most 300 bytes)
};

struct loadgen_summary {
    double elapsed_s = 0;             // measured window (see loadgen_run)
    int64_t requests = 0;             // all counted requests, failed ones included
    int64_t ok = 0;                   // requests without error
    int64_t completion_tokens = 0;    // sum over successful requests
    int64_t prompt_tokens = 0;
    int64_t cached_tokens = 0;
    double tokens_per_s = 0;          // completion_tokens / elapsed_s
    double requests_per_s = 0;        // ok / elapsed_s
    std::optional<double> ttft_p50_s, ttft_p99_s, itl_p50_s, itl_p99_s;
    int64_t ttft_samples = 0, itl_samples = 0;
    std::map<std::string, int64_t> errors;  // kind → count
    std::map<std::string, std::string> error_examples;  // kind → the detail of its first failure
    // Embeddings mode: latency is send → whole response of the successful requests.
    bool embeddings = false;          // selects the report of the embeddings mode
    int64_t inputs = 0;               // sum over successful requests
    double inputs_per_s = 0;          // inputs / elapsed_s
    double prompt_tokens_per_s = 0;   // prompt_tokens / elapsed_s
    std::optional<double> latency_p50_s, latency_p99_s;
    int64_t latency_samples = 0;
};

// Nearest-rank percentile of the samples (p in (0, 100]); std::nullopt when samples is empty
// or p is out of range.
std::optional<double> loadgen_percentile(std::vector<double> samples, double p);

// Aggregates the results of a window of elapsed_s seconds (elapsed_s <= 0 gives zero rates);
// embeddings selects the embeddings report in the formats below.
loadgen_summary loadgen_summarize(const std::vector<loadgen_request_result> & results, double elapsed_s,
                                  bool embeddings = false);

// A fixed-width table, one figure per line, latencies in milliseconds. In embeddings mode:
// elapsed, requests (ok), requests/s, inputs/s, prompt tokens/s, latency p50 and p99, errors.
std::string loadgen_format_table(const loadgen_summary & s);

// One JSON object (single line, no trailing newline) with the fields:
//   elapsed_s, requests, ok, errors {kind: count}, error_count, completion_tokens, prompt_tokens,
//   cached_tokens, tokens_per_s, requests_per_s, ttft_p50_ms, ttft_p99_ms, itl_p50_ms,
//   itl_p99_ms (null when there is no sample), ttft_samples, itl_samples, error_examples
//   {kind: detail of the first failure of that kind}. In embeddings mode also mode "embeddings",
//   inputs, inputs_per_s, prompt_tokens_per_s, latency_p50_ms, latency_p99_ms (null when there
//   is no sample) and latency_samples; the streaming-only fields are then 0 or null.
std::string loadgen_format_json(const loadgen_summary & s);
