// Compiling request constraints (GBNF, JSON Schema) into grammar programs, with an LRU cache.
#include "grammar-cache.h"

#include "grammar/gbnf.h"
#include "grammar/json-schema.h"

namespace {

// Texts longer than this are compiled every time rather than kept as cache keys.
constexpr size_t max_cached_text = size_t(64) << 10;

api_error constraint_error(const api_constraint & c, const std::string & problem) {
    return api_error_invalid_request(c.source_param + ": " + problem, c.source_param);
}

}  // namespace

std::optional<api_error> grammar_program_cache::compile(const api_constraint & c,
                                                        std::shared_ptr<const grammar_program> * out) {
    *out = nullptr;
    if (c.kind == api_constraint_kind::none) return std::nullopt;
    const std::string key = (c.kind == api_constraint_kind::gbnf ? "g:" : "s:") + c.text;
    if (auto p = find(key)) {
        *out = std::move(p);
        return std::nullopt;
    }
    try {
        grammar g;
        if (c.kind == api_constraint_kind::gbnf) {
            grammar_parse_result r = grammar_parse_gbnf(c.text);
            if (!r.ok()) return constraint_error(c, r.error.to_string());
            g = std::move(r.value);
        } else {
            json_schema_result r = json_schema_compile(c.text);
            if (!r.ok()) return constraint_error(c, r.error);
            g = std::move(r.value);
        }
        grammar_program_result p = grammar_program_build(g);
        if (!p.ok()) return constraint_error(c, p.error);
        insert(key, p.value);
        *out = std::move(p.value);
        return std::nullopt;
    } catch (const std::exception & e) {  // e.g. a grammar too large for memory
        return constraint_error(c, std::string("the grammar could not be compiled (") + e.what() + ")");
    }
}

std::shared_ptr<const grammar_program> grammar_program_cache::find(const std::string & key) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->second;
}

void grammar_program_cache::insert(const std::string & key, std::shared_ptr<const grammar_program> program) {
    if (capacity_ == 0 || key.size() > max_cached_text) return;
    std::lock_guard<std::mutex> lk(mu_);
    if (index_.count(key)) return;  // compiled meanwhile by another request
    lru_.emplace_front(key, std::move(program));
    index_[key] = lru_.begin();
    if (lru_.size() > capacity_) {
        index_.erase(lru_.back().first);
        lru_.pop_back();
    }
}
