// The web chat page: built-in or folder sources, content types, headers and the GET fallback.
#include "webui.h"

#include "webui-assets.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

namespace fs = std::filesystem;

namespace {

constexpr size_t k_max_file_size = size_t{64} << 20;  // a folder's file larger than this is not served

// FNV-1a over the bytes, with the size: enough to tell two versions of a file apart.
std::string etag_of(std::string_view body) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : body) {
        h ^= c;
        h *= 1099511628211ull;
    }
    char buf[48];
    std::snprintf(buf, sizeof(buf), "\"%016llx-%zx\"", (unsigned long long) h, body.size());
    return buf;
}

webui_file make_file(std::string_view name, std::string body) {
    webui_file f;
    f.content_type = std::string(webui_content_type(name));
    f.etag = etag_of(body);
    f.body = std::move(body);
    return f;
}

class builtin_source final : public webui_source {
public:
    builtin_source() {
        for (size_t i = 0; i < webui_asset_count; ++i) {
            const webui_asset & a = webui_assets[i];
            files_.push_back({a.name, make_file(a.name, std::string(reinterpret_cast<const char *>(a.data), a.size))});
        }
    }
    bool has_index() const { return find("/").has_value(); }
    std::optional<webui_file> find(std::string_view path) const override {
        const std::string_view name = path == "/" ? std::string_view("index.html") : path.substr(1);
        for (const auto & [n, f] : files_) {
            if (n == name) return f;
        }
        return std::nullopt;
    }

private:
    std::vector<std::pair<std::string, webui_file>> files_;
};

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// The path relative to the folder ("index.html" for a path ending in '/'), percent-decoded;
// nullopt for anything that could leave the folder or name a hidden file.
std::optional<std::string> relative_file(std::string_view path) {
    if (path.empty() || path[0] != '/') return std::nullopt;
    std::string decoded;
    for (size_t i = 0; i < path.size(); ++i) {
        if (path[i] != '%') {
            decoded += path[i];
            continue;
        }
        if (i + 2 >= path.size() || hex_value(path[i + 1]) < 0 || hex_value(path[i + 2]) < 0) return std::nullopt;
        decoded += char(hex_value(path[i + 1]) * 16 + hex_value(path[i + 2]));
        i += 2;
    }
    if (decoded.back() == '/') decoded += "index.html";
    std::string rel;
    size_t start = 1;
    while (start <= decoded.size()) {
        size_t end = decoded.find('/', start);
        if (end == std::string::npos) end = decoded.size();
        const std::string seg = decoded.substr(start, end - start);
        // Empty segments, ".", ".." and hidden names (.git, .env) are refused, as are NUL and '\'.
        if (seg.empty() || seg[0] == '.' || seg.find('\0') != std::string::npos || seg.find('\\') != std::string::npos) {
            return std::nullopt;
        }
        if (!rel.empty()) rel += '/';
        rel += seg;
        start = end + 1;
    }
    return rel;
}

class folder_source final : public webui_source {
public:
    explicit folder_source(fs::path root) : root_(std::move(root)) {}
    std::optional<webui_file> find(std::string_view path) const override {
        const std::optional<std::string> rel = relative_file(path);
        if (!rel) return std::nullopt;
        std::error_code ec;
        const fs::path file = fs::canonical(root_ / *rel, ec);  // links resolved
        if (ec) return std::nullopt;
        const std::string inside = root_.string() + "/";
        if (file.string().compare(0, inside.size(), inside) != 0) return std::nullopt;  // a link out of the folder
        if (!fs::is_regular_file(file, ec) || ec) return std::nullopt;
        const uintmax_t size = fs::file_size(file, ec);
        if (ec || size > k_max_file_size) return std::nullopt;
        std::ifstream in(file, std::ios::binary);
        if (!in) return std::nullopt;
        std::ostringstream ss;
        ss << in.rdbuf();
        return make_file(file.filename().string(), ss.str());
    }

private:
    fs::path root_;  // canonical
};

bool etag_matches(const std::string & if_none_match, const std::string & etag) {
    if (if_none_match.empty()) return false;
    if (if_none_match == "*") return true;
    size_t p = 0;
    while (p < if_none_match.size()) {  // a comma-separated list, weak tags compared weakly
        size_t e = if_none_match.find(',', p);
        if (e == std::string::npos) e = if_none_match.size();
        std::string tag = if_none_match.substr(p, e - p);
        const size_t b = tag.find_first_not_of(" \t");
        tag = b == std::string::npos ? "" : tag.substr(b, tag.find_last_not_of(" \t") - b + 1);
        if (tag.rfind("W/", 0) == 0) tag = tag.substr(2);
        if (tag == etag) return true;
        p = e + 1;
    }
    return false;
}

}  // namespace

std::unique_ptr<webui_source> webui_builtin() {
    auto src = std::make_unique<builtin_source>();
    if (!src->has_index()) return nullptr;
    return src;
}

std::unique_ptr<webui_source> webui_folder(const std::string & dir, std::string * error) {
    std::error_code ec;
    const fs::path root = fs::canonical(dir, ec);
    if (ec || !fs::is_directory(root, ec)) {
        *error = "--webui-path " + dir + ": not a folder";
        return nullptr;
    }
    if (!fs::is_regular_file(root / "index.html", ec)) {
        *error = "--webui-path " + dir + ": no index.html in it";
        return nullptr;
    }
    return std::make_unique<folder_source>(root);
}

std::string_view webui_content_type(std::string_view name) {
    static const std::pair<std::string_view, std::string_view> types[] = {
        {".html", "text/html; charset=utf-8"},
        {".htm", "text/html; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".mjs", "text/javascript; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".json", "application/json"},
        {".map", "application/json"},
        {".webmanifest", "application/manifest+json"},
        {".svg", "image/svg+xml"},
        {".png", "image/png"},
        {".jpg", "image/jpeg"},
        {".jpeg", "image/jpeg"},
        {".gif", "image/gif"},
        {".webp", "image/webp"},
        {".ico", "image/x-icon"},
        {".woff", "font/woff"},
        {".woff2", "font/woff2"},
        {".wasm", "application/wasm"},
        {".txt", "text/plain; charset=utf-8"},
    };
    const size_t dot = name.rfind('.');
    if (dot != std::string_view::npos) {
        std::string ext(name.substr(dot));
        for (char & c : ext) c = char(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        for (const auto & [e, t] : types) {
            if (ext == e) return t;
        }
    }
    return "application/octet-stream";
}

http_headers webui_headers(const webui_file & f) {
    return {
        {"Content-Security-Policy",
         "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
         "font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
        {"X-Content-Type-Options", "nosniff"},
        {"X-Frame-Options", "DENY"},
        {"Referrer-Policy", "no-referrer"},
        {"Cross-Origin-Opener-Policy", "same-origin"},
        {"Cache-Control", "no-cache"},
        {"ETag", f.etag},
    };
}

void webui_add_routes(http_router & router, std::shared_ptr<const webui_source> src,
                      std::function<void(const std::string &, int)> served) {
    router.set_fallback("GET", [src, served](const http_request & req, std::shared_ptr<http_response> res) {
        std::optional<webui_file> f = src->find(req.path);
        if (!f) {
            res->respond(404, "application/json", http_error_json("Not found: " + req.path, "not_found_error", "not_found"));
            served(req.path, 404);
            return;
        }
        if (etag_matches(req.header("if-none-match"), f->etag)) {
            res->respond(304, f->content_type, "", webui_headers(*f));
            served(req.path, 304);
            return;
        }
        http_headers headers = webui_headers(*f);
        res->respond(200, f->content_type, std::move(f->body), std::move(headers));
        served(req.path, 200);
    });
}
