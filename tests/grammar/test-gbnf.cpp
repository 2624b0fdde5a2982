// GBNF parsing (grammar/gbnf.h) and the grammar's meaning (grammar_recognize): every construct
// of the format accepts exactly the texts it should; errors name line, column and problem;
// printing a grammar and parsing it again gives the same grammar; UTF-8 in literals, classes and
// texts; character-set operations.
#include "grammar/gbnf.h"
#include "grammar/grammar.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

grammar parse_ok(const std::string & text) {
    grammar_parse_result r = grammar_parse_gbnf(text);
    EXPECT_TRUE(r.ok()) << r.error.to_string() << "\n" << text;
    return r.value;
}

std::string parse_error(const std::string & text) {
    grammar_parse_result r = grammar_parse_gbnf(text);
    EXPECT_FALSE(r.ok()) << "parsed: " << text;
    return r.error.to_string();
}

// Every text of `yes` is in the language of `gbnf`, no text of `no` is.
void expect_language(const std::string & gbnf, const std::vector<std::string> & yes, const std::vector<std::string> & no) {
    const grammar g = parse_ok(gbnf);
    for (const std::string & t : yes) EXPECT_TRUE(grammar_recognize(g, t)) << "should accept '" << t << "' by\n" << gbnf;
    for (const std::string & t : no) EXPECT_FALSE(grammar_recognize(g, t)) << "should reject '" << t << "' by\n" << gbnf;
}

}  // namespace

TEST(gbnf, literals_alternatives_and_sequences) {
    expect_language(R"(root ::= "yes" | "no")", {"yes", "no"}, {"", "y", "yesno", "YES", "no "});
    expect_language(R"(root ::= "a" "b" "c")", {"abc"}, {"ab", "abcc"});
    expect_language(R"(root ::= "")", {""}, {"a"});
    expect_language("root ::= greeting \" \" name\ngreeting ::= \"hi\" | \"hello\"\nname ::= \"bob\"",
                    {"hi bob", "hello bob"}, {"hibob", "hello  bob"});
}

TEST(gbnf, character_classes_and_any) {
    expect_language("root ::= [a-c0-1_]", {"a", "b", "c", "0", "1", "_"}, {"d", "2", "-", ""});
    expect_language("root ::= [^a-z]", {"A", "0", "\n", "é"}, {"a", "q", "z"});
    expect_language("root ::= [-a]", {"-", "a"}, {"b"});
    expect_language("root ::= [a-]", {"-", "a"}, {"b"});
    expect_language(R"(root ::= [\]\[\-\\])", {"]", "[", "-", "\\"}, {"a"});
    expect_language("root ::= .", {"a", "\n", "€", "\xF0\x9F\x98\x80"}, {"", "ab"});
}

TEST(gbnf, escapes) {
    expect_language(R"(root ::= "\n\r\t\\\"\x41\u00e9\U0001F600")", {"\n\r\t\\\"Aé\xF0\x9F\x98\x80"}, {"nrt"});
    expect_language(R"(root ::= [\x00-\x1F])", {std::string(1, '\0'), "\x1f"}, {" "});
    expect_language(R"(root ::= "\'\/\[\]")", {"'/[]"}, {});
}

TEST(gbnf, repetitions) {
    expect_language(R"(root ::= "a"*)", {"", "a", "aaaa"}, {"b", "ab"});
    expect_language(R"(root ::= "a"+)", {"a", "aaa"}, {""});
    expect_language(R"(root ::= "a"? "b")", {"b", "ab"}, {"aab", ""});
    expect_language(R"(root ::= "a"{3})", {"aaa"}, {"aa", "aaaa"});
    expect_language(R"(root ::= "a"{2,4})", {"aa", "aaa", "aaaa"}, {"a", "aaaaa"});
    expect_language(R"(root ::= "a"{2,})", {"aa", "aaaaaaa"}, {"a", ""});
    expect_language(R"(root ::= "a"{0,2} "b")", {"b", "ab", "aab"}, {"aaab"});
    expect_language(R"(root ::= "a"{ 1 , 2 })", {"a", "aa"}, {""});
    expect_language(R"(root ::= ("ab" | "c")* "d")", {"d", "abd", "cabcd"}, {"ad", "abc"});
    expect_language(R"(root ::= ([0-9]{1,3} "."){3} [0-9]{1,3})", {"1.22.255.0"}, {"1.2.3", "1234.1.1.1"});
    // large counts take O(log n) rules: every count in range and no other
    const grammar g = parse_ok(R"(root ::= "a"{37,100} "b")");
    EXPECT_LT(g.n_symbols(), 150u) << grammar_to_gbnf(g);
    for (int n = 0; n <= 110; ++n) {
        EXPECT_EQ(grammar_recognize(g, std::string(size_t(n), 'a') + "b"), n >= 37 && n <= 100) << n;
    }
    const grammar big = parse_ok(R"(root ::= [0-9]{65535})");
    EXPECT_LT(big.n_symbols(), 60u);
    EXPECT_TRUE(grammar_recognize(big, std::string(65535, '7')));
    EXPECT_FALSE(grammar_recognize(big, std::string(65534, '7')));
    const grammar upto = parse_ok(R"(root ::= [0-9]{0,40000})");
    EXPECT_LT(upto.n_symbols(), 400u);
    EXPECT_TRUE(grammar_recognize(upto, std::string(40000, '1')));
    EXPECT_TRUE(grammar_recognize(upto, std::string(12345, '1')));
    EXPECT_FALSE(grammar_recognize(upto, std::string(40001, '1')));
    // a repetition applies to the element right before it only
    expect_language(R"(root ::= "ab"*)", {"", "abab"}, {"aba"});
    expect_language(R"(root ::= "a" "b"*)", {"a", "abb"}, {"", "aa"});
}

TEST(gbnf, layout_comments_and_continued_rules) {
    const std::string text =
        "# a comment line\n"
        "root ::= item (\",\" item)*   # trailing comment\n"
        "\n"
        "item ::=\n"
        "    \"x\"\n"
        "  | \"y\"   \n"
        "  | (\n"
        "      \"z\"\n"
        "      \"z\"\n"
        "    )\n";
    expect_language(text, {"x", "x,y", "zz,x,y"}, {"", "x,", "z"});
    expect_language("root ::= a\r\na ::= \"q\"\r\n", {"q"}, {"a"});
    expect_language("root ::= self_ref\nself_ref ::= \"(\" self_ref \")\" | \"\"", {"", "()", "((()))"}, {"(()", ")("});
}

TEST(gbnf, left_recursion_and_empty_rules) {
    expect_language("root ::= root \"a\" | \"b\"", {"b", "ba", "baaa"}, {"a", "ab"});
    expect_language("root ::= e e \"x\" e\ne ::= \"\" | \"e\"", {"x", "ex", "eex", "xe", "eexe"}, {"eeex", "xee"});
}

TEST(gbnf, utf8) {
    expect_language(R"(root ::= "héllo" [α-ω]+)", {"héllo\xCE\xB1\xCF\x89"}, {"hello\xCE\xB1", "héllo"});
    expect_language(R"(root ::= [^"\\])", {"\xE2\x82\xAC"}, {"\"", "\\"});
    const grammar g = parse_ok("root ::= .*");
    EXPECT_TRUE(grammar_recognize(g, "\xF0\x9F\x98\x80\xE2\x82\xAC"));
    EXPECT_FALSE(grammar_recognize(g, "\xC3")) << "a truncated sequence is no text";
    EXPECT_FALSE(grammar_recognize(g, "\xC0\xAF")) << "an overlong form is no text";
    EXPECT_FALSE(grammar_recognize(g, "\xED\xA0\x80")) << "a surrogate is no text";
    EXPECT_FALSE(grammar_recognize(g, "\x80"));
}

TEST(gbnf, errors_name_line_column_and_problem) {
    EXPECT_EQ(parse_error("root ::= \"a\"\nitem = \"b\""), "line 2, column 6: expected '::=' after rule name 'item'");
    EXPECT_EQ(parse_error("root ::= missing"), "line 1, column 10: undefined rule 'missing'");
    EXPECT_EQ(parse_error("item ::= \"a\""), "no rule named 'root' (the start of the grammar)");
    EXPECT_EQ(parse_error("root ::= \"a\"\nroot ::= \"b\""), "line 2, column 1: rule 'root' is defined twice (first at line 1, column 1)");
    EXPECT_EQ(parse_error("root ::= \"abc"), "line 1, column 10: unterminated string literal");
    EXPECT_EQ(parse_error("root ::= [abc"), "line 1, column 10: unterminated character class");
    EXPECT_EQ(parse_error("root ::= [z-a]"), "line 1, column 11: character class range is reversed");
    EXPECT_EQ(parse_error("root ::= []"), "line 1, column 10: empty character class");
    EXPECT_EQ(parse_error("root ::= \"\\q\""), "line 1, column 11: unknown escape '\\q'");
    EXPECT_EQ(parse_error("root ::= \"\\x4\""), "line 1, column 11: expected 2 hex digits after the escape");
    EXPECT_EQ(parse_error("root ::= \"\\uD800\""), "line 1, column 11: the escape is no Unicode code point");
    EXPECT_EQ(parse_error("root ::= * \"a\""), "line 1, column 10: '*' must follow an element");
    EXPECT_EQ(parse_error("root ::= (\"a\""), "line 1, column 14: expected ')'");
    EXPECT_EQ(parse_error("root ::= \"a\"{3,2}"), "line 1, column 13: repetition {m,n} with n < m");
    EXPECT_EQ(parse_error("root ::= \"a\"{9999999}"), "line 1, column 14: repetition count over 1000000");
    EXPECT_EQ(parse_error("root ::= \"a\" )"), "line 1, column 14: unexpected ')'");
    EXPECT_EQ(parse_error("root ::= \"\xC3\""), "line 1, column 11: invalid UTF-8");
    // columns count code points
    EXPECT_EQ(parse_error("root ::= \"é\" oops"), "line 1, column 14: undefined rule 'oops'");
    // expansion limit: 33 alternatives of 33 … elements repeated 31 times (written out) add up
    std::string big = "root ::= x x x x x x x x\nx ::= y y y y y y y y\ny ::= z\nz ::=";
    for (int i = 0; i < 40000; ++i) big += " [a-z]{31}";
    EXPECT_NE(parse_error(big).find("the grammar is too large once repetitions are expanded"), std::string::npos);
}

TEST(gbnf, printing_round_trips) {
    const std::vector<std::string> grammars = {
        R"(root ::= "yes" | "no")",
        "root ::= obj\nobj ::= \"{\" ws (pair (\",\" ws pair)*)? \"}\"\npair ::= [a-z]+ \":\" ws [0-9]+\nws ::= [ \\t\\n]{0,2}",
        R"(root ::= [^"\\\x00-\x1F] . [\u00e9-\U0001F600] "\"\n\\")",
        R"(root ::= "a"{2,4} ("b" | "")* [-\]^])",
    };
    for (const std::string & text : grammars) {
        const grammar g = parse_ok(text);
        const std::string printed = grammar_to_gbnf(g);
        const grammar g2 = parse_ok(printed);
        EXPECT_EQ(grammar_to_gbnf(g2), printed) << text;
        EXPECT_EQ(g2.rules.size(), g.rules.size()) << printed;
        EXPECT_EQ(g2.n_symbols(), g.n_symbols()) << printed;
    }
}

TEST(gbnf, generated_rules_do_not_take_user_names) {
    const grammar g = parse_ok("root ::= (\"a\")* root-1\nroot-1 ::= \"b\"");
    EXPECT_TRUE(grammar_recognize(g, "aab"));
    EXPECT_FALSE(grammar_recognize(g, "aa"));
    const int32_t user = g.find_rule("root-1");
    ASSERT_GE(user, 0);
    EXPECT_FALSE(g.rules[size_t(user)].generated);
}

TEST(grammar_char_set, normalize_contains_and_complement) {
    grammar_char_set s{{{10, 20}, {5, 9}, {30, 30}, {15, 25}}};
    grammar_char_set_normalize(s);
    EXPECT_EQ(s.ranges, (std::vector<grammar_char_range>{{5, 25}, {30, 30}}));
    EXPECT_TRUE(s.contains(5));
    EXPECT_TRUE(s.contains(25));
    EXPECT_FALSE(s.contains(26));
    EXPECT_TRUE(s.contains(30));
    EXPECT_FALSE(s.contains(4));
    const grammar_char_set c = grammar_char_set_complement(s);
    EXPECT_EQ(c.ranges, (std::vector<grammar_char_range>{{0, 4}, {26, 29}, {31, grammar_max_code_point}}));
    EXPECT_TRUE(grammar_char_set_complement(grammar_char_set{{{0, grammar_max_code_point}}}).ranges.empty());
    EXPECT_EQ(grammar_char_set_complement(grammar_char_set{}).ranges,
              (std::vector<grammar_char_range>{{0, grammar_max_code_point}}));
}
