// Token masks (grammar/token-mask.h) against a brute-force reference: on a small vocabulary
// with multi-symbol tokens, partial UTF-8 pieces, special and end-of-generation tokens, every
// token's bit at every step of random walks through many grammars must equal "the output with
// this token is the start of a sentence" (grammar_recognize_prefix), and the end-of-generation
// bit "the output is a sentence" (grammar_recognize).
#include "grammar/gbnf.h"
#include "grammar/json-schema.h"
#include "grammar/token-mask.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace {

constexpr int32_t k_eos = 1;

std::shared_ptr<const grammar_vocab> small_vocab(std::vector<std::string> * bytes_out = nullptr) {
    std::vector<std::string> bytes = {"<s>", "</s>", ""};  // special, end of generation, empty
    for (int c = 0x20; c < 0x7F; ++c) bytes.push_back(std::string(1, char(c)));
    for (const char * t : {"\n", "\t", "  ", "{\"", "\":", "\",", "\"}", "\": \"", ", \"", "ab", "abc", "ba", "aa",
                           "aaa", " \"", "true", "tr", "ue", "false", "null", "12", "1.", ".5", "e+", "-0", "00", "yes",
                           "no", " yes", "[]", "[[", "]]", "],", "\\\"", "\\u00", "é", "\xC3", "\xA9", "日本", "\xE6\x97",
                           "\xA5", "\xF0\x9F", "\x98\x80", "😀", "\xFF", "a\xC3", "x\"", "\"\n", "\"]", "a\"]", "b\",",
                           "1]", "1,", "9\"}", "é\""}) {
        bytes.emplace_back(t);
    }
    std::vector<bool> special(bytes.size(), false);
    special[0] = special[1] = true;
    if (bytes_out) *bytes_out = bytes;
    return grammar_vocab::build(bytes, special, {k_eos});
}

// Every string of one to three pieces from each of three small alphabets (characters only;
// quotes, backslashes and stray bytes; a letter and stray bytes): large subtrees, some of them
// well-formed UTF-8 below a character boundary and some not, so that walks take whole subtrees
// at once where a state loops on everything below them.
std::shared_ptr<const grammar_vocab> dense_vocab(std::vector<std::string> * bytes_out) {
    const std::vector<std::vector<std::string>> alphabets = {{"a", "b", "\n", "é", "日"},
                                                             {"a", "\"", "\\", "\xC3", "\xA9", "\xFF", "\xE6\x97"},
                                                             {"b", "\xFF", "\xC3", "\xA9"}};
    std::vector<std::string> bytes = {"<s>", "</s>", ""};
    for (const auto & pieces : alphabets) {
        for (const std::string & x : pieces) {
            bytes.push_back(x);
            for (const std::string & y : pieces) {
                bytes.push_back(x + y);
                for (const std::string & z : pieces) bytes.push_back(x + y + z);
            }
        }
    }
    std::sort(bytes.begin() + 3, bytes.end());
    bytes.erase(std::unique(bytes.begin() + 3, bytes.end()), bytes.end());
    std::vector<bool> special(bytes.size(), false);
    special[0] = special[1] = true;
    *bytes_out = bytes;
    return grammar_vocab::build(bytes, special, {k_eos});
}

grammar gbnf(const std::string & text) {
    grammar_parse_result r = grammar_parse_gbnf(text);
    EXPECT_TRUE(r.ok()) << r.error.to_string();
    return r.value;
}

// Random walks from the empty output: at each step the whole mask is checked, then an allowed
// token (not the end) is taken.
void check_walks(const grammar & g, int walks, int steps, uint32_t seed, bool dense = false) {
    std::vector<std::string> bytes;
    auto vocab = dense ? dense_vocab(&bytes) : small_vocab(&bytes);
    grammar_program_result p = grammar_program_build(g);
    ASSERT_TRUE(p.ok()) << p.error;
    std::mt19937 rng(seed);
    grammar_token_mask mask;
    for (int w = 0; w < walks; ++w) {
        grammar_matcher m(p.value, vocab);
        std::string out;
        for (int s = 0; s < steps; ++s) {
            m.fill_mask(mask);
            std::vector<int32_t> allowed;
            for (int32_t t = 0; t < vocab->n_vocab(); ++t) {
                bool want = false;
                if (t == k_eos) {
                    want = grammar_recognize(g, out);
                    EXPECT_EQ(m.can_end(), want) << "after '" << out << "'";
                } else if (t > 2) {
                    want = grammar_recognize_prefix(g, out + bytes[size_t(t)]);
                }
                ASSERT_EQ(grammar_mask_test(mask, t), want)
                    << "token " << t << " '" << bytes[size_t(t)] << "' after '" << out << "' in\n" << grammar_to_gbnf(g);
                if (want && t != k_eos) allowed.push_back(t);
            }
            if (allowed.empty()) {
                // (the dense vocabulary lacks characters a grammar may need next)
                if (!dense) {
                    EXPECT_TRUE(m.is_complete()) << out;
                }
                break;
            }
            EXPECT_FALSE(m.is_complete()) << out;
            const int32_t t = allowed[rng() % allowed.size()];
            ASSERT_TRUE(m.accept_token(t));
            out += bytes[size_t(t)];
        }
    }
}

}  // namespace

TEST(token_mask, vocabulary_trie) {
    std::vector<std::string> bytes;
    auto v = small_vocab(&bytes);
    const grammar_vocab::trie & t = v->get_trie();
    EXPECT_EQ(t.tok_begin.size(), t.byte.size() + 1);
    // Every token in the trie exactly once, under the path of its bytes; special, end and
    // empty tokens left out.
    std::vector<int> seen(bytes.size(), 0);
    std::vector<std::string> path(t.byte.size());
    for (uint32_t i = 1; i < t.byte.size(); ++i) {
        // the parent is the nearest earlier node whose subtree holds i
        uint32_t parent = i - 1;
        while (t.end[parent] <= i) --parent;
        path[i] = path[parent] + char(t.byte[i]);
        EXPECT_EQ(t.depth[i], path[i].size());
        for (uint32_t k = t.tok_begin[i]; k < t.tok_begin[i + 1]; ++k) {
            EXPECT_EQ(bytes[size_t(t.tok_ids[k])], path[i]);
            ++seen[size_t(t.tok_ids[k])];
        }
    }
    for (size_t i = 0; i < bytes.size(); ++i) EXPECT_EQ(seen[i], i < 3 ? 0 : 1) << i;
    EXPECT_TRUE(v->is_eog(k_eos));
    EXPECT_FALSE(v->in_trie(0));
}

TEST(token_mask, literals_and_alternatives) {
    check_walks(gbnf(R"(root ::= "yes" | "no" | "yes, " root)"), 20, 12, 1);
    check_walks(gbnf(R"(root ::= "ab" | "abc" | "a" "b"* "c")"), 20, 10, 2);
}

TEST(token_mask, repetition_and_classes) {
    check_walks(gbnf(R"(root ::= [a-c]{2,5} " "? [0-9]+ ("." [0-9]{1,3})?)"), 30, 14, 3);
    check_walks(gbnf(R"(root ::= [^"\\]* "\"")"), 20, 12, 4);
    check_walks(gbnf(R"(root ::= ("a" | "aa")* "b")"), 20, 10, 5);  // ambiguous lexing
}

TEST(token_mask, recursion_through_the_parser) {
    check_walks(gbnf(R"(root ::= "[" (root ("," root)*)? "]")"), 40, 16, 6);
    check_walks(gbnf(R"(root ::= root "a" | "b")"), 10, 8, 7);  // left recursion
    check_walks(gbnf(R"(root ::= x | "[" root "]"
x ::= "a" x | "")"), 20, 12, 8);  // nullable lexeme inside recursion
}

TEST(token_mask, utf8_pieces) {
    // Tokens that end inside a code point are allowed exactly when a code point of the class can
    // complete them; "\xFF" never is.
    check_walks(gbnf(R"(root ::= [é日本😀a]+)"), 30, 10, 9);
    check_walks(gbnf(R"(root ::= [^a]{1,4})"), 30, 6, 10);
    check_walks(gbnf(R"(root ::= "é" | [\u00C0-\u00FF] "x")"), 20, 6, 11);
}

TEST(token_mask, tokens_that_leave_a_loop) {
    // Inside a loop (a string's characters, digits) states are walked as their projection;
    // tokens that leave the loop and go on (into the parser's next lexeme, or further in the same
    // lexeme) are found from the real state.
    check_walks(gbnf(R"(root ::= "[" list "]"
list ::= item | list "," item
item ::= "\"" [a-zé]* "\"")"), 40, 10, 21);
    check_walks(gbnf(R"(root ::= "[" nums "]"
nums ::= num | nums "," num
num ::= [0-9]+)"), 40, 10, 22);
    check_walks(gbnf(R"(root ::= "{\"a\":\"" [a-z]* "\",\"b\":\"" [a-z]* "\"}" | "[" [0-9]+ ("," [0-9]+)* "]")"), 40, 12, 23);
}

TEST(token_mask, whole_subtrees_in_a_loop) {
    // A state that reads every byte and code point below a trie node and comes back to itself
    // takes the node's whole subtree at once; where it does not (a character it refuses, a code
    // point that leaves the loop, bytes that are no UTF-8, a lexeme that may end) the walk goes on
    // byte by byte.
    check_walks(gbnf(R"(root ::= "\"" [^"\\]* "\"")"), 10, 6, 31, true);
    check_walks(gbnf(R"(root ::= [ab\n]* "\"")"), 10, 6, 32, true);
    check_walks(gbnf(R"(root ::= [^é"]* "\"")"), 10, 6, 33, true);
    check_walks(gbnf(R"(root ::= ([a\n日] | "é" "b")* "\"" [a-b]*)"), 10, 6, 34, true);
    check_walks(gbnf(R"(root ::= "\n" ("\"" [^"]* "\"" ("b" "\"" [^"]* "\"")*)? "a")"), 10, 6, 35, true);
}

TEST(token_mask, utf8_edges_byte_by_byte) {
    // Every sequence of up to three bytes from the edges of UTF-8 (overlong leads, surrogates,
    // the last code point, bytes that never occur) is taken exactly when it starts a sentence.
    const uint8_t edge[] = {'a', 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2,
                            0xDF, 0xE0, 0xED, 0xEE, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF};
    auto vocab = small_vocab();
    for (const char * text : {R"(root ::= [^a]{1,3})", R"(root ::= [\u0080\u07FF\u0800\uD7FF\uE000\uFFFF]+)",
                              R"(root ::= [\U00010000\U0010FFFF] "a" | [\u0100-\u017F\u4E00-\u4E3F]+)"}) {
        const grammar g = gbnf(text);
        grammar_program_result p = grammar_program_build(g);
        ASSERT_TRUE(p.ok()) << p.error;
        for (uint8_t b0 : edge) {
            for (uint8_t b1 : edge) {
                for (uint8_t b2 : edge) {
                    for (size_t n = 1; n <= 3; ++n) {
                        const std::string seq = std::string{char(b0), char(b1), char(b2)}.substr(0, n);
                        grammar_matcher m(p.value, vocab);
                        ASSERT_EQ(m.accept_bytes(seq), grammar_recognize_prefix(g, seq)) << text << " bytes " << n;
                    }
                }
            }
        }
    }
}

TEST(token_mask, json_schema_grammars) {
    for (const char * schema : {R"({"type":"object","properties":{"a":{"type":"string","maxLength":3},"b":{"enum":[true,12]}},"required":["a"],"additionalProperties":false})",
                                R"({"type":"array","items":{"type":"integer","minimum":-5,"maximum":120},"maxItems":3})",
                                R"({"type":"object"})",
                                R"({"anyOf":[{"type":"null"},{"type":"number"},{"type":"array","items":{"$ref":"#"}}]})"}) {
        json_schema_result r = json_schema_compile(schema);
        ASSERT_TRUE(r.ok()) << r.error;
        check_walks(r.value, 25, 20, 12);
    }
}

TEST(token_mask, special_tokens_and_end) {
    auto vocab = small_vocab();
    grammar_program_result p = grammar_program_build(gbnf(R"(root ::= "" | "a")"));
    ASSERT_TRUE(p.ok());
    grammar_matcher m(p.value, vocab);
    grammar_token_mask mask;
    m.fill_mask(mask);
    EXPECT_TRUE(grammar_mask_test(mask, k_eos));
    EXPECT_FALSE(grammar_mask_test(mask, 0));
    EXPECT_FALSE(grammar_mask_test(mask, 2));
    EXPECT_FALSE(m.accept_token(0));
    EXPECT_FALSE(m.accept_token(2));
    EXPECT_FALSE(m.accept_token(-1));
    EXPECT_FALSE(m.accept_token(vocab->n_vocab()));
    EXPECT_TRUE(m.accept_token(k_eos));  // the end is taken where the grammar accepts
    EXPECT_FALSE(m.accept_bytes("b"));
    EXPECT_TRUE(m.accept_bytes("a"));
    EXPECT_TRUE(m.is_complete());
    m.fill_mask(mask);
    for (int32_t t = 0; t < vocab->n_vocab(); ++t) EXPECT_EQ(grammar_mask_test(mask, t), t == k_eos) << t;
    m.reset();
    EXPECT_FALSE(m.is_complete());
}

TEST(token_mask, copies_are_independent_and_refusals_change_nothing) {
    auto vocab = small_vocab();
    grammar_program_result p = grammar_program_build(gbnf(R"(root ::= "ab" [0-9]+ | "ba")"));
    ASSERT_TRUE(p.ok());
    grammar_matcher a(p.value, vocab);
    ASSERT_TRUE(a.accept_bytes("a"));
    grammar_matcher b = a;
    EXPECT_FALSE(a.accept_bytes("bx"));   // refused as a whole: "b" alone was fine
    EXPECT_TRUE(a.accept_bytes("b1"));
    EXPECT_TRUE(a.can_end());
    EXPECT_FALSE(b.can_end());
    EXPECT_TRUE(b.accept_bytes("b"));
    EXPECT_FALSE(b.can_end());
    EXPECT_TRUE(b.accept_bytes("23"));
    EXPECT_TRUE(b.can_end());
    EXPECT_FALSE(b.is_complete());
}

TEST(token_mask, grammars_that_match_nothing_are_errors) {
    grammar_program_result p = grammar_program_build(gbnf(R"(root ::= "a" root)"));
    EXPECT_FALSE(p.ok());
    EXPECT_NE(p.error.find("matches no text"), std::string::npos) << p.error;
    // An alternative that can never match is dropped; the rest still works.
    p = grammar_program_build(gbnf(R"(root ::= "x" | "a" loop
loop ::= "b" loop)"));
    ASSERT_TRUE(p.ok());
    grammar_matcher m(p.value, small_vocab());
    EXPECT_FALSE(m.accept_bytes("a"));
    EXPECT_TRUE(m.accept_bytes("x"));
}

// Repetitions of an optional part make every automaton state hold a member per copy: past the
// work one call may do, the grammar is refused when built (its first mask would need more) or,
// where the costly part comes later, the matcher fails there and stays failed.
TEST(token_mask, grammars_too_costly_to_follow_are_refused) {
    for (const char * text : {"root ::= ws{999,1000} \"x\"\nws ::= [ \\t\\n]*\n",
                              "root ::= (\"a\"? \"b\"?){3000} \"x\"\n", "root ::= ws{0,3000} \"x\"\nws ::= \" \"*\n"}) {
        grammar_program_result p = grammar_program_build(gbnf(text));
        EXPECT_FALSE(p.ok()) << text;
        EXPECT_NE(p.error.find("too costly to follow"), std::string::npos) << p.error;
    }
    // A hundred such repetitions are well within the work allowed.
    grammar_program_result p = grammar_program_build(gbnf("root ::= ws{100,101} \"x\"\nws ::= [ \\t\\n]*\n"));
    ASSERT_TRUE(p.ok()) << p.error;
    grammar_matcher m(p.value, small_vocab());
    EXPECT_TRUE(m.accept_bytes(std::string(150, ' ') + "\n\t x"));
    EXPECT_TRUE(m.is_complete());
    EXPECT_TRUE(m.error().empty());
}

TEST(token_mask, a_matcher_that_finds_its_grammar_too_costly_stays_failed) {
    auto vocab = small_vocab();
    grammar_program_result p = grammar_program_build(gbnf("root ::= \"ab\" ws{999,1000} \"x\" | \"ac\"\nws ::= [ \\t\\n]*\n"));
    ASSERT_TRUE(p.ok()) << p.error;  // the costly part starts only after two bytes
    grammar_matcher m(p.value, vocab), other(p.value, vocab);
    ASSERT_TRUE(m.accept_bytes("a"));
    grammar_token_mask mask;
    m.accept_bytes("b");  // this step or the mask after it gives up
    m.fill_mask(mask);
    EXPECT_NE(m.error().find("too costly to follow"), std::string::npos) << m.error();
    for (int32_t t = 0; t < vocab->n_vocab(); ++t) EXPECT_FALSE(grammar_mask_test(mask, t)) << t;
    EXPECT_FALSE(m.accept_bytes(" "));
    EXPECT_FALSE(m.can_end());
    m.reset();
    EXPECT_FALSE(m.error().empty());  // a reset does not make the grammar cheaper
    // Another matcher of the same program is not affected where it does not go.
    EXPECT_TRUE(other.accept_bytes("ac"));
    EXPECT_TRUE(other.is_complete());
    EXPECT_TRUE(other.error().empty());
}
