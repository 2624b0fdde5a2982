// tools/loadgen/loadgen-prompt.cpp — the word list and the seeded word streams.
#include "loadgen/loadgen-prompt.h"

#include <array>
#include <string_view>

namespace {

constexpr std::array<std::string_view, 128> k_words = {
    "the",     "a",       "little",  "girl",    "boy",     "dog",     "cat",     "house",   "tree",    "river",
    "garden",  "sun",     "moon",    "star",    "day",     "night",   "morning", "evening", "happy",   "sad",
    "big",     "small",   "red",     "blue",    "green",   "yellow",  "bright",  "dark",    "old",     "new",
    "quick",   "slow",    "quiet",   "loud",    "warm",    "cold",    "soft",    "hard",    "kind",    "brave",
    "went",    "saw",     "found",   "made",    "played",  "ran",     "walked",  "looked",  "said",    "asked",
    "wanted",  "liked",   "helped",  "opened",  "closed",  "jumped",  "laughed", "smiled",  "thought", "knew",
    "and",     "but",     "so",      "then",    "when",    "because", "with",    "under",   "over",    "near",
    "into",    "from",    "after",   "before",  "every",   "some",    "many",    "one",     "two",     "three",
    "friend",  "mother",  "father",  "teacher", "bird",    "fish",    "ball",    "book",    "box",     "cake",
    "flower",  "road",    "town",    "school",  "window",  "door",    "table",   "chair",   "water",   "apple",
    "story",   "game",    "song",    "picture", "forest",  "hill",    "boat",    "train",   "letter",  "gift",
    "very",    "always",  "never",   "again",   "together","slowly",  "softly",  "loudly",  "there",   "here",
    "was",     "had",     "could",   "would",   "they",    "she",     "he",      "we",
};

uint64_t splitmix64(uint64_t * state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void append_words(uint64_t state, int n, std::string * out) {
    for (int i = 0; i < n; ++i) {
        if (!out->empty()) {
            out->push_back(' ');
        }
        out->append(k_words[splitmix64(&state) % k_words.size()]);
    }
}

}  // namespace

loadgen_prompt_gen::loadgen_prompt_gen(uint64_t seed, int shared_prefix_words) : seed_(seed) {
    uint64_t s = seed ^ 0x5eed0f1e7ull;
    append_words(splitmix64(&s), shared_prefix_words, &prefix_);
}

std::string loadgen_prompt_gen::prompt(int client, int64_t request, int own_words) const {
    // One independent stream per (client, request): mix them into the seed through splitmix64.
    uint64_t s = seed_;
    s = splitmix64(&s) ^ uint64_t(uint32_t(client));
    s = splitmix64(&s) ^ uint64_t(request);
    std::string out = prefix_;
    append_words(splitmix64(&s), own_words, &out);
    return out;
}

size_t loadgen_prompt_gen::vocabulary_size() {
    return k_words.size();
}
