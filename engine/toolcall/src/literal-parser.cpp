// literal-parser.cpp — JSON / Python / Gemma literals → JSON text, one byte at a time.
#include "literal-parser.h"

#include "text-util.h"

namespace toolcall::detail {

namespace {

constexpr std::string_view gemma_quote = "<|\"|>";

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_number_char(char c) { return is_digit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'; }
bool is_word_char(char c, bool key) {
    if (is_alpha(c) || is_digit(c) || c == '_') return true;
    return key && (c == '-' || c == '.' || c == '$' || static_cast<unsigned char>(c) >= 0x80);
}
int hex_value(char c) {
    if (is_digit(c)) return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace

bool json_number_text(std::string_view s) {
    size_t i = 0;
    if (i < s.size() && s[i] == '-') ++i;
    if (i >= s.size()) return false;
    if (s[i] == '0') {
        ++i;
    } else if (s[i] >= '1' && s[i] <= '9') {
        while (i < s.size() && is_digit(s[i])) ++i;
    } else {
        return false;
    }
    if (i < s.size() && s[i] == '.') {
        ++i;
        if (i >= s.size() || !is_digit(s[i])) return false;
        while (i < s.size() && is_digit(s[i])) ++i;
    }
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
        if (i >= s.size() || !is_digit(s[i])) return false;
        while (i < s.size() && is_digit(s[i])) ++i;
    }
    return i == s.size();
}

void json_escape_append(std::string_view s, std::string & out) {
    static const char * hex = "0123456789abcdef";
    for (char c : s) {
        auto u = static_cast<unsigned char>(c);
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                if (u < 0x20) {
                    out += "\\u00";
                    out += hex[u >> 4];
                    out += hex[u & 15];
                } else {
                    out += c;
                }
        }
    }
}

bool literal_to_json(std::string_view text, std::string & out) {
    literal_parser p;
    std::string tmp;
    size_t used = p.feed(text, tmp);
    if (p.state() == literal_parser::status::more) p.finish(tmp);
    if (p.state() != literal_parser::status::done) return false;
    for (size_t i = used; i < text.size(); ++i) {
        if (!is_space(text[i])) return false;
    }
    out += tmp;
    return true;
}

size_t literal_parser::feed(std::string_view in, std::string & out) {
    size_t i = 0;
    while (i < in.size() && status_ == status::more) {
        bool used = step(in[i], out);
        if (status_ == status::error) break;  // the offending byte is not the value's
        if (used) ++i;
    }
    return i;
}

literal_parser::status literal_parser::finish(std::string & out) {
    if (status_ != status::more) return status_;
    if (stack_.empty() && (mode_ == mode::number || mode_ == mode::word)) {
        if (!finish_word(out)) status_ = status::error;
        return status_;
    }
    status_ = status::error;
    return status_;
}

void literal_parser::repair(std::string & out) {
    if (status_ == status::done) return;
    status_ = status::done;
    if (!started_) {
        out += cfg_.object_only ? "{}" : "null";
        return;
    }
    switch (mode_) {
        case mode::string:
        case mode::escape:
        case mode::hex:
        case mode::quote_close:
            out += '"';
            if (in_key_) out += ": null";
            break;
        case mode::quote_open: out += in_key_ ? "\"\": null" : "null"; break;  // no string began
        case mode::number:
        case mode::word:
            if (in_key_) {
                out += '"';
                json_escape_append(tok_, out);
                out += "\": null";
            } else if (!finish_word(out)) {
                out += "null";
            }
            break;
        case mode::colon: out += ": null"; break;
        case mode::value:
            if (!stack_.empty() && stack_.back() == '{') out += "null";
            break;
        case mode::key:
        case mode::after: break;
    }
    while (!stack_.empty()) {
        out += stack_.back() == '{' ? '}' : ']';
        stack_.pop_back();
    }
}

bool literal_parser::step(char c, std::string & out) {
    switch (mode_) {
        case mode::value: return step_value(c, out);
        case mode::key: return step_key(c, out);
        case mode::colon:
            if (is_space(c)) return true;
            if (c == ':') {
                out += ": ";
                mode_ = mode::value;
            } else {
                status_ = status::error;
            }
            return true;
        case mode::after: return step_after(c, out);
        case mode::string: return step_string(c, out);
        case mode::escape: return step_escape(c, out);
        case mode::hex: return step_hex(c, out);
        case mode::number:
        case mode::word:
            if (mode_ == mode::number ? is_number_char(c) : is_word_char(c, in_key_)) {
                tok_ += c;
                return true;
            }
            if (!finish_word(out)) status_ = status::error;
            return false;
        case mode::quote_open:
        case mode::quote_close: return step_quote(c, out);
    }
    return true;
}

void literal_parser::begin_item(std::string & out) {
    out += sep_;
    sep_.clear();
}

void literal_parser::open_string(char quote, bool key, std::string & out) {
    out += '"';
    quote_ = quote;
    in_key_ = key;
    mode_ = mode::string;
}

void literal_parser::end_value() {
    if (stack_.empty()) {
        status_ = status::done;
    } else {
        mode_ = mode::after;
    }
}

void literal_parser::close_container(std::string & out) {
    sep_.clear();
    out += stack_.back() == '{' ? '}' : ']';
    stack_.pop_back();
    end_value();
}

// Whether c can begin a value (a key when key).
bool literal_parser::can_begin(char c, bool key) const {
    if (c == '"' || c == '\'' || (c == '<' && cfg_.gemma_strings)) return true;
    if (key) return is_word_char(c, true) && c != '-' && c != '.';
    return c == '{' || c == '[' || is_digit(c) || c == '-' || c == '+' || c == '.' || is_alpha(c) || c == '_';
}

bool literal_parser::step_value(char c, std::string & out) {
    if (is_space(c)) return true;
    if (c == ']' && !stack_.empty() && stack_.back() == '[') {  // [] or a trailing comma
        close_container(out);
        return true;
    }
    // Nothing goes out for a byte that cannot begin a value (repair() relies on it).
    if (!can_begin(c, false) || (cfg_.object_only && stack_.empty() && c != '{')) {
        status_ = status::error;
        return true;
    }
    started_ = true;
    begin_item(out);
    in_key_ = false;
    if (c == '{' || c == '[') {
        out += c;
        stack_.push_back(c);
        mode_ = c == '{' ? mode::key : mode::value;
    } else if (c == '"' || c == '\'') {
        open_string(c, false, out);
    } else if (c == '<') {
        quote_match_ = 1;
        mode_ = mode::quote_open;
    } else {
        tok_.assign(1, c);
        mode_ = is_digit(c) || c == '-' || c == '+' || c == '.' ? mode::number : mode::word;
    }
    return true;
}

bool literal_parser::step_key(char c, std::string & out) {
    if (is_space(c)) return true;
    if (c == '}') {  // {} or a trailing comma
        close_container(out);
        return true;
    }
    if (!can_begin(c, true)) {
        status_ = status::error;
        return true;
    }
    begin_item(out);
    in_key_ = true;
    if (c == '"' || c == '\'') {
        open_string(c, true, out);
    } else if (c == '<') {
        quote_match_ = 1;
        mode_ = mode::quote_open;
    } else {
        tok_.assign(1, c);
        mode_ = mode::word;
    }
    return true;
}

bool literal_parser::step_after(char c, std::string & out) {
    if (is_space(c)) return true;
    if (c == ',') {
        sep_ = ", ";
        mode_ = stack_.back() == '{' ? mode::key : mode::value;
    } else if ((c == '}' && stack_.back() == '{') || (c == ']' && stack_.back() == '[')) {
        close_container(out);
    } else {
        status_ = status::error;
    }
    return true;
}

bool literal_parser::step_string(char c, std::string & out) {
    if (!high_.empty() && (c != '\\' || quote_ == 'g')) {  // a high surrogate alone
        out += "\\ufffd";
        high_.clear();
    }
    if (quote_ == 'g') {
        if (c == '<') {
            quote_match_ = 1;
            mode_ = mode::quote_close;
            return true;
        }
    } else if (c == quote_) {
        out += '"';
        if (in_key_) {
            in_key_ = false;
            mode_ = mode::colon;
        } else {
            end_value();
        }
        return true;
    } else if (c == '\\') {
        mode_ = mode::escape;
        return true;
    }
    json_escape_append(std::string_view(&c, 1), out);
    return true;
}

bool literal_parser::step_escape(char c, std::string & out) {
    mode_ = mode::string;
    if (!high_.empty() && c != 'u') {
        out += "\\ufffd";
        high_.clear();
    }
    switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '/': out += '/'; break;
        case '\'': out += '\''; break;
        case 'b': case 'f': case 'n': case 'r': case 't':
            out += '\\';
            out += c;
            break;
        case 'u': case 'x': case 'U':
            hex_kind_ = c;
            tok_.clear();
            mode_ = mode::hex;
            break;
        case '0': out += "\\u0000"; break;
        case 'a': out += "\\u0007"; break;
        case 'v': out += "\\u000b"; break;
        case '\n': break;  // a Python line continuation
        default:
            out += "\\\\";
            json_escape_append(std::string_view(&c, 1), out);
    }
    return true;
}

bool literal_parser::step_hex(char c, std::string & out) {
    size_t need = hex_kind_ == 'x' ? 2 : hex_kind_ == 'u' ? 4 : 8;
    if (hex_value(c) < 0) {  // not an escape after all: keep its text
        if (!high_.empty()) out += "\\ufffd";
        high_.clear();
        out += "\\\\";
        out += hex_kind_;
        out += tok_;
        mode_ = mode::string;
        return false;
    }
    tok_ += c;
    if (tok_.size() < need) return true;
    mode_ = mode::string;
    uint32_t cp = 0;
    for (char h : tok_) cp = cp * 16 + static_cast<uint32_t>(hex_value(h));
    if (hex_kind_ == 'u') {  // JSON's form, kept as written; a surrogate only as half of a pair
        std::string high = std::move(high_);
        high_.clear();
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (!high.empty()) out += "\\ufffd";
            high_ = tok_;
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            out += high.empty() ? "\\ufffd" : "\\u" + high + "\\u" + tok_;
        } else {
            if (!high.empty()) out += "\\ufffd";
            out += "\\u";
            out += tok_;
        }
        return true;
    }
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
    std::string utf8;
    utf8_append(cp, utf8);
    json_escape_append(utf8, out);
    return true;
}

bool literal_parser::step_quote(char c, std::string & out) {
    if (mode_ == mode::quote_open) {
        if (c != gemma_quote[quote_match_]) {
            status_ = status::error;
            return true;
        }
        if (++quote_match_ == static_cast<int>(gemma_quote.size())) {
            out += '"';
            quote_ = 'g';
            mode_ = mode::string;
        }
        return true;
    }
    if (c == gemma_quote[quote_match_]) {
        if (++quote_match_ == static_cast<int>(gemma_quote.size())) {
            out += '"';
            if (in_key_) {
                in_key_ = false;
                mode_ = mode::colon;
            } else {
                end_value();
            }
        }
        return true;
    }
    json_escape_append(gemma_quote.substr(0, quote_match_), out);  // they were text
    mode_ = mode::string;
    return false;
}

bool literal_parser::finish_word(std::string & out) {
    bool ok = true;
    if (mode_ == mode::number) {
        ok = json_number_text(tok_);  // "+1", ".5", "007" are not numbers here (an XML value stays a string)
        if (ok) out += tok_;
    } else if (in_key_) {
        out += '"';
        json_escape_append(tok_, out);
        out += '"';
        in_key_ = false;
        tok_.clear();
        mode_ = mode::colon;
        return true;
    } else if (tok_ == "true" || tok_ == "True") {
        out += "true";
    } else if (tok_ == "false" || tok_ == "False") {
        out += "false";
    } else if (tok_ == "null" || tok_ == "None") {
        out += "null";
    } else {
        ok = false;
    }
    tok_.clear();
    if (ok) end_value();
    return ok;
}

}  // namespace toolcall::detail
