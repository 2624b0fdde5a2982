// Stop-string hold-back for streaming (api/stop-strings.h).
#include "api/stop-strings.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace {

// Feeds `pieces` one by one; returns every emitted chunk, and the flush when not stopped.
std::vector<std::string> feed(stop_string_stream & ss, const std::vector<std::string> & pieces) {
    std::vector<std::string> out;
    for (const std::string & p : pieces) {
        out.push_back(ss.push(p));
        if (ss.stopped()) {
            return out;
        }
    }
    out.push_back(ss.flush());
    return out;
}

}  // namespace

TEST(StopStrings, NoStopsPassesEverything) {
    stop_string_stream ss({});
    EXPECT_EQ(ss.push("Hello"), "Hello");
    EXPECT_EQ(ss.push(" world"), " world");
    EXPECT_EQ(ss.flush(), "");
    EXPECT_FALSE(ss.stopped());
    EXPECT_EQ(ss.text(), "Hello world");
}

TEST(StopStrings, PartialMatchAtTheEndIsHeldBack) {
    stop_string_stream ss({"###"});
    EXPECT_EQ(ss.push("abc#"), "abc");
    EXPECT_EQ(ss.push("#"), "");
    EXPECT_EQ(ss.push("x"), "##x");  // the match broke: release what was held
    EXPECT_FALSE(ss.stopped());
    EXPECT_EQ(ss.push("##"), "");
    EXPECT_EQ(ss.flush(), "##");  // generation ended without the stop
    EXPECT_EQ(ss.text(), "abc##x##");
}

TEST(StopStrings, MatchSpanningPieces) {
    stop_string_stream ss({"STOP"});
    EXPECT_EQ(ss.push("go ST"), "go ");
    EXPECT_EQ(ss.push("O"), "");
    EXPECT_EQ(ss.push("P and more"), "");
    EXPECT_TRUE(ss.stopped());
    EXPECT_EQ(ss.stop_index(), 0);
    EXPECT_EQ(ss.text(), "go ");
    EXPECT_EQ(ss.push("after"), "");
    EXPECT_EQ(ss.flush(), "");
}

TEST(StopStrings, StopInsideOnePiece) {
    stop_string_stream ss({"\n\n"});
    EXPECT_EQ(ss.push("line\n\nnext"), "line");
    EXPECT_TRUE(ss.stopped());
    EXPECT_EQ(ss.text(), "line");
}

TEST(StopStrings, StopAtTheVeryStart) {
    stop_string_stream ss({"<|end|>"});
    EXPECT_EQ(ss.push("<|end|>"), "");
    EXPECT_TRUE(ss.stopped());
    EXPECT_EQ(ss.text(), "");
}

TEST(StopStrings, SeveralStopsEarliestWins) {
    stop_string_stream ss({"world", "lo"});
    EXPECT_EQ(ss.push("hello world"), "hel");
    EXPECT_TRUE(ss.stopped());
    EXPECT_EQ(ss.stop_index(), 1);

    // The longest partial match over all stops is held back.
    stop_string_stream ss2({"abcd", "cx"});
    EXPECT_EQ(ss2.push("zabc"), "z");      // "abc" could begin "abcd"
    EXPECT_EQ(ss2.push("x"), "ab");        // "cx" matched: cut before it
    EXPECT_TRUE(ss2.stopped());
    EXPECT_EQ(ss2.stop_index(), 1);
    EXPECT_EQ(ss2.text(), "zab");

    // Same position: the first in the list wins.
    stop_string_stream ss3({"ab", "abc"});
    EXPECT_EQ(ss3.push("xabc"), "x");
    EXPECT_EQ(ss3.stop_index(), 0);
}

TEST(StopStrings, OverlappingPrefixes) {
    stop_string_stream ss({"aab"});
    EXPECT_EQ(ss.push("a"), "");
    EXPECT_EQ(ss.push("a"), "");
    EXPECT_EQ(ss.push("a"), "a");  // "aaa": only "aa" can still begin the stop
    EXPECT_EQ(ss.push("b"), "");
    EXPECT_TRUE(ss.stopped());
    EXPECT_EQ(ss.text(), "a");
}

TEST(StopStrings, Utf8TailIsHeldBack) {
    stop_string_stream ss({});
    // "é" = C3 A9, "€" = E2 82 AC, "😀" = F0 9F 98 80, delivered byte by byte.
    EXPECT_EQ(ss.push("a\xc3"), "a");
    EXPECT_EQ(ss.push("\xa9"), "\xc3\xa9");
    EXPECT_EQ(ss.push("\xe2\x82"), "");
    EXPECT_EQ(ss.push("\xac\xf0"), "\xe2\x82\xac");
    EXPECT_EQ(ss.push("\x9f"), "");
    EXPECT_EQ(ss.push("\x98"), "");
    EXPECT_EQ(ss.push("\x80!"), "\xf0\x9f\x98\x80!");
    EXPECT_EQ(ss.text(), "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80!");
}

TEST(StopStrings, InvalidBytesAreNotHeldForever) {
    stop_string_stream ss({});
    EXPECT_EQ(ss.push("\x80"), "\x80");              // stray continuation
    EXPECT_EQ(ss.push("\xff"), "\xff");              // never a lead byte
    EXPECT_EQ(ss.push("\xe2"), "");                  // could still complete…
    EXPECT_EQ(ss.push("x"), "\xe2x");                // …but did not
    EXPECT_EQ(ss.push("\xf0\x9f"), "");
    EXPECT_EQ(ss.flush(), "\xf0\x9f");               // the end releases everything
}

TEST(StopStrings, Utf8StopString) {
    stop_string_stream ss({"\xe2\x80\x94"});  // an em dash
    EXPECT_EQ(ss.push("x\xe2"), "x");
    EXPECT_EQ(ss.push("\x80"), "");
    EXPECT_EQ(ss.push("\x94y"), "");
    EXPECT_TRUE(ss.stopped());
    EXPECT_EQ(ss.text(), "x");
}

TEST(StopStrings, ScanFunction) {
    std::vector<std::string> stops = {"END"};
    stop_scan_result r = stop_strings_scan("abcEN", stops, 0);
    EXPECT_EQ(r.n_safe, 3u);
    EXPECT_FALSE(r.stopped);
    EXPECT_EQ(r.stop_index, -1);
    r = stop_strings_scan("abcENDx", stops, 3);
    EXPECT_TRUE(r.stopped);
    EXPECT_EQ(r.n_safe, 3u);
    EXPECT_EQ(r.stop_index, 0);
    r = stop_strings_scan("abc", stops, 10);  // `from` past the end is clamped
    EXPECT_EQ(r.n_safe, 3u);
    r = stop_strings_scan("abE", {"", "E"}, 0);  // empty stops are ignored
    EXPECT_TRUE(r.stopped);
    EXPECT_EQ(r.n_safe, 2u);
}

TEST(StopStrings, IncompleteTail) {
    EXPECT_EQ(utf8_incomplete_tail(""), 0u);
    EXPECT_EQ(utf8_incomplete_tail("abc"), 0u);
    EXPECT_EQ(utf8_incomplete_tail("a\xc3"), 1u);
    EXPECT_EQ(utf8_incomplete_tail("a\xc3\xa9"), 0u);
    EXPECT_EQ(utf8_incomplete_tail("\xe2\x82"), 2u);
    EXPECT_EQ(utf8_incomplete_tail("\xf0\x9f\x98"), 3u);
    EXPECT_EQ(utf8_incomplete_tail("\xf0\x9f\x98\x80"), 0u);
    EXPECT_EQ(utf8_incomplete_tail("\x80\x80\x80\x80"), 0u);
}

// Whatever the split into pieces, the text sent is the text before the first stop string, and
// no emitted prefix ever ends inside a stop string's beginning that later completes.
TEST(StopStrings, RandomSplitsAgreeWithTheWholeText) {
    std::mt19937 rng(1234);
    const std::string alphabet = "ab#\xc3\xa9 ";
    const std::vector<std::string> stops = {"##", "ab#a", "\xc3\xa9\xc3\xa9"};
    for (int iter = 0; iter < 2000; ++iter) {
        std::string text;
        int len = 1 + static_cast<int>(rng() % 24);
        for (int i = 0; i < len; ++i) {
            text += alphabet[rng() % alphabet.size()];
        }
        size_t cut = std::string::npos;
        for (const std::string & s : stops) {
            cut = std::min(cut, text.find(s));
        }
        std::string expected = text.substr(0, cut);
        std::vector<std::string> pieces;
        for (size_t i = 0; i < text.size();) {
            size_t n = 1 + rng() % 4;
            pieces.push_back(text.substr(i, n));
            i += n;
        }
        stop_string_stream ss(stops);
        std::string sent;
        for (const std::string & chunk : feed(ss, pieces)) {
            sent += chunk;
            ASSERT_EQ(expected.compare(0, sent.size(), sent), 0) << "sent more than allowed: " << text;
        }
        EXPECT_EQ(sent, expected) << text;
        EXPECT_EQ(ss.text(), expected);
        EXPECT_EQ(ss.stopped(), cut != std::string::npos);
    }
}
