// jinja.cpp — the public entry points: jinja::error, parse, render.
#include "jinja/jinja.h"

#include "ast.h"
#include "interp.h"
#include "lexer.h"
#include "parser.h"

namespace jinja {

const char * error_kind_name(error_kind kind) {
    switch (kind) {
        case error_kind::syntax: return "syntax";
        case error_kind::undefined: return "undefined";
        case error_kind::type: return "type";
        case error_kind::value: return "value";
        case error_kind::sandbox: return "sandbox";
        case error_kind::unknown_name: return "unknown_name";
        case error_kind::raised: return "raised";
        case error_kind::limit: return "limit";
    }
    return "error";
}

static std::string error_text(const std::string & message, const std::string & name, uint32_t line, uint32_t column) {
    if (line == 0) return message;
    return (name.empty() ? std::string("template") : name) + ":" + std::to_string(line) + ":" + std::to_string(column) +
           ": " + message;
}

error::error(error_kind kind, std::string message, std::string source_name, uint32_t line, uint32_t column)
    : std::runtime_error(error_text(message, source_name, line, column)),
      kind_(kind),
      message_(std::move(message)),
      source_name_(std::move(source_name)),
      line_(line),
      column_(column) {}

parsed_template::parsed_template() = default;
parsed_template::~parsed_template() = default;
parsed_template::parsed_template(parsed_template &&) noexcept = default;
parsed_template & parsed_template::operator=(parsed_template &&) noexcept = default;

const std::string & parsed_template::source_name() const { return program_->source_name; }

parsed_template parse(std::string_view source, const parse_options & opts) {
    const memory_meter::pause no_meter;  // the constants belong to the template, not to a render
    auto prog = std::make_shared<program>();
    prog->source_name = opts.source_name;
    parser p(tokenize(source, opts.source_name), opts);
    prog->root = p.parse_template();
    parsed_template t;
    t.program_ = std::move(prog);
    return t;
}

std::string render(const parsed_template & tmpl, const nlohmann::ordered_json & context, const render_options & opts) {
    if (!tmpl.program_ptr()) throw error(error_kind::value, "render of an empty parsed_template");
    interp in(tmpl.get(), opts);
    return in.run(context);
}

std::string render_with(const parsed_template & tmpl, const render_vars & vars, const render_options & opts) {
    if (!tmpl.program_ptr()) throw error(error_kind::value, "render of an empty parsed_template");
    interp in(tmpl.get(), opts);
    return in.run(vars);
}

}  // namespace jinja
