// tools/loadgen/loadgen-prompt.h — seeded prompts of random English-like words for
// inferd-loadgen, optionally all starting with the same preamble (to exercise a prefix cache).
//
// Usage:
//   loadgen_prompt_gen g(/*seed=*/1, /*shared_prefix_words=*/200);
//   std::string p = g.prompt(/*client=*/3, /*request=*/0, /*own_words=*/16);
//
// The same (seed, client, request, own_words) always gives the same text, on every platform (the
// generator is splitmix64, not a std:: distribution). With shared_prefix_words N, every prompt
// begins with the same N words (drawn from the seed alone), followed by a space and own_words
// words of its own; the words are separated by single spaces, there is no trailing space.
#pragma once

#include <cstdint>
#include <string>

class loadgen_prompt_gen {
public:
    loadgen_prompt_gen(uint64_t seed, int shared_prefix_words);

    // The prompt for a client's n-th request (own_words < 0 counts as 0).
    std::string prompt(int client, int64_t request, int own_words) const;
    const std::string & shared_prefix() const { return prefix_; }

    // The number of distinct words the generator draws from.
    static size_t vocabulary_size();

private:
    uint64_t seed_;
    std::string prefix_;
};
