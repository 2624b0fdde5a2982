// lexer.cpp — see lexer.h. The rules follow jinja2's lexer (root, block, variable, comment and
// raw states; the balancing stack that lets `}}` close a dict literal inside `{{ }}`).
#include "lexer.h"

#include "jinja/jinja.h"
#include "utf8.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace jinja {

std::string normalize_source(std::string_view source) {
    std::string out;
    out.reserve(source.size());
    for (size_t i = 0; i < source.size(); ++i) {
        if (source[i] == '\r') {
            out += '\n';
            if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
        } else {
            out += source[i];
        }
    }
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

class lexer {
public:
    lexer(std::string_view src, const std::string & name) : src_(src), name_(name) {}

    std::vector<token> run();

private:
    std::string_view src_;
    const std::string & name_;
    size_t pos_ = 0;
    bool line_starting_ = true;
    std::vector<token> out_;
    std::vector<char> stack_;  // expected closing brackets
    // incremental line/column tracking
    size_t loc_pos_ = 0;
    uint32_t loc_line_ = 1, loc_col_ = 1;

    void locate(size_t p, uint32_t & line, uint32_t & col);
    [[noreturn]] void fail(size_t p, const std::string & msg);
    void emit(token_type type, size_t at, std::string text = {});
    bool starts(size_t p, const char * s) const { return src_.compare(p, std::strlen(s), s) == 0; }
    size_t skip_space(size_t p) const;
    std::string strip_text(std::string_view text, char sign, bool is_var) const;
    void lex_comment(size_t p);
    bool try_raw(size_t p, char sign, std::string_view text);
    void lex_tag(bool is_block);
    bool lex_tag_end(bool is_block);
    void lex_number(size_t start);
    bool lex_float(size_t start);
    void lex_string();
    void lex_operator();
};

void lexer::locate(size_t p, uint32_t & line, uint32_t & col) {
    if (p < loc_pos_) loc_pos_ = 0, loc_line_ = 1, loc_col_ = 1;
    while (loc_pos_ < p) {
        if (src_[loc_pos_] == '\n') {
            ++loc_line_, loc_col_ = 1, ++loc_pos_;
        } else {
            utf8_next(src_, loc_pos_);
            ++loc_col_;
        }
    }
    line = loc_line_, col = loc_col_;
}

void lexer::fail(size_t p, const std::string & msg) {
    uint32_t line, col;
    locate(p > src_.size() ? src_.size() : p, line, col);
    throw error(error_kind::syntax, msg, name_, line, col);
}

void lexer::emit(token_type type, size_t at, std::string text) {
    token t;
    t.type = type;
    t.text = std::move(text);
    locate(at, t.line, t.column);
    out_.push_back(std::move(t));
}

size_t lexer::skip_space(size_t p) const {
    while (p < src_.size()) {
        size_t q = p;
        if (!py_isspace(utf8_next(src_, q))) break;
        p = q;
    }
    return p;
}

static std::string rstrip_space(std::string_view text) {
    size_t end = text.size();
    while (end > 0) {
        size_t start = end - 1;
        while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
        size_t q = start;
        if (!py_isspace(utf8_next(text, q)) || q != end) break;
        end = start;
    }
    return std::string(text.substr(0, end));
}

// The text before a tag: `{%-` strips all whitespace; lstrip_blocks strips spaces and tabs
// between the start of the line and a block or comment tag.
std::string lexer::strip_text(std::string_view text, char sign, bool is_var) const {
    if (sign == '-') return rstrip_space(text);
    if (sign == '+' || is_var) return std::string(text);
    const size_t nl = text.rfind('\n');
    const size_t l_pos = nl == std::string_view::npos ? 0 : nl + 1;
    if (l_pos > 0 || line_starting_) {
        if (text.find_first_not_of(" \t", l_pos) == std::string_view::npos) return std::string(text.substr(0, l_pos));
    }
    return std::string(text);
}

void lexer::lex_comment(size_t p) {
    if (p >= src_.size()) {  // jinja2 ends quietly when the source ends right after `{#`
        pos_ = src_.size();
        return;
    }
    for (size_t i = p; i + 1 < src_.size(); ++i) {
        if (starts(i, "+#}")) {
            pos_ = i + 3;
        } else if (starts(i, "-#}")) {
            pos_ = skip_space(i + 3);
        } else if (starts(i, "#}")) {
            pos_ = i + 2;
            if (pos_ < src_.size() && src_[pos_] == '\n') ++pos_;
        } else {
            continue;
        }
        line_starting_ = pos_ > 0 && src_[pos_ - 1] == '\n';
        return;
    }
    fail(p, "Missing end of comment tag");
}

// `{% raw %}…{% endraw %}` at p (just after the `{%` and its sign): the body becomes data.
bool lexer::try_raw(size_t p, char sign, std::string_view text) {
    size_t q = skip_space(p);
    if (!starts(q, "raw") || (q + 3 < src_.size() && is_name_char(src_[q + 3]))) return false;
    q = skip_space(q + 3);
    if (starts(q, "-%}")) {
        q = skip_space(q + 3);
    } else if (starts(q, "%}")) {
        q += 2;
    } else {
        return false;
    }
    const std::string before = strip_text(text, sign, false);
    if (!before.empty()) emit(token_type::data, pos_, before);
    line_starting_ = q > 0 && src_[q - 1] == '\n';
    if (q >= src_.size()) {  // like an unclosed comment: nothing after `{% raw %}` ends quietly
        pos_ = q;
        return true;
    }
    for (size_t i = q; i < src_.size(); ++i) {
        if (!starts(i, "{%")) continue;
        size_t j = i + 2;
        char end_sign = 0;
        if (j < src_.size() && (src_[j] == '-' || src_[j] == '+')) end_sign = src_[j++];
        j = skip_space(j);
        if (!starts(j, "endraw")) continue;
        j = skip_space(j + 6);
        if (starts(j, "+%}")) {
            j += 3;
        } else if (starts(j, "-%}")) {
            j = skip_space(j + 3);
        } else if (starts(j, "%}")) {
            j += 2;
            if (j < src_.size() && src_[j] == '\n') ++j;
        } else {
            continue;
        }
        const std::string body = strip_text(src_.substr(q, i - q), end_sign, false);
        if (!body.empty()) emit(token_type::data, q, body);
        pos_ = j;
        line_starting_ = src_[j - 1] == '\n';
        return true;
    }
    fail(q, "Missing end of raw directive");
}

std::vector<token> lexer::run() {
    while (pos_ < src_.size()) {
        size_t p = pos_;
        for (; p + 1 < src_.size(); ++p) {
            if (src_[p] == '{' && (src_[p + 1] == '{' || src_[p + 1] == '%' || src_[p + 1] == '#')) break;
        }
        if (p + 1 >= src_.size()) {
            emit(token_type::data, pos_, std::string(src_.substr(pos_)));
            break;
        }
        const std::string_view text = src_.substr(pos_, p - pos_);
        const char kind = src_[p + 1];
        char sign = 0;
        size_t after = p + 2;
        if (after < src_.size() && (src_[after] == '-' || src_[after] == '+')) sign = src_[after++];
        if (kind == '%' && try_raw(after, sign, text)) continue;
        const std::string before = strip_text(text, sign, kind == '{');
        if (!before.empty()) emit(token_type::data, pos_, before);
        line_starting_ = false;
        if (kind == '#') {
            lex_comment(after);
            continue;
        }
        emit(kind == '%' ? token_type::block_begin : token_type::var_begin, p);
        pos_ = after;
        lex_tag(kind == '%');
    }
    token eof;
    eof.type = token_type::eof;
    locate(src_.size(), eof.line, eof.column);
    out_.push_back(std::move(eof));
    return std::move(out_);
}

bool lexer::lex_tag_end(bool is_block) {
    if (!stack_.empty()) return false;
    const size_t start = pos_;
    if (is_block) {
        if (starts(pos_, "+%}")) {
            pos_ += 3;
        } else if (starts(pos_, "-%}")) {
            pos_ = skip_space(pos_ + 3);
        } else if (starts(pos_, "%}")) {
            pos_ += 2;
            if (pos_ < src_.size() && src_[pos_] == '\n') ++pos_;
        } else {
            return false;
        }
    } else {
        if (starts(pos_, "-}}")) {
            pos_ = skip_space(pos_ + 3);
        } else if (starts(pos_, "}}")) {
            pos_ += 2;
        } else {
            return false;
        }
    }
    emit(is_block ? token_type::block_end : token_type::var_end, start);
    line_starting_ = src_[pos_ - 1] == '\n';
    return true;
}

void lexer::lex_tag(bool is_block) {
    const size_t tag_start = pos_;
    while (true) {
        if (pos_ >= src_.size()) {
            fail(pos_, std::string("unexpected end of template, expected '") + (is_block ? "%}" : "}}") +
                           "' to close the tag opened at byte " + std::to_string(tag_start));
        }
        if (lex_tag_end(is_block)) return;
        const char c = src_[pos_];
        size_t q = pos_;
        if (py_isspace(utf8_next(src_, q))) {
            pos_ = skip_space(pos_);
        } else if (is_digit(c)) {
            lex_number(pos_);
        } else if (is_name_start(c)) {
            size_t e = pos_;
            while (e < src_.size() && is_name_char(src_[e])) ++e;
            emit(token_type::name, pos_, std::string(src_.substr(pos_, e - pos_)));
            pos_ = e;
        } else if (c == '\'' || c == '"') {
            lex_string();
        } else {
            lex_operator();
        }
    }
}


// digits with single underscores between them: (\d+_)*\d+ ; returns p when there is no digit.
static size_t scan_digits(std::string_view s, size_t p) {
    if (p >= s.size() || !is_digit(s[p])) return p;
    size_t e = p;
    while (e < s.size()) {
        if (is_digit(s[e])) {
            ++e;
        } else if (s[e] == '_' && e + 1 < s.size() && is_digit(s[e + 1])) {
            e += 2;
        } else {
            break;
        }
    }
    return e;
}

static std::string without_underscores(std::string_view s) {
    std::string out;
    for (char c : s) {
        if (c != '_') out += c;
    }
    return out;
}

bool lexer::lex_float(size_t start) {
    if (start > 0 && src_[start - 1] == '.') return false;
    size_t e = scan_digits(src_, start);
    bool is_float = false;
    if (e + 1 < src_.size() && src_[e] == '.' && is_digit(src_[e + 1])) {
        e = scan_digits(src_, e + 1);
        is_float = true;
    }
    if (e < src_.size() && (src_[e] == 'e' || src_[e] == 'E')) {
        size_t x = e + 1;
        if (x < src_.size() && (src_[x] == '+' || src_[x] == '-')) ++x;
        const size_t xe = scan_digits(src_, x);
        if (xe > x) {
            e = xe;
            is_float = true;
        }
    }
    if (!is_float) return false;
    const std::string text = without_underscores(src_.substr(start, e - start));
    emit(token_type::floating, start);
    out_.back().fval = std::strtod(text.c_str(), nullptr);
    pos_ = e;
    return true;
}

static int digit_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return 99;
}

void lexer::lex_number(size_t start) {
    if (lex_float(start)) return;
    size_t e = start;
    int base = 10;
    size_t digits_from = start;
    const char p1 = start + 1 < src_.size() ? static_cast<char>(src_[start + 1] | 0x20) : 0;
    if (src_[start] == '0' && (p1 == 'b' || p1 == 'o' || p1 == 'x')) {
        base = p1 == 'b' ? 2 : (p1 == 'o' ? 8 : 16);
        size_t q = start + 2;
        while (q < src_.size()) {
            size_t d = q;
            if (src_[d] == '_') ++d;
            if (d < src_.size() && digit_value(src_[d]) < base) {
                q = d + 1;
            } else {
                break;
            }
        }
        if (q > start + 2) {
            e = q;
            digits_from = start + 2;
        } else {
            base = 10;
        }
    }
    if (base == 10) {
        if (src_[start] == '0') {
            e = start + 1;
            while (e < src_.size() && (src_[e] == '0' || (src_[e] == '_' && e + 1 < src_.size() && src_[e + 1] == '0')))
                e += src_[e] == '_' ? 2 : 1;
        } else {
            e = scan_digits(src_, start);
        }
    }
    uint64_t v = 0;
    for (char c : without_underscores(src_.substr(digits_from, e - digits_from))) {
        const uint64_t d = static_cast<uint64_t>(digit_value(c));
        if (v > (static_cast<uint64_t>(INT64_MAX) - d) / static_cast<uint64_t>(base)) fail(start, "integer literal too large");
        v = v * static_cast<uint64_t>(base) + d;
    }
    emit(token_type::integer, start);
    out_.back().ival = static_cast<int64_t>(v);
    pos_ = e;
}

static void append_code_point(std::string & out, uint32_t cp, uint32_t & pending_high) {
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (pending_high) utf8_append(out, 0xFFFD);
        pending_high = cp;
        return;
    }
    if (cp >= 0xDC00 && cp <= 0xDFFF && pending_high) {
        utf8_append(out, 0x10000 + ((pending_high - 0xD800) << 10) + (cp - 0xDC00));
        pending_high = 0;
        return;
    }
    if (pending_high) utf8_append(out, 0xFFFD);
    pending_high = 0;
    utf8_append(out, (cp >= 0xD800 && cp <= 0xDFFF) ? 0xFFFD : cp);
}

// python's "unicode-escape" decoding of the literal's text, as jinja2 applies it.
static bool decode_escapes(std::string_view raw, std::string & out, std::string & problem) {
    uint32_t pending = 0;
    auto flush = [&] {
        if (pending) utf8_append(out, 0xFFFD);
        pending = 0;
    };
    for (size_t i = 0; i < raw.size();) {
        if (raw[i] != '\\') {
            flush();
            size_t q = i;
            utf8_next(raw, q);
            out.append(raw.substr(i, q - i));
            i = q;
            continue;
        }
        const char c = raw[i + 1];
        i += 2;
        static const char simple_from[] = "\\'\"abfnrtv";
        static const char simple_to[] = "\\'\"\a\b\f\n\r\t\v";
        if (c == '\n') continue;
        if (const char * s = std::strchr(simple_from, c); s && c) {
            flush();
            out += simple_to[s - simple_from];
        } else if (c >= '0' && c <= '7') {
            uint32_t v = static_cast<uint32_t>(c - '0');
            for (int k = 0; k < 2 && i < raw.size() && raw[i] >= '0' && raw[i] <= '7'; ++k) v = v * 8 + (raw[i++] - '0');
            append_code_point(out, v, pending);
        } else if (c == 'x' || c == 'u' || c == 'U') {
            const int n = c == 'x' ? 2 : (c == 'u' ? 4 : 8);
            uint32_t v = 0;
            for (int k = 0; k < n; ++k) {
                if (i >= raw.size() || digit_value(raw[i]) > 15) {
                    problem = std::string("truncated \\") + c + " escape";
                    return false;
                }
                v = v * 16 + static_cast<uint32_t>(digit_value(raw[i++]));
            }
            if (v > 0x10FFFF) {
                problem = "illegal Unicode character";
                return false;
            }
            append_code_point(out, v, pending);
        } else if (static_cast<unsigned char>(c) >= 0x80) {
            // python encodes the character as \xhh / \uhhhh / \Uhhhhhhhh first; the backslash
            // before it escapes that escape's backslash.
            flush();
            size_t q = i - 1;
            const uint32_t cp = utf8_next(raw, q);
            i = q;
            char buf[16];
            std::snprintf(buf, sizeof buf, cp < 0x100 ? "\\x%02x" : (cp < 0x10000 ? "\\u%04x" : "\\U%08x"), cp);
            out += buf;
        } else if (c == 'N') {
            problem = "\\N{...} escapes are not supported";
            return false;
        } else {
            flush();
            out += '\\';
            out += c;
        }
    }
    flush();
    return true;
}

void lexer::lex_string() {
    const char quote = src_[pos_];
    size_t i = pos_ + 1;
    while (i < src_.size() && src_[i] != quote) i += src_[i] == '\\' ? 2 : 1;
    if (i >= src_.size()) fail(pos_, std::string("unexpected char '") + quote + "' (unterminated string)");
    std::string value, problem;
    if (!decode_escapes(src_.substr(pos_ + 1, i - pos_ - 1), value, problem)) fail(pos_, problem);
    emit(token_type::string, pos_, std::move(value));
    pos_ = i + 1;
}

void lexer::lex_operator() {
    static const char * two[] = {"//", "**", "==", "!=", ">=", "<="};
    for (const char * op : two) {
        if (starts(pos_, op)) {
            emit(token_type::op, pos_, op);
            pos_ += 2;
            return;
        }
    }
    const char c = src_[pos_];
    if (!std::strchr("+-/*%~[](){}><=.:|,;", c) || c == 0) {
        size_t q = pos_;
        utf8_next(src_, q);
        fail(pos_, "unexpected char " + std::string(src_.substr(pos_, q - pos_)));
    }
    if (c == '(' || c == '[' || c == '{') {
        stack_.push_back(c == '(' ? ')' : (c == '[' ? ']' : '}'));
    } else if (c == ')' || c == ']' || c == '}') {
        if (stack_.empty()) fail(pos_, std::string("unexpected '") + c + "'");
        if (stack_.back() != c) fail(pos_, std::string("unexpected '") + c + "', expected '" + stack_.back() + "'");
        stack_.pop_back();
    }
    emit(token_type::op, pos_, std::string(1, c));
    ++pos_;
}

}  // namespace

std::vector<token> tokenize(std::string_view source, const std::string & source_name) {
    const std::string normalized = normalize_source(source);
    lexer lx(normalized, source_name);
    return lx.run();
}

}  // namespace jinja
