// vocab.cpp — loading a tokenizer vocabulary from GGUF metadata (see engine/vocab.h).
#include "engine/vocab.h"

#include "ggml/gguf.h"

#include <algorithm>
#include <cstdio>
#include <memory>

namespace {

bool fail(std::string * error, std::string msg) {
    if (error) *error = std::move(msg);
    return false;
}

// Reads an optional token id key; absent keys leave *out alone.
bool read_optional_id(const gguf_metadata & md, const char * key, int32_t n_tokens, int32_t * out,
                      std::string * error) {
    const gguf_value * v = md.find(key);
    if (!v) return true;
    int64_t id = 0;
    if (!v->get_int(&id)) {
        return fail(error, std::string("vocab: ") + key + " is not an integer (" +
                               gguf_value_type_name(v->type()) + ")");
    }
    if (id == -1 || id == (int64_t) UINT32_MAX) {  // writers store -1 (or u32 -1) for "none"
        *out = -1;
        return true;
    }
    if (id < 0 || id >= n_tokens) {
        return fail(error, std::string("vocab: ") + key + " = " + std::to_string(id) +
                               " is outside the vocabulary (" + std::to_string(n_tokens) + " tokens)");
    }
    *out = (int32_t) id;
    return true;
}

bool read_optional_bool(const gguf_metadata & md, const char * key, bool * out, std::string * error) {
    const gguf_value * v = md.find(key);
    if (!v) return true;
    if (!v->get_bool(out)) {
        return fail(error, std::string("vocab: ") + key + " is not a bool (" +
                               gguf_value_type_name(v->type()) + ")");
    }
    return true;
}

uint64_t pair_key(int32_t left, int32_t right) {
    return ((uint64_t) (uint32_t) left << 32) | (uint32_t) right;
}

void append_utf8(std::string & out, uint32_t cp) {
    if (cp < 0x80) {
        out += (char) cp;
    } else if (cp < 0x800) {
        out += (char) (0xC0 | (cp >> 6));
        out += (char) (0x80 | (cp & 0x3F));
    } else {
        out += (char) (0xE0 | (cp >> 12));
        out += (char) (0x80 | ((cp >> 6) & 0x3F));
        out += (char) (0x80 | (cp & 0x3F));
    }
}

// GPT-2's table: printable Latin-1 bytes map to themselves, the others to U+0100 upwards in
// byte order.
struct byte_unicode_table {
    std::string to_unicode[256];
    uint32_t codepoint[256];
    byte_unicode_table() {
        uint32_t next = 256;
        for (int b = 0; b < 256; ++b) {
            const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
            codepoint[b] = printable ? (uint32_t) b : next++;
            append_utf8(to_unicode[b], codepoint[b]);
        }
    }
};

const byte_unicode_table & byte_table() {
    static const byte_unicode_table table;
    return table;
}

// End-of-turn markers, in the order eot_id is chosen from when the file names none.
constexpr std::string_view k_eot_texts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<EOT>", "_<EOT>",
    "<\xEF\xBD\x9C" "end\xE2\x96\x81" "of\xE2\x96\x81" "sentence\xEF\xBD\x9C>",  // DeepSeek's, in full-width bars
    "<end_of_utterance>",
};

// Every marker that ends generation (besides eos and eot).
constexpr std::string_view k_eog_texts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
};

// Fill-in-the-middle markers: each group names one role (prefix, suffix, middle, pad, repository,
// file separator); the first text of a group found in the vocabulary is that role's token. The
// pad, repository and file-separator tokens also end generation.
struct fim_group {
    std::string_view texts[6];  // unused entries are empty
    bool eog;
};
constexpr fim_group k_fim_groups[] = {
    {{"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<PRE>", "<|code_prefix|>", "<|prefix|>"}, false},
    {{"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<SUF>", "<|code_suffix|>", "<|suffix|>"}, false},
    {{"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<MID>", "<|code_middle|>", "<|middle|>"}, false},
    {{"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}, true},
    {{"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}, true},
    {{"<|file_sep|>"}, true},
};

bool ascii_contains_nocase(std::string_view s, std::string_view what) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? (char) (c - 'A' + 'a') : c; };
    for (size_t i = 0; i + what.size() <= s.size(); ++i) {
        size_t j = 0;
        while (j < what.size() && lower(s[i + j]) == what[j]) ++j;
        if (j == what.size()) return true;
    }
    return false;
}

}  // namespace

const std::string & vocab_byte_to_unicode(uint8_t b) { return byte_table().to_unicode[b]; }

int vocab_unicode_to_byte(uint32_t codepoint) {
    if (codepoint < 256) {
        const uint32_t c = codepoint;
        const bool printable = (c >= 0x21 && c <= 0x7E) || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE);
        return printable ? (int) c : -1;
    }
    const byte_unicode_table & t = byte_table();
    for (int b = 0; b < 256; ++b) {
        if (t.codepoint[b] == codepoint) return b;
    }
    return -1;
}

size_t vocab_utf8_len(uint8_t c) {
    if (c < 0x80) return 1;
    if ((c & 0xE0) == 0xC0) return 2;
    if ((c & 0xF0) == 0xE0) return 3;
    if ((c & 0xF8) == 0xF0) return 4;
    return 1;
}

vocab::vocab() { std::fill(std::begin(byte_tokens_), std::end(byte_tokens_), -1); }

bool vocab::load_file(const std::string & path, std::string * error) {
    std::unique_ptr<gguf_file> f;
    gguf_result r = gguf_file::open(path, gguf_open_options{}, &f);
    if (!r) return fail(error, "vocab: " + path + ": " + r.message);
    return load(f->metadata(), error);
}

bool vocab::load(const gguf_metadata & md, std::string * error) {
    *this = vocab();
    const gguf_value * model = md.find("tokenizer.ggml.model");
    if (!model) return fail(error, "vocab: tokenizer.ggml.model is missing");
    if (!model->get_string()) return fail(error, "vocab: tokenizer.ggml.model is not a string");
    model_ = *model->get_string();
    if (model_ == "llama") {
        type_ = vocab_type::spm;
        add_bos_ = true;
        add_space_prefix_ = true;
    } else if (model_ == "gpt2") {
        type_ = vocab_type::bpe;
    } else if (model_ == "bert") {
        type_ = vocab_type::wpm;
        add_bos_ = true;  // [CLS]
        add_eos_ = true;  // [SEP]
    } else if (model_ == "no_vocab" || model_ == "none") {
        type_ = vocab_type::none;
        return true;
    } else {
        return fail(error, "vocab: unsupported tokenizer.ggml.model '" + model_ +
                               "' (supported: llama, gpt2, bert)");
    }
    if (const gguf_value * pre = md.find("tokenizer.ggml.pre")) {
        if (!pre->get_string()) return fail(error, "vocab: tokenizer.ggml.pre is not a string");
        pre_ = *pre->get_string();
    }
    if (!load_tokens(md, error)) return false;
    if (type_ == vocab_type::bpe && !load_merges(md, error)) return false;
    if (!load_special_ids(md, error)) return false;
    build_eog();
    build_lookups();
    apply_name_rules(md);
    return true;
}

bool vocab::load_tokens(const gguf_metadata & md, std::string * error) {
    const gguf_value * toks = md.find("tokenizer.ggml.tokens");
    if (!toks) return fail(error, "vocab: tokenizer.ggml.tokens is missing");
    if (!toks->is_array() || toks->array_type() != gguf_value_type::string) {
        return fail(error, "vocab: tokenizer.ggml.tokens is not an array of strings");
    }
    const std::vector<std::string> & texts = toks->array_strings();
    if (texts.empty()) return fail(error, "vocab: tokenizer.ggml.tokens is empty");
    if (texts.size() > (size_t) INT32_MAX) return fail(error, "vocab: too many tokens");
    tokens_.resize(texts.size());
    for (size_t i = 0; i < texts.size(); ++i) tokens_[i].text = texts[i];

    if (const gguf_value * scores = md.find("tokenizer.ggml.scores")) {
        std::vector<float> s;
        if (!scores->array_to_f32(&s)) return fail(error, "vocab: tokenizer.ggml.scores is not a float array");
        if (s.size() != texts.size()) {
            return fail(error, "vocab: tokenizer.ggml.scores has " + std::to_string(s.size()) +
                                   " entries, tokenizer.ggml.tokens " + std::to_string(texts.size()));
        }
        for (size_t i = 0; i < s.size(); ++i) tokens_[i].score = s[i];
    }
    if (const gguf_value * types = md.find("tokenizer.ggml.token_type")) {
        std::vector<int64_t> t;
        if (!types->array_to_i64(&t)) return fail(error, "vocab: tokenizer.ggml.token_type is not an integer array");
        if (t.size() != texts.size()) {
            return fail(error, "vocab: tokenizer.ggml.token_type has " + std::to_string(t.size()) +
                                   " entries, tokenizer.ggml.tokens " + std::to_string(texts.size()));
        }
        for (size_t i = 0; i < t.size(); ++i) {
            if (t[i] < 0 || t[i] > 6) {
                return fail(error, "vocab: tokenizer.ggml.token_type[" + std::to_string(i) +
                                       "] = " + std::to_string(t[i]) + " is not a token type (0..6)");
            }
            tokens_[i].type = (vocab_token_type) t[i];
        }
    }
    text_to_id_.reserve(tokens_.size());
    for (size_t i = 0; i < tokens_.size(); ++i) {
        text_to_id_.emplace(tokens_[i].text, (int32_t) i);  // first occurrence wins on duplicates
    }
    return true;
}

bool vocab::load_merges(const gguf_metadata & md, std::string * error) {
    const gguf_value * merges = md.find("tokenizer.ggml.merges");
    if (!merges) return fail(error, "vocab: tokenizer.ggml.merges is missing (required by gpt2)");
    if (!merges->is_array() || merges->array_type() != gguf_value_type::string) {
        return fail(error, "vocab: tokenizer.ggml.merges is not an array of strings");
    }
    const std::vector<std::string> & list = merges->array_strings();
    merge_ranks_.reserve(list.size());
    for (size_t i = 0; i < list.size(); ++i) {
        const std::string & m = list[i];
        // The separator is the first space after the first character (a token may not be empty).
        const size_t sep = m.empty() ? std::string::npos : m.find(' ', vocab_utf8_len((uint8_t) m[0]));
        if (sep == std::string::npos) {
            return fail(error, "vocab: tokenizer.ggml.merges[" + std::to_string(i) + "] = '" + m +
                                   "' is not two tokens separated by a space");
        }
        const int32_t l = token_id(std::string_view(m).substr(0, sep));
        const int32_t r = token_id(std::string_view(m).substr(sep + 1));
        if (l < 0 || r < 0) {
            return fail(error, "vocab: tokenizer.ggml.merges[" + std::to_string(i) + "] = '" + m +
                                   "' names a token not in the vocabulary");
        }
        merge_ranks_.emplace(pair_key(l, r), (int) i);  // first occurrence keeps the lower rank
    }
    return true;
}

bool vocab::load_special_ids(const gguf_metadata & md, std::string * error) {
    const int32_t n = n_tokens();
    auto id_if_present = [n](int32_t id) { return id < n ? id : -1; };
    if (type_ == vocab_type::spm) {  // SentencePiece defaults
        unk_ = id_if_present(0);
        bos_ = id_if_present(1);
        eos_ = id_if_present(2);
    } else if (type_ == vocab_type::wpm) {  // BERT's
        pad_ = id_if_present(0);
        unk_ = id_if_present(100);
        cls_ = id_if_present(101);
        sep_ = id_if_present(102);
        mask_ = id_if_present(103);
    }
    const bool ok = read_optional_id(md, "tokenizer.ggml.bos_token_id", n, &bos_, error) &&
                    read_optional_id(md, "tokenizer.ggml.eos_token_id", n, &eos_, error) &&
                    read_optional_id(md, "tokenizer.ggml.eot_token_id", n, &eot_, error) &&
                    read_optional_id(md, "tokenizer.ggml.unknown_token_id", n, &unk_, error) &&
                    read_optional_id(md, "tokenizer.ggml.padding_token_id", n, &pad_, error) &&
                    read_optional_id(md, "tokenizer.ggml.seperator_token_id", n, &sep_, error) &&
                    read_optional_id(md, "tokenizer.ggml.separator_token_id", n, &sep_, error) &&
                    read_optional_id(md, "tokenizer.ggml.cls_token_id", n, &cls_, error) &&
                    read_optional_id(md, "tokenizer.ggml.mask_token_id", n, &mask_, error) &&
                    read_optional_bool(md, "tokenizer.ggml.add_bos_token", &add_bos_, error) &&
                    read_optional_bool(md, "tokenizer.ggml.add_eos_token", &add_eos_, error) &&
                    read_optional_bool(md, "tokenizer.ggml.add_space_prefix", &add_space_prefix_, error);
    if (ok && type_ == vocab_type::wpm) {  // [CLS] text [SEP] (see vocab.h)
        // A file that names its [CLS] / [SEP] as bos / eos only.
        if (!md.find("tokenizer.ggml.cls_token_id") && md.find("tokenizer.ggml.bos_token_id")) cls_ = bos_;
        const bool sep_key =
            md.find("tokenizer.ggml.seperator_token_id") || md.find("tokenizer.ggml.separator_token_id");
        if (!sep_key && md.find("tokenizer.ggml.eos_token_id")) sep_ = eos_;
        bos_ = cls_;
        eos_ = sep_;
    }
    return ok;
}

void vocab::build_lookups() {
    char buf[8];
    for (int b = 0; b < 256; ++b) {
        int32_t id = -1;
        if (type_ == vocab_type::spm) {
            std::snprintf(buf, sizeof(buf), "<0x%02X>", b);
            id = token_id(buf);
            if (id < 0 && b < 0x80) id = token_id(std::string(1, (char) b));  // plain 1-byte token
        } else if (type_ == vocab_type::bpe) {
            id = token_id(vocab_byte_to_unicode((uint8_t) b));
        }
        byte_tokens_[b] = id;
    }
    for (int32_t id = 0; id < n_tokens(); ++id) {
        max_token_size_ = std::max(max_token_size_, token_text(id).size());
        const bool matched = is_special(id) || token_type(id) == vocab_token_type::unknown;
        if (matched && !token_text(id).empty()) special_by_length_.push_back(id);
    }
    std::stable_sort(special_by_length_.begin(), special_by_length_.end(), [&](int32_t a, int32_t b) {
        return token_text(a).size() > token_text(b).size();
    });
}

// The end-of-generation set and eot_id (see vocab.h). Every token named by a marker text becomes a
// control token: a marker is never matched in plain text.
void vocab::build_eog() {
    auto make_control = [&](int32_t id) { tokens_[(size_t) id].type = vocab_token_type::control; };
    if (eot_ < 0) {
        for (std::string_view t : k_eot_texts) {
            if (const int32_t id = token_id(t); id >= 0) {
                eot_ = id;
                make_control(id);
                break;
            }
        }
    }
    std::vector<int32_t> eog;
    for (const fim_group & g : k_fim_groups) {
        for (std::string_view t : g.texts) {
            if (const int32_t id = t.empty() ? -1 : token_id(t); id >= 0) {
                make_control(id);
                if (g.eog) eog.push_back(id);
                break;
            }
        }
    }
    for (std::string_view t : k_eog_texts) {
        if (const int32_t id = token_id(t); id >= 0) {
            make_control(id);
            eog.push_back(id);
        }
    }
    if (eos_ >= 0) eog.push_back(eos_);
    if (eot_ >= 0) eog.push_back(eot_);
    // Harmony-style vocabularies (<|return|> and <|call|>, or <|calls|> and <|flush|>) end a
    // message with <|end|> without ending the generation.
    auto present = [&](std::string_view t) { return token_id(t) >= 0; };
    const bool harmony = (present("<|return|>") && present("<|call|>")) ||
                         (present("<|calls|>") && present("<|flush|>"));
    const int32_t end = token_id("<|end|>");
    if (harmony && end >= 0) {
        eog.erase(std::remove(eog.begin(), eog.end(), end), eog.end());
        tokens_[(size_t) end].type = vocab_token_type::user_defined;
    }
    // Gemma 4 (it has <|tool_response>) uses </s> as an ordinary word.
    const int32_t s_end = token_id("</s>");
    if (token_id("<|tool_response>") >= 0 && s_end >= 0) {
        eog.erase(std::remove(eog.begin(), eog.end(), s_end), eog.end());
        tokens_[(size_t) s_end].type = vocab_token_type::normal;
    }
    std::sort(eog.begin(), eog.end());
    eog.erase(std::unique(eog.begin(), eog.end()), eog.end());
    eog_ = std::move(eog);
}

// Phi-3's tokenizer drops the whitespace that follows its special tokens (the rule is keyed on the
// model's name, as the reference engine keys it: nothing else in the file tells).
void vocab::apply_name_rules(const gguf_metadata & md) {
    std::string name;
    if (const gguf_value * v = md.find("general.name"); v && v->get_string()) name = *v->get_string();
    if (!ascii_contains_nocase(name, "phi-3") && !ascii_contains_nocase(name, "phi3")) return;
    for (int32_t id = 0; id < n_tokens(); ++id) {
        const vocab_token_type t = token_type(id);
        const bool special = is_special(id) || t == vocab_token_type::unknown;
        if (special) tokens_[(size_t) id].rstrip = true;
    }
    for (std::string_view t : {"</s>"}) {
        if (const int32_t id = token_id(t); id >= 0) tokens_[(size_t) id].rstrip = true;
    }
    for (std::string_view t : {"<unk>", "<s>", "<|endoftext|>"}) {
        if (const int32_t id = token_id(t); id >= 0) tokens_[(size_t) id].rstrip = false;
    }
}

bool vocab::is_special(int32_t id) const {
    const vocab_token_type t = token_type(id);
    return t == vocab_token_type::control || t == vocab_token_type::user_defined;
}

bool vocab::is_eog(int32_t id) const {
    return id >= 0 && std::binary_search(eog_.begin(), eog_.end(), id);
}

int32_t vocab::token_id(std::string_view text) const {
    auto it = text_to_id_.find(text);
    return it == text_to_id_.end() ? -1 : it->second;
}

int vocab::token_byte(int32_t id) const {
    if (!valid_id(id)) return -1;
    const std::string & t = token_text(id);
    if (type_ == vocab_type::spm) {
        if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
        unsigned v = 0;
        for (int i = 3; i < 5; ++i) {
            const char c = t[(size_t) i];
            v <<= 4;
            if (c >= '0' && c <= '9') v |= (unsigned) (c - '0');
            else if (c >= 'A' && c <= 'F') v |= (unsigned) (c - 'A' + 10);
            else if (c >= 'a' && c <= 'f') v |= (unsigned) (c - 'a' + 10);
            else return -1;
        }
        return (int) v;
    }
    return -1;
}

int vocab::merge_rank(int32_t left, int32_t right) const {
    auto it = merge_ranks_.find(pair_key(left, right));
    return it == merge_ranks_.end() ? -1 : it->second;
}

int vocab::merge_rank(std::string_view left, std::string_view right) const {
    const int32_t l = token_id(left);
    const int32_t r = token_id(right);
    if (l < 0 || r < 0) return -1;
    return merge_rank(l, r);
}
