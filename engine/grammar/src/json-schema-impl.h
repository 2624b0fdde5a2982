// engine/grammar/src/json-schema-impl.h — the pieces of the JSON Schema compiler
// (grammar/json-schema.h): number ranges (json-schema-ranges.cpp), regular expressions
// (json-schema-regex.cpp), automata over code points (json-schema-automaton.cpp), and the schema
// walk: schema_compiler, its visitors spread over json-schema*.cpp by subject (the walk itself,
// merge, not, any-of, object, array, string, number) with a validator for listed values
// (json-schema-validate.cpp).
#pragma once

#include "grammar/grammar.h"
#include "grammar/json-schema.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

// ---- number ranges ----

// A decimal number as sign, integer digits and fraction digits ("-12.5" → true, "12", "5"):
// no leading zeros in `whole` (but "0"), no trailing zeros in `frac`.
struct json_decimal {
    bool negative = false;
    std::string whole = "0";
    std::string frac;
    // From a JSON number's text ("1.5e3", "-0.25"); nullopt when it is not one.
    static std::optional<json_decimal> parse(std::string_view text);
    bool is_zero() const { return whole == "0" && frac.empty(); }
};
int json_decimal_compare(const json_decimal & a, const json_decimal & b);

// Which numbers a range holds and how they are written.
struct json_number_form {
    bool integer = false;                         // only integer values
    bool fraction = true;                         // a "." and fraction digits may be written
    std::optional<size_t> max_fraction_digits;    // digits past this many must be zeros
};

// GBNF for the JSON numbers x (no exponent) with lo <= x <= hi (either side open when absent;
// *_excl: strict) of the given form. Empty when no number is left.
std::string json_schema_decimal_range(const std::optional<json_decimal> & lo, bool lo_excl,
                                      const std::optional<json_decimal> & hi, bool hi_excl, const json_number_form & form);

// ---- regular expressions ----

constexpr uint32_t regex_unbounded = UINT32_MAX;
constexpr size_t regex_max_group_depth = 200;  // groups inside groups: past it the pattern is an error
constexpr uint64_t regex_max_nested_counts = 1000;  // the product of counts nested in one another

// A pattern's syntax tree: characters (one code point of a set), sequences, alternatives,
// repetitions {min,max} of one node, and the anchors ^ and $.
struct regex_node {
    enum class kind : uint8_t { chars, seq, alt, repeat, line_start, line_end };
    kind k = kind::seq;
    grammar_char_set set;
    std::vector<uint32_t> kids;
    uint32_t min = 0, max = 0;
};
struct regex_tree {
    std::vector<regex_node> nodes;
    uint32_t root = 0;
};

// Parses `pattern` (ECMAScript syntax, the subset listed in grammar/json-schema.h). On an
// unsupported construct returns false and sets *error.
bool json_schema_regex_parse(std::string_view pattern, regex_tree * out, std::string * error);

// GBNF for the contents of a JSON string (between the quotes, escapes as JSON writes them)
// whose decoded text the tree matches somewhere (unanchored ends match anything). `json_char`
// is the rule name of one JSON string character. False when an anchor stands elsewhere than at
// the ends (the automaton handles those).
bool json_schema_regex_tree_to_gbnf(const regex_tree & t, const std::string & json_char, std::string * out);

// GBNF for one JSON string character (as JSON writes it) whose decoded code point is in the set
// given by its ranges; "" for the empty set.
std::string json_schema_json_chars(const grammar_char_set & decoded);

// ---- automata ----

// One input of an automaton: a pattern (searched in the text unless full_match), or a set of
// exact texts (UTF-8).
struct dfa_input {
    const regex_tree * tree = nullptr;
    bool full_match = false;
    std::vector<std::string> literals;
};

// A complete DFA over code points: classes partition every code point; states[0] is the
// start; accept has bit i set where input i accepts the text read so far.
struct char_dfa {
    struct state {
        std::vector<int32_t> next;  // per class
        uint64_t accept = 0;
    };
    std::vector<grammar_char_set> classes;
    std::vector<std::pair<uint32_t, int32_t>> intervals;  // (first code point, class), sorted
    std::vector<state> states;

    int32_t class_of(uint32_t cp) const;
    uint64_t run(std::string_view text) const;  // the accept bits after text (0: invalid UTF-8)
};

// The DFA of up to 64 inputs (bit i for input i); false (with *error) past max_states states.
bool json_schema_dfa_build(const std::vector<dfa_input> & inputs, size_t max_states, char_dfa * out, std::string * error);

// Where generated rules go: a fresh name from a hint, and a rule's definition.
struct gbnf_sink {
    std::function<std::string(const std::string &)> name;
    std::function<void(const std::string &, const std::string &)> define;
};

// What follows an accepted text, given its accept bits (nullopt: not accepted there).
using dfa_tail = std::function<std::optional<std::string>(uint64_t)>;

struct dfa_emit_options {
    uint64_t min_len = 0;             // in code points
    std::optional<uint64_t> max_len;  // in code points
    size_t max_states = 4096;
};

// GBNF rules for the texts of the DFA (JSON string characters, escaped as JSON writes them)
// that `tail` accepts, within the lengths; returns the first rule's name, "" when no text is
// accepted, or "" with *error set when the rules would be too many.
std::string json_schema_dfa_to_gbnf(const char_dfa & d, const dfa_tail & tail, const dfa_emit_options & o, const gbnf_sink & sink,
                                    const std::string & hint, std::string * error);

// ---- the schema walk ----

namespace json_schema_detail {

using json = nlohmann::ordered_json;

struct schema_failure {
    std::string message;
    bool empty = false;   // the schema is valid but no value satisfies it
    bool budget = false;  // a budget of the whole compile (work, time) ran out: no attempt may catch it
};

[[noreturn]] void fail(const std::string & m);
[[noreturn]] void fail_empty(const std::string & m);
[[noreturn]] void fail_budget(const std::string & m);
std::string at(const std::string & path);  // a place for messages: "/" for the root

// Internal keywords: what `not`, presence-only anyOf / oneOf branches and dependencies fold
// into a schema (their names cannot be a real schema's keywords).
extern const char * const k_not_values;    // values the instance may not be
extern const char * const k_not_patterns;  // patterns a string may not match
extern const char * const k_patterns;      // more patterns a string must match (besides "pattern")
extern const char * const k_more_any_of;   // more anyOf lists that must hold too (from allOf)
extern const char * const k_more_one_of;   // more oneOf lists that must hold too (from allOf)
extern const char * const k_not_any;       // schemas a value may not match, a subset of that allowed
extern const char * const k_key_outside;   // name lists: an object has a key outside each
extern const char * const k_presence;      // formulas over which properties an object has

bool constraining_keyword(const std::string & key);  // a keyword the compiler enforces or rejects
bool constrains(const json & s);  // any keyword that constrains values
const std::set<std::string> & object_words();
const std::set<std::string> & array_words();
const std::set<std::string> & string_words();
const std::set<std::string> & number_words();

// A presence formula: ["has", name], ["object"], ["not", f], ["and", f…], ["or", f…],
// ["one", f…], true, false. Evaluated for an object (has: whether it has the property) or, with
// has null, for a value that is not an object (then every ["has", …] holds, ["object"] not).
bool presence_eval(const json & f, const std::function<bool(const std::string &)> & has);
void presence_names(const json & f, std::set<std::string> & out);
// The presence formula of a schema that only says which properties an object has (required
// lists, not / anyOf / oneOf / allOf of such, type object); nullopt for any other schema.
class schema_compiler;
std::optional<json> presence_formula(const schema_compiler & c, const json & s, const std::string & path, int depth = 0);

class schema_compiler {
public:
    explicit schema_compiler(const json & root, const json_schema_options & options = {});
    // The same with the time budget counted from `start` (the compile began with reading the text).
    schema_compiler(const json & root, const json_schema_options & options, std::chrono::steady_clock::time_point start);
    std::string compile();

    // One level of the compiler's recursion (a visit, merge, fold, reference or validation):
    // past options.max_depth, an error naming the place (path, or the subschema being visited
    // when path is empty). Every recursive function of the compiler holds one. The error is an
    // ordinary one: an attempt that hits it (an exact oneOf) unwinds and falls back.
    class nesting {
    public:
        nesting(const schema_compiler & c, const std::string & path);
        ~nesting() { --c_.depth_; }
        nesting(const nesting &) = delete;
        nesting & operator=(const nesting &) = delete;

    private:
        const schema_compiler & c_;
    };
    // One unit of work: past the work budgets or the deadline, an error naming the place.
    void count_work(const std::string & path) const;

    // A new rule; a name reserved now and defined later (for cycles and automata).
    std::string add_rule(const std::string & hint, const std::string & body);
    std::string unique_name(const std::string & hint);
    void define(const std::string & name, const std::string & body);
    gbnf_sink sink();

    std::string visit(const json & s, const std::string & path, const std::string & hint);
    // visit, or nullopt (its rules undone) when no value satisfies s.
    std::optional<std::string> try_visit(const json & s, const std::string & path, const std::string & hint);
    // The rules made so far, to undo what a failed attempt added.
    struct checkpoint {
        size_t rules, refs, work;
    };
    checkpoint save() const;
    void restore(const checkpoint & c);
    json merge(json a, const json & b, const std::string & path, int guard = 0) const;
    void combine(json & a, const std::string & k, const json & v, const std::string & path, int guard) const;
    bool combine_lists(json & a, const std::string & k, const json & v) const;
    static bool combine_bounds(const std::string & k, json & x, const json & v);
    static json common_multiple(const json & x, const json & v, const std::string & path);
    const json & resolve_ref(const std::string & ref, const std::string & path) const;
    json inline_ref(const json & s, const std::string & path, int guard = 0) const;

    static std::optional<uint64_t> count_of(const json & s, const char * key, const std::string & path);
    static std::string repeat(const std::string & x, uint64_t min, std::optional<uint64_t> max, const std::string & path,
                              const char * key);
    std::vector<std::string> types_of(const json & s, const std::string & path) const;

private:
    const json & root_;
    json_schema_options opts_;
    std::chrono::steady_clock::time_point deadline_;
    std::map<std::string, std::string> rules_;
    std::vector<std::string> order_;
    std::map<std::string, std::string> ref_rules_;
    std::vector<std::string> ref_order_;  // ref_rules_'s keys as they were added
    std::set<std::string> used_names_;
    std::map<std::string, int> name_counters_;
    mutable size_t depth_ = 0;           // nesting levels held now (nesting)
    mutable std::vector<std::string> negating_;  // references whose negation fold_not is folding
    std::map<std::string, size_t> one_of_failed_;  // oneOf schemas whose exact attempt failed -> the least depth
    mutable const std::string * where_ = nullptr;  // the path of the innermost visit, for messages
    mutable size_t total_work_ = 0;      // every unit of work, attempts that were undone included
    size_t gbnf_bytes_ = 0;              // the rules' text so far
    mutable size_t work_ = 0;  // visits and merges so far (count_work; undone with an attempt)
    mutable bool approximated_ = false;  // a negation was left smaller than "not" (fold_not's `under`)
    size_t work_limit_;
    bool legacy_ref_ = false;  // $schema is draft 3 to 7

    [[noreturn]] void fail_budget_at(const std::string & what, const std::string & path) const;
    std::string visit_ref(const std::string & ref, const std::string & path);
    std::string visit_with_ref(const json & s, const std::string & path, const std::string & hint);
    std::string visit_not_ref(const json & s, const std::string & path);
    static bool lone_negated_ref(const json & s);
    // json-schema-any-of.cpp
    std::string visit_any_of(const json & s, const char * key, const std::string & path, const std::string & hint);
    std::string any_of_branches(const json & rest, const json & branches, const json * others, const std::string & key,
                                const std::string & path, const std::string & hint, size_t * dropped = nullptr);
    bool disjoint(const json & a, const json & b, const std::string & path) const;
    // The listed values the other keywords accept; nullopt (unless `must`: then an error) when
    // one of them cannot be checked.
    std::optional<std::string> visit_enum(const json & s, const std::string & path, const std::string & hint, bool must);
    std::string literal_value(const json & v);
    std::string visit_typed(const json & s, const std::string & path, const std::string & hint);
    static std::string literal_type(const json & s, const std::string & t);
    // s with its "not" folded in; `under`: where a part of the negation cannot be written, leave
    // it out (a subset of "not", for oneOf's "this branch and no other").
    json fold_not(const json & s, const std::string & path, bool under = false) const;
    std::optional<json> fold_not_properties(const json & out, const json & n, const std::string & path, bool under) const;
    json fold_not_conjuncts(const json & out, const json & n, const std::string & path) const;
    bool negatable(const json & s, const std::string & path) const;
    json fold_if(const json & s, const std::string & path) const;
    json fold_dependent_schemas(const json & s, const std::string & path) const;
    static bool has_dependent_schemas(const json & s);
    json fold_presence_branches(const json & s, const char * key, const std::string & path) const;

    // json-schema-object.cpp
    std::string visit_object(const json & s, const std::string & path, const std::string & hint);
    // json-schema-array.cpp
    std::string visit_array(const json & s, const std::string & path, const std::string & hint);
    std::string unique_items(const json & s, const std::string & path, const std::string & hint);
    // json-schema-string.cpp
    std::string visit_string(const json & s, const std::string & path, const std::string & hint);
    // json-schema-number.cpp
    std::string visit_integer(const json & s, const std::string & path);
    std::string visit_number(const json & s, const std::string & path);
    std::string visit_numeric(const json & s, const std::string & path, bool integer_type);
    std::string multiples(const json & s, const std::optional<json_decimal> & lo, bool lo_strict, const std::optional<json_decimal> & hi,
                          bool hi_strict, uint64_t step, const std::vector<json_decimal> & excluded, bool integer_type,
                          const std::string & path);

};

// The whole-text pattern of a format the compiler checks (date, time, date-time, uuid, email,
// uri, ipv4, hostname); nullptr for the others (annotations).
const std::string * json_schema_format_pattern(const std::string & format);

// Whether value v is valid against schema s, for the keywords this file understands (type,
// enum, const, string lengths and pattern, numeric bounds, multipleOf, array and object
// shapes, anyOf / oneOf / allOf / not, $ref); nullopt when s uses another one.
std::optional<bool> json_schema_validate(const schema_compiler & c, const json & s, const json & v, int depth = 0);

}  // namespace json_schema_detail
