// api/embeddings.cpp — POST /v1/embeddings bodies: the request and the response.
#include "api/embeddings.h"

#include "json-read.h"
#include "json-write.h"
#include "prompt-read.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <limits>

namespace {

void read_encoding_format(json_reader & r, bool & base64) {
    const nlohmann::json * v = r.error() ? nullptr : r.find("encoding_format");
    if (!v) {
        return;
    }
    if (v->is_string() && *v == "float") {
        base64 = false;
    } else if (v->is_string() && *v == "base64") {
        base64 = true;
    } else {
        r.fail("encoding_format", std::string("\"float\" or \"base64\", got ") + json_value_text(*v));
    }
}

// The shortest text that reads back as `f`, whether read as a float or (as JSON clients do) as
// a double then rounded to a float. The shortest float text nearly always is; where rounding
// twice lands elsewhere (7.038531e-26 does), the shortest text of the double `f` is written.
// A whole number gets ".0" so that it stays a float in readers that tell them apart ("1.0",
// "0.25", "1e-10"); a value that is not finite is written as 0.0.
void append_float(std::string & out, float f) {
    if (!std::isfinite(f)) {
        out += "0.0";
        return;
    }
    char buf[32];
    auto res = std::to_chars(buf, buf + sizeof buf, f);
    double d = 0.0;
    std::from_chars(buf, res.ptr, d);
    if (std::bit_cast<uint32_t>(static_cast<float>(d)) != std::bit_cast<uint32_t>(f)) {
        res = std::to_chars(buf, buf + sizeof buf, static_cast<double>(f));
    }
    std::string_view text(buf, static_cast<size_t>(res.ptr - buf));
    out += text;
    if (text.find_first_of(".e") == std::string_view::npos) {
        out += ".0";
    }
}

void append_float_array(std::string & out, const std::vector<float> & v) {
    out += '[';
    for (size_t i = 0; i < v.size(); ++i) {
        if (i > 0) {
            out += ',';
        }
        append_float(out, v[i]);
    }
    out += ']';
}

// The vector's float32 values as little-endian bytes (on any host), in standard base64 with
// padding, between quotes.
void append_base64_floats(std::string & out, const std::vector<float> & v) {
    static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::vector<unsigned char> bytes;
    bytes.reserve(v.size() * 4);
    for (float f : v) {
        uint32_t bits = std::bit_cast<uint32_t>(std::isfinite(f) ? f : 0.0f);
        for (int k = 0; k < 4; ++k) {
            bytes.push_back(static_cast<unsigned char>(bits >> (8 * k)));
        }
    }
    out += '"';
    size_t i = 0;
    for (; i + 3 <= bytes.size(); i += 3) {
        uint32_t group = (uint32_t(bytes[i]) << 16) | (uint32_t(bytes[i + 1]) << 8) | bytes[i + 2];
        out += alphabet[group >> 18];
        out += alphabet[(group >> 12) & 0x3F];
        out += alphabet[(group >> 6) & 0x3F];
        out += alphabet[group & 0x3F];
    }
    size_t rest = bytes.size() - i;  // 0, 1 or 2 bytes left: "xx==" or "xxx="
    if (rest > 0) {
        uint32_t group = uint32_t(bytes[i]) << 16;
        if (rest == 2) {
            group |= uint32_t(bytes[i + 1]) << 8;
        }
        out += alphabet[group >> 18];
        out += alphabet[(group >> 12) & 0x3F];
        out += rest == 2 ? alphabet[(group >> 6) & 0x3F] : '=';
        out += '=';
    }
    out += '"';
}

}  // namespace

std::optional<api_error> embeddings_request_parse(std::string_view body, embeddings_request & out) {
    return json_parse_request(body, out, [&](json_reader & r, embeddings_request & req) {
        r.string("model", req.model);
        api_read_prompts(r, "input", req.inputs);
        if (!r.error() && req.inputs.size() > embeddings_max_inputs) {
            r.fail("input", api_cat({"at most ", std::to_string(embeddings_max_inputs), " inputs, got ",
                                     std::to_string(req.inputs.size())}));
        }
        read_encoding_format(r, req.base64);
        r.integer("dimensions", 1, std::numeric_limits<int32_t>::max(), req.dimensions);
        r.string("user", req.user);
    });
}

std::optional<api_error> embeddings_request_check_vocab(const embeddings_request & req, int32_t n_vocab) {
    return api_prompts_check_vocab(req.inputs, n_vocab, "input");
}

std::string embeddings_response_to_json(const embeddings_response & res) {
    size_t values = 0;
    for (const std::vector<float> & v : res.data) {
        values += v.size();
    }
    std::string out;
    out.reserve(64 + 64 * res.data.size() + values * (res.base64 ? 6 : 14) + res.model.size());
    out += R"({"object":"list","data":[)";
    for (size_t i = 0; i < res.data.size(); ++i) {
        out += i > 0 ? R"(,{"object":"embedding","index":)" : R"({"object":"embedding","index":)";
        out += std::to_string(i);
        out += R"(,"embedding":)";
        if (res.base64) {
            append_base64_floats(out, res.data[i]);
        } else {
            append_float_array(out, res.data[i]);
        }
        out += '}';
    }
    out += R"(],"model":)";
    out += json_write(ojson(res.model));
    out += R"(,"usage":)";
    out += json_write(ojson{{"prompt_tokens", res.prompt_tokens}, {"total_tokens", res.prompt_tokens}});
    out += '}';
    return out;
}
