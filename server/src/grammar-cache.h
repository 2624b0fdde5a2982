// Structured output in the server: a request's constraint (api_constraint) or the grammar that
// forces its tool calls, compiled into a grammar program, with a small LRU cache so that a client
// sending the same schema (or the same tools) with every request compiles it once and its
// requests share the program's lazily built automaton and token-mask caches (internal).
//
// Usage:
//   std::shared_ptr<const grammar_program> program;
//   if (auto e = cache.compile(req.constraint, &program)) return respond_error(*e);   // 400
//   g.grammar = program;                                  // nullptr when the request has none
//
//   std::optional<api_error> e;                           // without compiling (an I/O thread):
//   if (!cache.lookup(req.constraint, &program, &e)) run_on_a_compile_thread(...);
//
//   cache.compile_tool_calls(family, tools, options, &program);   // toolcall::call_grammar's
//
// Refusals (a schema or grammar that does not compile) are cached too, so that the same bad
// schema sent again is refused without compiling; a failure that is not the constraint's (the
// compiler ran out of memory) is not.
#pragma once

#include "api/error.h"
#include "api/request-common.h"
#include "grammar/token-mask.h"
#include "toolcall/call-grammar.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

class grammar_program_cache {
public:
    explicit grammar_program_cache(size_t capacity = 32) : capacity_(capacity) {}

    // nullopt with *out set (nullptr for no constraint), or a 400 invalid_request_error whose
    // param is the constraint's field and whose message names it and the problem:
    // "grammar: line 1, column 9: …", "response_format: unsupported keyword 'not' at /properties/a".
    // A schema's time budget (0.5 s) counts from `started` (the request's own work before the
    // compile included; no time: from now). Thread-safe.
    std::optional<api_error> compile(const api_constraint & c, std::shared_ptr<const grammar_program> * out,
                                     std::chrono::steady_clock::time_point started = {});

    // The grammar of toolcall::call_grammar(f, tools, o), compiled; cached under the tools' JSON
    // and every option that changes it. Errors are 400s whose param is "tool_choice"
    // ("tool_choice: no tool named 'x'"). Thread-safe.
    std::optional<api_error> compile_tool_calls(toolcall::family f, const nlohmann::ordered_json & tools,
                                                const toolcall::call_grammar_options & o,
                                                std::shared_ptr<const grammar_program> * out);

    // Without compiling: true when the answer is known (no constraint, or a cached program or
    // refusal), with *out and *error set as compile would set them; false when it needs a compile.
    bool lookup(const api_constraint & c, std::shared_ptr<const grammar_program> * out, std::optional<api_error> * error);
    bool lookup_tool_calls(toolcall::family f, const nlohmann::ordered_json & tools,
                           const toolcall::call_grammar_options & o, std::shared_ptr<const grammar_program> * out,
                           std::optional<api_error> * error);

private:
    // A compiled program, or the problem that refused it.
    struct outcome {
        std::shared_ptr<const grammar_program> program;
        std::string problem;  // "" when program is set
    };
    using entry = std::pair<std::string, outcome>;

    static std::string key_of(const api_constraint & c);
    static std::string key_of(toolcall::family f, const nlohmann::ordered_json & tools,
                              const toolcall::call_grammar_options & o);
    // *cacheable false: the problem is not the text's (an exception such as std::bad_alloc).
    static outcome build(api_constraint_kind kind, const std::string & text, bool * cacheable,
                         std::chrono::steady_clock::time_point started = {});
    static std::optional<api_error> answer(const outcome & o, const std::string & param,
                                           std::shared_ptr<const grammar_program> * out);

    bool find(const std::string & key, outcome * out);
    void insert(const std::string & key, outcome value);

    std::mutex mu_;
    size_t capacity_;
    std::list<entry> lru_;  // most recently used first
    std::unordered_map<std::string, std::list<entry>::iterator> index_;
};
