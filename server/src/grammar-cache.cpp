// Compiling request constraints (GBNF, JSON Schema) and tool-call grammars into grammar
// programs, with an LRU cache of programs and refusals.
#include "grammar-cache.h"

#include "grammar/gbnf.h"
#include "grammar/json-schema.h"

#include <vector>

namespace {

// A request's schema gets 0.5 s from `started` (the library's default, 10 s, is for offline
// tools), so that the request is answered within a second however its schema is made.
json_schema_options request_schema_budgets(std::chrono::steady_clock::time_point started) {
    json_schema_options o;
    o.max_time_ms = 500;
    o.started = started;
    return o;
}

// Keys longer than this are compiled every time rather than kept.
constexpr size_t max_cached_text = size_t(64) << 10;

// Whether the compact JSON text of `v` is longer than `limit`, from a lower bound on its length
// (walked with a work list, stopping once past): a cache key is not written for tools of megabytes.
bool text_longer_than(const nlohmann::ordered_json & v, size_t limit) {
    size_t n = 0;
    std::vector<const nlohmann::ordered_json *> pending = {&v};
    while (!pending.empty() && n <= limit) {
        const nlohmann::ordered_json * j = pending.back();
        pending.pop_back();
        if (j->is_string()) {
            n += j->get_ref<const std::string &>().size() + 2;
        } else if (j->is_object()) {
            n += 2 + j->size();
            for (auto it = j->begin(); it != j->end(); ++it) {
                n += it.key().size() + 3;
                pending.push_back(&it.value());
            }
        } else if (j->is_array()) {
            n += 2 + j->size();
            for (const auto & e : *j) pending.push_back(&e);
        } else {
            n += 1;
        }
    }
    return n > limit;
}

}  // namespace

std::string grammar_program_cache::key_of(const api_constraint & c) {
    return (c.kind == api_constraint_kind::gbnf ? "g:" : "s:") + c.text;
}

// Every field of the options, the family and the tools' compact JSON; the function name with its
// length first, so that no two option sets make the same key. "" for tools too long to keep.
std::string grammar_program_cache::key_of(toolcall::family f, const nlohmann::ordered_json & tools,
                                          const toolcall::call_grammar_options & o) {
    if (text_longer_than(tools, max_cached_text)) return "";
    std::string key = "t:";
    key += toolcall::family_name(f);
    key += ':';
    key += std::to_string(o.function.size());
    key += ':';
    key += o.function;
    for (bool b : {o.parallel, o.allow_reasoning, o.reasoning_open, o.optional_calls, o.strict}) key += b ? '1' : '0';
    key += ':';
    key += tools.dump();
    return key;
}

grammar_program_cache::outcome grammar_program_cache::build(api_constraint_kind kind, const std::string & text,
                                                            bool * cacheable,
                                                            std::chrono::steady_clock::time_point started) {
    *cacheable = true;
    try {
        grammar g;
        if (kind == api_constraint_kind::gbnf) {
            grammar_parse_result r = grammar_parse_gbnf(text);
            if (!r.ok()) return {nullptr, r.error.to_string()};
            g = std::move(r.value);
        } else {
            json_schema_result r = json_schema_compile(text, request_schema_budgets(started));
            if (!r.ok()) return {nullptr, r.error};
            g = std::move(r.value);
        }
        grammar_program_result p = grammar_program_build(g);
        if (!p.ok()) return {nullptr, p.error};
        return {std::move(p.value), ""};
    } catch (const std::exception & e) {  // e.g. a grammar too large for memory
        *cacheable = false;
        return {nullptr, std::string("the grammar could not be compiled (") + e.what() + ")"};
    }
}

std::optional<api_error> grammar_program_cache::answer(const outcome & o, const std::string & param,
                                                       std::shared_ptr<const grammar_program> * out) {
    *out = o.program;
    if (o.program) return std::nullopt;
    return api_error_invalid_request(param + ": " + o.problem, param);
}

std::optional<api_error> grammar_program_cache::compile(const api_constraint & c,
                                                        std::shared_ptr<const grammar_program> * out,
                                                        std::chrono::steady_clock::time_point started) {
    std::optional<api_error> e;
    if (lookup(c, out, &e)) return e;
    bool cacheable = true;
    outcome o = build(c.kind, c.text, &cacheable, started);
    if (cacheable) insert(key_of(c), o);
    return answer(o, c.source_param, out);
}

std::optional<api_error> grammar_program_cache::compile_tool_calls(toolcall::family f,
                                                                   const nlohmann::ordered_json & tools,
                                                                   const toolcall::call_grammar_options & o,
                                                                   std::shared_ptr<const grammar_program> * out) {
    *out = nullptr;
    const std::string key = key_of(f, tools, o);
    outcome found;
    if (find(key, &found)) return answer(found, "tool_choice", out);
    bool cacheable = true;
    outcome built;
    try {
        toolcall::call_grammar_result r = toolcall::call_grammar(f, tools, o);
        built = r.ok() ? build(api_constraint_kind::gbnf, r.gbnf, &cacheable) : outcome{nullptr, r.error};
    } catch (const std::exception & e) {
        cacheable = false;
        built = {nullptr, std::string("the grammar could not be compiled (") + e.what() + ")"};
    }
    if (cacheable) insert(key, built);
    return answer(built, "tool_choice", out);
}

bool grammar_program_cache::lookup(const api_constraint & c, std::shared_ptr<const grammar_program> * out,
                                   std::optional<api_error> * error) {
    *out = nullptr;
    *error = std::nullopt;
    if (c.kind == api_constraint_kind::none) return true;
    outcome found;
    if (!find(key_of(c), &found)) return false;
    *error = answer(found, c.source_param, out);
    return true;
}

bool grammar_program_cache::lookup_tool_calls(toolcall::family f, const nlohmann::ordered_json & tools,
                                              const toolcall::call_grammar_options & o,
                                              std::shared_ptr<const grammar_program> * out,
                                              std::optional<api_error> * error) {
    *out = nullptr;
    *error = std::nullopt;
    outcome found;
    if (!find(key_of(f, tools, o), &found)) return false;
    *error = answer(found, "tool_choice", out);
    return true;
}

bool grammar_program_cache::find(const std::string & key, outcome * out) {
    if (key.empty() || key.size() > max_cached_text) return false;
    std::lock_guard<std::mutex> lk(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return false;
    lru_.splice(lru_.begin(), lru_, it->second);
    *out = it->second->second;
    return true;
}

void grammar_program_cache::insert(const std::string & key, outcome value) {
    if (capacity_ == 0 || key.empty() || key.size() > max_cached_text) return;
    std::lock_guard<std::mutex> lk(mu_);
    if (index_.count(key)) return;  // compiled meanwhile by another request
    lru_.emplace_front(key, std::move(value));
    index_[key] = lru_.begin();
    if (lru_.size() > capacity_) {
        index_.erase(lru_.back().first);
        lru_.pop_back();
    }
}
