// The reference tool-call fixtures (../shared/testdata/chat/toolcalls.json): every fixture parsed
// at once, and streamed split at every byte boundary into two pieces and byte by byte, must give
// the expected message.
#include "testdata.h"
#include "toolcall/toolcall-test-util.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

using nlohmann::ordered_json;
using namespace toolcall_test;

namespace {

ordered_json read_json(const std::string & path) {
    std::ifstream in(path, std::ios::binary);
    return ordered_json::parse(in, nullptr, false);
}

struct fixture {
    std::string label;  // template / case
    toolcall::family family = toolcall::family::none;
    toolcall::parse_options opts;
    std::string text;
    ordered_json expected;
};

std::vector<fixture> load_fixtures(const std::string & dir) {
    ordered_json calls = read_json(dir + "/chat/toolcalls.json");
    ordered_json conversations = read_json(dir + "/chat/conversations.json");
    std::map<std::string, ordered_json> tools;
    for (const auto & c : conversations) tools[c["name"].get<std::string>()] = c.value("tools", ordered_json());
    std::vector<fixture> out;
    for (const auto & f : calls["fixtures"]) {
        fixture x;
        x.label = f["template"].get<std::string>() + " / " + f["case"].get<std::string>();
        auto fam = toolcall::family_from_name(f["family"].get<std::string>());
        if (!fam) {
            ADD_FAILURE() << x.label << ": unknown family " << f["family"];
            continue;
        }
        x.family = *fam;
        x.opts.tools = tools[f["conversation"].get<std::string>()];
        x.opts.reasoning_open = toolcall::prompt_opens_reasoning(x.family, f["prompt_tail"].get<std::string>());
        x.opts.id_seed = 7;
        x.text = f["text"].get<std::string>();
        x.expected = f["expected"];
        out.push_back(std::move(x));
    }
    return out;
}

// The stream's deltas against the expected message, the stream's own result and the one-shot one.
std::string check_stream(const fixture & x, const std::vector<std::string_view> & pieces, const toolcall::message & once) {
    toolcall::message result;
    assembled a = stream_pieces(x.family, x.opts, pieces, &result);
    toolcall::message m = a.to_message();
    if (!a.problems.empty()) return a.problems.front();
    if (std::string d = compare_expected(m, x.expected); !d.empty()) return "deltas: " + d;
    if (std::string d = compare_messages(m, result); !d.empty()) return "deltas vs result(): " + d;
    if (std::string d = compare_messages(result, once); !d.empty()) return "result() vs one-shot: " + d;
    return "";
}

}  // namespace

TEST(toolcall_reference, fixtures_load) {
    INFERD_REQUIRE_TESTDATA(dir);
    std::vector<fixture> fx = load_fixtures(dir);
    EXPECT_EQ(fx.size(), 81u);
}

TEST(toolcall_reference, one_shot) {
    INFERD_REQUIRE_TESTDATA(dir);
    int passed = 0;
    std::vector<fixture> fx = load_fixtures(dir);
    for (const fixture & x : fx) {
        toolcall::message m = toolcall::parse(x.family, x.text, x.opts);
        std::string d = compare_expected(m, x.expected);
        EXPECT_EQ(d, "") << x.label << "\n  text: " << x.text << "\n  got: " << m.to_json().dump();
        passed += d.empty();
    }
    std::printf("one-shot: %d of %zu fixtures match\n", passed, fx.size());
}

TEST(toolcall_reference, streaming_two_pieces_at_every_split) {
    INFERD_REQUIRE_TESTDATA(dir);
    int passed = 0;
    size_t runs = 0;
    std::vector<fixture> fx = load_fixtures(dir);
    for (const fixture & x : fx) {
        const toolcall::message once = toolcall::parse(x.family, x.text, x.opts);
        std::string_view t = x.text;
        bool ok = true;
        for (size_t k = 0; k <= t.size() && ok; ++k) {
            std::string d = check_stream(x, {t.substr(0, k), t.substr(k)}, once);
            ++runs;
            EXPECT_EQ(d, "") << x.label << " split at byte " << k << "\n  text: " << x.text;
            ok = d.empty();
        }
        passed += ok;
    }
    std::printf("streaming, every split into two pieces: %d of %zu fixtures (%zu streams)\n", passed, fx.size(), runs);
}

TEST(toolcall_reference, streaming_byte_by_byte) {
    INFERD_REQUIRE_TESTDATA(dir);
    int passed = 0;
    std::vector<fixture> fx = load_fixtures(dir);
    for (const fixture & x : fx) {
        const toolcall::message once = toolcall::parse(x.family, x.text, x.opts);
        std::vector<std::string_view> bytes;
        for (size_t i = 0; i < x.text.size(); ++i) bytes.push_back(std::string_view(x.text).substr(i, 1));
        std::string d = check_stream(x, bytes, once);
        EXPECT_EQ(d, "") << x.label << "\n  text: " << x.text;
        passed += d.empty();
    }
    std::printf("streaming, byte by byte: %d of %zu fixtures\n", passed, fx.size());
}

// Ids the formats carry are kept (kimi's are not in the expected data, which leaves them out).
TEST(toolcall_reference, format_ids_are_kept) {
    INFERD_REQUIRE_TESTDATA(dir);
    for (const fixture & x : load_fixtures(dir)) {
        if (x.family != toolcall::family::kimi) continue;
        toolcall::message m = toolcall::parse(x.family, x.text, x.opts);
        for (size_t i = 0; i < m.tool_calls.size(); ++i) {
            EXPECT_EQ(m.tool_calls[i].id, "functions." + m.tool_calls[i].name + ":" + std::to_string(i)) << x.label;
        }
    }
}
