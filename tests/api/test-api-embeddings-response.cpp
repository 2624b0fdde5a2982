// The POST /v1/embeddings response (api/embeddings.h) parsed back, its vectors compared bit for
// bit with what was given, in both encodings.
#include "api/embeddings.h"

#include "api-test-util.h"

#include <gtest/gtest.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

using nlohmann::json;

namespace {

// Standard base64 (with padding) to bytes, written apart from the library's encoder; fails the
// test on anything that is not canonical base64.
std::vector<unsigned char> base64_decode(const std::string & s) {
    const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::vector<unsigned char> out;
    EXPECT_EQ(s.size() % 4, 0u) << s;
    for (size_t i = 0; i + 4 <= s.size(); i += 4) {
        uint32_t bits = 0;
        int pad = 0;
        for (size_t k = 0; k < 4; ++k) {
            char c = s[i + k];
            size_t v = 0;
            if (c == '=') {
                EXPECT_EQ(i + 4, s.size()) << "padding before the end: " << s;
                EXPECT_GE(k, 2u) << s;
                ++pad;
            } else {
                EXPECT_EQ(pad, 0) << "data after padding: " << s;
                v = alphabet.find(c);
                EXPECT_NE(v, std::string::npos) << "not base64: " << c;
            }
            bits = (bits << 6) | static_cast<uint32_t>(v & 0x3F);
        }
        EXPECT_EQ(bits & (pad == 2 ? 0xFFFFu : pad == 1 ? 0xFFu : 0u), 0u) << "bits past the data: " << s;
        out.push_back(static_cast<unsigned char>(bits >> 16));
        if (pad < 2) {
            out.push_back(static_cast<unsigned char>(bits >> 8));
        }
        if (pad < 1) {
            out.push_back(static_cast<unsigned char>(bits));
        }
    }
    return out;
}

// Little-endian float32 values of `bytes` (as a Float32Array over a Buffer reads them).
std::vector<float> floats_le(const std::vector<unsigned char> & bytes) {
    EXPECT_EQ(bytes.size() % 4, 0u);
    std::vector<float> out;
    for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
        uint32_t u = uint32_t(bytes[i]) | uint32_t(bytes[i + 1]) << 8 | uint32_t(bytes[i + 2]) << 16 |
                     uint32_t(bytes[i + 3]) << 24;
        out.push_back(std::bit_cast<float>(u));
    }
    return out;
}

// What a vector reads back as: finite values exactly, others as 0.
std::vector<uint32_t> expected_bits(const std::vector<float> & v) {
    std::vector<uint32_t> out;
    for (float f : v) {
        out.push_back(std::bit_cast<uint32_t>(std::isfinite(f) ? f : 0.0f));
    }
    return out;
}

std::vector<uint32_t> bits_of(const std::vector<float> & v) {
    std::vector<uint32_t> out;
    for (float f : v) {
        out.push_back(std::bit_cast<uint32_t>(f));
    }
    return out;
}

// The vectors of a response body, read the way JSON clients read them: each number as a
// double, then stored as a float32; a string as base64 of little-endian float32 values.
std::vector<std::vector<float>> read_vectors(const json & j, bool base64) {
    std::vector<std::vector<float>> out;
    for (const json & item : j.at("data")) {
        const json & e = item.at("embedding");
        if (base64) {
            EXPECT_TRUE(e.is_string()) << e;
            out.push_back(floats_le(base64_decode(e.get<std::string>())));
            continue;
        }
        EXPECT_TRUE(e.is_array()) << e;
        std::vector<float> v;
        for (const json & x : e) {
            EXPECT_TRUE(x.is_number_float()) << x;  // written as floats, never as integers
            v.push_back(static_cast<float>(x.get<double>()));
        }
        out.push_back(std::move(v));
    }
    return out;
}

// The numbers of the first "embedding" array in `text`, each read straight as a float.
std::vector<float> first_vector_as_floats(const std::string & text) {
    const std::string head = R"("embedding":[)";
    size_t pos = text.find(head);
    EXPECT_NE(pos, std::string::npos) << text;
    pos += head.size();
    size_t end = text.find(']', pos);
    std::vector<float> out;
    while (pos < end) {
        float f = 0.0f;
        auto res = std::from_chars(text.data() + pos, text.data() + end, f);
        EXPECT_EQ(res.ec, std::errc()) << text.substr(pos, 20);
        out.push_back(f);
        pos = static_cast<size_t>(res.ptr - text.data()) + 1;  // past the comma
    }
    return out;
}

const std::vector<float> awkward = {
    0.1f, 1.0f, -0.0f, 0.0f, -2.5f, 1.0f / 3.0f, 16777216.0f, 1e-10f, 123456789.0f, 3.4028235e38f,
    -3.4028235e38f, 1.17549435e-38f, 1.4e-45f /* the smallest subnormal */, 5.877472e-39f,
    std::nextafter(1.0f, 2.0f), std::nextafter(1.0f, 0.0f), 0.3f, 100.0f, -7e22f, 2.0e-7f,
    // Its shortest text 7.038531e-26, read as a double and then rounded to a float, lands on
    // the next float: it needs more digits.
    std::bit_cast<float>(0x15ae43fdu), std::bit_cast<float>(0x95ae43fdu)};

}  // namespace

TEST(EmbeddingsResponse, FloatsShape) {
    embeddings_response res;
    res.model = "emb \"small\"";
    res.data = {{0.5f, -1.0f, 0.1f}, {}, {2.0f}};
    res.prompt_tokens = 17;
    std::string text = embeddings_response_to_json(res);
    // OpenAI's key order, and whole numbers written as floats.
    EXPECT_EQ(text.rfind(R"({"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,-1.0,0.1]},)", 0),
              0u)
        << text;
    json j = parse_output(text);
    EXPECT_EQ(j, json::parse(R"({"object":"list","data":[
        {"object":"embedding","index":0,"embedding":[0.5,-1.0,0.1]},
        {"object":"embedding","index":1,"embedding":[]},
        {"object":"embedding","index":2,"embedding":[2.0]}],
        "model":"emb \"small\"","usage":{"prompt_tokens":17,"total_tokens":17}})"));

    res.data.clear();
    res.model = "bad \xff utf-8";
    j = parse_output(embeddings_response_to_json(res));
    EXPECT_TRUE(j["data"].is_array());
    EXPECT_TRUE(j["data"].empty());
    EXPECT_EQ(j["model"], "bad \xEF\xBF\xBD utf-8");
}

TEST(EmbeddingsResponse, FloatsReadBackBitForBit) {
    std::vector<float> v = awkward;
    v.push_back(std::numeric_limits<float>::infinity());
    v.push_back(-std::numeric_limits<float>::infinity());
    v.push_back(std::numeric_limits<float>::quiet_NaN());
    std::mt19937 rng(3);
    std::vector<float> random;
    while (random.size() < 20000) {  // every exponent, subnormals included
        float f = std::bit_cast<float>(static_cast<uint32_t>(rng()));
        if (std::isfinite(f)) {
            random.push_back(f);
        }
    }
    embeddings_response res;
    res.data = {v, random};
    std::string text = embeddings_response_to_json(res);
    EXPECT_EQ(bits_of(first_vector_as_floats(text)), expected_bits(v));
    json j = parse_output(text);
    std::vector<std::vector<float>> back = read_vectors(j, false);
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(bits_of(back[0]), expected_bits(v));
    EXPECT_EQ(bits_of(back[1]), expected_bits(random));
}

TEST(EmbeddingsResponse, Base64KnownAnswers) {
    embeddings_response res;
    res.base64 = true;
    res.model = "m";
    res.data = {{1.0f}, {0.0f, 1.0f}, {1.0f, -2.0f, 0.5f}, {}};
    json j = parse_output(embeddings_response_to_json(res));
    EXPECT_EQ(j, json::parse(R"({"object":"list","data":[
        {"object":"embedding","index":0,"embedding":"AACAPw=="},
        {"object":"embedding","index":1,"embedding":"AAAAAAAAgD8="},
        {"object":"embedding","index":2,"embedding":"AACAPwAAAMAAAAA/"},
        {"object":"embedding","index":3,"embedding":""}],
        "model":"m","usage":{"prompt_tokens":0,"total_tokens":0}})"));
}

TEST(EmbeddingsResponse, Base64ReadsBackBitForBit) {
    std::mt19937 rng(11);
    // Lengths 1..9 give 4..36 bytes: every remainder modulo 3, so both paddings and none.
    for (size_t n = 1; n <= 9; ++n) {
        std::vector<float> v(awkward.begin(), awkward.begin() + static_cast<std::ptrdiff_t>(n));
        embeddings_response res;
        res.base64 = true;
        res.data = {v};
        std::string text = embeddings_response_to_json(res);
        json j = parse_output(text);
        std::string b64 = j["data"][0]["embedding"].get<std::string>();
        size_t pad = (3 - (4 * n) % 3) % 3;
        EXPECT_EQ(b64.size(), (4 * n + 2) / 3 * 4) << b64;
        EXPECT_EQ(b64.size() - b64.find_last_not_of('=') - 1, pad) << b64;
        EXPECT_EQ(bits_of(read_vectors(j, true)[0]), expected_bits(v)) << n;
    }
    std::vector<float> v = awkward;
    v.push_back(std::numeric_limits<float>::infinity());
    v.push_back(std::numeric_limits<float>::quiet_NaN());
    while (v.size() < 4099) {  // 16396 bytes: one byte over a multiple of 3
        v.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));
    }
    embeddings_response res;
    res.base64 = true;
    res.data = {v, {-0.0f}};
    res.prompt_tokens = 3;
    json j = parse_output(embeddings_response_to_json(res));
    std::vector<std::vector<float>> back = read_vectors(j, true);
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(bits_of(back[0]), expected_bits(v));
    EXPECT_EQ(bits_of(back[1]), (std::vector<uint32_t>{0x80000000u}));
    EXPECT_EQ(j["usage"], json::parse(R"({"prompt_tokens":3,"total_tokens":3})"));
}
