// inferd-gguf synth: the built-in byte-level BPE vocabulary and the chat templates it can carry.
#include "engine/vocab.h"
#include "gguf-synth.h"

#include <algorithm>
#include <string_view>

namespace {

struct synth_template {
    const char * name;
    const char * jinja;
    std::vector<std::string> tokens;  // control tokens the template writes
};

// Jinja sources in each family's layout; chat_template_detect recognises every one as its family.
const std::vector<synth_template> & synth_templates() {
    static const std::vector<synth_template> table = {
        {"chatml",
         "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
         "'<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
         "{% endif %}",
         {"<|im_start|>", "<|im_end|>"}},
        {"llama2",
         "{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + "
         "' [/INST]' }}{% elif message['role'] == 'system' %}{{ message['content'] + '\\n' }}{% else %}"
         "{{ message['content'] + eos_token }}{% endif %}{% endfor %}",
         {}},
        {"llama3",
         "{% for message in messages %}{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + "
         "message['content'] | trim + '<|eot_id|>' }}{% endfor %}{% if add_generation_prompt %}"
         "{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}",
         {"<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"}},
        {"zephyr",
         "{% for message in messages %}{% if message['role'] == 'user' %}{{ '<|user|>\\n' }}{% elif "
         "message['role'] == 'system' %}{{ '<|system|>\\n' }}{% else %}{{ '<|assistant|>\\n' }}{% endif %}"
         "{{ message['content'] + eos_token + '\\n' }}{% endfor %}{% if add_generation_prompt %}"
         "{{ '<|assistant|>\\n' }}{% endif %}",
         {"<|user|>", "<|assistant|>", "<|system|>"}},
        {"phi3",
         "{% for message in messages %}{% if message['role'] == 'user' %}{{ '<|user|>\\n' }}{% elif "
         "message['role'] == 'system' %}{{ '<|system|>\\n' }}{% else %}{{ '<|assistant|>\\n' }}{% endif %}"
         "{{ message['content'] + '<|end|>\\n' }}{% endfor %}{% if add_generation_prompt %}"
         "{{ '<|assistant|>\\n' }}{% endif %}",
         {"<|user|>", "<|assistant|>", "<|system|>", "<|end|>"}},
        {"gemma",
         "{% for message in messages %}{% set role = 'model' if message['role'] == 'assistant' else "
         "message['role'] %}{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + "
         "'<end_of_turn>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}"
         "{% endif %}",
         {"<start_of_turn>", "<end_of_turn>"}},
    };
    return table;
}

const synth_template * synth_template_find(const std::string & name) {
    const std::string n = name.empty() ? "chatml" : name;
    for (const synth_template & t : synth_templates()) {
        if (n == t.name) return &t;
    }
    return nullptr;
}

constexpr std::string_view k_letters = "etaoinshrdlcumwfgypbvkjxqz";  // English letter frequency
constexpr const char * k_eos_text = "<|endoftext|>";

// Appends merges (and their tokens) until `want` merges exist. Level-k tokens are a level-(k-1)
// token followed by one letter, the level-1 "tokens" being 'Ġ' (the space mark) and the letters;
// pairs are taken diagonal by diagonal so that frequent letters combine first. Every merged
// string has exactly one (left, right) split, so no token text repeats.
void synth_append_merges(size_t want, std::vector<std::string> * tokens, std::vector<std::string> * merges) {
    std::vector<std::string> level = {vocab_byte_to_unicode(uint8_t(' '))};
    for (char c : k_letters) level.emplace_back(1, c);
    while (merges->size() < want) {
        std::vector<std::string> next;
        const size_t a = level.size(), b = k_letters.size();
        for (size_t d = 0; d + 1 < a + b && merges->size() < want; ++d) {
            const size_t i_lo = d >= b ? d - b + 1 : 0;
            for (size_t i = i_lo; i <= std::min(d, a - 1) && merges->size() < want; ++i) {
                const std::string & left = level[i];
                const char right = k_letters[d - i];
                tokens->push_back(left + right);
                merges->push_back(left + " " + right);
                next.push_back(tokens->back());
            }
        }
        level = std::move(next);
    }
}

}  // namespace

std::vector<std::string> synth_chat_template_names() {
    std::vector<std::string> names;
    for (const synth_template & t : synth_templates()) names.emplace_back(t.name);
    return names;
}

bool synth_chat_template(const std::string & name, std::string * jinja, std::vector<std::string> * control_tokens) {
    const synth_template * t = synth_template_find(name);
    if (!t) return false;
    if (jinja) *jinja = t->jinja;
    if (control_tokens) *control_tokens = t->tokens;
    return true;
}

int synth_min_vocab(const std::string & chat_template) {
    const synth_template * t = synth_template_find(chat_template);
    return 256 + 1 + (t ? int(t->tokens.size()) : 0);
}

void synth_vocab_metadata(int n_vocab, const std::string & chat_template, gguf_metadata * md) {
    const synth_template * tmpl = synth_template_find(chat_template);
    std::vector<std::string> specials = {k_eos_text};
    if (tmpl) specials.insert(specials.end(), tmpl->tokens.begin(), tmpl->tokens.end());

    std::vector<std::string> tokens;
    tokens.reserve(size_t(n_vocab));
    for (int b = 0; b < 256; ++b) tokens.push_back(vocab_byte_to_unicode(uint8_t(b)));
    std::vector<std::string> merges;
    const int n_merges = std::max(0, n_vocab - 256 - int(specials.size()));
    synth_append_merges(size_t(n_merges), &tokens, &merges);
    const int32_t eos = int32_t(tokens.size());
    tokens.insert(tokens.end(), specials.begin(), specials.end());

    std::vector<int32_t> types(tokens.size(), int32_t(vocab_token_type::normal));
    for (size_t i = size_t(eos); i < types.size(); ++i) types[i] = int32_t(vocab_token_type::control);

    md->set("tokenizer.ggml.model", gguf_value::from_string("gpt2"));
    md->set("tokenizer.ggml.pre", gguf_value::from_string("gpt-2"));
    md->set("tokenizer.ggml.tokens", gguf_value::from_array_strings(std::move(tokens)));
    md->set("tokenizer.ggml.token_type", gguf_value::from_array_i32(types));
    md->set("tokenizer.ggml.merges", gguf_value::from_array_strings(std::move(merges)));
    md->set("tokenizer.ggml.bos_token_id", gguf_value::from_u32(uint32_t(eos)));
    md->set("tokenizer.ggml.eos_token_id", gguf_value::from_u32(uint32_t(eos)));
    md->set("tokenizer.ggml.add_bos_token", gguf_value::from_bool(false));
    if (tmpl) md->set("tokenizer.chat_template", gguf_value::from_string(tmpl->jinja));
}
