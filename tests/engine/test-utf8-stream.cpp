// test-utf8-stream.cpp — the streaming UTF-8 helper: every split point of multi-byte texts,
// invalid sequences replaced at once, flush of truncated tails, and random byte streams checked
// against an independent reference decoder.
#include "engine/utf8-stream.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

const std::string fffd = "\xEF\xBF\xBD";

// 1-, 2-, 3- and 4-byte characters: a, é (C3 A9), € (E2 82 AC), 中 (E4 B8 AD), 😀 (F0 9F 98 80),
// 🎉 (F0 9F 8E 89), U+10FFFF (F4 8F BF BF), U+0800 (E0 A0 80), U+10000 (F0 90 80 80).
const std::string mixed_text =
    "a\xC3\xA9\xE2\x82\xAC\xE4\xB8\xAD z\xF0\x9F\x98\x80\xF0\x9F\x8E\x89"
    "\xF4\x8F\xBF\xBF\xE0\xA0\x80\xF0\x90\x80\x80!";

// Pushes the pieces one by one, checks each output is valid UTF-8, returns all output + flush.
std::string stream_all(const std::vector<std::string> & pieces) {
    utf8_stream s;
    std::string all;
    for (const std::string & p : pieces) {
        std::string out = s.push(p);
        EXPECT_TRUE(utf8_is_valid(out));
        EXPECT_LE(s.pending(), 3u);
        all += out;
    }
    all += s.flush();
    EXPECT_EQ(s.pending(), 0u);
    return all;
}

// Independent reference: decodes the whole input at once. A sequence prefix is kept going while
// some completion of it could still be a valid scalar value (computed from the smallest and
// largest code point reachable), and each broken prefix becomes one U+FFFD.
std::string reference_decode(const std::string & in) {
    // Could some completion of a prefix holding `bits` with `rest` continuation bytes still to
    // come be a scalar value of an n-byte character? (Not all overlong, not all surrogates,
    // not all beyond U+10FFFF.)
    auto possible = [](uint32_t bits, int rest, int n) {
        const uint32_t min_cp = n == 1 ? 0 : n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
        const uint32_t lo = bits << (6 * rest);
        const uint32_t hi = lo | ((1u << (6 * rest)) - 1);
        return hi >= min_cp && lo <= 0x10FFFF && !(lo >= 0xD800 && hi <= 0xDFFF);
    };
    std::string out;
    size_t i = 0;
    while (i < in.size()) {
        const auto b = (uint8_t) in[i];
        const int n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
        uint32_t bits = n == 1 ? b : n == 2 ? (b & 0x1Fu) : n == 3 ? (b & 0x0Fu) : (b & 0x07u);
        if (n == 0 || !possible(bits, n - 1, n)) {
            out += fffd;
            ++i;
            continue;
        }
        int k = 1;  // bytes of the sequence accepted so far
        for (; k < n && i + (size_t) k < in.size(); ++k) {
            const auto c = (uint8_t) in[i + (size_t) k];
            if ((c & 0xC0) != 0x80 || !possible((bits << 6) | (c & 0x3Fu), n - k - 1, n)) break;
            bits = (bits << 6) | (c & 0x3Fu);
        }
        if (k < n) {
            out += fffd;  // broken or truncated: one U+FFFD for the accepted prefix
        } else {
            out.append(in, i, (size_t) n);
        }
        i += (size_t) k;
    }
    return out;
}

}  // namespace

TEST(Utf8Stream, AsciiPassesThrough) {
    utf8_stream s;
    EXPECT_EQ(s.push("hello"), "hello");
    EXPECT_EQ(s.push(""), "");
    EXPECT_EQ(s.push(" world"), " world");
    EXPECT_EQ(s.pending(), 0u);
    EXPECT_EQ(s.flush(), "");
}

TEST(Utf8Stream, EverySingleSplitPoint) {
    for (size_t cut = 0; cut <= mixed_text.size(); ++cut) {
        SCOPED_TRACE("cut " + std::to_string(cut));
        EXPECT_EQ(stream_all({mixed_text.substr(0, cut), mixed_text.substr(cut)}), mixed_text);
    }
}

TEST(Utf8Stream, EveryPairOfSplitPoints) {
    for (size_t a = 0; a <= mixed_text.size(); ++a) {
        for (size_t b = a; b <= mixed_text.size(); ++b) {
            SCOPED_TRACE("cuts " + std::to_string(a) + ", " + std::to_string(b));
            const std::vector<std::string> pieces = {mixed_text.substr(0, a),
                                                     mixed_text.substr(a, b - a),
                                                     mixed_text.substr(b)};
            ASSERT_EQ(stream_all(pieces), mixed_text);
        }
    }
}

TEST(Utf8Stream, ByteByByteEmitsEachCharacterWhenComplete) {
    const std::string emoji = "\xF0\x9F\x98\x80";  // 😀
    utf8_stream s;
    EXPECT_EQ(s.push(emoji.substr(0, 1)), "");
    EXPECT_EQ(s.pending(), 1u);
    EXPECT_EQ(s.push(emoji.substr(1, 1)), "");
    EXPECT_EQ(s.pending(), 2u);
    EXPECT_EQ(s.push(emoji.substr(2, 1)), "");
    EXPECT_EQ(s.pending(), 3u);
    EXPECT_EQ(s.push(emoji.substr(3, 1)), emoji);
    EXPECT_EQ(s.pending(), 0u);

    const std::string euro_a = "\xE2\x82\xAC" "a";
    EXPECT_EQ(s.push(euro_a.substr(0, 2)), "");
    EXPECT_EQ(s.push(euro_a.substr(2)), euro_a);
}

TEST(Utf8Stream, AppendingOverloadKeepsExistingOutput) {
    utf8_stream s;
    std::string out = "x";
    s.push("\xC3", &out);
    EXPECT_EQ(out, "x");
    s.push("\xA9y", &out);
    EXPECT_EQ(out, "x\xC3\xA9y");
}

TEST(Utf8Stream, InvalidBytesBecomeReplacementAtOnce) {
    struct invalid_case {
        const char * name;
        std::string in;
        std::string expected;  // from push() alone, before any flush
    };
    const std::vector<invalid_case> cases = {
        {"stray continuation", "a\x80" "b", "a" + fffd + "b"},
        {"two stray continuations", "\xBF\x80", fffd + fffd},
        {"C0 overlong slash", "\xC0\xAF", fffd + fffd},
        {"C1 lead", "\xC1\xBF" "x", fffd + fffd + "x"},
        {"E0 overlong", "\xE0\x80\x80", fffd + fffd + fffd},
        {"F0 overlong", "\xF0\x8F\xBF\xBF", fffd + fffd + fffd + fffd},
        {"surrogate D800", "\xED\xA0\x80", fffd + fffd + fffd},
        {"surrogate DFFF", "\xED\xBF\xBF" "z", fffd + fffd + fffd + "z"},
        {"beyond U+10FFFF", "\xF4\x90\x80\x80", fffd + fffd + fffd + fffd},
        {"F5 lead", "\xF5\x80", fffd + fffd},
        {"FF byte", "a\xFF" "b", "a" + fffd + "b"},
        {"truncated 3-byte then ASCII", "\xE2\x82" "A", fffd + "A"},
        {"truncated 4-byte then ASCII", "\xF0\x9F\x98" "B", fffd + "B"},
        {"lead then lead", "\xC3\xC3\xA9", fffd + "\xC3\xA9"},
        {"4-byte lead then 2-byte char", "\xF0\xC3\xA9", fffd + "\xC3\xA9"},
    };
    for (const invalid_case & c : cases) {
        SCOPED_TRACE(c.name);
        utf8_stream s;
        EXPECT_EQ(s.push(c.in), c.expected);
        EXPECT_EQ(s.pending(), 0u);
        EXPECT_EQ(s.flush(), "");
        EXPECT_EQ(reference_decode(c.in), c.expected);
    }
}

TEST(Utf8Stream, BrokenSequenceAcrossPieces) {
    utf8_stream s;
    EXPECT_EQ(s.push("ok \xE2"), "ok ");
    EXPECT_EQ(s.pending(), 1u);
    EXPECT_EQ(s.push("\x82"), "");
    EXPECT_EQ(s.push("A\xE2\x82\xAC"), fffd + "A\xE2\x82\xAC");
    EXPECT_EQ(s.pending(), 0u);
    // A held lead followed by a byte that cannot continue it (ED then A0: a surrogate).
    EXPECT_EQ(s.push("\xED"), "");
    EXPECT_EQ(s.push("\xA0\x80"), fffd + fffd + fffd);
}

TEST(Utf8Stream, FlushReplacesTruncatedTail) {
    utf8_stream s;
    EXPECT_EQ(s.push("ab\xF0\x9F"), "ab");
    EXPECT_EQ(s.pending(), 2u);
    EXPECT_EQ(s.flush(), fffd);
    EXPECT_EQ(s.pending(), 0u);
    EXPECT_EQ(s.flush(), "");
    // The stream is usable again after a flush, and the old tail does not come back.
    EXPECT_EQ(s.push("\x98\x80"), fffd + fffd);
    EXPECT_EQ(s.push("\xC3"), "");
    s.reset();
    EXPECT_EQ(s.pending(), 0u);
    EXPECT_EQ(s.push("x"), "x");
}

TEST(Utf8Stream, ValidPrefixLength) {
    EXPECT_EQ(utf8_valid_prefix_len(""), 0u);
    EXPECT_EQ(utf8_valid_prefix_len("abc"), 3u);
    EXPECT_EQ(utf8_valid_prefix_len(mixed_text), mixed_text.size());
    EXPECT_EQ(utf8_valid_prefix_len("abc\xE2\x82"), 3u);
    EXPECT_EQ(utf8_valid_prefix_len("ab\xFF" "cd"), 2u);
    EXPECT_EQ(utf8_valid_prefix_len("\xC3\xA9\xED\xA0\x80"), 2u);
    EXPECT_EQ(utf8_valid_prefix_len("\x80"), 0u);
    EXPECT_EQ(utf8_valid_prefix_len(std::string_view("a\0b", 3)), 3u);  // NUL is a character
    for (size_t cut = 0; cut <= mixed_text.size(); ++cut) {
        const std::string prefix = mixed_text.substr(0, cut);
        const size_t n = utf8_valid_prefix_len(prefix);
        EXPECT_LE(n, cut);
        EXPECT_GE(n + 3, cut);  // at most one truncated character is cut off
        EXPECT_TRUE(utf8_is_valid(prefix.substr(0, n)));
    }
    EXPECT_FALSE(utf8_is_valid("\xF4\x90\x80\x80"));
    EXPECT_TRUE(utf8_is_valid("\xF4\x8F\xBF\xBF"));
}

TEST(Utf8Stream, RandomBytesMatchReferenceWhateverTheSplits) {
    std::mt19937 rng(1234);
    // Bytes drawn mostly from the interesting ranges: ASCII, continuations, every lead kind.
    const std::vector<uint8_t> alphabet = {'a', ' ', 0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF,
                                           0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xED, 0xEF, 0xF0,
                                           0xF3, 0xF4, 0xF5, 0xFF};
    for (int iter = 0; iter < 2000; ++iter) {
        const size_t len = rng() % 24;
        std::string in;
        for (size_t i = 0; i < len; ++i) in.push_back((char) alphabet[rng() % alphabet.size()]);
        std::vector<std::string> pieces;
        size_t pos = 0;
        while (pos < in.size()) {
            const size_t take = std::min<size_t>(in.size() - pos, rng() % 5);
            pieces.push_back(in.substr(pos, take));
            pos += take;
        }
        const std::string expected = reference_decode(in);
        ASSERT_TRUE(utf8_is_valid(expected));
        ASSERT_EQ(stream_all(pieces), expected) << "iteration " << iter;
        ASSERT_EQ(stream_all({in}), expected) << "iteration " << iter;
    }
}
