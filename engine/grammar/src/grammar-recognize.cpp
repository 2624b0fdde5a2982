// grammar_recognize: an Earley recognizer over code points (grammar/grammar.h).
//
// Items (rule, alternative, dot, origin) in one set per position of the text. Predicting a
// nullable rule also moves the predicting item past it (Aycock and Horspool), so empty rules
// need no special completion. The text is accepted when the last set holds a finished item of
// the root rule that started at 0.
#include "grammar/grammar.h"

#include "utf8-decode.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace {

struct earley_item {
    uint32_t rule = 0, alt = 0, dot = 0, origin = 0;
};

// Rules that match the empty text, by fixpoint.
std::vector<bool> nullable_rules(const grammar & g) {
    std::vector<bool> nullable(g.rules.size(), false);
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t r = 0; r < g.rules.size(); ++r) {
            if (nullable[r]) continue;
            for (const grammar_sequence & alt : g.rules[r].alternatives) {
                bool all = true;
                for (const grammar_symbol & s : alt) {
                    if (s.kind == grammar_symbol_kind::chars || !nullable[s.index]) {
                        all = false;
                        break;
                    }
                }
                if (all) {
                    nullable[r] = true;
                    changed = true;
                    break;
                }
            }
        }
    }
    return nullable;
}

struct earley_item_hash {
    size_t operator()(const earley_item & it) const {
        uint64_t h = (uint64_t(it.rule) << 32) ^ (uint64_t(it.alt) << 16) ^ it.dot;
        h = h * 0x9E3779B97F4A7C15ull ^ it.origin;
        return size_t(h ^ (h >> 29));
    }
};

struct earley_item_eq {
    bool operator()(const earley_item & a, const earley_item & b) const {
        return a.rule == b.rule && a.alt == b.alt && a.dot == b.dot && a.origin == b.origin;
    }
};

// One Earley set: its items in order of addition, and per rule the items waiting for it (whose
// dot is before that rule), so a completion visits only those.
class earley_set {
public:
    bool add(const grammar & g, const earley_item & it) {
        if (!seen_.insert(it).second) return false;
        const grammar_sequence & alt = g.rules[it.rule].alternatives[it.alt];
        if (it.dot < alt.size() && alt[it.dot].kind == grammar_symbol_kind::rule) {
            waiting_[alt[it.dot].index].push_back(uint32_t(items_.size()));
        }
        items_.push_back(it);
        return true;
    }
    const std::vector<earley_item> & items() const { return items_; }
    const std::vector<uint32_t> * waiting_for(uint32_t rule) const {
        auto it = waiting_.find(rule);
        return it == waiting_.end() ? nullptr : &it->second;
    }

private:
    std::unordered_set<earley_item, earley_item_hash, earley_item_eq> seen_;
    std::unordered_map<uint32_t, std::vector<uint32_t>> waiting_;
    std::vector<earley_item> items_;
};

// Predictions and completions of set k until nothing new appears.
void earley_close(const grammar & g, const std::vector<bool> & nullable, std::vector<earley_set> & sets, uint32_t k) {
    earley_set & cur = sets[k];
    for (size_t i = 0; i < cur.items().size(); ++i) {
        const earley_item it = cur.items()[i];
        const grammar_sequence & alt = g.rules[it.rule].alternatives[it.alt];
        if (it.dot == alt.size()) {  // complete: advance the items of the origin set waiting for it.rule
            if (it.origin == k) continue;  // nullable completions were advanced at prediction
            const earley_set & from = sets[it.origin];
            if (const std::vector<uint32_t> * w = from.waiting_for(it.rule)) {
                for (uint32_t j : *w) {
                    const earley_item & x = from.items()[j];
                    cur.add(g, {x.rule, x.alt, x.dot + 1, x.origin});
                }
            }
            continue;
        }
        const grammar_symbol & s = alt[it.dot];
        if (s.kind != grammar_symbol_kind::rule) continue;
        for (uint32_t a = 0; a < g.rules[s.index].alternatives.size(); ++a) cur.add(g, {s.index, a, 0, k});
        if (nullable[s.index]) cur.add(g, {it.rule, it.alt, it.dot + 1, it.origin});
    }
}

}  // namespace

namespace {

// g without the alternatives that use a rule deriving no text or an empty character set.
grammar productive_only(const grammar & g) {
    std::vector<bool> ok(g.rules.size(), false);
    auto alt_ok = [&](const grammar_sequence & alt) {
        for (const grammar_symbol & s : alt) {
            if (s.kind == grammar_symbol_kind::rule ? !ok[s.index] : g.sets[s.index].ranges.empty()) return false;
        }
        return true;
    };
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t r = 0; r < g.rules.size(); ++r) {
            if (ok[r]) continue;
            for (const grammar_sequence & alt : g.rules[r].alternatives) {
                if (alt_ok(alt)) {
                    ok[r] = true;
                    changed = true;
                    break;
                }
            }
        }
    }
    grammar out = g;
    for (grammar_rule & r : out.rules) std::erase_if(r.alternatives, [&](const grammar_sequence & a) { return !alt_ok(a); });
    return out;
}

// The Earley sets of the code points cps; false when a code point cannot be scanned.
bool earley_run(const grammar & g, const std::vector<uint32_t> & cps, std::vector<earley_set> & sets) {
    const std::vector<bool> nullable = nullable_rules(g);
    sets.assign(cps.size() + 1, earley_set());
    for (uint32_t a = 0; a < g.rules[g.root].alternatives.size(); ++a) sets[0].add(g, {g.root, a, 0, 0});
    for (uint32_t k = 0; k <= cps.size(); ++k) {
        earley_close(g, nullable, sets, k);
        if (k == cps.size()) break;
        bool any = false;
        for (const earley_item & it : sets[k].items()) {
            const grammar_sequence & alt = g.rules[it.rule].alternatives[it.alt];
            if (it.dot < alt.size() && alt[it.dot].kind == grammar_symbol_kind::chars &&
                g.sets[alt[it.dot].index].contains(cps[k])) {
                any = sets[k + 1].add(g, {it.rule, it.alt, it.dot + 1, it.origin}) || any;
            }
        }
        if (!any) return false;
    }
    return true;
}

bool root_done(const grammar & g, const earley_set & last) {
    for (const earley_item & it : last.items()) {
        if (it.rule == g.root && it.origin == 0 && it.dot == g.rules[it.rule].alternatives[it.alt].size()) return true;
    }
    return false;
}

}  // namespace

bool grammar_recognize(const grammar & g, std::string_view text) {
    if (g.rules.empty()) return false;
    std::vector<uint32_t> cps;
    for (size_t pos = 0; pos < text.size();) {
        uint32_t cp = 0;
        if (!grammar_utf8_decode(text, pos, cp)) return false;
        cps.push_back(cp);
    }
    std::vector<earley_set> sets;
    return earley_run(g, cps, sets) && root_done(g, sets.back());
}

bool grammar_recognize_prefix(const grammar & src, std::string_view text) {
    if (src.rules.empty()) return false;
    const grammar g = productive_only(src);
    std::vector<uint32_t> cps;
    size_t pos = 0;
    while (pos < text.size()) {
        uint32_t cp = 0;
        if (!grammar_utf8_decode(text, pos, cp)) break;
        cps.push_back(cp);
    }
    // A trailing incomplete code point: the code points its bytes can still become.
    uint32_t lo = 0, hi = grammar_max_code_point;
    const bool partial = pos < text.size();
    if (partial) {
        std::string tail(text.substr(pos));
        const auto b0 = uint8_t(tail[0]);
        const size_t len = b0 >= 0xF0 && b0 <= 0xF4 ? 4 : b0 >= 0xE0 && b0 <= 0xEF ? 3 : b0 >= 0xC2 && b0 <= 0xDF ? 2 : 0;
        if (len == 0 || tail.size() >= len) return false;
        uint32_t prefix = b0 & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
        for (size_t i = 1; i < tail.size(); ++i) {
            if ((uint8_t(tail[i]) & 0xC0) != 0x80) return false;
            prefix = prefix << 6 | (uint8_t(tail[i]) & 0x3F);
        }
        const uint32_t shift = 6 * uint32_t(len - tail.size());
        const uint32_t min_cp = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
        lo = std::max(prefix << shift, min_cp);
        hi = std::min((prefix << shift) | ((1u << shift) - 1), grammar_max_code_point);
        if (lo > hi) return false;
    }
    std::vector<earley_set> sets;
    if (!earley_run(g, cps, sets)) return false;
    for (const earley_item & it : sets.back().items()) {
        const grammar_sequence & alt = g.rules[it.rule].alternatives[it.alt];
        if (it.dot >= alt.size() || alt[it.dot].kind != grammar_symbol_kind::chars) continue;
        for (const grammar_char_range & r : g.sets[alt[it.dot].index].ranges) {
            const uint32_t a = std::max(r.lo, lo), b = std::min(r.hi, hi);
            for (uint32_t c = a; c <= b; ++c) {  // a code point of the range that is not a surrogate
                if (c < 0xD800 || c > 0xDFFF) return true;
                if (c == 0xDFFF) break;
                c = 0xDFFF;
            }
        }
    }
    return !partial && root_done(g, sets.back());
}
