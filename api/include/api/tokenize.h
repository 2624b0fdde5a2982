// api/tokenize.h — POST /tokenize and POST /detokenize (llama-server's shapes).
//
// Usage:
//   tokenize_request req;
//   if (auto err = tokenize_request_parse(body, req)) return respond(err->status, api_error_to_json(*err));
//   std::vector<int32_t> ids = tokenizer.encode(req.content, req.add_special);
//   tokenize_response res;
//   for (int32_t id : ids) res.tokens.push_back({id, req.with_pieces ? tokenizer.piece(id) : ""});
//   respond(200, tokenize_response_to_json(res, req.with_pieces));
//
//   detokenize_request dreq;                                    // {"tokens":[1,2,3]}
//   if (auto err = detokenize_request_parse(body, dreq)) …
//   if (auto err = api_check_token_ids(dreq.tokens, n_vocab, "tokens")) …
//   respond(200, detokenize_response_to_json(text));             // {"content":"…"}
//
// Requests: tokenize {"content": string (required), "add_special": bool (default true),
// "with_pieces": bool (default false)}; detokenize {"tokens": array of integers >= 0
// (required, may be empty)}. Unknown fields are ignored.
// Responses: tokenize {"tokens":[ids]} or, with pieces, {"tokens":[{"id":…,"piece":…}]} where a
// piece that is not valid UTF-8 on its own (part of a character) is an array of its bytes.
// Return: the parse functions give nullopt on success, else a 400 naming the field; never throw.
#pragma once

#include "api/error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct tokenize_request {
    std::string content = {};
    bool add_special = true;
    bool with_pieces = false;
};

struct detokenize_request {
    std::vector<int32_t> tokens = {};
};

struct tokenize_piece {
    int32_t id = 0;
    std::string piece = {};  // the token's bytes (only used with with_pieces)
};

struct tokenize_response {
    std::vector<tokenize_piece> tokens = {};
};

std::optional<api_error> tokenize_request_parse(std::string_view body, tokenize_request & out);
std::optional<api_error> detokenize_request_parse(std::string_view body, detokenize_request & out);

// nullopt when every id is below n_vocab, else a 400 with param `param`.
std::optional<api_error> api_check_token_ids(const std::vector<int32_t> & tokens, int32_t n_vocab,
                                             const std::string & param);

std::string tokenize_response_to_json(const tokenize_response & res, bool with_pieces);
std::string detokenize_response_to_json(std::string_view content);

// Whether `s` is well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
bool api_utf8_valid(std::string_view s);
