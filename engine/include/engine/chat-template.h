// engine/chat-template.h — chat prompt formats of the common model families.
//
// GGUF models carry a Jinja template in `tokenizer.chat_template`. inferd does not run Jinja: it
// recognises the family from distinctive substrings of the template and renders the messages
// with its own code for that family.
//
// Usage:
//   std::string jinja, prompt, err;                      // jinja: "" when the key is absent
//   md.get_string("tokenizer.chat_template", &jinja);
//   chat_template_kind kind = chat_template_detect(jinja).value_or(chat_template_kind::chatml);
//   // or, from --chat-template NAME:
//   std::optional<chat_template_kind> k = chat_template_from_name("llama3");   // nullopt: unknown
//   // or both at once (a name or a Jinja source from the command line, else the model's):
//   std::string note;
//   k = chat_template_resolve(flag_value, jinja, &note, &err);   // nullopt: bad flag value
//   std::vector<chat_message> msgs = {{"system", "Be brief."}, {"user", "Hi"}};
//   std::string bos = v.valid_id(v.bos_id()) ? v.token_text(v.bos_id()) : "";   // vocab.h
//   std::string eos = v.valid_id(v.eos_id()) ? v.token_text(v.eos_id()) : "";
//   if (!chat_template_apply(kind, msgs, /*add_generation_prompt=*/true, bos, eos, &prompt, &err)) {
//       fprintf(stderr, "%s\n", err.c_str());      // unknown role, inexpressible sequence
//   }
//   // or with the template variables a family reads (Qwen3's enable_thinking):
//   chat_template_options o; o.bos = bos; o.eos = eos; o.enable_thinking = false;
//   chat_template_apply(kind, msgs, o, &prompt, &err);
//   // Tokenize with add_special = true (the vocabulary's add_bos adds BOS) and
//   // parse_special = true (so "<|im_start|>", "</s>" … become their control tokens).
//
// BOS: the rendered text never starts with the BOS text, even where the official template
// writes `{{ bos_token }}` first (llama2, mistral, llama3, gemma, Phi-3-mini): the engine's
// tokenizer adds BOS itself when the vocabulary says add_bos, and writing it as text too would
// double it.
// BOS texts in the middle of a conversation (llama2-sys-bos: `</s><s>[INST]`) are written, from
// the `bos` argument, and become BOS tokens through special-token parsing. EOS texts that a family
// writes after a turn (llama2 / mistral `</s>`, zephyr) come from the `eos` argument (vicuna
// writes its template's literal `</s>`).
//
// Without the generation prompt the text ends right after the last message, except for phi3,
// whose template (Phi-3.5) then writes EOS. Families whose user turn already ends with the
// assistant's cue (llama2 and mistral: `[/INST]`) add nothing for the prompt.
//
// Roles: "system", "user" and "assistant" in any order (families are lenient about alternation,
// as llama-server is). A system message is rendered where it stands, in the family's system form;
// gemma and mistral v1/v3 have none and move the text into a user message (see
// chat_template_kind). Contents are trimmed (ASCII whitespace) only where the official template
// trims them: llama3, gemma user/assistant, command-r user/assistant, mistral-v3 assistant,
// llama2-sys-strip.
//
// Reasoning: qwen3 shows an assistant message's reasoning (reasoning_content, or the text
// between <think> and </think> at the start of its content) only for replies after the last user
// message, as <think>\nreasoning\n</think>\n\n before the answer (an empty block for the final
// message when it has none); earlier replies show their answer alone. Other families ignore
// reasoning_content and render the content as given.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

struct chat_message {
    std::string role;     // "system", "user" or "assistant"
    std::string content;
    std::string reasoning_content = {};  // assistant messages: the reasoning ("" when none)
};

// The variables a template reads besides the messages.
struct chat_template_options {
    bool add_generation_prompt = true;
    std::string_view bos;  // the vocabulary's token texts (see above)
    std::string_view eos;
    // Qwen3: false closes the reasoning block in the generation prompt (<think>\n\n</think>\n\n),
    // so the model answers without thinking; unset or true leaves it to the model.
    std::optional<bool> enable_thinking;
};

enum class chat_template_kind {
    chatml,             // <|im_start|>role\ncontent<|im_end|>\n  (Qwen2.5, OpenHermes, …)
    qwen3,              // ChatML with <think> reasoning blocks (see above) and enable_thinking
    llama2,             // [INST] u [/INST]a</s>[INST] …; system as "text\n" inside [INST] (Mistral
                        //   Instruct v0.1/v0.2 Hugging Face templates; the name "mistral" too)
    llama2_sys,         // [INST] <<SYS>>\ns\n<</SYS>>\n\nu [/INST] a </s>[INST] …
    llama2_sys_bos,     // as llama2_sys with BOS before every later [INST] (Meta's Llama 2 chat)
    llama2_sys_strip,   // as llama2_sys with every content trimmed
    // Mistral v1 / v3 / v3-tekken have no system block: the system text + "\n\n" opens the FIRST
    // user message (v1) or the LAST one (v3, v3-tekken), as mistral-common and the official
    // templates place it; a system message with no user message is an error.
    mistral_v1,         //  [INST] s\n\nu [/INST] a</s> [INST] …   (leading spaces)
    mistral_v3,         // [INST] u[/INST] a</s>[INST] s\n\nu2[/INST] (assistant content trimmed)
    mistral_v3_tekken,  // [INST]u[/INST]a</s>[INST]s\n\nu2[/INST]  (no spaces; Nemo)
    mistral_v7,         // [SYSTEM_PROMPT] s[/SYSTEM_PROMPT][INST] u[/INST] a</s>
    mistral_v7_tekken,  // [SYSTEM_PROMPT]s[/SYSTEM_PROMPT][INST]u[/INST]a</s>  (Small 3)
    llama3,             // <|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|> (trimmed)
    zephyr,             // <|role|>\ncontent</s>\n  (EOS text after every turn; TinyLlama chat)
    phi3,               // <|role|>\ncontent<|end|>\n; a system message with empty content is
                        //   skipped; without the generation prompt EOS ends the text (Phi-3.5)
    phi4,               // <|im_start|>role<|im_sep|>content<|im_end|>
    gemma,              // <start_of_turn>user\n…<end_of_turn>\n, "model" for assistant, contents
                        //   trimmed; no system role: the system text (as given, Gemma 3) + "\n\n"
                        //   opens the next user turn (a system message with no user message after
                        //   it is an error)
    command_r,          // <|START_OF_TURN_TOKEN|><|USER_TOKEN|>…<|END_OF_TURN_TOKEN|>
    vicuna,             // s\n\nUSER: u\nASSISTANT: a</s>\n
    vicuna_orca,        // SYSTEM: s\nUSER: u\nASSISTANT: a</s>\n
};

// The family of a Jinja template source, from distinctive substrings; std::nullopt when none is
// recognised (the caller falls back to ChatML) or the source is empty. The [INST] variants are
// told apart by the spacing inside the template's string literals; Meta's Llama 2 template
// (which writes BOS before every [INST] and also strips contents) gives llama2_sys_bos.
std::optional<chat_template_kind> chat_template_detect(std::string_view jinja);

// By llama-server's --chat-template name ("chatml", "qwen3", "llama2", "llama2-sys", "llama2-sys-bos",
// "llama2-sys-strip", "mistral-v1", "mistral-v3", "mistral-v3-tekken", "mistral-v7",
// "mistral-v7-tekken", "llama3", "zephyr", "phi3", "phi4", "gemma", "command-r", "vicuna",
// "vicuna-orca"), plus the alias "mistral" (= llama2, as llama-server treats it). Exact, case
// sensitive; std::nullopt for anything else.
std::optional<chat_template_kind> chat_template_from_name(std::string_view name);

// The family to use, as llama-server chooses it: `requested` (a --chat-template value) when not
// empty — a name, or else a Jinja source to recognise; otherwise the model's own template
// (`model_jinja`, "" when the file has none), falling back to ChatML. Returns std::nullopt with
// *error (may be nullptr) when `requested` is neither a known name nor a recognised template
// (the message lists the names). *note (may be nullptr) receives a line worth logging when the
// model's template was not recognised and ChatML is used instead ("" otherwise).
std::optional<chat_template_kind> chat_template_resolve(std::string_view requested,
                                                        std::string_view model_jinja,
                                                        std::string * note, std::string * error);

// The canonical name of a family (chat_template_from_name(chat_template_name(k)) == k).
std::string_view chat_template_name(chat_template_kind kind);

// Every canonical name, in declaration order (for --help and error messages).
std::vector<std::string_view> chat_template_names();

// Texts that end an assistant turn in this family besides the vocabulary's EOS ("<|im_end|>",
// "<|eot_id|>", "<end_of_turn>", …); empty where the family ends turns with EOS. Generation
// should stop when the model produces one of them.
std::vector<std::string_view> chat_template_stop_texts(chat_template_kind kind);

// Renders `msgs` in the family's format into *out (replacing its content). add_generation_prompt
// appends the assistant cue. bos / eos: the vocabulary's token texts (see above for where they
// are written). Returns false, with *error naming the message, for an unknown role or a
// sequence the family cannot express; *out is then unspecified. error may be nullptr.
bool chat_template_apply(chat_template_kind kind, std::span<const chat_message> msgs,
                         bool add_generation_prompt, std::string_view bos, std::string_view eos,
                         std::string * out, std::string * error);
// The same with every template variable in `opts`.
bool chat_template_apply(chat_template_kind kind, std::span<const chat_message> msgs,
                         const chat_template_options & opts, std::string * out, std::string * error);
