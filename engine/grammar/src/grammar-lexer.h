// engine/grammar/src/grammar-lexer.h — the lexemes of a grammar_program as one byte DFA, built
// lazily.
//
// An NFA state is a place inside a lexeme: the lexeme, a stack of positions in its lexical rules
// (the top one before a character set; the ones below where to go on when the rule above ends;
// calls in tail position replace the top instead of pushing, so stacks stay bounded), and the
// bytes read so far of a code point not yet complete. A lexeme's end is an NFA state with an
// empty stack. A DFA state is a set of NFA states; transitions are computed on first use and kept.
#pragma once

#include "grammar-program.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

class grammar_lexer {
public:
    static constexpr int32_t dead = -1;

    explicit grammar_lexer(const grammar_program & p);

    // The state before the first byte of any of the lexemes (sorted ids); dead when none of them
    // can start with a byte (an empty lexeme is not matched here: the parser skips nullable ones).
    int32_t start(const std::vector<uint32_t> & lexemes);
    int32_t step(int32_t d, uint8_t b) {
        const int32_t t = trans_[size_t(d) * 256 + b];
        return t != unknown ? t : compute(d, b);
    }
    // The lexemes that end at state d (sorted; empty when none does).
    const std::vector<uint32_t> & accepts(int32_t d) const { return dfa_[size_t(d)].accepts; }
    // An id shared by the states with equal accepts() (-1 when empty).
    int32_t accepts_id(int32_t d) const { return accepts_id_[size_t(d)]; }
    // Some lexeme can go on after state d.
    bool can_continue(int32_t d) const { return dfa_[size_t(d)].can_continue; }
    size_t n_states() const { return dfa_.size(); }

private:
    static constexpr int32_t unknown = -2;
    struct nfa_state {
        uint32_t lexeme = 0;
        uint32_t prefix = 0;   // bits of the pending code point
        uint8_t need = 0;      // continuation bytes still to come (0: none pending)
        uint8_t len = 0;       // length of the pending code point's encoding
        std::vector<uint32_t> frames;  // positions; empty: the lexeme has ended
        bool advance_known = false;
        std::vector<uint32_t> advance;  // the states after the top set's code point (closure)
    };
    struct vec_hash {
        size_t operator()(const std::vector<uint32_t> & v) const {
            uint64_t h = 0x9E3779B97F4A7C15ull ^ v.size();
            for (uint32_t x : v) h = (h ^ x) * 0x100000001B3ull;
            return size_t(h ^ (h >> 32));
        }
    };
    struct dfa_state {
        std::vector<uint32_t> members;  // sorted NFA state ids
        std::vector<uint32_t> accepts;
        int32_t accepts_id = -1;
        bool can_continue = false;
    };

    int32_t compute(int32_t d, uint8_t b);
    uint32_t pos(uint32_t rule, uint32_t alt, uint32_t dot) const { return alt_base_[rule][alt] + dot; }
    // Adds to out the NFA states reached from frames without reading a byte.
    void closure(uint32_t lexeme, std::vector<uint32_t> frames, std::vector<uint32_t> & out);
    void step_nfa(uint32_t id, uint8_t b, std::vector<uint32_t> & out);
    uint32_t intern_nfa(nfa_state s);
    int32_t intern_dfa(std::vector<uint32_t> members);
    const std::vector<uint32_t> & advance(uint32_t nfa);

    const grammar_program & p_;
    std::vector<std::vector<uint32_t>> alt_base_;            // rule, alternative -> first position
    std::vector<uint32_t> pos_rule_, pos_alt_, pos_dot_;
    std::vector<nfa_state> nfa_;
    std::unordered_map<std::string, uint32_t> nfa_ids_;
    std::vector<dfa_state> dfa_;
    std::unordered_map<std::vector<uint32_t>, int32_t, vec_hash> dfa_ids_;
    std::unordered_map<uint64_t, uint32_t> partial_next_;    // NFA state, byte -> pending state
    std::unordered_map<std::string, int32_t> accepts_ids_;
    std::unordered_map<std::string, int32_t> start_ids_;
    std::vector<int32_t> trans_;                             // 256 per DFA state
    std::vector<int32_t> accepts_id_;                        // per DFA state
};
