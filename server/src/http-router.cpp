// http-router.cpp — http_request helpers, the router (exact path match, 404 / 405) and the
// OpenAI-shaped error JSON shared by the HTTP layer.
#include "server/http-server.h"

#include <algorithm>
#include <cstdio>

namespace {

bool ascii_iequal(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) {
        return false;
    }
    for (size_t i = 0; i < a.size(); ++i) {
        char x = a[i];
        char y = b[i];
        if (x >= 'A' && x <= 'Z') {
            x = char(x - 'A' + 'a');
        }
        if (y >= 'A' && y <= 'Z') {
            y = char(y - 'A' + 'a');
        }
        if (x != y) {
            return false;
        }
    }
    return true;
}

// Length of the valid UTF-8 sequence at s[i], 0 when the bytes there are not one.
size_t utf8_sequence_length(std::string_view s, size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    unsigned cp = 0;
    if (c < 0x80) {
        return 1;
    } else if ((c & 0xE0) == 0xC0) {
        n = 2;
        cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
        n = 3;
        cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (i + n > s.size()) {
        return 0;
    }
    for (size_t k = 1; k < n; ++k) {
        const auto d = static_cast<unsigned char>(s[i + k]);
        if ((d & 0xC0) != 0x80) {
            return 0;
        }
        cp = (cp << 6) | (d & 0x3F);
    }
    const bool overlong = (n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
    const bool surrogate = cp >= 0xD800 && cp <= 0xDFFF;
    if (overlong || surrogate || cp > 0x10FFFF) {
        return 0;
    }
    return n;
}

}  // namespace

std::string http_json_quote(std::string_view s) {
    std::string out;
    out.reserve(s.size() + 2);
    out += '"';
    for (size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += char(c);
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c < 0x20 || c == 0x7F) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(c));
            out += buf;
        } else if (c >= 0x80) {
            const size_t n = utf8_sequence_length(s, i);
            if (n == 0) {
                out += "\\ufffd";
                ++i;
                continue;
            }
            out.append(s.substr(i, n));
            i += n;
            continue;
        } else {
            out += char(c);
        }
        ++i;
    }
    out += '"';
    return out;
}

std::string http_error_json(std::string_view message, std::string_view type, std::string_view code) {
    std::string out = "{\"error\":{\"message\":";
    out += http_json_quote(message);
    out += ",\"type\":";
    out += http_json_quote(type);
    out += ",\"param\":null,\"code\":";
    out += code.empty() ? std::string("null") : http_json_quote(code);
    out += "}}";
    return out;
}

std::string http_request::header(std::string_view name) const {
    for (const auto & [k, v] : headers) {
        if (ascii_iequal(k, name)) {
            return v;
        }
    }
    return {};
}

void http_router::add(std::string method, std::string path, http_handler h) {
    routes_.push_back(route{std::move(method), std::move(path), std::move(h)});
}

void http_router::set_filter(std::function<bool(const http_request &, const std::shared_ptr<http_response> &)> f) {
    filter_ = std::move(f);
}

void http_router::set_fallback(std::string method, http_handler h) {
    fallback_ = route{std::move(method), "", std::move(h)};
}

void http_router::dispatch(const http_request & req, std::shared_ptr<http_response> res) const {
    if (filter_ && !filter_(req, res)) {
        return;
    }
    std::vector<std::string_view> methods;
    for (const auto & r : routes_) {
        if (r.path != req.path) {
            continue;
        }
        if (r.method == req.method) {
            r.handler(req, std::move(res));
            return;
        }
        if (std::find(methods.begin(), methods.end(), r.method) == methods.end()) {
            methods.push_back(r.method);
        }
    }
    std::string allow;
    for (auto m : methods) {
        allow += allow.empty() ? "" : ", ";
        allow += m;
    }
    if (allow.empty() && fallback_.handler && fallback_.method == req.method) {
        fallback_.handler(req, std::move(res));
        return;
    }
    if (allow.empty()) {
        res->respond(404, "application/json",
                     http_error_json("Not found: " + req.path, "not_found_error", "not_found"));
        return;
    }
    res->respond(405, "application/json",
                 http_error_json("Method " + req.method + " not allowed for " + req.path + " (allowed: " + allow + ")",
                                 "invalid_request_error", "method_not_allowed"),
                 {{"Allow", allow}});
}
