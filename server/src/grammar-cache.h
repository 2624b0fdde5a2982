// Structured output in the server: a request's constraint (api_constraint) compiled into a
// grammar program, with a small cache so that a client sending the same schema with every
// request compiles it once and its requests share the program's lazily built automaton and
// token-mask caches (internal).
//
// Usage:
//   std::shared_ptr<const grammar_program> program;
//   if (auto e = cache.compile(req.constraint, &program)) return respond_error(*e);   // 400
//   g.grammar = program;                                  // nullptr when the request has none
#pragma once

#include "api/error.h"
#include "api/request-common.h"
#include "grammar/token-mask.h"

#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

class grammar_program_cache {
public:
    explicit grammar_program_cache(size_t capacity = 32) : capacity_(capacity) {}

    // nullopt with *out set (nullptr for no constraint), or a 400 invalid_request_error whose
    // param is the constraint's field and whose message names it and the problem:
    // "grammar: line 1, column 9: …", "response_format: unsupported keyword 'not' at /properties/a".
    // Thread-safe.
    std::optional<api_error> compile(const api_constraint & c, std::shared_ptr<const grammar_program> * out);

private:
    using entry = std::pair<std::string, std::shared_ptr<const grammar_program>>;

    std::shared_ptr<const grammar_program> find(const std::string & key);
    void insert(const std::string & key, std::shared_ptr<const grammar_program> program);

    std::mutex mu_;
    size_t capacity_;
    std::list<entry> lru_;  // most recently used first
    std::unordered_map<std::string, std::list<entry>::iterator> index_;
};
