// Chat prompts from the model's chat template run by the Jinja engine, or from a built-in family
// (engine/chat-render.h).
#include "engine/chat-render.h"

#include "jinja/jinja.h"

#include <fstream>
#include <sstream>

using nlohmann::ordered_json;

struct chat_renderer::jinja_state {
    jinja::parsed_template tmpl;
};

chat_renderer::~chat_renderer() = default;

namespace {

bool read_file(std::string_view path, std::string * out) {
    std::ifstream in{std::string(path), std::ios::binary};
    if (!in) return false;
    std::ostringstream ss;
    ss << in.rdbuf();
    *out = ss.str();
    return !in.bad();
}

bool looks_like_jinja(std::string_view s) {
    return s.find("{{") != std::string_view::npos || s.find("{%") != std::string_view::npos;
}

// A message's content as text: a string, null (""), or text parts joined with "\n".
std::string content_text(const ordered_json & c) {
    if (c.is_string()) return c.get<std::string>();
    std::string out;
    if (!c.is_array()) return out;
    for (const ordered_json & part : c) {
        if (!part.is_object() || !part.contains("text") || !part["text"].is_string()) continue;
        if (!out.empty()) out += "\n";
        out += part["text"].get<std::string>();
    }
    return out;
}

// The bounds of one request's render: a tenth of the engine's default step budget (about 0.8 s of
// work; the chat templates of real models take well under a million steps for a long conversation).
jinja::render_options request_render_options() {
    jinja::render_options o;
    o.bounds.max_steps = 50000000;
    return o;
}

// A short conversation rendered once when a template is loaded: a template that reaches one of
// the engine's limits on it would reach it on every request (other errors, such as a template
// that refuses a system message, are the template's own rules). The limit's message, or "".
std::string probe_render_limit(const jinja::parsed_template & t, const chat_special_texts & sp) {
    ordered_json ctx = {{"messages", ordered_json::array({{{"role", "system"}, {"content", "You are a helpful assistant."}},
                                                          {{"role", "user"}, {"content", "Hello"}},
                                                          {{"role", "assistant"}, {"content", "Hi! How can I help?"}},
                                                          {{"role", "user"}, {"content", "What is 2 + 2?"}}})},
                        {"add_generation_prompt", true}, {"bos_token", sp.bos}, {"eos_token", sp.eos}};
    try {
        jinja::render(t, ctx, request_render_options());
    } catch (const jinja::error & e) {
        if (e.kind() == jinja::error_kind::limit) return e.what();
    }
    return "";
}

}  // namespace

std::shared_ptr<const chat_renderer> chat_renderer::create(std::string_view requested, std::string_view model_jinja,
                                                           chat_special_texts sp, std::string * note, std::string * error) {
    std::shared_ptr<chat_renderer> r(new chat_renderer());
    r->sp_ = std::move(sp);
    if (note) note->clear();
    std::string source, name;
    if (!requested.empty()) {
        if (std::optional<chat_template_kind> k = chat_template_from_name(requested)) {
            r->family_ = k;
            r->describe_ = std::string(chat_template_name(*k));
            r->stops_ = chat_template_stop_texts(*k);
            return r;
        }
        if (!looks_like_jinja(requested) && read_file(requested, &source)) {
            name = std::string(requested);
        } else if (looks_like_jinja(requested)) {
            source = std::string(requested);
            name = "--chat-template";
        } else {
            if (error) {
                *error = "--chat-template: '";
                *error += requested;
                *error += "' is neither a template name, a readable file nor Jinja text; names: ";
                for (std::string_view n : chat_template_names()) {
                    *error += n;
                    *error += ' ';
                }
            }
            return nullptr;
        }
    } else if (!model_jinja.empty()) {
        source = std::string(model_jinja);
        name = "tokenizer.chat_template";
    }
    if (!source.empty()) {
        try {
            jinja::parse_options po;
            po.source_name = name;
            jinja::parsed_template parsed = jinja::parse(source, po);
            if (const std::string limit = probe_render_limit(parsed, r->sp_); !limit.empty()) {
                throw jinja::error(jinja::error_kind::limit, "a short conversation reaches a limit: " + limit, name, 0, 0);
            }
            r->jinja_ = std::make_unique<jinja_state>(jinja_state{std::move(parsed)});
            r->source_ = std::move(source);
            r->describe_ = name == "tokenizer.chat_template" ? "the model's Jinja template" : "Jinja template " + name;
            r->stops_ = chat_template_stop_texts(chat_template_detect(r->source_).value_or(chat_template_kind::chatml));
            return r;
        } catch (const jinja::error & e) {
            if (!requested.empty()) {
                if (error) *error = std::string("--chat-template: ") + e.what();
                return nullptr;
            }
            const char * what = e.kind() == jinja::error_kind::limit ? "reaches a limit of the template engine" : "does not parse";
            if (note) *note = std::string("the model's chat template ") + what + " (" + e.what() + "); ";
        }
    }
    const chat_template_kind k = chat_template_detect(model_jinja).value_or(chat_template_kind::chatml);
    r->family_ = k;
    r->describe_ = std::string(chat_template_name(k));
    r->stops_ = chat_template_stop_texts(k);
    if (note) {
        *note += model_jinja.empty() ? "the model has no chat template; " : "";
        *note += "using the built-in ";
        *note += chat_template_name(k);
        *note += " format";
    }
    return r;
}

bool chat_renderer::render(const ordered_json & messages, const ordered_json & tools, bool add_generation_prompt,
                           const ordered_json & kwargs, std::string * out, std::string * error) const {
    if (family_) return render_family(messages, add_generation_prompt, kwargs, out, error);
    // The variables in the order a context object would hold them, the request's messages and
    // tools read in place (they can be megabytes).
    const ordered_json agp = add_generation_prompt, bos = sp_.bos, eos = sp_.eos;
    jinja::render_vars vars = {{"messages", &messages}};
    if (!tools.is_null()) vars.emplace_back("tools", &tools);
    vars.emplace_back("add_generation_prompt", &agp);
    vars.emplace_back("bos_token", &bos);
    vars.emplace_back("eos_token", &eos);
    if (kwargs.is_object()) {
        for (const auto & [k, v] : kwargs.items()) vars.emplace_back(k, &v);
    }
    try {
        *out = jinja::render_with(jinja_->tmpl, vars, request_render_options());
    } catch (const jinja::error & e) {
        if (error) *error = std::string("chat template: ") + e.what();
        return false;
    }
    if (sp_.add_bos && !sp_.bos.empty() && out->starts_with(sp_.bos)) out->erase(0, sp_.bos.size());
    return true;
}

bool chat_renderer::render_family(const ordered_json & messages, bool add_generation_prompt, const ordered_json & kwargs,
                                  std::string * out, std::string * error) const {
    std::vector<chat_message> msgs;
    for (const ordered_json & m : messages) {
        chat_message cm;
        cm.role = m.value("role", "");
        if (m.contains("content")) cm.content = content_text(m["content"]);
        if (m.contains("reasoning_content") && m["reasoning_content"].is_string()) {
            cm.reasoning_content = m["reasoning_content"].get<std::string>();
        }
        msgs.push_back(std::move(cm));
    }
    chat_template_options o;
    o.add_generation_prompt = add_generation_prompt;
    o.bos = sp_.bos;
    o.eos = sp_.eos;
    if (kwargs.is_object() && kwargs.contains("enable_thinking") && kwargs["enable_thinking"].is_boolean()) {
        o.enable_thinking = kwargs["enable_thinking"].get<bool>();
    }
    return chat_template_apply(*family_, msgs, o, out, error);
}
