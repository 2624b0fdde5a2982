// Arrays for the JSON Schema compiler (json-schema-impl.h): prefixItems (or draft 4's items
// arrays with additionalItems), items, minItems / maxItems, and uniqueItems where a grammar can
// hold it exactly: at most one item, or items drawn from a small finite set of values (the
// grammar then remembers which values were used).
#include "json-schema-impl.h"

#include <algorithm>
#include <bit>
#include <map>

namespace json_schema_detail {

namespace {

const char * const k_sep = "ws \",\" ws ";
constexpr size_t k_max_unique_values = 8;

}  // namespace

std::string schema_compiler::visit_array(const json & s, const std::string & path, const std::string & hint) {
    std::vector<std::string> prefix;
    bool prefix_ends = false;  // an item of the prefix has no valid value
    std::string item = "json-value";
    bool more = true;  // items after the prefix may appear
    const json * prefix_items = s.contains("prefixItems") ? &s["prefixItems"] : nullptr;
    if (s.contains("items") && s["items"].is_array()) prefix_items = &s["items"];  // draft 4 tuples
    const uint64_t min = count_of(s, "minItems", path).value_or(0);
    const std::optional<uint64_t> max = count_of(s, "maxItems", path);
    if (max && *max < min) fail_empty("'maxItems' at " + at(path) + " is below 'minItems'");
    const bool unique = s.contains("uniqueItems") && s["uniqueItems"] == true && !(max && *max <= 1);
    if (unique) return unique_items(s, path, hint);
    if (prefix_items) {
        if (!prefix_items->is_array()) fail("'prefixItems' at " + at(path) + " is not an array");
        for (size_t i = 0; i < prefix_items->size() && (!max || i < *max); ++i) {
            const auto one = try_visit((*prefix_items)[i], path + "/prefixItems/" + std::to_string(i), hint + "-" + std::to_string(i));
            if (!one) {  // no value fits here: the array ends before it
                prefix_ends = true;
                break;
            }
            prefix.push_back(*one);
        }
    }
    const json * rest = nullptr;
    if (s.contains("items") && !s["items"].is_array()) rest = &s["items"];
    if (s.contains("items") && s["items"].is_array() && s.contains("additionalItems")) rest = &s["additionalItems"];
    if (rest) {
        if (rest->is_boolean() && !rest->get<bool>()) more = false;
        else if (!rest->is_boolean() && !prefix_ends) {
            const auto one = try_visit(*rest, path + "/items", hint + "-item");
            if (one) item = *one;
            else more = false;  // no item is valid: no more items
        }
    }
    if (prefix_ends) more = false;
    // the elements in order: prefix[0], prefix[1], …, then item*; counted against min / max
    const std::vector<std::string> & elems = prefix;
    if (min > prefix.size() && !more) fail_empty("'minItems' at " + at(path) + " needs more items than the array may hold");
    // tail(i): the elements from index i on, each preceded by a comma (i > 0)
    std::string tail;
    if (more && (!max || *max > elems.size())) {
        const uint64_t need = min > elems.size() ? min - elems.size() : 0;
        std::optional<uint64_t> extra_max;
        if (max) extra_max = *max - elems.size();
        tail = repeat(k_sep + item, need, extra_max, path, "maxItems");
    }
    // the prefix elements may stop anywhere at or after min
    std::string body = tail.empty() ? "\"\"" : tail;
    for (size_t i = elems.size(); i-- > 0;) {
        const std::string lead = i == 0 ? "" : k_sep;
        const std::string cont = add_rule(hint + "-tail", body);
        body = lead + elems[i] + " " + cont + (i >= min ? " | \"\"" : "");
    }
    if (elems.empty()) {
        // no prefix: item (sep item){min-1,max-1}, or nothing when min is 0
        if (!more) return add_rule(hint, "\"[\" ws \"]\"");
        const uint64_t first_min = min > 0 ? min - 1 : 0;
        std::optional<uint64_t> first_max;
        if (max) {
            if (*max == 0) return add_rule(hint, "\"[\" ws \"]\"");
            first_max = *max - 1;
        }
        const std::string items = item + " " + repeat(k_sep + item, first_min, first_max, path, "maxItems");
        return add_rule(hint, "\"[\" ws " + (min > 0 ? items : "(" + items + ")?") + " ws \"]\"");
    }
    return add_rule(hint, "\"[\" ws (" + body + ") ws \"]\"");
}

namespace {

// The values an item schema allows when they are few and known: an enum or const, or types
// boolean / null; each checked against the schema's other keywords.
std::optional<std::vector<json>> finite_values(const schema_compiler & c, const json & item, const std::string & path) {
    const json s = c.inline_ref(item, path);
    if (!s.is_object()) return std::nullopt;
    json candidates = json::array();
    if (s.contains("enum") && s["enum"].is_array()) candidates = s["enum"];
    else if (s.contains("const")) candidates.push_back(s["const"]);
    else if (s.contains("type") && (s["type"] == "boolean" || s["type"] == "null")) candidates = json::array({true, false, nullptr});
    else return std::nullopt;
    std::vector<json> out;
    for (const json & v : candidates) {
        const std::optional<bool> ok = json_schema_validate(c, s, v);
        if (!ok) return std::nullopt;
        if (*ok && std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    }
    return out;
}

}  // namespace

// uniqueItems over a finite set of item values: a rule per set of values used so far.
std::string schema_compiler::unique_items(const json & s, const std::string & path, const std::string & hint) {
    const bool tuple = s.contains("prefixItems") || (s.contains("items") && s["items"].is_array());
    std::optional<std::vector<json>> values;
    if (!tuple) values = finite_values(*this, s.contains("items") ? s["items"] : json(true), path);
    if (!values || values->size() > k_max_unique_values) {
        fail("unsupported keyword 'uniqueItems' at " + at(path) + " (only for at most one item, or items from at most " +
             std::to_string(k_max_unique_values) + " known values)");
    }
    const uint64_t min = count_of(s, "minItems", path).value_or(0);
    const uint64_t max = std::min<uint64_t>(count_of(s, "maxItems", path).value_or(values->size()), values->size());
    if (min > max) fail_empty("'uniqueItems' at " + at(path) + ": more items than distinct values are needed");
    std::vector<std::string> lits;
    for (const json & v : *values) lits.push_back(literal_value(v));
    std::map<uint32_t, std::string> names;  // used-set → rule (after at least one item)
    const uint32_t n = uint32_t(values->size());
    for (uint32_t used = (1u << n); used-- > 1;) {  // larger sets first: rules refer to supersets
        const uint32_t k = uint32_t(std::popcount(used));
        if (k > max) continue;
        std::string body = k >= min ? "\"\"" : "";
        for (uint32_t i = 0; i < n && k < max; ++i) {
            if (used >> i & 1) continue;
            body += (body.empty() ? "" : " | ") + std::string(k_sep) + lits[i] + " " + names[used | (1u << i)];
        }
        names[used] = unique_name(hint + "-used");
        define(names[used], body);
    }
    std::string first = min == 0 ? "\"\"" : "";
    for (uint32_t i = 0; i < n && max > 0; ++i) first += (first.empty() ? "" : " | ") + lits[i] + " " + names[1u << i];
    return add_rule(hint, "\"[\" ws (" + first + ") ws \"]\"");
}

}  // namespace json_schema_detail
