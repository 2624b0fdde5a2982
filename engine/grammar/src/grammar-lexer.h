// engine/grammar/src/grammar-lexer.h — the lexemes of a grammar_program as one byte DFA, built
// lazily.
//
// An NFA state is a place inside a lexeme: the lexeme, a stack of positions in its lexical rules
// (the top one before a character set; the ones below where to go on when the rule above ends;
// calls in tail position replace the top instead of pushing, so stacks stay bounded), and the
// bytes read so far of a code point not yet complete. A lexeme's end is an NFA state with an
// empty stack. A DFA state is a set of NFA states; transitions are computed on first use and kept.
//
// Projection (for mask walks): inside a loop (a string's characters, a number's digits) what a
// token may do does not depend on what follows the loop until the loop ends. project(d) is the
// state whose members keep only the frames from their innermost looping rule up; below it they
// remember only what the rest could read first (an exit signature: its character sets and whether
// the lexeme could end). A projected member whose loop ends becomes an exit; an exit reading a byte
// the rest could start with becomes "escaped": the walk must go on from the real state there. So
// a string of one property and a string of another share one projected state and one walk.
#pragma once

#include "grammar-program.h"

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

// Thrown by a lexer operation that runs past the budget armed for it (see grammar_lexer::arm).
struct grammar_lexer_over_budget : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class grammar_lexer {
public:
    static constexpr int32_t dead = -1;

    explicit grammar_lexer(const grammar_program & p);

    // Work: the NFA states that closures visit and the members that steps and projections go
    // through (about 0.2 microseconds each). arm(n) lets the operations that follow, together, do
    // n more; past that, the one running throws grammar_lexer_over_budget. The tables stay
    // consistent: a result is recorded only once it is complete, so what a throw interrupts is
    // computed again by the next call that needs it (under that call's own budget). Repetitions
    // of an optional part ((" "*){1000}) make every state hold a member per copy and every step
    // close over all of them, which is what this bounds.
    void arm(uint64_t budget) { work_end_ = budget > UINT64_MAX - work_ ? UINT64_MAX : work_ + budget; }
    uint64_t work() const { return work_; }

    // The state before the first byte of any of the lexemes (sorted ids); dead when none of them
    // can start with a byte (an empty lexeme is not matched here: the parser skips nullable ones).
    int32_t start(const std::vector<uint32_t> & lexemes);
    int32_t step(int32_t d, uint8_t b) {
        const int32_t t = trans_[size_t(d) * 256 + b];
        return t != unknown ? t : compute(d, b);
    }
    // The transition table (256 per state; unknown where not computed yet) and accepts ids, for
    // tight loops: valid until the next step() that computes a transition.
    static constexpr int32_t unknown_transition = -2;
    const int32_t * transitions() const { return trans_.data(); }
    const int32_t * accepts_ids() const { return accepts_id_.data(); }
    // Per state: bit 1 some lexeme ends there (accepts_id >= 0), bit 2 an escaped projected
    // member (the real state is needed from here on). Valid like transitions().
    const uint8_t * marks() const { return marks_.data(); }
    static constexpr uint8_t mark_accepts = 1, mark_escape = 2;
    // What d reads and comes back to itself: the ASCII bytes, and whether every non-ASCII code
    // point does so too (through states where no lexeme ends). Computed on first use from d's
    // transitions, which invalidates transitions() and marks(); known() says whether it has been.
    struct loop_info {
        std::array<uint64_t, 2> ascii{};
        bool non_ascii = false;
    };
    const loop_info & loops(int32_t d);
    bool loops_known(int32_t d) const { return loop_known_[size_t(d)] != 0; }
    // The projected state of d (d itself when no member is inside a loop with frames below it).
    int32_t project(int32_t d);
    // The states of d's members grouped by lexeme, when they belong to more than one (a walk
    // from d finds the union of the walks from its parts); empty otherwise.
    std::vector<int32_t> parts(int32_t d);
    // The lexemes that end at state d (sorted; empty when none does).
    const std::vector<uint32_t> & accepts(int32_t d) const { return dfa_[size_t(d)].accepts; }
    // An id shared by the states with equal accepts() (-1 when empty).
    int32_t accepts_id(int32_t d) const { return accepts_id_[size_t(d)]; }
    // Some lexeme can go on after state d.
    bool can_continue(int32_t d) const { return dfa_[size_t(d)].can_continue; }
    size_t n_states() const { return dfa_.size(); }

private:
    static constexpr int32_t unknown = unknown_transition;
    struct nfa_state {
        uint32_t lexeme = 0;
        // A code point begun but not complete: need continuation bytes to come, pattern the code
        // points still possible (relative to the bytes read, an id in patterns_), origin the state
        // before its first byte (whose advance follows once it completes).
        uint8_t need = 0;
        uint32_t pattern = 0;
        uint32_t origin = UINT32_MAX;
        uint32_t sig = 0;        // projected: what follows the kept frames (id in sigs_); 0: real
        bool escaped = false;    // projected: an exit that read a byte of what follows
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
        bool escape = false;
    };
    // What follows a projected member's kept frames: the character sets the rest starts with and
    // the lexeme that ends when the rest can be empty (UINT32_MAX: none).
    struct exit_sig {
        std::vector<uint32_t> sets;
        uint32_t end_lexeme = UINT32_MAX;
    };

    void charge(uint64_t n) {
        work_ += n;
        if (work_ > work_end_) over();
    }
    [[noreturn]] void over();
    int32_t compute(int32_t d, uint8_t b);
    bool code_points_loop(int32_t d);
    bool continuations_reach(int32_t from, uint8_t lo, uint8_t hi, int k, int32_t target,
                             std::unordered_set<uint64_t> & seen);
    uint32_t pos(uint32_t rule, uint32_t alt, uint32_t dot) const { return alt_base_[rule][alt] + dot; }
    // Adds to out the NFA states reached from frames without reading a byte.
    void closure(uint32_t lexeme, std::vector<uint32_t> frames, std::vector<uint32_t> & out, uint32_t sig = 0);
    uint32_t project_nfa(uint32_t id);
    bool exit_reads(uint32_t sig, uint8_t b) const;
    void step_nfa(uint32_t id, uint8_t b, std::vector<uint32_t> & out);
    uint32_t intern_nfa(nfa_state s);
    // The state of these members (sorted and made unique in place); dead when there are none.
    int32_t intern_dfa(std::vector<uint32_t> & members);
    const std::vector<uint32_t> & advance(uint32_t nfa);

    const grammar_program & p_;
    std::vector<std::vector<uint32_t>> alt_base_;            // rule, alternative -> first position
    std::vector<uint32_t> pos_rule_, pos_alt_, pos_dot_;
    std::vector<nfa_state> nfa_;
    std::unordered_map<std::string, uint32_t> nfa_ids_;
    std::vector<dfa_state> dfa_;
    std::unordered_map<std::vector<uint32_t>, int32_t, vec_hash> dfa_ids_;
    std::unordered_map<uint64_t, uint32_t> partial_next_;    // NFA state, byte -> pending state
    // Pending code points: sets of values below 64^need, equal sets sharing an id, so that
    // continuation bytes lead to few states whatever the code point's leading bits.
    std::vector<std::vector<grammar_char_range>> patterns_;
    std::unordered_map<std::string, uint32_t> pattern_ids_;
    uint32_t intern_pattern(std::vector<grammar_char_range> p);
    std::unordered_map<std::string, int32_t> accepts_ids_;
    std::unordered_map<std::string, int32_t> start_ids_;
    std::vector<int32_t> trans_;                             // 256 per DFA state
    std::vector<int32_t> accepts_id_;                        // per DFA state
    std::vector<uint8_t> marks_;                             // per DFA state
    std::vector<loop_info> loops_;                           // per DFA state, once loop_known_
    std::vector<uint8_t> loop_known_;
    std::vector<uint32_t> step_scratch_;
    std::vector<int32_t> proj_;                              // per DFA state (unknown: not yet)
    std::unordered_map<int32_t, std::vector<int32_t>> parts_;
    std::unordered_map<uint32_t, uint32_t> nfa_proj_;        // NFA state -> its projection
    std::vector<exit_sig> sigs_{exit_sig{}};                 // 0: none
    std::unordered_map<std::string, uint32_t> sig_ids_;
    uint32_t escaped_id_ = UINT32_MAX;
    uint64_t work_ = 0;
    uint64_t work_end_ = UINT64_MAX;  // unarmed: no limit
};
