// libFuzzer target for the request parsers of the HTTP API (built with clang,
// -fsanitize=fuzzer,address,undefined; see tests/fuzz/run-fuzz.sh). The first byte of an input
// picks the parser (completions, chat, embeddings, rerank, tokenize, detokenize); the rest is the
// request body, as a client would send it. A parsed request or an api_error (a 400 with a message
// and, when a field is at fault, its name) are both fine answers; an exception out of a parser, a
// crash, a sanitizer report, a hang or a runaway allocation is a finding, and so is an error
// that is not a well-formed 4xx.
#include "api/chat-request.h"
#include "api/completion-request.h"
#include "api/embeddings.h"
#include "api/error.h"
#include "api/rerank.h"
#include "api/tokenize.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

namespace {

std::optional<api_error> parse(uint8_t which, std::string_view body) {
    switch (which % 6) {
        case 0: {
            completion_request r;
            return completion_request_parse(body, r);
        }
        case 1: {
            chat_request r;
            return chat_request_parse(body, r);
        }
        case 2: {
            embeddings_request r;
            return embeddings_request_parse(body, r);
        }
        case 3: {
            rerank_request r;
            return rerank_request_parse(body, r);
        }
        case 4: {
            tokenize_request r;
            return tokenize_request_parse(body, r);
        }
        default: {
            detokenize_request r;
            return detokenize_request_parse(body, r);
        }
    }
}

[[noreturn]] void finding(const char * what, std::string_view detail) {
    std::fprintf(stderr, "fuzz-api: %s: %.*s\n", what, int(detail.size()), detail.data());
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    if (size == 0) return 0;
    const std::string_view body(reinterpret_cast<const char *>(data + 1), size - 1);
    std::optional<api_error> e;
    try {
        e = parse(data[0], body);
    } catch (const std::exception & x) {
        finding("a parser threw", x.what());
    }
    if (!e) return 0;
    if (e->status < 400 || e->status > 499) finding("an error that is not a 4xx", e->message);
    if (e->message.empty() || e->type.empty()) finding("an error without message or type", e->message);
    // The error body is JSON that parses back (messages may quote the client's bytes).
    const std::string out = api_error_to_json(*e);
    if (!nlohmann::json::accept(out)) finding("an error body that is not JSON", out);
    return 0;
}
