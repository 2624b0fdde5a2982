// libFuzzer target for the Jinja engine (built with clang, -fsanitize=fuzzer,address,undefined;
// see tests/fuzz/run-fuzz.sh). Each input is template text: it is parsed and rendered against a
// small fixed chat context with tight limits. Any jinja::error is a fine answer; a crash, a
// sanitizer report, another exception type, a hang (libFuzzer's -timeout) or a runaway
// allocation (-rss_limit_mb) is a finding, and so is a render longer than the output limit.
#include "jinja/jinja.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace {

const nlohmann::ordered_json & context() {
    static const nlohmann::ordered_json ctx = nlohmann::ordered_json::parse(R"({
      "messages": [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Hi <b>&'\"</b> é中😀"},
        {"role": "assistant", "content": "", "reasoning_content": "think",
         "tool_calls": [{"id": "c1", "type": "function",
                         "function": {"name": "get_weather", "arguments": {"city": "Paris", "n": 2.5}}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "{\"t\": 21}"},
        {"role": "user", "content": [{"type": "text", "text": "parts"}]},
        {"role": "assistant", "content": null}
      ],
      "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
                 "parameters": {"type": "object", "properties": {"city": {"type": "string"},
                 "n": {"type": ["number", "null"], "enum": [1, 2.5]}}, "required": ["city"]}}}],
      "add_generation_prompt": true,
      "bos_token": "<s>",
      "eos_token": "</s>",
      "enable_thinking": false,
      "numbers": [3, -1, 2.5, 1e300, 0]
    })");
    return ctx;
}

std::tm fixed_time() {
    std::tm t{};
    t.tm_year = 126;
    t.tm_mday = 15;
    t.tm_wday = 4;
    t.tm_yday = 14;
    return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    const std::string_view source(reinterpret_cast<const char *>(data), size);
    jinja::render_options opts;
    opts.clock = fixed_time;
    opts.bounds.max_steps = 300000;
    opts.bounds.max_output_bytes = 64 * 1024;
    opts.bounds.max_loop_iterations = 100000;
    opts.bounds.max_range_length = 100000;
    opts.bounds.max_macro_depth = 50;
    opts.bounds.max_memory_bytes = 4u << 20;
    try {
        const jinja::parsed_template t = jinja::parse(source);
        const std::string out = jinja::render(t, context(), opts);
        if (out.size() > opts.bounds.max_output_bytes) {
            std::fprintf(stderr, "fuzz-jinja: render longer than the output limit\n");
            std::abort();
        }
    } catch (const jinja::error &) {
        // a clear error is a fine answer to any text
    }
    return 0;
}
