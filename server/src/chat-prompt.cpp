// Chat requests → the rendered prompt, the output parser's settings and the tool-call grammar.
#include "chat-prompt.h"

#include "engine/chat-render.h"
#include "grammar/json-ordered-read.h"

#include <algorithm>
#include <cctype>

namespace {

using ojson = nlohmann::ordered_json;

// Request texts read back as ordered JSON (checked by the request parser, which bounds their
// nesting). nlohmann's own ordered parse is quadratic in an object's keys: a tool with 100,000
// properties would hold an I/O thread for seconds.
constexpr size_t max_text_depth = 512;

// The value of a JSON text; discarded when it is not JSON.
ojson read_ordered(const std::string & text) {
    ojson v;
    std::string error;
    if (!json_read_ordered(text, max_text_depth, &v, &error)) return ojson(ojson::value_t::discarded);
    return v;
}

// A call's arguments as the template reads them: the object (or, for a client's text that is
// not a JSON object, that text).
ojson call_arguments(const std::string & text) {
    ojson v = read_ordered(text);
    return v.is_discarded() ? ojson(text) : v;
}

ojson template_message(const api_chat_message & m) {
    ojson j = {{"role", api_chat_role_name(m.role)}, {"content", m.content}};
    if (!m.name.empty()) j["name"] = m.name;
    if (m.role == api_chat_role::tool && !m.tool_call_id.empty()) j["tool_call_id"] = m.tool_call_id;
    if (!m.reasoning_content.empty()) j["reasoning_content"] = m.reasoning_content;
    if (!m.tool_calls.empty()) {
        ojson calls = ojson::array();
        for (const api_tool_call & c : m.tool_calls) {
            ojson call = ojson::object();
            if (!c.id.empty()) call["id"] = c.id;
            call["type"] = "function";
            call["function"] = {{"name", c.name}, {"arguments", call_arguments(c.arguments)}};
            calls.push_back(std::move(call));
        }
        j["tool_calls"] = std::move(calls);
    }
    return j;
}

// --chat-template-kwargs, then the request's key by key, then reasoning_effort where neither set
// it ("none" also turns enable_thinking off).
ojson template_kwargs(const chat_plan_inputs & in, const chat_request & cr) {
    ojson kwargs = in.kwargs.is_object() ? in.kwargs : ojson::object();
    const ojson request_kwargs = read_ordered(cr.chat_template_kwargs);  // an object, checked
    if (request_kwargs.is_object()) {
        for (const auto & [k, val] : request_kwargs.items()) kwargs[k] = val;
    }
    if (!cr.reasoning_effort.empty()) {
        if (!kwargs.contains("reasoning_effort")) kwargs["reasoning_effort"] = cr.reasoning_effort;
        if (cr.reasoning_effort == "none" && !kwargs.contains("enable_thinking")) kwargs["enable_thinking"] = false;
    }
    return kwargs;
}

// The template has thinking markers of some family (<think>, [THINK], <|START_THINKING|>, the
// harmony analysis channel, …).
bool template_thinks(const std::string & source) {
    std::string lower(source);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return lower.find("think") != std::string::npos || lower.find("<|channel|>") != std::string::npos;
}

// Without tools: the family whose reasoning markers the output is read for (tool calls are not
// read). Families that mark reasoning other than with <think> keep their own parser.
toolcall::family reasoning_family(toolcall::family f) {
    switch (f) {
        case toolcall::family::gpt_oss_harmony:
        case toolcall::family::command_r7b:
        case toolcall::family::seed_oss:
        case toolcall::family::solar:
        case toolcall::family::gemma4:
        case toolcall::family::mistral:
        case toolcall::family::apriel: return f;
        default: return toolcall::family::none;
    }
}

// Some tool has "strict": true.
bool any_strict(const ojson & tools) {
    for (const ojson & t : tools) {
        const ojson * fn = t.is_object() && t.contains("function") ? &t["function"] : nullptr;
        if (fn && fn->is_object() && fn->contains("strict") && (*fn)["strict"] == true) return true;
    }
    return false;
}

// The grammar of the calls: forced (tool_choice required or a named function), or from the
// call marker on (auto). thinks: it allows a reasoning block before the calls. Only what to
// compile is decided here (chat_plan_compile compiles it).
std::optional<api_error> tool_grammar(const chat_request & cr, toolcall::family f, bool thinks, chat_plan * out) {
    if (cr.constraint.kind != api_constraint_kind::none) {
        return api_error_invalid_request(cr.constraint.source_param +
                                             " cannot be combined with a tool_choice that forces a call",
                                         "tool_choice");
    }
    if (!toolcall::call_grammar_supported(f)) {
        std::string msg = "tool_choice: forcing a call is not supported for this model's tool-call format '";
        msg += toolcall::family_name(f);
        msg += "'; use \"auto\"";
        return api_error_invalid_request(msg, "tool_choice");
    }
    chat_tool_grammar t;
    t.family = f;
    toolcall::call_grammar_options & o = t.options;
    if (cr.tool_choice == api_tool_choice::function) o.function = cr.tool_choice_function;
    o.optional_calls = cr.tool_choice == api_tool_choice::auto_;
    o.parallel = cr.parallel_tool_calls;
    o.reasoning_open = out->output.opts.reasoning_open;
    o.allow_reasoning = thinks || o.reasoning_open;
    out->tool_grammar = std::move(t);
    return std::nullopt;
}

}  // namespace

std::optional<api_error> chat_plan_prepare(const chat_plan_inputs & in, const chat_request & cr, chat_plan * out) {
    ojson msgs = ojson::array();
    for (const api_chat_message & m : cr.messages) msgs.push_back(template_message(m));
    const bool use_tools = !cr.tools.empty() && cr.tool_choice != api_tool_choice::none;
    ojson tools = use_tools ? read_ordered(cr.tools) : ojson();  // an array, checked
    const chat_renderer & renderer = use_tools && in.chat_tools ? *in.chat_tools : *in.chat;
    std::string err;
    const ojson kwargs = template_kwargs(in, cr);
    if (!renderer.render(msgs, tools, true, kwargs, &out->prompt, &err)) {
        return api_error_invalid_request(err, "messages");
    }
    const toolcall::family detected = toolcall::detect_family(renderer.source());
    const bool thinks = template_thinks(renderer.source());
    const bool thinking_off = kwargs.contains("enable_thinking") && kwargs["enable_thinking"] == false;
    chat_output_options & o = out->output;
    o.split_reasoning = cr.reasoning_split.value_or(in.reasoning_split);
    if (use_tools) {
        o.family = detected == toolcall::family::none ? toolcall::family::generic : detected;
        o.opts.tools = std::move(tools);  // megabytes, maybe: not copied
    } else {
        o.family = reasoning_family(detected);
    }
    o.parse = use_tools || (o.split_reasoning && thinks);
    o.render_control = o.parse;
    o.opts.reasoning_open = o.parse && toolcall::prompt_opens_reasoning(o.family, out->prompt);
    if (use_tools && (cr.tool_choice == api_tool_choice::required || cr.tool_choice == api_tool_choice::function)) {
        return tool_grammar(cr, o.family, thinks && !thinking_off, out);
    }
    // "auto" with a strict tool: the calls the model starts are held to their schemas, the text
    // before them is free (not for formats whose calls have no marker, nor beside a response_format).
    if (use_tools && cr.tool_choice == api_tool_choice::auto_ && any_strict(o.opts.tools) &&
        cr.constraint.kind == api_constraint_kind::none && toolcall::call_grammar_supported(o.family) &&
        !toolcall::call_grammar_marker(o.family).empty()) {
        return tool_grammar(cr, o.family, thinks && !thinking_off, out);
    }
    return std::nullopt;
}

bool chat_plan_lookup(const chat_plan_inputs & in, chat_plan * out, std::optional<api_error> * error) {
    *error = std::nullopt;
    if (!out->tool_grammar) return true;
    const chat_tool_grammar & t = *out->tool_grammar;
    return in.grammars->lookup_tool_calls(t.family, out->output.opts.tools, t.options, &out->grammar, error);
}

std::optional<api_error> chat_plan_compile(const chat_plan_inputs & in, chat_plan * out,
                                           std::chrono::steady_clock::time_point started) {
    if (!out->tool_grammar) return std::nullopt;
    const chat_tool_grammar & t = *out->tool_grammar;
    toolcall::call_grammar_options o = t.options;
    o.started = started;
    return in.grammars->compile_tool_calls(t.family, out->output.opts.tools, o, &out->grammar);
}

std::optional<api_error> chat_plan_make(const chat_plan_inputs & in, const chat_request & cr, chat_plan * out) {
    if (auto e = chat_plan_prepare(in, cr, out)) return e;
    return chat_plan_compile(in, out);
}
