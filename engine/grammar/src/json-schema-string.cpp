// Strings for the JSON Schema compiler (json-schema-impl.h): minLength / maxLength, pattern
// (and more patterns from allOf), the formats below, and what `not` excluded (patterns that must
// not match, values that may not appear). A lone pattern or format becomes GBNF directly from
// its tree; anything combined goes through one DFA of all the patterns and excluded values,
// emitted with a count of code points for the lengths.
#include "json-schema-impl.h"

#include <map>

namespace json_schema_detail {

namespace {

// IPv6 text (RFC 4291 section 2.2, no zone): eight groups, or n groups, "::" (at least one zero
// group) and up to 7 - n more, the last two groups possibly written as an IPv4 address.
std::string ipv6_pattern(const std::string & ipv4) {
    const std::string h = "[0-9a-fA-F]{1,4}";
    std::string alts = "(?:";  // built by appending (GCC 12 warns wrongly about "…" + string)
    alts += h + ":){7}" + h;
    alts += "|(?:";
    alts += h + ":){6}" + ipv4;
    for (int n = 0; n < 8; ++n) {
        std::string left;
        if (n > 0) {
            left += "(?:";
            left += h + ":){" + std::to_string(n - 1) + "}" + h;
        }
        alts += '|';
        alts += left + "::";
        if (7 - n > 0) {
            alts += "(?:";
            alts += h + "(?::" + h + "){0," + std::to_string(6 - n) + "})?";
        }
        if (6 - n >= 1) {
            alts += '|';
            alts += left + "::(?:" + h + ":){0," + std::to_string(5 - n) + "}" + ipv4;
        }
    }
    std::string out = "(?:";
    out += alts;
    out += ')';
    return out;
}

// Formats as whole-text patterns. Dates are checked against the calendar (leap years
// included); the others are the usual shapes of their RFCs.
const std::map<std::string, std::string> & format_patterns() {
    static const std::string year = "(?:[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])";
    static const std::string month_day =
        "(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))";
    static const std::string leap_year = "(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)";
    static const std::string date = "(?:" + year + "-" + month_day + "|" + leap_year + "-02-29)";
    static const std::string time =
        "(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)(?:\\.[0-9]+)?(?:[zZ]|[-+](?:[01][0-9]|2[0-3]):[0-5][0-9])";
    static const std::string octet = "(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])";
    static const std::string label = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
    static const std::map<std::string, std::string> f = {
        {"date", "^" + date + "$"},
        {"time", "^" + time + "$"},
        {"date-time", "^" + date + "[tT]" + time + "$"},
        {"uuid", "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"},
        {"email", "^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9][A-Za-z0-9-]*(?:\\.[A-Za-z0-9][A-Za-z0-9-]*)*$"},
        {"uri", "^[A-Za-z][A-Za-z0-9+.-]*:[^\"\\\\\\x00-\\x20]*$"},
        {"ipv4", "^" + octet + "(?:\\." + octet + "){3}$"},
        {"ipv6", "^" + ipv6_pattern(octet + "(?:\\." + octet + "){3}") + "$"},
        {"hostname", "^" + label + "(?:\\." + label + ")*$"},
    };
    return f;
}

regex_tree parse_or_fail(const std::string & pattern, const std::string & what, const std::string & path) {
    regex_tree t;
    std::string why;
    if (!json_schema_regex_parse(pattern, &t, &why)) fail("'" + what + "' at " + at(path) + ": " + why);
    return t;
}

std::string in_quotes(const std::string & body) { return "\"\\\"\" " + body + " \"\\\"\""; }

}  // namespace

const std::string * json_schema_format_pattern(const std::string & format) {
    auto it = format_patterns().find(format);
    return it == format_patterns().end() ? nullptr : &it->second;
}

std::string schema_compiler::visit_string(const json & s, const std::string & path, const std::string & hint) {
    std::vector<regex_tree> must, must_not;
    std::string what = "pattern";
    if (s.contains("pattern")) {
        if (!s["pattern"].is_string()) fail("'pattern' at " + at(path) + " is not a string");
        must.push_back(parse_or_fail(s["pattern"].get<std::string>(), "pattern", path));
    }
    if (s.contains(k_patterns)) {
        for (const json & p : s[k_patterns]) must.push_back(parse_or_fail(p.get<std::string>(), "pattern", path));
    }
    if (s.contains("format") && s["format"].is_string()) {
        // other formats are annotations for most validators: a plain string
        if (const std::string * f = json_schema_format_pattern(s["format"].get<std::string>())) {
            must.push_back(parse_or_fail(*f, "format", path));
            if (must.size() == 1) what = "format";
        }
    }
    if (s.contains(k_not_patterns)) {
        for (const json & p : s[k_not_patterns]) must_not.push_back(parse_or_fail(p.get<std::string>(), "not", path));
    }
    std::vector<std::string> excluded;
    if (s.contains(k_not_values)) {
        for (const json & v : s[k_not_values]) {
            if (v.is_string()) excluded.push_back(v.get<std::string>());
        }
    }
    const bool lengths = s.contains("minLength") || s.contains("maxLength");
    const uint64_t min = count_of(s, "minLength", path).value_or(0);
    const std::optional<uint64_t> max = count_of(s, "maxLength", path);
    if (max && *max < min) fail_empty("'maxLength' at " + at(path) + " is below 'minLength'");
    if (must.empty() && must_not.empty() && excluded.empty()) {
        if (!lengths) return "json-string";
        return add_rule(hint, in_quotes(repeat("json-char", min, max, path, "maxLength")));
    }
    std::string body;
    if (must.size() == 1 && must_not.empty() && excluded.empty() && !lengths && json_schema_regex_tree_to_gbnf(must[0], "json-char", &body)) {
        return add_rule(hint, in_quotes(body));
    }
    // one automaton: every pattern of `must` matches, none of `must_not`, no excluded value
    std::vector<dfa_input> inputs;
    for (const regex_tree & t : must) inputs.push_back({&t, false, {}});
    for (const regex_tree & t : must_not) inputs.push_back({&t, false, {}});
    if (!excluded.empty()) inputs.push_back({nullptr, false, excluded});
    const uint64_t all_must = (uint64_t(1) << must.size()) - 1;
    const dfa_tail tail = [&](uint64_t mask) -> std::optional<std::string> {
        if ((mask & all_must) != all_must || (mask & ~all_must) != 0) return std::nullopt;
        return "";
    };
    char_dfa d;
    std::string why;
    if (!json_schema_dfa_build(inputs, 4096, &d, &why)) fail("'" + what + "' at " + at(path) + ": " + why);
    dfa_emit_options o;
    o.min_len = min;
    o.max_len = max;
    const std::string start = json_schema_dfa_to_gbnf(d, tail, o, sink(), hint + "-char", &why);
    if (!why.empty()) fail("'" + what + "' at " + at(path) + ": " + why);
    if (start.empty()) fail_empty("no string satisfies the constraints at " + at(path));
    return add_rule(hint, in_quotes(start));
}

}  // namespace json_schema_detail
