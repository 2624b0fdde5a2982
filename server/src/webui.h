// The web chat page at GET /: the files of webui/ compiled into the daemon, or the files of a
// folder given with --webui-path, served with headers that keep the page to itself (a strict
// Content-Security-Policy, nosniff, no framing) and with ETags so that a reload costs a 304.
#pragma once

#include "server/http-server.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>

// One file of the page, ready to answer with.
struct webui_file {
    std::string body;
    std::string content_type;
    std::string etag;  // quoted, e.g. "\"1a2b3c4d-120\""
};

// Where the page's files come from.
class webui_source {
public:
    virtual ~webui_source() = default;
    // The file a GET of `path` (no query) is answered with: "/" is index.html; nullopt when
    // there is none (the request gets the usual 404).
    virtual std::optional<webui_file> find(std::string_view path) const = 0;
};

// The files compiled into the daemon (nullptr when this build has none).
std::unique_ptr<webui_source> webui_builtin();
// The files under `dir`, read at each request (a rebuild shows without a restart); only regular
// files inside `dir` (no "..", no links out of it). nullptr with *error when `dir` is not a
// folder holding an index.html.
std::unique_ptr<webui_source> webui_folder(const std::string & dir, std::string * error);

// The Content-Type for a file name by its extension ("application/octet-stream" when unknown).
std::string_view webui_content_type(std::string_view name);

// The headers every page response carries (the policy, nosniff, referrer, framing, caching).
http_headers webui_headers(const webui_file & f);

// Answers GET requests for the page from `src` on `router`: its fallback for GETs that no API
// route takes (the page's paths never shadow an API route). `served(path, status)` is told of
// each answer (for metrics).
void webui_add_routes(http_router & router, std::shared_ptr<const webui_source> src,
                      std::function<void(const std::string &, int)> served);
