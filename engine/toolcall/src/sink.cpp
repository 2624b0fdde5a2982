// sink.cpp — deltas and the message they add up to; the request's parameter schemas; the
// cursor helpers every block uses.
#include "engine.h"

#include <algorithm>

namespace toolcall::detail {

// ---- tool_schemas ----

tool_schemas::tool_schemas(const nlohmann::ordered_json & tools) {
    if (!tools.is_array()) return;
    for (const auto & t : tools) {
        if (!t.is_object()) continue;
        const auto & fn = t.contains("function") && t["function"].is_object() ? t["function"] : t;
        if (!fn.contains("name") || !fn["name"].is_string()) continue;
        if (!fn.contains("parameters") || !fn["parameters"].is_object()) continue;
        const auto & params = fn["parameters"];
        if (params.contains("properties") && params["properties"].is_object()) {
            properties_[fn["name"].get<std::string>()] = params["properties"];
        }
    }
}

namespace {

// Whether a schema admits only strings (null aside).
bool schema_is_string(const nlohmann::ordered_json & s, int depth = 0) {
    if (!s.is_object() || depth > 8) return false;
    if (s.contains("type")) {
        const auto & t = s["type"];
        if (t.is_string()) return t == "string";
        if (!t.is_array()) return false;
        bool any_string = false;
        for (const auto & e : t) {
            if (e == "string") {
                any_string = true;
            } else if (e != "null") {
                return false;
            }
        }
        return any_string;
    }
    for (const char * key : {"anyOf", "oneOf"}) {
        if (!s.contains(key) || !s[key].is_array()) continue;
        bool any_string = false;
        for (const auto & branch : s[key]) {
            if (schema_is_string(branch, depth + 1)) {
                any_string = true;
            } else if (!(branch.is_object() && branch.contains("type") && branch["type"] == "null")) {
                return false;
            }
        }
        return any_string;
    }
    if (s.contains("enum") && s["enum"].is_array() && !s["enum"].empty()) {
        for (const auto & e : s["enum"]) {
            if (!e.is_string()) return false;
        }
        return true;
    }
    return s.contains("const") && s["const"].is_string();
}

}  // namespace

bool tool_schemas::is_string(std::string_view tool, std::string_view param) const {
    auto it = properties_.find(tool);
    if (it == properties_.end()) return false;
    auto p = it->second.find(std::string(param));
    return p != it->second.end() && schema_is_string(*p);
}

// ---- sink ----

namespace {

std::string valid_utf8(std::string_view s) {
    utf8_assembler a;
    std::string out;
    a.push(s, out);
    a.flush(out);
    return out;
}

}  // namespace

sink::sink(uint64_t id_seed) : rng_(id_seed != 0 ? id_seed : std::random_device{}()) {}

std::string sink::text_channel::push(std::string_view text) {
    std::string s;
    utf8.push(text, s);
    size_t last = s.size();
    while (last > 0 && is_space(s[last - 1])) --last;
    if (last == 0) {  // only whitespace: it waits for what follows (or is dropped at the start)
        if (started) pending_space += s;
        return {};
    }
    size_t first = 0;
    if (!started) {
        while (is_space(s[first])) ++first;
    }
    std::string out = started ? std::move(pending_space) : std::string();
    out.append(s, first, last - first);
    pending_space.assign(s, last);
    started = true;
    return out;
}

void sink::emit_text(delta::kind k, const std::string & text) {
    if (text.empty()) return;
    (k == delta::kind::content ? msg_.content : msg_.reasoning_content) += text;
    if (!deltas_.empty() && deltas_.back().what == k) {
        deltas_.back().text += text;
        return;
    }
    delta d;
    d.what = k;
    d.text = text;
    deltas_.push_back(std::move(d));
}

void sink::content(std::string_view text) { emit_text(delta::kind::content, content_.push(text)); }

void sink::reasoning(std::string_view text) { emit_text(delta::kind::reasoning, reasoning_.push(text)); }

std::string sink::generate_id() {
    static constexpr std::string_view alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    std::string id = "call_";
    for (int i = 0; i < 24; ++i) id += alnum[rng_() % alnum.size()];
    return id;
}

void sink::call_begin(std::string id, std::string name) {
    if (in_call_) call_end();
    in_call_ = true;
    args_text_.clear();
    tool_call tc;
    tc.id = id.empty() ? generate_id() : valid_utf8(id);
    tc.name = valid_utf8(name);
    delta d;
    d.what = delta::kind::tool_call;
    d.call.index = static_cast<int>(msg_.tool_calls.size());
    d.call.id = tc.id;
    d.call.name = tc.name;
    msg_.tool_calls.push_back(std::move(tc));
    deltas_.push_back(std::move(d));
}

void sink::call_args(std::string_view json_text) {
    if (!in_call_) return;
    std::string s;
    args_utf8_.push(json_text, s);
    if (s.empty()) return;
    args_text_ += s;
    const int index = static_cast<int>(msg_.tool_calls.size()) - 1;
    if (!deltas_.empty()) {
        delta & last = deltas_.back();
        if (last.what == delta::kind::tool_call && last.call.index == index && last.call.name.empty()) {
            last.call.arguments += s;
            return;
        }
    }
    delta d;
    d.what = delta::kind::tool_call;
    d.call.index = index;
    d.call.arguments = std::move(s);
    deltas_.push_back(std::move(d));
}

void sink::call_end() {
    if (!in_call_) return;
    std::string tail;
    args_utf8_.flush(tail);
    if (!tail.empty()) call_args(tail);
    in_call_ = false;
    auto args = nlohmann::ordered_json::parse(args_text_, nullptr, false);
    msg_.tool_calls.back().arguments = args.is_object() ? std::move(args) : nlohmann::ordered_json::object();
}

void sink::finish() {
    std::string rest;
    content_.utf8.flush(rest);
    emit_text(delta::kind::content, content_.push(rest));
    rest.clear();
    reasoning_.utf8.flush(rest);
    emit_text(delta::kind::reasoning, reasoning_.push(rest));
    call_end();  // blocks end their calls; this only guards the message
}

std::vector<delta> sink::take() {
    std::vector<delta> out;
    out.swap(deltas_);
    return out;
}

// ---- cursor helpers ----

size_t skip_space(const context & ctx, size_t cur) {
    while (cur < ctx.buf.size() && is_space(ctx.buf[cur])) ++cur;
    return cur;
}

match match_literal(const context & ctx, size_t & cur, std::string_view lit) {
    std::string_view rest = std::string_view(ctx.buf).substr(std::min(cur, ctx.buf.size()));
    if (rest.size() >= lit.size()) {
        if (rest.substr(0, lit.size()) != lit) return match::no;
        cur += lit.size();
        return match::yes;
    }
    if (lit.substr(0, rest.size()) != rest || ctx.at_end) return match::no;
    return match::more;
}

match match_after_space(const context & ctx, size_t & cur, std::string_view lit) {
    size_t c = skip_space(ctx, cur);
    if (c == ctx.buf.size() && !ctx.at_end) return match::more;
    match m = match_literal(ctx, c, lit);
    if (m == match::yes) cur = c;
    return m;
}

match read_until(const context & ctx, size_t & cur, const std::vector<std::string> & delims, std::string & text,
                 size_t & which, size_t max_len, bool keep_delim) {
    size_t longest = 0;
    for (const std::string & d : delims) longest = std::max(longest, d.size());
    // Only a delimiter starting within max_len counts, so only that far is searched.
    std::string_view reach = std::string_view(ctx.buf).substr(0, std::min(ctx.buf.size(), cur + max_len + longest));
    marker_hit hit = find_first_marker(reach, cur, delims);
    if (hit.pos == std::string::npos || hit.pos - cur > max_len) {
        // No when no delimiter can start within max_len any more, whatever follows: decided by
        // the text alone, never by how much of it has arrived.
        if (hit.pos != std::string::npos || ctx.at_end || ctx.buf.size() - cur >= max_len + longest) return match::no;
        return match::more;
    }
    text.assign(ctx.buf, cur, hit.pos - cur);
    which = hit.index;
    cur = keep_delim ? hit.pos : hit.pos + delims[hit.index].size();
    return match::yes;
}

bool valid_name(std::string_view name) {
    if (name.empty() || name.size() > 256) return false;
    for (char c : name) {
        if (is_space(c) || static_cast<unsigned char>(c) < 0x20) return false;
        if (c == '<' || c == '>' || c == '{' || c == '}' || c == '"' || c == '[' || c == ']') return false;
    }
    return true;
}

}  // namespace toolcall::detail

namespace toolcall::detail {

// ---- pending_call ----

void pending_call::open(std::string id, std::string name) {
    id_ = std::move(id);
    name_ = std::move(name);
    held_.clear();
    active_ = true;
    begun_ = false;
}

void pending_call::args(context & ctx, std::string_view json_text) {
    if (begun_) {
        ctx.out.call_args(json_text);
    } else {
        held_ += json_text;
    }
}

void pending_call::commit(context & ctx) {
    if (!active_ || begun_) return;
    begun_ = true;
    ctx.out.call_begin(id_, name_);
    ctx.out.call_args(held_);
    held_.clear();
}

void pending_call::end(context & ctx) {
    if (!active_) return;
    commit(ctx);
    ctx.out.call_end();
    active_ = begun_ = false;
}

}  // namespace toolcall::detail
