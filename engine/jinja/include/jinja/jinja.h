// jinja/jinja.h — a Jinja2 template engine for chat templates: parse once, render many times.
//
// Usage:
//   jinja::parsed_template t = jinja::parse(source);          // throws jinja::error (syntax)
//   nlohmann::ordered_json ctx = {{"messages", messages}, {"add_generation_prompt", true}};
//   std::string prompt = jinja::render(t, ctx);               // throws jinja::error (runtime)
//
// The language and its environment are those of python jinja2 3.1 as Hugging Face transformers
// sets it up for chat templates: ImmutableSandboxedEnvironment(trim_blocks=True,
// lstrip_blocks=True, keep_trailing_newline=False) with the loopcontrols extension, the
// `{% generation %}` tag, `tojson` as json.dumps(ensure_ascii=False), and the globals
// raise_exception(msg), strftime_now(fmt), range, namespace, dict, cycler and joiner.
// Renders are byte for byte what python jinja2 renders (see engine/jinja/README.md for what
// is supported and the known deviations).
//
// Errors: every failure is a jinja::error. what() is "NAME:LINE:COLUMN: message" (line and
// column 1-based, the column in code points, of the construct that failed); kind() says what
// failed (syntax, undefined, type, raised by raise_exception, a limit, ...); message() is the
// bare message (for raise_exception exactly the template's text).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jinja {

enum class error_kind {
    syntax,          // the template does not parse
    undefined,       // use of an undefined value that python jinja2 rejects (UndefinedError)
    type,            // an operation on values of the wrong type (TypeError)
    value,           // a bad value (ValueError: int('x'), a wrong unpack count, division by 0)
    sandbox,         // an operation the immutable sandbox forbids (list.append, dict.update)
    unknown_name,    // an unknown filter or test
    raised,          // raise_exception(msg) was called; message() is msg
    limit,           // a limit of jinja::limits was reached
};

const char * error_kind_name(error_kind kind);

class error : public std::runtime_error {
public:
    // line == 0: no place known (yet).
    error(error_kind kind, std::string message, std::string source_name = "", uint32_t line = 0,
          uint32_t column = 0);

    error_kind kind() const { return kind_; }
    const std::string & message() const { return message_; }
    const std::string & source_name() const { return source_name_; }
    uint32_t line() const { return line_; }
    uint32_t column() const { return column_; }

private:
    error_kind kind_;
    std::string message_;
    std::string source_name_;
    uint32_t line_;
    uint32_t column_;
};

// Bounds on the work of one parse or render: reaching one is an error_kind::limit error, never
// a crash, a hang or an unbounded allocation.
struct limits {
    uint32_t max_nesting_depth = 200;       // source nesting: parse_options takes its value from here
    uint32_t max_eval_depth = 600;          // nested evaluation (expressions, statements, calls)
    uint32_t max_macro_depth = 100;         // nested macro calls (recursion)
    uint32_t max_value_depth = 200;         // nesting of lists/dicts walked by repr/tojson/==
    uint64_t max_loop_iterations = 10000000;  // all for-loop iterations of one render
    uint64_t max_steps = 500000000;         // evaluation steps of one render (time bound)
    size_t max_output_bytes = 16u << 20;    // the render's text, and any one string value
    uint64_t max_range_length = 10000000;   // range() and sequence repetition lengths
    size_t max_memory_bytes = 256u << 20;   // the live memory of one render's values and text
};

struct parse_options {
    std::string source_name = "template";  // the NAME of error messages
    uint32_t max_nesting_depth = limits{}.max_nesting_depth;
};

struct render_options {
    // strftime_now() formats this time (broken-down, local); unset: the current local time.
    std::function<std::tm()> clock;
    limits bounds;
};

struct program;  // the parsed form (internal)

class parsed_template {
public:
    parsed_template();
    ~parsed_template();
    parsed_template(parsed_template &&) noexcept;
    parsed_template & operator=(parsed_template &&) noexcept;

    const program & get() const { return *program_; }
    const program * program_ptr() const { return program_.get(); }
    const std::string & source_name() const;

private:
    friend parsed_template parse(std::string_view, const parse_options &);
    std::shared_ptr<const program> program_;
};

// Throws jinja::error (error_kind::syntax or limit) with the place of the problem.
parsed_template parse(std::string_view source, const parse_options & opts = {});

// Renders with the variables of `context` (a JSON object; key order is kept, as python's dict
// keeps the JSON input's order). Throws jinja::error.
std::string render(const parsed_template & tmpl, const nlohmann::ordered_json & context,
                   const render_options & opts = {});

// The variables of a render given one by one, in order (a large value, such as a request's tools,
// is read where it is rather than copied into a context object first); a later name replaces an
// earlier one.
using render_vars = std::vector<std::pair<std::string, const nlohmann::ordered_json *>>;
std::string render_with(const parsed_template & tmpl, const render_vars & vars, const render_options & opts = {});

}  // namespace jinja
