// registry.cpp — the families by name, their reasoning markers, their machines, and which family a
// chat template writes.
#include "engine.h"

#include <array>

namespace toolcall {

namespace {

struct family_entry {
    family f;
    std::string_view name;
};

constexpr std::array<family_entry, 25> entries = {{
    {family::none, "none"},
    {family::generic, "generic"},
    {family::apriel, "apriel"},
    {family::command_r_plus, "command-r-plus"},
    {family::command_r7b, "command-r7b"},
    {family::deepseek_dsml, "deepseek-dsml"},
    {family::deepseek_r1, "deepseek-r1"},
    {family::deepseek_v3_1, "deepseek-v3.1"},
    {family::firefunction, "firefunction"},
    {family::functionary_v3_1, "functionary-v3.1"},
    {family::gemma4, "gemma4"},
    {family::gigachat, "gigachat"},
    {family::glm, "glm"},
    {family::gpt_oss_harmony, "gpt-oss-harmony"},
    {family::hermes, "hermes"},
    {family::kimi, "kimi"},
    {family::lfm_pythonic, "lfm-pythonic"},
    {family::llama3_json, "llama3-json"},
    {family::minicpm_xml, "minicpm-xml"},
    {family::minimax_xml, "minimax-xml"},
    {family::mistral, "mistral"},
    {family::nemotron_toolcall, "nemotron-toolcall"},
    {family::qwen3_coder_xml, "qwen3-coder-xml"},
    {family::seed_oss, "seed-oss"},
    {family::solar, "solar"},
}};

bool has(std::string_view text, std::string_view what) { return text.find(what) != std::string_view::npos; }

// Whether the template pipes the arguments of a call through tojson (`['arguments'] | tojson`).
bool arguments_through_tojson(std::string_view src) {
    for (size_t p = src.find("['arguments']"); p != std::string_view::npos; p = src.find("['arguments']", p + 1)) {
        size_t q = p + 13;
        while (q < src.size() && src[q] == ' ') ++q;
        if (q < src.size() && src[q] == '|') {
            ++q;
            while (q < src.size() && src[q] == ' ') ++q;
            if (src.substr(q, 6) == "tojson") return true;
        }
    }
    return false;
}

// Families whose markers are unique to them, most specific first.
family detect_by_marker(std::string_view src) {
    if (has(src, "<|channel|>") && has(src, "<|message|>")) return family::gpt_oss_harmony;
    if (has(src, "｜DSML｜")) return family::deepseek_dsml;
    if (has(src, "<seed:tool_call>")) return family::seed_oss;
    if (has(src, "<minimax:tool_call>")) return family::minimax_xml;
    if (has(src, "<arg_key>")) return family::glm;
    if (has(src, "<|tool_calls_section_begin|>")) return family::kimi;
    if (has(src, "<|tool_call>")) return family::gemma4;
    if (has(src, "<|tool_call_start|>")) return family::lfm_pythonic;
    if (has(src, "<|tool_call:begin|>")) return family::solar;
    if (has(src, "<|START_ACTION|>")) return family::command_r7b;
    if (has(src, "Action:") && has(src, "```json") && has(src, "tool_name")) return family::command_r_plus;
    if (has(src, "[TOOL_CALLS]")) return family::mistral;
    if (has(src, "functools")) return family::firefunction;
    if (has(src, "<TOOLCALL>")) return family::nemotron_toolcall;
    if (has(src, "<tool_calls>")) return family::apriel;
    if (has(src, "function call") && has(src, "<|role_sep|>")) return family::gigachat;
    if (has(src, "<function name=") && has(src, "<param name=")) return family::minicpm_xml;
    return family::none;
}

}  // namespace

const std::vector<family> & all_families() {
    static const std::vector<family> list = [] {
        std::vector<family> v;
        for (const auto & e : entries) v.push_back(e.f);
        return v;
    }();
    return list;
}

std::string_view family_name(family f) {
    for (const auto & e : entries) {
        if (e.f == f) return e.name;
    }
    return "none";
}

std::optional<family> family_from_name(std::string_view name) {
    for (const auto & e : entries) {
        if (e.name == name) return e.f;
    }
    return std::nullopt;
}

family detect_family(std::string_view src) {
    // A template that never reads an assistant message's tool_calls cannot render them.
    if (!has(src, "tool_calls")) return family::none;
    family f = detect_by_marker(src);
    if (f != family::none) return f;
    if (has(src, "<｜tool▁calls▁begin｜>")) {
        if (!has(src, "```json")) return family::deepseek_v3_1;
        // R1's form; a variant that concatenates the arguments without tojson cannot render
        // object arguments (DeepSeek-R1-Distill-Llama-8B's).
        return arguments_through_tojson(src) ? family::deepseek_r1 : family::none;
    }
    if (has(src, "<function=")) {
        if (has(src, "<parameter=")) return family::qwen3_coder_xml;
        return family::functionary_v3_1;
    }
    if (has(src, "<tool_call>")) return family::hermes;
    if (has(src, "<|python_tag|>") || (has(src, "\"parameters\": ") && has(src, "<|start_header_id|>"))) {
        return family::llama3_json;
    }
    return family::none;
}

namespace detail {

std::vector<reasoning_style> family_reasoning(family f) {
    const reasoning_style think = {"<think>", "</think>"};
    switch (f) {
        case family::gpt_oss_harmony: return {};
        case family::seed_oss: return {{"<seed:think>", "</seed:think>"}, think};
        case family::command_r7b: return {{"<|START_THINKING|>", "<|END_THINKING|>"}, think};
        case family::gemma4: return {{"<|channel>thought", "<channel|>"}, think};
        case family::mistral: return {{"[THINK]", "[/THINK]"}, think};
        case family::apriel: return {{"<thinking>", "</thinking>"}, think};
        case family::solar: return {{"<|think|>", "<|end|>"}, think};
        default: return {think};
    }
}

std::unique_ptr<machine> make_machine(family f) {
    if (f == family::gpt_oss_harmony) return make_harmony_machine();
    if (auto m = make_json_family(f)) return m;
    if (auto m = make_token_family(f)) return m;
    if (auto m = make_xml_family(f)) return m;
    if (auto m = make_call_syntax_family(f)) return m;
    return make_json_family(family::none);
}

}  // namespace detail

bool prompt_opens_reasoning(family f, std::string_view prompt) {
    std::string_view end = detail::trim(prompt);
    for (const auto & style : detail::family_reasoning(f)) {
        if (end.size() >= style.open.size() && end.substr(end.size() - style.open.size()) == style.open) return true;
    }
    return false;
}

}  // namespace toolcall
