// libFuzzer target for the JSON Schema compiler's pattern compiler (built with clang,
// -fsanitize=fuzzer,address,undefined; see tests/fuzz/run-fuzz.sh). It reaches the internal
// functions of engine/grammar/src/json-schema-impl.h. Input layout: one byte of options (bit 0:
// the automaton matches the whole text, bits 1-7: a maxLength), then the pattern. Each pattern
// goes through
//   json_schema_regex_parse (an error must say why),
//   json_schema_regex_tree_to_gbnf (where it applies; the GBNF, quoted as a JSON string, must
//     parse),
//   json_schema_dfa_build with the compiler's 4,096-state bound, the automaton run over the
//     pattern's own text, and json_schema_dfa_to_gbnf into a small sink (the rules must parse),
//   and the public path: {"type":"string","pattern":P,"maxLength":N} through json_schema_compile
//     (with a 2 s deadline) and grammar_program_build.
// A crash, a sanitizer report, an exception, a hang past -timeout or a runaway allocation is a
// finding, and so is GBNF that does not parse for a reason other than a size bound.
#include "json-schema-impl.h"

#include "grammar/gbnf.h"
#include "grammar/json-schema.h"
#include "grammar/token-mask.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

namespace {

// One JSON string character as JSON writers write it (the compiler's own rule of that name).
constexpr const char * k_json_char =
    "json-char ::= [^\"\\\\\\x00-\\x1F] | \"\\\\\" ([\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4})\n";

[[noreturn]] void finding(const char * what, std::string_view detail = {}) {
    std::fprintf(stderr, "fuzz-regex: %s%s%.*s\n", what, detail.empty() ? "" : ": ", int(detail.size()), detail.data());
    std::abort();
}

bool size_bound(const std::string & message) {
    return message.find("too large") != std::string::npos || message.find("repetition count over") != std::string::npos ||
           message.find("nested more than") != std::string::npos;
}

void must_parse(const std::string & gbnf, const char * what) {
    const grammar_parse_result g = grammar_parse_gbnf(gbnf);
    if (!g.ok() && !size_bound(g.error.message)) {
        std::fprintf(stderr, "%s\n", gbnf.substr(0, 4096).c_str());
        finding(what, g.error.to_string());
    }
}

void internal_path(std::string_view pattern, bool full_match, uint32_t max_len) {
    regex_tree tree;
    std::string error;
    if (!json_schema_regex_parse(pattern, &tree, &error)) {
        if (error.empty()) finding("a pattern refused without a reason");
        return;
    }
    if (tree.root >= tree.nodes.size()) finding("a tree whose root is not one of its nodes");
    std::string body;
    if (json_schema_regex_tree_to_gbnf(tree, "json-char", &body)) {
        must_parse("root ::= \"\\\"\" " + body + " \"\\\"\"\n" + k_json_char, "the pattern's GBNF does not parse");
    }
    char_dfa dfa;
    error.clear();
    if (!json_schema_dfa_build({dfa_input{&tree, full_match, {}}}, 4096, &dfa, &error)) {
        if (error.empty()) finding("an automaton refused without a reason");
        return;
    }
    if (dfa.states.empty()) finding("an automaton without a start state");
    (void)dfa.run(pattern);
    std::string rules;
    size_t n_names = 0;
    const gbnf_sink sink{[&](const std::string & hint) { return hint + "-" + std::to_string(n_names++); },
                         [&](const std::string & name, const std::string & rule) { rules += name + " ::= " + rule + "\n"; }};
    const dfa_tail tail = [](uint64_t accept) -> std::optional<std::string> {
        if ((accept & 1) == 0) return std::nullopt;
        return "";
    };
    dfa_emit_options o;
    if (max_len < 127) o.max_len = max_len;
    error.clear();
    const std::string start = json_schema_dfa_to_gbnf(dfa, tail, o, sink, "p", &error);
    if (!error.empty() || start.empty()) return;
    must_parse("root ::= \"\\\"\" " + start + " \"\\\"\"\n" + rules + k_json_char, "the automaton's GBNF does not parse");
}

void public_path(std::string_view pattern, uint32_t max_len) {
    nlohmann::ordered_json schema = {{"type", "string"}, {"pattern", std::string(pattern)}};
    if (max_len < 127) schema["maxLength"] = max_len;
    const std::string text = schema.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    json_schema_options options;
    options.max_time_ms = 2000;  // -timeout is 10 s: a compile past it does not look at its clock
    const json_schema_result r = json_schema_compile(text, options);
    if (!r.ok()) {
        if (r.error.rfind("the schema's grammar does not compile", 0) == 0 && !size_bound(r.error)) {
            finding("the compiled grammar does not parse", r.error);
        }
        return;
    }
    (void)grammar_program_build(r.value, grammar_matcher_work_budget / 10);  // a tenth: under the timeout with the sanitizers
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    if (size == 0) return 0;
    const bool full_match = (data[0] & 1) != 0;
    const uint32_t max_len = data[0] >> 1;  // 127: no maxLength
    const std::string_view pattern(reinterpret_cast<const char *>(data + 1), size - 1);
    try {
        internal_path(pattern, full_match, max_len);
        public_path(pattern, max_len);
    } catch (const std::exception & e) {
        finding("an exception", e.what());
    }
    return 0;
}
