// grammar/token-mask.h — which tokens of a vocabulary keep the output inside a grammar.
//
// Usage:
//   auto vocab = grammar_vocab::build(token_bytes, special, eog_ids);   // once per model
//   grammar_program_result p = grammar_program_build(g);                // once per grammar
//   if (!p.ok()) return error(p.error);
//   grammar_matcher m(p.value, vocab);                                   // one per sequence
//   grammar_token_mask mask;
//   for (;;) {
//       m.fill_mask(mask);                       // bit t set: token t may come next
//       int32_t t = sample_with(mask);           // …
//       if (vocab->is_eog(t)) break;             // allowed only where the grammar accepts
//       m.accept_token(t);                       // false (nothing changes) when t is not allowed
//   }
//
// How: the grammar's rules are split in two. A rule whose recursion is only in tail position
// (a regular language) and that uses only such rules is lexical; the lexical rules that parser
// rules use are the lexemes. Lexemes are matched byte by byte with a DFA built lazily from the
// rules (states are sets of positions with their call stacks and a pending partial UTF-8 code
// point); the rest of the grammar is parsed over lexemes by an Earley parser, consulted only
// where a lexeme can end. A mask is a walk of a byte trie of the vocabulary; what a DFA state
// allows without a lexeme ending inside a token is cached per state, so a step inside a long
// string or number costs a copy of that cached mask plus the few tokens that cross the lexeme's
// end.
//
// Special tokens (control tokens, tokens with no bytes) are never allowed; the end-of-generation
// tokens are allowed exactly where the output so far is a sentence of the grammar.
//
// Bounded work: each call of a matcher may make the automaton do grammar_matcher_work_budget
// units of work on states it has not built yet (what is built is shared by every matcher of the
// program for the same vocabulary, so later calls find it ready). A grammar that needs more
// (many repetitions of an optional part: (" "*){1000}, ("a"? "b"?){3000}) is too costly to
// follow: the call gives up, the matcher's error() says so, and from then on that matcher allows
// no token (not even the end of generation) and accepts nothing; other matchers are not
// affected. grammar_program_build() already refuses a grammar whose first mask would need more
// (it follows the grammar over every single byte once).
#pragma once

#include "grammar/grammar.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

// Bit t (word t / 64, bit t % 64) set: token t is allowed.
using grammar_token_mask = std::vector<uint64_t>;

inline bool grammar_mask_test(const grammar_token_mask & m, int32_t t) {
    return ((m[size_t(t) >> 6] >> (uint32_t(t) & 63)) & 1) != 0;
}

// A vocabulary as the grammar engine sees it: the bytes each token adds to the output, in a
// trie laid out in depth-first order.
class grammar_vocab {
public:
    // token_bytes[t]: what token t adds to the output (SentencePiece's "▁" already a space, byte
    // tokens already their byte). special[t]: never allowed (control tokens). eog_ids: the tokens
    // that end generation (allowed where the grammar accepts; they need not be special).
    static std::shared_ptr<const grammar_vocab> build(const std::vector<std::string> & token_bytes,
                                                      const std::vector<bool> & special,
                                                      const std::vector<int32_t> & eog_ids);

    int32_t n_vocab() const { return n_vocab_; }
    size_t mask_words() const { return (size_t(n_vocab_) + 63) / 64; }
    bool is_eog(int32_t t) const;
    const std::vector<int32_t> & eog_ids() const { return eog_; }
    const std::string & token_bytes(int32_t t) const { return bytes_[size_t(t)]; }
    // Token t is in the trie: not special, not end-of-generation, not empty.
    bool in_trie(int32_t t) const { return in_trie_[size_t(t)] != 0; }

    // The trie, in preorder: node i's subtree is nodes i .. end[i]-1; node 0 is the root (no
    // byte). Tokens ending at node i: tok_ids[tok_begin[i] .. tok_begin[i + 1]).
    struct trie {
        std::vector<uint8_t> byte;
        std::vector<uint32_t> end;
        std::vector<uint32_t> tok_begin;  // size() == number of nodes + 1
        std::vector<int32_t> tok_ids;
        std::vector<uint16_t> depth;      // bytes from the root
        std::vector<uint32_t> parent;     // the root's is 0
        uint16_t max_depth = 0;
        // What a subtree reads, for nodes with at least k_subtree_min nodes in theirs (the node
        // included): index into subtrees, -1 for smaller ones. A walk whose state loops on every
        // byte and code point of a subtree takes the whole subtree at once.
        struct subtree {
            std::array<uint64_t, 2> ascii{};  // the ASCII bytes read (node's own byte included)
            bool non_ascii = false;          // some byte >= 0x80 is read
            // The parent's bytes end at a character boundary and every path through the
            // subtree is well-formed UTF-8 from there (it may stop inside a character).
            bool utf8 = false;
        };
        static constexpr uint32_t k_subtree_min = 4;
        std::vector<int32_t> subtree_idx;
        std::vector<subtree> subtrees;
    };
    const trie & get_trie() const { return trie_; }

private:
    int32_t n_vocab_ = 0;
    std::vector<std::string> bytes_;
    std::vector<int32_t> eog_;
    std::vector<uint8_t> in_trie_;
    trie trie_;
};

class grammar_program;  // the prepared grammar: lexemes and parser rules (immutable, shared)

struct grammar_program_result {
    std::shared_ptr<const grammar_program> value;
    std::string error;  // empty when value is set
    bool ok() const { return value != nullptr; }
};

// The work one matcher call may do (see above): at most some 0.2 to 0.5 s on a server core.
inline constexpr uint64_t grammar_matcher_work_budget = 1000000;

// Prepares g for matching. Fails (with a message) for a grammar whose root derives nothing or
// that refers to rules that derive no text at all, and for one too costly to follow from its
// start (see above). work_budget is the work each call of
// its matchers may do (a smaller one for callers that must answer sooner, such as fuzzers).
grammar_program_result grammar_program_build(const grammar & g, uint64_t work_budget = grammar_matcher_work_budget);

// The state of one output being generated under a grammar. Copies are independent (for n > 1
// choices); they share the program, the vocabulary and the lazily built automaton and mask caches
// (which are guarded, so copies may be used from different threads).
class grammar_matcher {
public:
    grammar_matcher(std::shared_ptr<const grammar_program> program, std::shared_ptr<const grammar_vocab> vocab);
    grammar_matcher(const grammar_matcher &);
    grammar_matcher & operator=(const grammar_matcher &);
    grammar_matcher(grammar_matcher &&) noexcept;
    grammar_matcher & operator=(grammar_matcher &&) noexcept;
    ~grammar_matcher();

    // out: vocab->mask_words() words; bit t set when token t may come next.
    void fill_mask(grammar_token_mask & out);
    // Advances over token t. False (and nothing changes) when t may not come next; an
    // end-of-generation token is taken (true) exactly where can_end().
    bool accept_token(int32_t t);
    // Advances over bytes (any split of a text into pieces gives the same result). False and
    // nothing changes when no continuation of the grammar starts with them.
    bool accept_bytes(std::string_view bytes);
    // The output so far is a whole sentence of the grammar.
    bool can_end() const;
    // The output is a sentence and no byte can follow it: only end of generation remains.
    bool is_complete() const;
    // Back to the empty output (a matcher whose grammar proved too costly stays failed).
    void reset();
    // Empty, or why the matcher gave up: the grammar proved too costly to follow (see above).
    const std::string & error() const;

    const grammar_vocab & vocab() const;

private:
    struct impl;
    std::unique_ptr<impl> p_;
};
