// test-jinja-reference.cpp — every (template, conversation) case of ../shared/testdata/chat
// rendered by the engine and compared byte for byte with python jinja2's render; the cases
// where python jinja2 raised must fail here too (raise_exception cases with the same message).
#include "testdata.h"

#include "jinja/jinja.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

namespace {

using ojson = nlohmann::ordered_json;

std::string read_file(const std::string & path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// The reference's fixed clock: 2026-01-15 00:00:00 (a Thursday).
std::tm reference_time() {
    std::tm t{};
    t.tm_year = 2026 - 1900;
    t.tm_mon = 0;
    t.tm_mday = 15;
    t.tm_wday = 4;
    t.tm_yday = 14;
    return t;
}

std::string escape_for_report(const std::string & s) {
    std::string out;
    for (char c : s) {
        if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else {
            out += c;
        }
    }
    return out;
}

// Where two texts first differ, with some context of each.
std::string diff_snippet(const std::string & want, const std::string & got) {
    size_t i = 0;
    while (i < want.size() && i < got.size() && want[i] == got[i]) ++i;
    const size_t from = i > 60 ? i - 60 : 0;
    std::ostringstream os;
    os << "  first difference at byte " << i << " (expected " << want.size() << " bytes, got " << got.size() << ")\n"
       << "  expected: …" << escape_for_report(want.substr(from, 160)) << "…\n"
       << "  got:      …" << escape_for_report(got.substr(from, 160)) << "…\n";
    return os.str();
}

// expected.json's error_kind → the engine's error kind.
jinja::error_kind kind_of(const std::string & python_kind) {
    if (python_kind == "raise_exception") return jinja::error_kind::raised;
    if (python_kind == "undefined") return jinja::error_kind::undefined;
    if (python_kind == "sandbox") return jinja::error_kind::sandbox;
    if (python_kind == "unknown_filter") return jinja::error_kind::unknown_name;
    return jinja::error_kind::type;
}

}  // namespace

TEST(JinjaReference, EveryCaseMatchesPythonJinja2) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::string chat = dir + "/chat";
    const ojson expected = ojson::parse(read_file(chat + "/expected.json"));
    const ojson conversations = ojson::parse(read_file(chat + "/conversations.json"));
    std::map<std::string, ojson> conv_by_name;
    for (const auto & c : conversations) conv_by_name[c["name"].get<std::string>()] = c;

    std::map<std::string, jinja::parsed_template> parsed;
    jinja::render_options opts;
    opts.clock = reference_time;

    int renders = 0, renders_ok = 0, errors = 0, errors_ok = 0;
    std::ostringstream report;
    for (const auto & c : expected["cases"]) {
        const std::string tname = c["template"].get<std::string>();
        const std::string cname = c["conversation"].get<std::string>();
        const std::string label = tname + " × " + cname;
        if (!parsed.count(tname)) {
            try {
                parsed.emplace(tname, jinja::parse(read_file(chat + "/templates/" + tname + ".jinja"),
                                                   jinja::parse_options{tname + ".jinja"}));
            } catch (const jinja::error & e) {
                report << label << ": parse failed: " << e.what() << "\n";
                continue;
            }
        }
        const ojson & conv = conv_by_name.at(cname);
        ojson ctx = ojson::object();
        ctx["messages"] = conv["messages"];
        if (c.value("tools", false)) ctx["tools"] = conv["tools"];
        for (const auto & [k, v] : c["variables"].items()) ctx[k] = v;

        const bool want_error = c.contains("error");
        (want_error ? errors : renders)++;
        std::string out;
        std::string failure;
        try {
            out = jinja::render(parsed.at(tname), ctx, opts);
        } catch (const jinja::error & e) {
            failure = e.what();
            if (want_error) {
                const std::string msg = c["error"].get<std::string>();
                if (std::getenv("JINJA_REFERENCE_VERBOSE")) {
                    std::cout << label << "\n  python: " << c["error_kind"].get<std::string>() << ": " << msg
                              << "\n  ours:   " << jinja::error_kind_name(e.kind()) << ": " << e.what() << "\n";
                }
                // The engine raises what python raised: the same kind of error, and a message that
                // contains python's (for raise_exception, the template's text verbatim).
                const std::string kind = c["error_kind"].get<std::string>();
                if (kind_of(kind) != e.kind()) {
                    report << label << ": raised a " << jinja::error_kind_name(e.kind()) << " error (" << e.what()
                           << "), python raised " << kind << ": " << msg << "\n";
                } else if (e.message().find(msg) == std::string::npos) {
                    report << label << ": raised '" << e.message() << "', expected the message '" << msg << "'\n";
                } else {
                    errors_ok++;
                }
                continue;
            }
            report << label << ": render failed: " << failure << "\n";
            continue;
        }
        if (want_error) {
            report << label << ": rendered, but python jinja2 raised " << c["error_type"].get<std::string>() << ": "
                   << c["error"].get<std::string>() << "\n";
            continue;
        }
        const std::string want = read_file(chat + "/" + c["render"].get<std::string>());
        if (out == want) {
            renders_ok++;
        } else {
            report << label << ": render differs\n" << diff_snippet(want, out);
        }
    }
    std::cout << "renders matching: " << renders_ok << "/" << renders << ", errors raised: " << errors_ok << "/"
              << errors << "\n";
    EXPECT_EQ(renders, 535);
    EXPECT_EQ(errors, 50);
    EXPECT_EQ(renders_ok, renders) << report.str();
    EXPECT_EQ(errors_ok, errors) << report.str();
}
