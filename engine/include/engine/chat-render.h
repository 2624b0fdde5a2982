// engine/chat-render.h — chat prompts from the model's chat template, run as written.
//
// The model's `tokenizer.chat_template` is rendered by the Jinja engine (engine/jinja) the way
// Hugging Face transformers renders it: `messages` (OpenAI's message objects), `tools` (when the
// request has any), `add_generation_prompt`, `bos_token`, `eos_token` and extra variables
// (`enable_thinking`, ...). `--chat-template` overrides it with a built-in family by name
// (chat-template.h), a Jinja template file, or Jinja text. A model without a template, or whose
// template the engine cannot parse, falls back to the family its template is recognised as
// (ChatML when none), and says so in *note.
//
// Usage:
//   chat_special_texts sp{bos_text, eos_text, vocab.add_bos()};
//   std::string note, err;
//   auto r = chat_renderer::create(flag_value, mdl->chat_template(), sp, &note, &err);
//   if (!r) fail(err);                                  // bad --chat-template value
//   std::string prompt;
//   if (!r->render(messages, nlohmann::ordered_json(), true, kwargs, &prompt, &err)) → 400 err
//   // tokenize with add_special = true, parse_special = true
//
// BOS: when the tokenizer adds BOS itself (add_bos), a BOS text at the very start of the
// rendered prompt is dropped, so that templates that write `{{ bos_token }}` first do not double it.
#pragma once

#include "engine/chat-template.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct chat_special_texts {
    std::string bos;       // the vocabulary's BOS token text ("" when none)
    std::string eos;
    bool add_bos = false;  // the tokenizer adds BOS to a prompt
};

class chat_renderer {
public:
    // requested: a --chat-template value ("" for the model's own): a family name, a readable
    // file of Jinja, or Jinja text (it has `{{` or `{%`). nullptr with *error when it is none of
    // them or its Jinja does not parse.
    static std::shared_ptr<const chat_renderer> create(std::string_view requested, std::string_view model_jinja,
                                                       chat_special_texts sp, std::string * note, std::string * error);
    ~chat_renderer();

    // messages: a JSON array of message objects (role, content as text or parts, and whatever
    // else the template reads: tool_calls, tool_call_id, name, reasoning_content); tools: null
    // when the request has none; kwargs: an object of extra variables (null or empty: none).
    // False with *error (the template's own message, e.g. its raise_exception text, with the
    // line and column) when the template refuses the conversation.
    bool render(const nlohmann::ordered_json & messages, const nlohmann::ordered_json & tools, bool add_generation_prompt,
                const nlohmann::ordered_json & kwargs, std::string * out, std::string * error) const;

    // For logs: "the model's Jinja template", "Jinja template FILE", or a family name.
    const std::string & describe() const { return describe_; }
    // Texts that end an assistant turn besides the vocabulary's end-of-generation tokens (those of
    // the family the template is recognised as).
    const std::vector<std::string_view> & stop_texts() const { return stops_; }
    // The Jinja source rendered ("" for a built-in family).
    const std::string & source() const { return source_; }

private:
    struct jinja_state;
    chat_renderer() = default;
    bool render_family(const nlohmann::ordered_json & messages, bool add_generation_prompt,
                       const nlohmann::ordered_json & kwargs, std::string * out, std::string * error) const;

    chat_special_texts sp_;
    std::optional<chat_template_kind> family_;  // set: a built-in family renders
    std::unique_ptr<jinja_state> jinja_;
    std::string source_, describe_;
    std::vector<std::string_view> stops_;
};
