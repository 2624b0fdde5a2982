// engine/grammar/src/grammar-program.h — a grammar split into lexemes and parser rules (the
// prepared form behind grammar/token-mask.h).
//
// Lexical rules: rules whose recursion is only in tail position (the rules of one strongly
// connected component refer to each other only as the last symbol of an alternative) and that
// use only lexical rules; they describe regular languages. In each alternative of a non-lexical
// rule, a maximal run of lexical symbols (character sets and lexical rules) becomes one lexeme
// (a generated lexical rule, shared between equal runs); the non-lexical rules over lexemes and
// themselves are the parser's grammar. When the root is lexical the whole grammar is one lexeme
// under a generated parser root.
#pragma once

#include "grammar/grammar.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

struct grammar_tables;  // the lexer DFA and mask caches for one vocabulary (token-mask.cpp)
class grammar_vocab;

struct grammar_psym {
    uint32_t index = 0;    // a lexeme id, or a rule of grammar_program::g
    bool lexeme = false;
};

struct grammar_palt {
    uint32_t rule = 0;                  // the parser rule (index into g.rules)
    std::vector<grammar_psym> syms;
};

class grammar_program {
public:
    grammar g;                           // productive alternatives only, lexeme runs added
    std::vector<uint8_t> lexical;        // per rule of g
    std::vector<uint8_t> nullable;       // per rule of g: derives the empty text
    std::vector<uint8_t> looping;        // per rule of g: refers to itself, directly or not
    std::vector<uint32_t> lexemes;       // lexeme id -> its lexical rule
    std::vector<grammar_palt> palts;     // the parser's alternatives
    std::vector<std::vector<uint32_t>> rule_palts;  // rule -> its alternatives in palts (parser rules)
    uint32_t proot = 0;                  // the parser's root rule
    uint64_t work_budget = 0;            // the work one matcher call may do (token-mask.h)

    // Builds the program; false with *err for a grammar whose root derives no text.
    bool build(const grammar & src, std::string * err);

    // The automaton and mask caches matchers of this program share for vocabulary v (made on
    // first use, kept while the program lives).
    std::shared_ptr<grammar_tables> tables_for(const std::shared_ptr<const grammar_vocab> & v) const;
    // Drops the tables for v, and those of vocabularies that are gone.
    void forget_tables(const grammar_vocab * v) const;

private:
    mutable std::mutex tables_mu_;
    mutable std::vector<std::pair<std::weak_ptr<const grammar_vocab>, std::shared_ptr<grammar_tables>>> tables_;
};
