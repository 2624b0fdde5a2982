// engine/grammar/src/grammar-earley.h — an Earley parser over lexemes for a grammar_program's
// parser rules, its sets kept in a stack that can be cut back (the sets a mask walk tries are
// dropped after it).
//
// Set 0 holds the root's predictions. A new set is built from the items of earlier sets that
// expect one of the lexemes that just ended there (several earlier sets may contribute when
// lexemes of different lengths end at the same byte), then closed: predictions, completions, and
// nullable rules and lexemes skipped (Aycock and Horspool's rule, so a completion never needs the
// set being built).
#pragma once

#include "grammar-program.h"

#include <cstdint>
#include <unordered_set>
#include <utility>
#include <vector>

class grammar_earley {
public:
    explicit grammar_earley(const grammar_program & p);

    void reset();  // only set 0
    uint32_t n_sets() const { return uint32_t(sets_.size()); }
    void truncate(uint32_t n_sets);

    // Building one set: begin, add every (set, lexemes that ended) pair, finish -> its index.
    void begin_set();
    void add_scan(uint32_t from, const std::vector<uint32_t> & lexemes);
    uint32_t finish_set();

    // The lexemes the items of set s expect (sorted ids).
    const std::vector<uint32_t> & expected(uint32_t s);
    // The lexer's start state for set s (computed by the caller once, then kept here).
    int32_t & start_state(uint32_t s) { return sets_[s].start; }
    // The root is complete in set s (the text up to s is a sentence).
    bool root_complete(uint32_t s) const;

private:
    struct item {
        uint32_t palt = 0;
        uint32_t dot = 0;
        uint32_t origin = 0;
    };
    struct set_info {
        uint32_t begin = 0, end = 0;
        int32_t start = -2;                 // lexer start state (-2: not yet asked)
        bool expected_known = false;
        std::vector<uint32_t> expected;
    };

    void add(const item & it);
    void close(uint32_t s);

    const grammar_program & p_;
    std::vector<item> items_;
    std::vector<set_info> sets_;
    struct key_hash {
        size_t operator()(const std::pair<uint64_t, uint32_t> & k) const {
            return size_t((k.first * 0x9E3779B97F4A7C15ull) ^ (uint64_t(k.second) * 0xC2B2AE3D27D4EB4Full));
        }
    };
    std::unordered_set<std::pair<uint64_t, uint32_t>, key_hash> seen_;  // the set being built's items
    std::unordered_set<uint32_t> predicted_;  // rules predicted in the set being built
    uint32_t building_ = 0;
};
