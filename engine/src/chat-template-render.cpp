// chat-template-render.cpp — renders chat messages in each family's format (see
// engine/chat-template.h for the BOS/EOS conventions). Every layout below is written from the
// family's official Jinja template; where that template rejects a message (a system message for
// Mistral v0.1/v0.2's llama2 layout) it follows llama-server's choice.
#include "engine/chat-template.h"

#include <initializer_list>
#include <optional>

namespace {

enum class chat_role { system, user, assistant };

struct chat_render_args {
    std::span<const chat_message> msgs;
    const std::vector<chat_role> & roles;  // parallel to msgs
    bool add_generation_prompt;
    std::string_view bos;
    std::string_view eos;
    std::optional<bool> enable_thinking;
    std::string & out;
};

bool chat_roles_parse(std::span<const chat_message> msgs, std::vector<chat_role> * roles,
                      std::string * error) {
    roles->clear();
    roles->reserve(msgs.size());
    for (size_t i = 0; i < msgs.size(); ++i) {
        const std::string & r = msgs[i].role;
        if (r == "system") {
            roles->push_back(chat_role::system);
        } else if (r == "user") {
            roles->push_back(chat_role::user);
        } else if (r == "assistant") {
            roles->push_back(chat_role::assistant);
        } else {
            if (error) {
                *error = "chat message " + std::to_string(i) + ": unknown role '" + r +
                         "' (expected system, user or assistant)";
            }
            return false;
        }
    }
    return true;
}

// Jinja's trim / Python's strip() on ASCII whitespace.
std::string_view chat_trim(std::string_view s) {
    constexpr std::string_view ws = " \t\n\r\f\v";
    const size_t b = s.find_first_not_of(ws);
    if (b == std::string_view::npos) return {};
    const size_t e = s.find_last_not_of(ws);
    return s.substr(b, e - b + 1);
}

void chat_append(std::string & out, std::initializer_list<std::string_view> parts) {
    for (std::string_view p : parts) out.append(p);
}

// Python's str.lstrip('\n') / rstrip('\n') / strip('\n').
std::string_view chat_lstrip_nl(std::string_view s) {
    const size_t b = s.find_first_not_of('\n');
    return b == std::string_view::npos ? std::string_view() : s.substr(b);
}
std::string_view chat_rstrip_nl(std::string_view s) {
    const size_t e = s.find_last_not_of('\n');
    return e == std::string_view::npos ? std::string_view() : s.substr(0, e + 1);
}

// <|im_start|>role\ncontent<|im_end|>\n
void chat_render_chatml(const chat_render_args & a) {
    for (const chat_message & m : a.msgs) {
        chat_append(a.out, {"<|im_start|>", m.role, "\n", m.content, "<|im_end|>\n"});
    }
    if (a.add_generation_prompt) a.out += "<|im_start|>assistant\n";
}

// An assistant message split as Qwen3's template splits it: reasoning_content when given;
// otherwise, when the content holds "</think>", the answer is what follows the last "</think>"
// (leading newlines dropped) and the reasoning what lies between the last "<think>" before the
// first "</think>" and that "</think>" (surrounding newlines dropped).
struct qwen3_reply {
    std::string_view reasoning;
    std::string_view answer;
};

qwen3_reply qwen3_split(const chat_message & m) {
    const std::string_view c = m.content;
    if (!m.reasoning_content.empty()) return {m.reasoning_content, c};
    constexpr std::string_view open = "<think>", close = "</think>";
    const size_t first_close = c.find(close);
    if (first_close == std::string_view::npos) return {{}, c};
    const std::string_view answer = chat_lstrip_nl(c.substr(c.rfind(close) + close.size()));
    std::string_view reasoning = chat_rstrip_nl(c.substr(0, first_close));
    if (const size_t o = reasoning.rfind(open); o != std::string_view::npos) {
        reasoning = reasoning.substr(o + open.size());
    }
    return {chat_lstrip_nl(reasoning), answer};
}

// Qwen3: ChatML; a reply after the last user message carries its reasoning block (the final
// message always, an empty block when it has none); earlier replies show their answer alone.
void chat_render_qwen3(const chat_render_args & a) {
    const size_t n = a.msgs.size();
    size_t last_query = n == 0 ? 0 : n - 1;  // no user message: no reply counts as after one
    for (size_t i = n; i-- > 0;) {
        const std::string_view c = a.msgs[i].content;
        const bool tool_response = c.starts_with("<tool_response>") && c.ends_with("</tool_response>");
        if (a.roles[i] == chat_role::user && !tool_response) {
            last_query = i;
            break;
        }
    }
    for (size_t i = 0; i < n; ++i) {
        const chat_message & m = a.msgs[i];
        if (a.roles[i] != chat_role::assistant) {
            chat_append(a.out, {"<|im_start|>", m.role, "\n", m.content, "<|im_end|>\n"});
            continue;
        }
        const qwen3_reply r = qwen3_split(m);
        a.out += "<|im_start|>assistant\n";
        if (i > last_query && (i + 1 == n || !r.reasoning.empty())) {
            chat_append(a.out, {"<think>\n", chat_rstrip_nl(chat_lstrip_nl(r.reasoning)), "\n</think>\n\n",
                                chat_lstrip_nl(r.answer)});
        } else {
            a.out += r.answer;
        }
        a.out += "<|im_end|>\n";
    }
    if (a.add_generation_prompt) {
        a.out += "<|im_start|>assistant\n";
        if (a.enable_thinking == false) a.out += "<think>\n\n</think>\n\n";
    }
}

// Llama 2 and its variants. A turn opens with "[INST] " (after the first, with BOS in front for
// llama2-sys-bos), holds an optional system block and the user text, and ends at the assistant
// reply. The user text's " [/INST]" is already the generation cue.
void chat_render_llama2(const chat_render_args & a, chat_template_kind kind) {
    const bool sys_block = kind != chat_template_kind::llama2;
    const bool bos_inside = kind == chat_template_kind::llama2_sys_bos;
    const bool strip = kind == chat_template_kind::llama2_sys_strip;
    bool in_turn = false;
    bool first_turn = true;
    for (size_t i = 0; i < a.msgs.size(); ++i) {
        const std::string_view c = strip ? chat_trim(a.msgs[i].content) : a.msgs[i].content;
        if (!in_turn) {
            if (!first_turn && bos_inside) a.out.append(a.bos);
            a.out += "[INST] ";
            in_turn = true;
            first_turn = false;
        }
        switch (a.roles[i]) {
            case chat_role::system:
                if (sys_block) {
                    chat_append(a.out, {"<<SYS>>\n", c, "\n<</SYS>>\n\n"});
                } else {
                    chat_append(a.out, {c, "\n"});
                }
                break;
            case chat_role::user: chat_append(a.out, {c, " [/INST]"}); break;
            case chat_role::assistant:
                if (sys_block) {
                    chat_append(a.out, {" ", c, " ", a.eos});
                } else {
                    chat_append(a.out, {c, a.eos});
                }
                in_turn = false;
                break;
        }
    }
}

// Mistral v1 / v3 / v3-tekken, as mistral-common renders them: "[INST]" with the version's
// spacing, the assistant reply after "[/INST]" followed by EOS. There is no system block: the
// system text and "\n\n" open a user message, the first one for v1 and the last one for v3 and
// v3-tekken (their official templates put it in the final user turn).
bool chat_render_mistral(const chat_render_args & a, chat_template_kind kind, std::string * error) {
    const bool v1 = kind == chat_template_kind::mistral_v1;
    const std::string_view lead = v1 ? " " : "";
    const std::string_view trail = kind == chat_template_kind::mistral_v3_tekken ? "" : " ";
    const bool trim_assistant = kind == chat_template_kind::mistral_v3;
    std::string system_text;
    size_t system_target = a.msgs.size();  // the user message that carries the system text
    for (size_t i = 0; i < a.msgs.size(); ++i) {
        if (a.roles[i] == chat_role::system) {
            if (!system_text.empty()) system_text += "\n\n";
            system_text += a.msgs[i].content;
        } else if (a.roles[i] == chat_role::user && (!v1 || system_target == a.msgs.size())) {
            system_target = i;
        }
    }
    if (!system_text.empty() && system_target == a.msgs.size()) {
        if (error) {
            *error = std::string(chat_template_name(kind)) +
                     " has no system role, and no user message carries the system text";
        }
        return false;
    }
    for (size_t i = 0; i < a.msgs.size(); ++i) {
        const std::string_view c = a.msgs[i].content;
        switch (a.roles[i]) {
            case chat_role::system: break;
            case chat_role::user:
                chat_append(a.out, {lead, "[INST]", trail});
                if (i == system_target && !system_text.empty()) chat_append(a.out, {system_text, "\n\n"});
                chat_append(a.out, {c, lead, "[/INST]"});
                break;
            case chat_role::assistant:
                chat_append(a.out, {trail, trim_assistant ? chat_trim(c) : c, a.eos});
                break;
        }
    }
    return true;
}

// Mistral v7 (Large 2411) and v7-tekken (Small 3): a real system block.
void chat_render_mistral_v7(const chat_render_args & a, bool tekken) {
    const std::string_view sp = tekken ? "" : " ";
    for (size_t i = 0; i < a.msgs.size(); ++i) {
        const std::string_view c = a.msgs[i].content;
        switch (a.roles[i]) {
            case chat_role::system: chat_append(a.out, {"[SYSTEM_PROMPT]", sp, c, "[/SYSTEM_PROMPT]"}); break;
            case chat_role::user: chat_append(a.out, {"[INST]", sp, c, "[/INST]"}); break;
            case chat_role::assistant: chat_append(a.out, {sp, c, a.eos}); break;
        }
    }
}

void chat_render_llama3(const chat_render_args & a) {
    for (const chat_message & m : a.msgs) {
        chat_append(a.out, {"<|start_header_id|>", m.role, "<|end_header_id|>\n\n", chat_trim(m.content),
                            "<|eot_id|>"});
    }
    if (a.add_generation_prompt) a.out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
}

// Zephyr (<|role|>\ncontent EOS \n).
void chat_render_zephyr(const chat_render_args & a) {
    for (const chat_message & m : a.msgs) {
        chat_append(a.out, {"<|", m.role, "|>\n", m.content, a.eos, "\n"});
    }
    if (a.add_generation_prompt) a.out += "<|assistant|>\n";
}

// Phi-3 (<|role|>\ncontent<|end|>\n), as Phi-3.5's template writes it: a system message with no
// content is left out, and without the generation prompt EOS closes the text.
void chat_render_phi3(const chat_render_args & a) {
    for (size_t i = 0; i < a.msgs.size(); ++i) {
        const chat_message & m = a.msgs[i];
        if (a.roles[i] == chat_role::system && m.content.empty()) continue;
        chat_append(a.out, {"<|", m.role, "|>\n", m.content, "<|end|>\n"});
    }
    a.out += a.add_generation_prompt ? std::string_view("<|assistant|>\n") : a.eos;
}

void chat_render_phi4(const chat_render_args & a) {
    for (const chat_message & m : a.msgs) {
        chat_append(a.out, {"<|im_start|>", m.role, "<|im_sep|>", m.content, "<|im_end|>"});
    }
    if (a.add_generation_prompt) a.out += "<|im_start|>assistant<|im_sep|>";
}

// Gemma has no system role: the system text (as given) and "\n\n" open the next user turn, whose
// own text is trimmed, as Gemma 3's official template does. A system message that no user message
// follows cannot be expressed.
bool chat_render_gemma(const chat_render_args & a, std::string * error) {
    std::string system_text;
    for (size_t i = 0; i < a.msgs.size(); ++i) {
        const std::string_view c = chat_trim(a.msgs[i].content);
        switch (a.roles[i]) {
            case chat_role::system:
                if (!system_text.empty()) system_text += "\n\n";
                system_text.append(a.msgs[i].content);
                continue;
            case chat_role::user:
                a.out += "<start_of_turn>user\n";
                if (!system_text.empty()) chat_append(a.out, {system_text, "\n\n"});
                system_text.clear();
                break;
            case chat_role::assistant:
                if (!system_text.empty()) {
                    if (error) {
                        *error = "chat message " + std::to_string(i) +
                                 ": gemma has no system role, and no user turn follows the system "
                                 "message to carry it";
                    }
                    return false;
                }
                a.out += "<start_of_turn>model\n";
                break;
        }
        chat_append(a.out, {c, "<end_of_turn>\n"});
    }
    if (!system_text.empty()) {
        if (error) *error = "gemma has no system role, and no user message follows the system message";
        return false;
    }
    if (a.add_generation_prompt) a.out += "<start_of_turn>model\n";
    return true;
}

// Command R: the system text as written, user and assistant texts trimmed.
void chat_render_command_r(const chat_render_args & a) {
    for (size_t i = 0; i < a.msgs.size(); ++i) {
        const std::string_view c = a.msgs[i].content;
        a.out += "<|START_OF_TURN_TOKEN|>";
        switch (a.roles[i]) {
            case chat_role::system: chat_append(a.out, {"<|SYSTEM_TOKEN|>", c}); break;
            case chat_role::user: chat_append(a.out, {"<|USER_TOKEN|>", chat_trim(c)}); break;
            case chat_role::assistant: chat_append(a.out, {"<|CHATBOT_TOKEN|>", chat_trim(c)}); break;
        }
        a.out += "<|END_OF_TURN_TOKEN|>";
    }
    if (a.add_generation_prompt) a.out += "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>";
}

void chat_render_vicuna(const chat_render_args & a, bool orca) {
    for (size_t i = 0; i < a.msgs.size(); ++i) {
        const std::string_view c = a.msgs[i].content;
        switch (a.roles[i]) {
            case chat_role::system:
                chat_append(a.out, orca ? std::initializer_list<std::string_view>{"SYSTEM: ", c, "\n"}
                                        : std::initializer_list<std::string_view>{c, "\n\n"});
                break;
            case chat_role::user: chat_append(a.out, {"USER: ", c, "\n"}); break;
            case chat_role::assistant: chat_append(a.out, {"ASSISTANT: ", c, "</s>\n"}); break;
        }
    }
    if (a.add_generation_prompt) a.out += "ASSISTANT:";
}

}  // namespace

bool chat_template_apply(chat_template_kind kind, std::span<const chat_message> msgs,
                         bool add_generation_prompt, std::string_view bos, std::string_view eos,
                         std::string * out, std::string * error) {
    chat_template_options o;
    o.add_generation_prompt = add_generation_prompt;
    o.bos = bos;
    o.eos = eos;
    return chat_template_apply(kind, msgs, o, out, error);
}

bool chat_template_apply(chat_template_kind kind, std::span<const chat_message> msgs,
                         const chat_template_options & opts, std::string * out, std::string * error) {
    if (out == nullptr) {
        if (error) *error = "chat_template_apply: no output string";
        return false;
    }
    std::vector<chat_role> roles;
    if (!chat_roles_parse(msgs, &roles, error)) return false;
    out->clear();
    const chat_render_args a{msgs, roles, opts.add_generation_prompt, opts.bos, opts.eos, opts.enable_thinking, *out};
    switch (kind) {
        case chat_template_kind::chatml: chat_render_chatml(a); return true;
        case chat_template_kind::qwen3: chat_render_qwen3(a); return true;
        case chat_template_kind::llama2:
        case chat_template_kind::llama2_sys:
        case chat_template_kind::llama2_sys_bos:
        case chat_template_kind::llama2_sys_strip: chat_render_llama2(a, kind); return true;
        case chat_template_kind::mistral_v1:
        case chat_template_kind::mistral_v3:
        case chat_template_kind::mistral_v3_tekken: return chat_render_mistral(a, kind, error);
        case chat_template_kind::mistral_v7: chat_render_mistral_v7(a, false); return true;
        case chat_template_kind::mistral_v7_tekken: chat_render_mistral_v7(a, true); return true;
        case chat_template_kind::llama3: chat_render_llama3(a); return true;
        case chat_template_kind::zephyr: chat_render_zephyr(a); return true;
        case chat_template_kind::phi3: chat_render_phi3(a); return true;
        case chat_template_kind::phi4: chat_render_phi4(a); return true;
        case chat_template_kind::gemma: return chat_render_gemma(a, error);
        case chat_template_kind::command_r: chat_render_command_r(a); return true;
        case chat_template_kind::vicuna: chat_render_vicuna(a, false); return true;
        case chat_template_kind::vicuna_orca: chat_render_vicuna(a, true); return true;
    }
    if (error) *error = "unknown chat template kind";
    return false;
}
