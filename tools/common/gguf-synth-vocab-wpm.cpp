// inferd-gguf synth: the built-in WordPiece vocabulary of bert (see gguf-synth.h).
#include "engine/vocab.h"
#include "gguf-synth.h"

#include <algorithm>
#include <string_view>

namespace {

constexpr std::string_view k_word_start = "\xE2\x96\x81";  // "▁": a word-initial piece
constexpr std::string_view k_letters = "etaoinshrdlcumwfgypbvkjxqz";  // English letter frequency
constexpr int k_n_unused = 99;                                     // [unused0] … [unused98]
constexpr int32_t k_pad = 0, k_unk = 100, k_cls = 101, k_sep = 102, k_mask = 103;

// Every printable ASCII character but the capitals (the tokenizer lowercases), then the ones that
// can continue a word (letters and digits; punctuation and symbols are words of their own).
std::vector<std::string> synth_wpm_single_chars() {
    std::vector<std::string> out;
    for (char c = '!'; c <= '~'; ++c) {
        if (c < 'A' || c > 'Z') out.push_back(std::string(k_word_start) + c);
    }
    for (char c = '0'; c <= '9'; ++c) out.emplace_back(1, c);
    for (char c : k_letters) out.emplace_back(1, c);
    return out;
}

// Appends strings of lowercase letters until `want` tokens are in *tokens, each string once as a
// word-initial and once as a continuation piece. Level-k strings are a level-(k-1) string
// followed by one letter, taken diagonal by diagonal (frequent letters combine first); every
// string is made once, so no token text repeats.
void synth_wpm_append_pieces(size_t want, std::vector<std::string> * tokens) {
    std::vector<std::string> level;
    for (char c : k_letters) level.emplace_back(1, c);
    while (tokens->size() < want) {
        std::vector<std::string> next;
        const size_t a = level.size(), b = k_letters.size();
        for (size_t d = 0; d + 1 < a + b && tokens->size() < want; ++d) {
            const size_t i_lo = d >= b ? d - b + 1 : 0;
            for (size_t i = i_lo; i <= std::min(d, a - 1) && tokens->size() < want; ++i) {
                next.push_back(level[i] + k_letters[d - i]);
                tokens->push_back(std::string(k_word_start) + next.back());
                if (tokens->size() < want) tokens->push_back(next.back());
            }
        }
        level = std::move(next);
    }
}

}  // namespace

int synth_wpm_min_vocab() { return k_mask + 1 + int(synth_wpm_single_chars().size()); }

int synth_pooling_type(const std::string & name) {
    if (name == "mean") return 1;
    if (name == "cls") return 2;
    if (name == "rank") return 4;
    return -1;
}

void synth_wpm_vocab_metadata(int n_vocab, gguf_metadata * md) {
    std::vector<std::string> tokens = {"[PAD]"};
    tokens.reserve(size_t(n_vocab));
    for (int i = 0; i < k_n_unused; ++i) {
        std::string t = "[unused";
        t += std::to_string(i);
        t += ']';
        tokens.push_back(std::move(t));
    }
    for (const char * s : {"[UNK]", "[CLS]", "[SEP]", "[MASK]"}) tokens.emplace_back(s);
    for (std::string & s : synth_wpm_single_chars()) tokens.push_back(std::move(s));
    synth_wpm_append_pieces(size_t(n_vocab), &tokens);

    std::vector<int32_t> types(tokens.size(), int32_t(vocab_token_type::normal));
    for (int32_t id : {k_pad, k_unk, k_cls, k_sep, k_mask}) types[size_t(id)] = int32_t(vocab_token_type::control);

    md->set("tokenizer.ggml.token_type_count", gguf_value::from_u32(2));
    md->set("tokenizer.ggml.model", gguf_value::from_string("bert"));
    md->set("tokenizer.ggml.tokens", gguf_value::from_array_strings(std::move(tokens)));
    md->set("tokenizer.ggml.token_type", gguf_value::from_array_i32(types));
    md->set("tokenizer.ggml.unknown_token_id", gguf_value::from_u32(uint32_t(k_unk)));
    md->set("tokenizer.ggml.seperator_token_id", gguf_value::from_u32(uint32_t(k_sep)));  // the key is spelled so
    md->set("tokenizer.ggml.padding_token_id", gguf_value::from_u32(uint32_t(k_pad)));
    md->set("tokenizer.ggml.cls_token_id", gguf_value::from_u32(uint32_t(k_cls)));
    md->set("tokenizer.ggml.mask_token_id", gguf_value::from_u32(uint32_t(k_mask)));
}
