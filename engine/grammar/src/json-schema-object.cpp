// Objects for the JSON Schema compiler (json-schema-impl.h). An object is written as its slots
// in order — the declared properties, then properties named by `required` or by a presence
// formula but not declared — then any number of other properties ("extras"). Each slot may be
// left out unless required. The grammar is an automaton over the slots whose state is
//   (slot index, which tracked properties are present, how many properties so far)
// so that presence formulas (dependencies, `not {required}`, presence-only anyOf / oneOf) and
// minProperties / maxProperties hold exactly; states that cannot end well are left out.
// A key of an extra is a DFA over the patternProperties and the names of the slots: the value
// that follows depends on which patterns the key matches (all of their schemas apply), and
// additionalProperties applies to keys matching none; slot names are never extras.
#include "json-schema-impl.h"

#include <algorithm>
#include <map>

namespace json_schema_detail {

namespace {

constexpr size_t k_max_object_states = 4000;
const char * const k_sep = "ws \",\" ws ";
const char * const k_extra_atom = "\x01extra";  // in a formula: some extra property is present

struct slot {
    std::string name;
    std::string kv;  // key ws ":" ws value
    bool required = false;
};

struct object_builder {
    object_builder(schema_compiler & compiler, const json & schema, const std::string & where, const std::string & name)
        : c(compiler), s(schema), path(where), hint(name) {}

    schema_compiler & c;
    const json & s;
    const std::string & path;
    const std::string & hint;

    std::vector<slot> slots;
    std::vector<std::pair<std::string, regex_tree>> patterns;  // patternProperties, in order
    json ap = true;                                            // additionalProperties
    json formulas = json::array();
    json outside = json::array();     // k_key_outside's name lists
    std::set<std::string> forbidden;  // names no instance may have
    uint64_t min_props = 0;
    std::optional<uint64_t> max_props;
    char_dfa keys;                                  // patterns (bits 0..) and slot names (last bit)
    std::string extra;                              // one extra "key": value, or "" when none may appear
    std::map<uint64_t, std::string> pattern_values;  // value rule per set of matched patterns

    std::string build();

private:
    std::vector<std::string> req_order;
    std::vector<std::string> slot_names(const json & props);
    void read_required();
    void make_slots(const json & props, const std::vector<std::string> & names);
    void make_extra(bool no_names);
    std::string emit();
    void read_patterns();
    void read_formulas();
    json value_schema(const std::string & name, const json * declared) const;
    void add_slot(const std::string & name, const json & schema, bool required);
    void build_keys(const std::vector<std::string> & names);
    std::string extra_value(uint64_t matched);
    std::string extras_after(uint64_t count, bool written, bool need_one, bool none) const;

    // the automaton over slots
    std::vector<std::vector<int>> formula_vars;  // per formula, the slots it names
    std::vector<int> var_of;                      // per slot, its bit (-1: untracked)
    std::vector<size_t> decided_at;               // per formula, the slot index after its last slot
    std::map<std::tuple<size_t, uint32_t, uint64_t>, std::string> states;
    void plan_tracking();
    bool formulas_hold(size_t i, uint32_t & bits, bool extras) const;
    std::string state(size_t i, uint32_t bits, uint64_t count);
};

}  // namespace

void object_builder::read_patterns() {
    if (!s.contains("patternProperties")) return;
    if (!s["patternProperties"].is_object()) fail("'patternProperties' at " + at(path) + " is not an object");
    for (auto it = s["patternProperties"].begin(); it != s["patternProperties"].end(); ++it) {
        regex_tree t;
        std::string why;
        if (!json_schema_regex_parse(it.key(), &t, &why)) fail("'patternProperties' at " + at(path) + ": '" + it.key() + "': " + why);
        patterns.emplace_back(it.key(), std::move(t));
    }
    if (patterns.size() > 32) fail("'patternProperties' at " + at(path) + " has more than 32 patterns");
}

void object_builder::read_formulas() {
    if (s.contains(k_presence)) {
        for (const json & f : s[k_presence]) formulas.push_back(f);
    }
    if (s.contains(k_key_outside)) {
        for (const json & names : s[k_key_outside]) outside.push_back(names);
    }
    for (const char * key : {"dependencies", "dependentRequired", "dependentSchemas"}) {
        if (!s.contains(key)) continue;
        if (!s[key].is_object()) fail("'" + std::string(key) + "' at " + at(path) + " is not an object");
        for (auto it = s[key].begin(); it != s[key].end(); ++it) {
            const std::string where = path + "/" + key + "/" + it.key();
            std::optional<json> then;
            if (it.value().is_array()) then = presence_formula(c, json{{"required", it.value()}}, where);
            else then = presence_formula(c, it.value(), where);
            if (!then) fail("unsupported keyword '" + std::string(key) + "' at " + at(where));  // folded before, as if / then
            formulas.push_back(json::array({"or", json::array({"not", json::array({"has", it.key()})}), *then}));
        }
    }
}

// The schema of property `name`: its declared one (or additionalProperties when undeclared and
// no pattern matches) together with every matching pattern's; false when it may not appear.
json object_builder::value_schema(const std::string & name, const json * declared) const {
    const uint64_t matched = patterns.empty() ? 0 : keys.run(name) & ((uint64_t(1) << patterns.size()) - 1);
    json v = declared ? *declared : (matched ? json(true) : ap);
    for (size_t p = 0; p < patterns.size(); ++p) {
        if (!(matched >> p & 1)) continue;
        const json & ps = s["patternProperties"][patterns[p].first];
        if (v.is_boolean() && !v.get<bool>()) break;
        if (ps.is_boolean()) v = ps.get<bool>() ? v : json(false);
        else v = c.merge(v, ps, path + "/patternProperties");
    }
    return v;
}

void object_builder::add_slot(const std::string & name, const json & schema, bool required) {
    if (schema.is_boolean() && !schema.get<bool>()) {
        if (required) fail_empty("required property '" + name + "' at " + at(path) + " is never valid");
        forbidden.insert(name);
        return;
    }
    const std::string where = path + "/properties/" + name;
    std::optional<std::string> value;
    if (required) value = c.visit(schema, where, hint + "-" + name);
    else value = c.try_visit(schema, where, hint + "-" + name);
    if (!value) {  // no value is valid: the property may not appear
        forbidden.insert(name);
        return;
    }
    slots.push_back({name, grammar_literal_to_gbnf(json(name).dump()) + " ws \":\" ws " + *value, required});
}

void object_builder::build_keys(const std::vector<std::string> & names) {
    std::vector<dfa_input> inputs(patterns.size() + 1);
    for (size_t p = 0; p < patterns.size(); ++p) inputs[p].tree = &patterns[p].second;
    inputs.back().literals = names;
    std::string why;
    if (!json_schema_dfa_build(inputs, 4096, &keys, &why)) {
        const char * what = patterns.empty() ? "the keys of other properties (kept from the declared names)" : "'patternProperties'";
        fail(std::string(what) + " at " + at(path) + ": " + why);
    }
}

std::string object_builder::extra_value(uint64_t matched) {
    auto it = pattern_values.find(matched);
    if (it != pattern_values.end()) return it->second;
    std::string value;
    if (matched == 0) {
        value = ap.is_boolean() ? "json-value" : c.try_visit(ap, path + "/additionalProperties", hint + "-additional").value_or("");
    } else {
        json v = true;
        std::string first;
        try {
            for (size_t p = 0; p < patterns.size(); ++p) {
                if (!(matched >> p & 1)) continue;
                const json & ps = s["patternProperties"][patterns[p].first];
                if (first.empty()) first = patterns[p].first;
                v = v.is_boolean() && v.get<bool>() ? ps : ps.is_boolean() ? (ps.get<bool>() ? v : json(false)) : c.merge(v, ps, path);
            }
        } catch (const schema_failure & f) {
            if (!f.empty) throw;
            v = false;
        }
        if (v.is_boolean() && !v.get<bool>()) value = "";
        else value = c.try_visit(v, path + "/patternProperties/" + first, hint + "-pattern").value_or("");
    }
    pattern_values[matched] = value;
    return value;
}

// Every name that gets a slot (or is forbidden): the declared properties, then the required
// ones not declared, then the ones a formula names.
std::vector<std::string> object_builder::slot_names(const json & props) {
    std::vector<std::string> names;
    std::set<std::string> named;  // ordered_json's lookups are linear: one set for all of them
    auto add = [&](const std::string & n) {
        if (named.insert(n).second) names.push_back(n);
    };
    for (auto it = props.begin(); it != props.end(); ++it) add(it.key());
    for (const std::string & r : req_order) add(r);
    std::set<std::string> mentioned;
    for (const json & f : formulas) presence_names(f, mentioned);
    for (const json & list : outside) {
        for (const json & n : list) mentioned.insert(n.get<std::string>());
    }
    for (const std::string & m : mentioned) add(m);
    return names;
}

void object_builder::read_required() {
    if (!s.contains("required")) return;
    if (!s["required"].is_array()) fail("'required' at " + at(path) + " is not an array");
    std::set<std::string> seen;
    for (const json & r : s["required"]) {
        if (r.is_string() && seen.insert(r.get<std::string>()).second) req_order.push_back(r.get<std::string>());
    }
}

void object_builder::make_slots(const json & props, const std::vector<std::string> & names) {
    const std::set<std::string> required(req_order.begin(), req_order.end());
    std::map<std::string, const json *> declared_at;  // ordered_json's lookups are linear
    for (auto it = props.begin(); it != props.end(); ++it) declared_at.emplace(it.key(), &it.value());
    for (const std::string & n : names) {
        c.count_work(path);
        const auto found = declared_at.find(n);
        const json * declared = found == declared_at.end() ? nullptr : found->second;
        json schema;
        try {
            schema = value_schema(n, declared);
        } catch (const schema_failure & f) {
            if (!f.empty || required.count(n)) throw;
            schema = false;  // the schemas that apply to it have no value in common
        }
        add_slot(n, schema, required.count(n) > 0);
    }
}

// One extra property: a key that is no slot's name, and the value its patterns (or
// additionalProperties) ask for.
void object_builder::make_extra(bool no_names) {
    const bool ap_false = ap.is_boolean() && !ap.get<bool>();
    if (patterns.empty() && ap_false) return;
    if (patterns.empty() && no_names) {
        const std::string v = extra_value(0);
        if (!v.empty()) extra = "json-string ws \":\" ws " + v;
        return;
    }
    // one key language per set of matched patterns (a lexeme of its own), then its value
    const uint64_t name_bit = uint64_t(1) << patterns.size();
    std::set<uint64_t> regions;
    for (const char_dfa::state & st : keys.states) {
        if (!(st.accept & name_bit) && !(st.accept == 0 && ap_false)) regions.insert(st.accept);
    }
    for (const uint64_t region : regions) {
        const std::string v = extra_value(region);
        if (v.empty()) continue;
        const dfa_tail tail = [&](uint64_t mask) -> std::optional<std::string> {
            if (mask != region) return std::nullopt;
            return "\"\\\"\"";
        };
        std::string why;
        const std::string key = json_schema_dfa_to_gbnf(keys, tail, {}, c.sink(), hint + "-key", &why);
        if (!why.empty()) fail("the property names at " + at(path) + ": " + why);
        if (key.empty()) continue;
        extra += (extra.empty() ? "" : " | ") + ("\"\\\"\" " + key + " ws \":\" ws " + v);
    }
    if (!extra.empty()) extra = c.add_rule(hint + "-kv", extra);
}

// The automaton over the slots in their current order; "" when no object fits.
std::string object_builder::emit() {
    states.clear();
    formula_vars.clear();
    decided_at.clear();
    plan_tracking();
    return state(0, 0, 0);
}

std::string object_builder::build() {
    read_patterns();
    read_formulas();
    read_required();
    if (s.contains("additionalProperties")) ap = s["additionalProperties"];
    min_props = schema_compiler::count_of(s, "minProperties", path).value_or(0);
    max_props = schema_compiler::count_of(s, "maxProperties", path);
    const json props = s.contains("properties") ? s["properties"] : json::object();
    if (!props.is_object()) fail("'properties' at " + at(path) + " is not an object");
    const std::vector<std::string> names = slot_names(props);
    if (!patterns.empty() || !(ap.is_boolean() && !ap.get<bool>())) build_keys(names);
    make_slots(props, names);
    make_extra(names.empty());
    for (const json & list : outside) {  // a present slot outside the list, or an extra
        json f = json::array({"or", json::array({"has", k_extra_atom})});
        for (const slot & sl : slots) {
            if (std::find(list.begin(), list.end(), sl.name) == list.end()) f.push_back(json::array({"has", sl.name}));
        }
        formulas.push_back(f);
    }
    std::string body = emit();
    if (body.empty()) fail_empty("no object satisfies the properties' constraints at " + at(path));
    // the required properties first, in the order `required` lists them, is a second order
    std::vector<slot> reordered;
    for (const std::string & r : req_order) {
        for (const slot & sl : slots) {
            if (sl.name == r) reordered.push_back(sl);
        }
    }
    for (const slot & sl : slots) {
        if (!sl.required) reordered.push_back(sl);
    }
    bool same = true;
    for (size_t i = 0; i < slots.size(); ++i) same = same && slots[i].name == reordered[i].name;
    if (!same) {
        slots = reordered;
        const std::string second = emit();
        if (!second.empty()) body += " | " + second;
    }
    return c.add_rule(hint, "\"{\" ws (" + body + ") ws \"}\"");
}

// Which slots the formulas read (they get a bit each), and after which slot each formula is
// decided.
void object_builder::plan_tracking() {
    var_of.assign(slots.size(), -1);
    int bits = 0;
    for (const json & f : formulas) {
        std::set<std::string> names;
        presence_names(f, names);
        std::vector<int> vars;
        size_t last = 0;
        for (size_t i = 0; i < slots.size(); ++i) {
            if (!names.count(slots[i].name)) continue;
            if (var_of[i] < 0) var_of[i] = bits++;
            vars.push_back(int(i));
            last = i + 1;
        }
        if (names.count(k_extra_atom)) last = slots.size();  // the extras come last
        formula_vars.push_back(vars);
        decided_at.push_back(last);
    }
    if (bits > 24) fail("the presence constraints at " + at(path) + " name more than 24 properties");
}

// Checks the formulas decided by slot i; clears the bits no later formula reads.
bool object_builder::formulas_hold(size_t i, uint32_t & bits, bool extras) const {
    uint32_t needed = 0;
    for (size_t f = 0; f < formulas.size(); ++f) {
        if (decided_at[f] == i) {
            const bool ok = presence_eval(formulas[f], [&](const std::string & name) {
                if (name == k_extra_atom) return extras;
                for (int v : formula_vars[f]) {
                    if (slots[size_t(v)].name == name) return (bits >> var_of[size_t(v)] & 1) != 0;
                }
                return false;  // a name without a slot is never present
            });
            if (!ok) return false;
        } else if (decided_at[f] > i) {
            for (int v : formula_vars[f]) needed |= uint32_t(1) << var_of[size_t(v)];
        }
    }
    bits &= needed;
    return true;
}

// The extras that may follow `count` properties (saturated at the count that matters).
std::string object_builder::extras_after(uint64_t count, bool written, bool need_one, bool none) const {
    const uint64_t k_min = std::max<uint64_t>(min_props > count ? min_props - count : 0, need_one ? 1 : 0);
    std::optional<uint64_t> k_max;
    if (max_props) k_max = *max_props - count;
    if (none) k_max = 0;
    if (extra.empty() || (k_max && *k_max == 0)) return k_min > 0 ? "" : "\"\"";
    const std::string more = std::string("(") + k_sep + extra + ")";
    auto reps = [&](uint64_t lo, std::optional<uint64_t> hi) {
        if (!hi && lo == 0) return more + "*";
        return schema_compiler::repeat(k_sep + extra, lo, hi, path, "maxProperties");
    };
    if (written) return reps(k_min, k_max);
    std::optional<uint64_t> rest_max;
    if (k_max) rest_max = *k_max - 1;
    const std::string run = "(" + extra + " " + reps(k_min > 0 ? k_min - 1 : 0, rest_max) + ")";
    return k_min > 0 ? run : run + "?";
}

std::string object_builder::state(size_t i, uint32_t bits, uint64_t count) {
    bool with_extras = false, without_extras = true;  // at the end: what the formulas allow
    if (i == slots.size()) {
        uint32_t b = bits;
        with_extras = formulas_hold(i, b, true);
        without_extras = formulas_hold(i, bits, false);
        if (!with_extras && !without_extras) return "";
        bits = (with_extras ? 1u : 0u) | (without_extras ? 2u : 0u);  // all that matters from here
    } else if (!formulas_hold(i, bits, false)) {
        return "";
    }
    const auto key = std::make_tuple(i, bits, count);
    if (auto it = states.find(key); it != states.end()) return it->second;
    if (states.size() >= k_max_object_states) fail("the object at " + at(path) + " has too many combinations of properties");
    states[key] = "";  // no cycles: slots only move forward
    const uint64_t cap = max_props ? *max_props + 1 : std::max<uint64_t>(min_props, 1);
    std::string body;
    if (i == slots.size()) {
        body = extras_after(count, count > 0, !without_extras, !with_extras);
    } else {
        const slot & sl = slots[i];
        if (!max_props || count < *max_props) {
            const uint32_t with = var_of[i] >= 0 ? bits | (uint32_t(1) << var_of[i]) : bits;
            const std::string next = state(i + 1, with, std::min(count + 1, cap));
            if (!next.empty()) body = (count > 0 ? k_sep : "") + sl.kv + " " + next;
        }
        if (!sl.required) {
            const std::string next = state(i + 1, bits, count);
            if (!next.empty()) body += (body.empty() ? "" : " | ") + next;
        }
    }
    if (body.empty()) return "";
    const std::string name = c.add_rule(hint + "-" + std::to_string(i), body);
    states[key] = name;
    return name;
}

std::string schema_compiler::visit_object(const json & s, const std::string & path, const std::string & hint) {
    object_builder b(*this, s, path, hint);
    return b.build();
}

}  // namespace json_schema_detail
