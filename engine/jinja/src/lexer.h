// lexer.h — template source to tokens, with jinja2's lexer rules for trim_blocks=True,
// lstrip_blocks=True and keep_trailing_newline=False: newlines normalized to \n, one trailing
// newline dropped, comments dropped, raw blocks turned into data, whitespace control applied.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace jinja {

enum class token_type : uint8_t {
    data,         // template text (text = the bytes to output)
    var_begin,    // {{
    var_end,      // }}
    block_begin,  // {%
    block_end,    // %}
    name,         // identifier (also keywords: the parser tells them apart)
    string,       // text = the decoded value
    integer,      // ival
    floating,     // fval
    op,           // text = the operator ("+", "//", "(", ...)
    eof,
};

struct token {
    token_type type = token_type::eof;
    std::string text;
    int64_t ival = 0;
    double fval = 0;
    uint32_t line = 1;
    uint32_t column = 1;
};

// Throws jinja::error (syntax) naming source_name, line and column.
std::vector<token> tokenize(std::string_view source, const std::string & source_name);

// The source as jinja2 sees it: \r\n and \r become \n, one trailing newline dropped.
std::string normalize_source(std::string_view source);

}  // namespace jinja
