// api/tokenize.cpp — the /tokenize and /detokenize bodies.
#include "api/tokenize.h"

#include "json-read.h"
#include "json-write.h"

#include <limits>

std::optional<api_error> tokenize_request_parse(std::string_view body, tokenize_request & out) {
    return json_parse_request(body, out, [](json_reader & r, tokenize_request & req) {
        if (!r.find("content")) {
            return r.fail(api_error_invalid_request("'content' is required.", "content"));
        }
        r.string("content", req.content);
        r.boolean("add_special", req.add_special);
        r.boolean("with_pieces", req.with_pieces);
    });
}

std::optional<api_error> detokenize_request_parse(std::string_view body, detokenize_request & out) {
    try {
        nlohmann::json j;
        if (auto err = json_parse_object(body, j)) {
            return err;
        }
        auto it = j.find("tokens");
        if (it == j.end() || it->is_null()) {
            return api_error_invalid_request("'tokens' is required.", "tokens");
        }
        if (!it->is_array()) {
            return api_error_invalid_request("'tokens' must be an array of token ids.", "tokens");
        }
        detokenize_request req;
        req.tokens.reserve(it->size());
        for (const auto & t : *it) {
            int64_t id = 0;
            if (!json_integer_in(t, 0, std::numeric_limits<int32_t>::max(), id)) {
                return api_error_invalid_request("'tokens' must be an array of token ids (integers >= 0).", "tokens");
            }
            req.tokens.push_back(static_cast<int32_t>(id));
        }
        out = std::move(req);
        return std::nullopt;
    } catch (const nlohmann::json::exception & e) {
        return api_error_invalid_request(std::string("The request could not be read: ") + e.what());
    }
}

std::optional<api_error> api_check_token_ids(const std::vector<int32_t> & tokens, int32_t n_vocab,
                                             const std::string & param) {
    for (int32_t t : tokens) {
        if (t < 0 || t >= n_vocab) {
            return api_error_invalid_request("'" + param + "' holds token " + std::to_string(t) +
                                                 ", but the vocabulary has " + std::to_string(n_vocab) + " tokens.",
                                             param);
        }
    }
    return std::nullopt;
}

std::string tokenize_response_to_json(const tokenize_response & res, bool with_pieces) {
    ojson tokens = ojson::array();
    for (const tokenize_piece & t : res.tokens) {
        if (!with_pieces) {
            tokens.push_back(t.id);
            continue;
        }
        ojson piece;
        if (api_utf8_valid(t.piece)) {
            piece = t.piece;
        } else {
            piece = ojson::array();
            for (unsigned char c : t.piece) {
                piece.push_back(static_cast<int>(c));
            }
        }
        tokens.push_back({{"id", t.id}, {"piece", std::move(piece)}});
    }
    return json_write(ojson{{"tokens", std::move(tokens)}});
}

std::string detokenize_response_to_json(std::string_view content) {
    return json_write(ojson{{"content", std::string(content)}});
}

bool api_utf8_valid(std::string_view s) {
    size_t i = 0;
    while (i < s.size()) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        if (len == 0 || i + len > s.size()) {
            return false;
        }
        uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
        for (size_t k = 1; k < len; ++k) {
            unsigned char cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xC0) != 0x80) {
                return false;
            }
            cp = (cp << 6) | (cc & 0x3F);
        }
        static constexpr uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min_cp[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            return false;
        }
        i += len;
    }
    return true;
}
