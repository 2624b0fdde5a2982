// api/src/json-span.cpp — a value's text cut from a JSON text by a JSON pointer.
#include "json-span.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace {

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// A forward reader over a JSON text that is valid (every step still checks bounds, so that a text
// that is not cannot make it read past the end).
struct json_cursor {
    std::string_view t;
    size_t i = 0;

    bool done() const { return i >= t.size(); }
    void skip_ws() {
        while (i < t.size() && is_ws(t[i])) ++i;
    }
    bool at(char c) {
        skip_ws();
        return i < t.size() && t[i] == c;
    }
    // Past a string whose opening quote is at i.
    bool skip_string() {
        for (++i; i < t.size(); ++i) {
            if (t[i] == '\\') {
                ++i;
            } else if (t[i] == '"') {
                ++i;
                return true;
            }
        }
        return false;
    }
    // Past one value starting at i (after whitespace): brackets are counted outside strings.
    bool skip_value() {
        skip_ws();
        if (done()) return false;
        if (t[i] == '"') return skip_string();
        if (t[i] != '{' && t[i] != '[') {
            while (i < t.size() && !is_ws(t[i]) && t[i] != ',' && t[i] != ']' && t[i] != '}') ++i;
            return true;
        }
        size_t depth = 0;
        while (i < t.size()) {
            const char c = t[i];
            if (c == '"') {
                if (!skip_string()) return false;
                continue;
            }
            ++i;
            if (c == '{' || c == '[') {
                ++depth;
            } else if ((c == '}' || c == ']') && --depth == 0) {
                return true;
            }
        }
        return false;
    }
};

// Whether a key, as the parser reads it (escapes decoded), is `key`; `raw` includes the quotes.
bool key_is(std::string_view raw, const std::string & key) {
    if (raw.find('\\') == std::string_view::npos) return raw.substr(1, raw.size() - 2) == key;
    return nlohmann::json::parse(raw).get<std::string>() == key;
}

// A JSON pointer's reference tokens, ~1 and ~0 decoded.
bool pointer_tokens(std::string_view pointer, std::vector<std::string> * out) {
    if (pointer.empty()) return true;
    if (pointer[0] != '/') return false;
    std::string token;
    for (size_t k = 1; k <= pointer.size(); ++k) {
        if (k == pointer.size() || pointer[k] == '/') {
            out->push_back(std::move(token));
            token.clear();
        } else if (pointer[k] == '~' && k + 1 < pointer.size() && (pointer[k + 1] == '0' || pointer[k + 1] == '1')) {
            token += pointer[++k] == '0' ? '~' : '/';
        } else {
            token += pointer[k];
        }
    }
    return true;
}

// From an object's '{' at c.i to the last value of `key` (c.i at its start); false if absent.
bool enter_member(json_cursor & c, const std::string & key) {
    ++c.i;
    std::optional<size_t> found;
    if (c.at('}')) return false;
    while (true) {
        if (!c.at('"')) return false;
        const size_t k0 = c.i;
        if (!c.skip_string()) return false;
        const bool match = key_is(c.t.substr(k0, c.i - k0), key);
        if (!c.at(':')) return false;
        ++c.i;
        c.skip_ws();
        const size_t v0 = c.i;
        if (!c.skip_value()) return false;
        if (match) found = v0;  // a repeated key: the last value counts
        if (c.at(',')) {
            ++c.i;
        } else if (c.at('}')) {
            break;
        } else {
            return false;
        }
    }
    if (!found) return false;
    c.i = *found;
    return true;
}

// From an array's '[' at c.i to its element `token` (decimal, no leading zero); false if absent.
bool enter_element(json_cursor & c, const std::string & token) {
    if (token.empty() || token.size() > 18 || (token.size() > 1 && token[0] == '0')) return false;
    size_t n = 0;
    for (char d : token) {
        if (d < '0' || d > '9') return false;
        n = n * 10 + size_t(d - '0');
    }
    ++c.i;
    if (c.at(']')) return false;
    for (size_t k = 0; k < n; ++k) {
        if (!c.skip_value()) return false;
        if (!c.at(',')) return false;
        ++c.i;
    }
    c.skip_ws();
    return !c.done();
}

// The value at c.i without whitespace outside strings.
std::optional<std::string> compact_value(json_cursor & c) {
    c.skip_ws();
    const size_t v0 = c.i;
    if (!c.skip_value()) return std::nullopt;
    std::string out;
    out.reserve(c.i - v0);
    bool in_string = false;
    for (size_t k = v0; k < c.i; ++k) {
        const char ch = c.t[k];
        if (in_string) {
            out += ch;
            if (ch == '\\' && k + 1 < c.i) {
                out += c.t[++k];
            } else if (ch == '"') {
                in_string = false;
            }
        } else if (!is_ws(ch)) {
            out += ch;
            in_string = ch == '"';
        }
    }
    return out;
}

}  // namespace

std::optional<std::string> json_compact_text_at(std::string_view text, std::string_view pointer) {
    std::vector<std::string> tokens;
    if (!pointer_tokens(pointer, &tokens)) return std::nullopt;
    json_cursor c{text};
    try {
        for (const std::string & token : tokens) {
            c.skip_ws();
            if (c.done()) return std::nullopt;
            if (c.t[c.i] == '{') {
                if (!enter_member(c, token)) return std::nullopt;
            } else if (c.t[c.i] == '[') {
                if (!enter_element(c, token)) return std::nullopt;
            } else {
                return std::nullopt;
            }
        }
    } catch (const nlohmann::json::exception &) {  // a key that is not a JSON string
        return std::nullopt;
    }
    return compact_value(c);
}
