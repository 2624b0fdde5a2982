// libFuzzer target for the GBNF parser and the token-mask engine (built with clang,
// -fsanitize=fuzzer,address,undefined; see tests/fuzz/run-fuzz.sh). Each input is GBNF text:
// grammar_parse_gbnf(), and when it parses, grammar_program_build() and a short walk of a
// grammar_matcher over a small vocabulary, the input's own bytes choosing among the allowed
// tokens. A parse error (with a place inside the text) or a program error are fine answers; a
// crash, a sanitizer report, an exception, a hang past -timeout or a runaway allocation is a
// finding, and so is a matcher that breaks its own contract: an allowed token that accept_token()
// refuses, an end-of-generation bit that disagrees with can_end(), or is_complete() without
// can_end().
#include "grammar/gbnf.h"
#include "grammar/token-mask.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr int32_t k_eos = 1;
constexpr int k_steps = 12;

[[noreturn]] void finding(const char * what, std::string_view detail = {}) {
    std::fprintf(stderr, "fuzz-gbnf: %s%s%.*s\n", what, detail.empty() ? "" : ": ", int(detail.size()), detail.data());
    std::abort();
}

// Every printable ASCII byte, a few multi-byte pieces (partial UTF-8 included), a special token,
// an empty one and the end of generation.
const std::shared_ptr<const grammar_vocab> & vocab() {
    static const std::shared_ptr<const grammar_vocab> v = [] {
        std::vector<std::string> bytes = {"<s>", "</s>", ""};
        for (int c = 0x20; c < 0x7F; ++c) bytes.push_back(std::string(1, char(c)));
        for (const char * t : {"\n", "\t", "  ", "ab", "abc", "aa", "{\"", "\":", "true", "null", "12", "1.", "é", "\xC3",
                               "\xA9", "日本", "\xE6\x97", "😀", "\xF0\x9F", "\xFF", "a\xC3", "\\\"", "\\u00", "()", "::="}) {
            bytes.emplace_back(t);
        }
        std::vector<bool> special(bytes.size(), false);
        special[0] = special[1] = true;
        return grammar_vocab::build(bytes, special, {k_eos});
    }();
    return v;
}

void walk(const std::shared_ptr<const grammar_program> & program, std::string_view choices) {
    grammar_matcher m(program, vocab());
    grammar_token_mask mask;
    std::vector<int32_t> allowed;
    for (int step = 0; step < k_steps; ++step) {
        m.fill_mask(mask);
        if (mask.size() != vocab()->mask_words()) finding("a mask of the wrong size");
        allowed.clear();
        for (int32_t t = 0; t < vocab()->n_vocab(); ++t) {
            if (grammar_mask_test(mask, t) && t != k_eos) allowed.push_back(t);
        }
        if (grammar_mask_test(mask, 0) || grammar_mask_test(mask, 2)) finding("a special or empty token allowed");
        if (grammar_mask_test(mask, k_eos) != m.can_end()) finding("the end-of-generation bit disagrees with can_end()");
        if (m.is_complete() && !m.can_end()) finding("is_complete() without can_end()");
        if (allowed.empty()) break;
        const uint8_t pick = choices.empty() ? 0 : uint8_t(choices[size_t(step) % choices.size()]);
        const int32_t t = allowed[pick % allowed.size()];
        if (!m.accept_token(t)) finding("accept_token() refused an allowed token", vocab()->token_bytes(t));
    }
    // bytes straight from the input: any answer is fine, but a refusal changes nothing
    grammar_matcher b(program, vocab());
    const std::string_view piece = choices.substr(0, 8);
    const bool could_end = b.can_end();
    if (!b.accept_bytes(piece) && b.error().empty() && b.can_end() != could_end) {
        finding("a refused accept_bytes() changed the state");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    const std::string_view text(reinterpret_cast<const char *>(data), size);
    try {
        grammar_parse_result r = grammar_parse_gbnf(text);
        if (!r.ok()) {
            if (r.error.message.empty()) finding("a parse error without a message");
            return 0;
        }
        // A tenth of the daemon's work per matcher call: each call stays well inside the
        // timeout under the sanitizers, while grammars too costly for it are still refused.
        const grammar_program_result p = grammar_program_build(r.value, grammar_matcher_work_budget / 10);
        if (!p.ok()) {
            if (p.error.empty()) finding("a program error without a message");
            return 0;
        }
        walk(p.value, text);
    } catch (const std::exception & e) {
        finding("an exception", e.what());
    }
    return 0;
}
