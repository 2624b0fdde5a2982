// chat-template.cpp — chat template families: recognition from Jinja sources, names, stop texts.
// The rendering itself is in chat-template-render.cpp.
#include "engine/chat-template.h"
#include "engine/utf8-stream.h"

#include <array>
#include <initializer_list>

namespace {

struct chat_template_entry {
    chat_template_kind kind;
    std::string_view name;
};

// Canonical names, in declaration order of chat_template_kind.
constexpr std::array<chat_template_entry, 19> chat_template_table = {{
    {chat_template_kind::chatml, "chatml"},
    {chat_template_kind::qwen3, "qwen3"},
    {chat_template_kind::llama2, "llama2"},
    {chat_template_kind::llama2_sys, "llama2-sys"},
    {chat_template_kind::llama2_sys_bos, "llama2-sys-bos"},
    {chat_template_kind::llama2_sys_strip, "llama2-sys-strip"},
    {chat_template_kind::mistral_v1, "mistral-v1"},
    {chat_template_kind::mistral_v3, "mistral-v3"},
    {chat_template_kind::mistral_v3_tekken, "mistral-v3-tekken"},
    {chat_template_kind::mistral_v7, "mistral-v7"},
    {chat_template_kind::mistral_v7_tekken, "mistral-v7-tekken"},
    {chat_template_kind::llama3, "llama3"},
    {chat_template_kind::zephyr, "zephyr"},
    {chat_template_kind::phi3, "phi3"},
    {chat_template_kind::phi4, "phi4"},
    {chat_template_kind::gemma, "gemma"},
    {chat_template_kind::command_r, "command-r"},
    {chat_template_kind::vicuna, "vicuna"},
    {chat_template_kind::vicuna_orca, "vicuna-orca"},
}};

bool contains(std::string_view s, std::string_view what) { return s.find(what) != std::string_view::npos; }

bool contains_any(std::string_view s, std::initializer_list<std::string_view> whats) {
    for (std::string_view w : whats) {
        if (contains(s, w)) return true;
    }
    return false;
}

// The [INST] families. Jinja string literals may use either quote, so each spacing pattern is
// looked for with both: `' [INST]` (a space before [INST] inside the literal) is Mistral's v1
// layout, `'[/INST]` (no space before [/INST]) with `[INST] '` is v3, with `'[INST]'` it is
// v3-tekken; `[INST] ` … ` [/INST]` without <<SYS>> is the Llama 2 layout that Mistral
// Instruct v0.1/v0.2 ship.
chat_template_kind chat_template_detect_inst(std::string_view j) {
    if (contains(j, "[SYSTEM_PROMPT]")) {
        const bool spaced = contains_any(j, {"[SYSTEM_PROMPT] ", "[INST] "});
        return spaced ? chat_template_kind::mistral_v7 : chat_template_kind::mistral_v7_tekken;
    }
    if (contains(j, "<<SYS>>")) {
        // Meta's Llama 2 template both strips and writes BOS per turn: the BOS wins, as the
        // model was trained with one before every [INST].
        if (contains_any(j, {"bos_token + '[INST]", "bos_token + \"[INST]", "bos_token+'[INST]",
                             "bos_token+\"[INST]"})) {
            return chat_template_kind::llama2_sys_bos;
        }
        if (contains_any(j, {".strip()", "|trim", "| trim"})) return chat_template_kind::llama2_sys_strip;
        return chat_template_kind::llama2_sys;
    }
    if (contains_any(j, {"' [INST]", "\" [INST]"})) return chat_template_kind::mistral_v1;
    if (contains_any(j, {"'[/INST]", "\"[/INST]"})) {
        if (contains_any(j, {"[INST] '", "[INST] \""})) return chat_template_kind::mistral_v3;
        return chat_template_kind::mistral_v3_tekken;
    }
    return chat_template_kind::llama2;
}

}  // namespace

std::optional<chat_template_kind> chat_template_detect(std::string_view j) {
    if (contains(j, "<|im_start|>")) {
        if (contains(j, "<|im_sep|>")) return chat_template_kind::phi4;
        // Qwen3's template finds the last user query to decide which replies keep their <think>
        // block (Qwen2.5's and Qwen3-Coder's do neither).
        if (contains(j, "last_query_index") && contains(j, "<think>")) return chat_template_kind::qwen3;
        return chat_template_kind::chatml;
    }
    if (contains_any(j, {"[INST]", "[SYSTEM_PROMPT]"})) return chat_template_detect_inst(j);
    if (contains(j, "<|start_header_id|>") && contains(j, "<|end_header_id|>")) {
        return chat_template_kind::llama3;
    }
    if (contains(j, "<start_of_turn>")) return chat_template_kind::gemma;
    if (contains(j, "<|START_OF_TURN_TOKEN|>")) return chat_template_kind::command_r;
    if (contains(j, "<|assistant|>") && contains(j, "<|end|>")) return chat_template_kind::phi3;
    if (contains(j, "<|user|>") && contains(j, "<|assistant|>")) return chat_template_kind::zephyr;
    if (contains(j, "USER: ") && contains(j, "ASSISTANT: ")) {
        return contains(j, "SYSTEM: ") ? chat_template_kind::vicuna_orca : chat_template_kind::vicuna;
    }
    return std::nullopt;
}

std::optional<chat_template_kind> chat_template_from_name(std::string_view name) {
    for (const chat_template_entry & e : chat_template_table) {
        if (e.name == name) return e.kind;
    }
    if (name == "mistral") return chat_template_kind::llama2;
    return std::nullopt;
}

std::optional<chat_template_kind> chat_template_resolve(std::string_view requested,
                                                        std::string_view model_jinja,
                                                        std::string * note, std::string * error) {
    if (note) note->clear();
    if (!requested.empty()) {
        std::optional<chat_template_kind> k = chat_template_from_name(requested);
        if (!k) k = chat_template_detect(requested);
        if (!k && error) {
            const std::string_view head = requested.substr(0, 64);  // whole characters only
            error->assign("unknown chat template '").append(head.substr(0, utf8_valid_prefix_len(head)));
            error->append(requested.size() > 64 ? "…" : "").append("': expected one of");
            for (std::string_view n : chat_template_names()) error->append(" ").append(n);
            error->append(", or a Jinja template of one of these families");
        }
        return k;
    }
    if (std::optional<chat_template_kind> k = chat_template_detect(model_jinja)) return k;
    if (note) {
        *note = model_jinja.empty() ? "the model has no chat template: using chatml"
                                    : "the model's chat template is not recognised: using chatml";
    }
    return chat_template_kind::chatml;
}

std::string_view chat_template_name(chat_template_kind kind) {
    for (const chat_template_entry & e : chat_template_table) {
        if (e.kind == kind) return e.name;
    }
    return "unknown";
}

std::vector<std::string_view> chat_template_names() {
    std::vector<std::string_view> names;
    names.reserve(chat_template_table.size());
    for (const chat_template_entry & e : chat_template_table) names.push_back(e.name);
    return names;
}

std::vector<std::string_view> chat_template_stop_texts(chat_template_kind kind) {
    switch (kind) {
        case chat_template_kind::chatml:
        case chat_template_kind::qwen3: return {"<|im_end|>"};
        case chat_template_kind::phi4: return {"<|im_end|>"};
        case chat_template_kind::llama3: return {"<|eot_id|>"};
        case chat_template_kind::phi3: return {"<|end|>"};
        case chat_template_kind::gemma: return {"<end_of_turn>"};
        case chat_template_kind::command_r: return {"<|END_OF_TURN_TOKEN|>"};
        case chat_template_kind::vicuna:
        case chat_template_kind::vicuna_orca: return {"</s>"};
        case chat_template_kind::llama2:
        case chat_template_kind::llama2_sys:
        case chat_template_kind::llama2_sys_bos:
        case chat_template_kind::llama2_sys_strip:
        case chat_template_kind::mistral_v1:
        case chat_template_kind::mistral_v3:
        case chat_template_kind::mistral_v3_tekken:
        case chat_template_kind::mistral_v7:
        case chat_template_kind::mistral_v7_tekken:
        case chat_template_kind::zephyr: return {};
    }
    return {};
}
