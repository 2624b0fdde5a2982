// The lazily built lexeme DFA (grammar-lexer.h).
#include "grammar-lexer.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>

namespace {

// The code points of ranges in lo..hi, less base (ranges sorted and disjoint).
std::vector<grammar_char_range> clip(const std::vector<grammar_char_range> & ranges, uint32_t lo, uint32_t hi, uint32_t base) {
    std::vector<grammar_char_range> out;
    auto it = std::lower_bound(ranges.begin(), ranges.end(), lo, [](const grammar_char_range & r, uint32_t v) { return r.hi < v; });
    for (; it != ranges.end() && it->lo <= hi; ++it) out.push_back({std::max(it->lo, lo) - base, std::min(it->hi, hi) - base});
    return out;
}

// The valid code points a lead byte b starts (surrogates excluded), as ranges; need: the
// continuation bytes to come (0: b starts no multi-byte code point).
std::vector<grammar_char_range> lead_ranges(uint8_t b, uint8_t * need, uint32_t * base) {
    uint32_t lo = 0, hi = 0;
    if (b >= 0xC2 && b <= 0xDF) {
        *need = 1, *base = uint32_t(b & 0x1F) << 6, lo = *base, hi = lo + 63;
    } else if (b >= 0xE0 && b <= 0xEF) {
        *need = 2, *base = uint32_t(b & 0x0F) << 12, lo = std::max(*base, 0x800u), hi = *base + 4095;
    } else if (b >= 0xF0 && b <= 0xF4) {
        *need = 3, *base = uint32_t(b & 0x07) << 18, lo = std::max(*base, 0x10000u), hi = std::min(*base + (1u << 18) - 1, grammar_max_code_point);
    } else {
        *need = 0;
        return {};
    }
    if (lo <= 0xDFFF && hi >= 0xD800) return {{lo, 0xD7FF}, {0xE000, hi}};  // the ED lead byte
    return {{lo, hi}};
}

std::string bytes_key(const std::vector<uint32_t> & v) {
    std::string k(v.size() * 4, '\0');
    if (!v.empty()) std::memcpy(k.data(), v.data(), k.size());
    return k;
}

}  // namespace

grammar_lexer::grammar_lexer(const grammar_program & p) : p_(p) {
    alt_base_.resize(p.g.rules.size());
    uint32_t n = 0;
    for (uint32_t r = 0; r < p.g.rules.size(); ++r) {
        const auto & alts = p.g.rules[r].alternatives;
        for (uint32_t a = 0; a < alts.size(); ++a) {
            alt_base_[r].push_back(n);
            for (uint32_t d = 0; d <= alts[a].size(); ++d, ++n) {
                pos_rule_.push_back(r);
                pos_alt_.push_back(a);
                pos_dot_.push_back(d);
            }
        }
    }
}

void grammar_lexer::over() {
    work_end_ = UINT64_MAX;  // disarmed until the next arm()
    throw grammar_lexer_over_budget(
        "the grammar is too costly to follow: a step of its automaton needed more than the work allowed "
        "(repetitions of an optional part, such as (\" \"*){1000}, multiply it)");
}

void grammar_lexer::closure(uint32_t lexeme, std::vector<uint32_t> frames, std::vector<uint32_t> & out, uint32_t sig) {
    std::vector<std::vector<uint32_t>> work{std::move(frames)};
    std::unordered_set<std::string> seen;
    while (!work.empty()) {
        charge(1);
        std::vector<uint32_t> f = std::move(work.back());
        work.pop_back();
        if (!seen.insert(bytes_key(f)).second) continue;
        nfa_state s;
        s.lexeme = lexeme;
        s.sig = sig;
        if (f.empty()) {  // the lexeme ends here (projected: the loop is left)
            out.push_back(intern_nfa(std::move(s)));
            continue;
        }
        const uint32_t top = f.back(), r = pos_rule_[top], a = pos_alt_[top], d = pos_dot_[top];
        const grammar_sequence & alt = p_.g.rules[r].alternatives[a];
        if (d == alt.size()) {
            f.pop_back();
            work.push_back(std::move(f));
            continue;
        }
        const grammar_symbol sym = alt[d];
        if (sym.kind == grammar_symbol_kind::chars) {
            s.frames = std::move(f);
            out.push_back(intern_nfa(std::move(s)));
            continue;
        }
        if (d + 1 == alt.size()) {
            f.pop_back();  // a tail call: nothing of this rule is left after it
        } else {
            f.back() = pos(r, a, d + 1);
        }
        for (uint32_t b = 0; b < p_.g.rules[sym.index].alternatives.size(); ++b) {
            std::vector<uint32_t> g = f;
            g.push_back(pos(sym.index, b, 0));
            work.push_back(std::move(g));
        }
    }
}

const std::vector<uint32_t> & grammar_lexer::advance(uint32_t id) {
    if (!nfa_[id].advance_known) {
        std::vector<uint32_t> frames = nfa_[id].frames;
        frames.back() += 1;  // the dot moves past the set
        std::vector<uint32_t> out;
        closure(nfa_[id].lexeme, std::move(frames), out, nfa_[id].sig);
        nfa_[id].advance = std::move(out);  // closure may have grown nfa_
        nfa_[id].advance_known = true;
    }
    return nfa_[id].advance;
}

uint32_t grammar_lexer::intern_pattern(std::vector<grammar_char_range> p) {
    std::string key(p.size() * sizeof(grammar_char_range), '\0');
    if (!p.empty()) std::memcpy(key.data(), p.data(), key.size());
    auto [it, fresh] = pattern_ids_.emplace(std::move(key), uint32_t(patterns_.size()));
    if (fresh) patterns_.push_back(std::move(p));
    return it->second;
}

void grammar_lexer::step_nfa(uint32_t id, uint8_t b, std::vector<uint32_t> & out) {
    const nfa_state & s = nfa_[id];
    if (s.frames.empty()) {
        if (s.sig != 0 && !s.escaped && exit_reads(s.sig, b)) {
            if (escaped_id_ == UINT32_MAX) {
                nfa_state e;
                e.lexeme = UINT32_MAX;
                e.escaped = true;
                escaped_id_ = intern_nfa(std::move(e));
            }
            out.push_back(escaped_id_);
        }
        return;
    }
    if (s.need == 0 && b < 0x80) {
        const uint32_t top = s.frames.back();
        const grammar_symbol sym = p_.g.rules[pos_rule_[top]].alternatives[pos_alt_[top]][pos_dot_[top]];
        if (p_.g.sets[sym.index].contains(b)) {
            const std::vector<uint32_t> & adv = advance(id);
            out.insert(out.end(), adv.begin(), adv.end());
        }
        return;
    }
    if (s.need == 0) {
        // No multi-byte code point starts with b, or the set has none: nothing to remember.
        const uint32_t top = s.frames.back();
        const grammar_symbol sym = p_.g.rules[pos_rule_[top]].alternatives[pos_alt_[top]][pos_dot_[top]];
        const std::vector<grammar_char_range> & rs = p_.g.sets[sym.index].ranges;
        if (b < 0xC2 || b > 0xF4 || rs.empty() || rs.back().hi < 0x80) return;
    }
    constexpr uint32_t none = UINT32_MAX, complete = UINT32_MAX - 1;
    const uint64_t key = uint64_t(id) << 8 | b;
    if (auto it = partial_next_.find(key); it != partial_next_.end()) {
        if (it->second == complete) {
            const std::vector<uint32_t> & adv = advance(s.origin);
            out.insert(out.end(), adv.begin(), adv.end());
        } else if (it->second != none) {
            out.push_back(it->second);
        }
        return;
    }
    // The code points still possible after b, relative to what b fixes.
    std::vector<grammar_char_range> left;
    uint8_t need = 0;
    if (s.need == 0) {
        uint32_t base = 0;
        const uint32_t top = s.frames.back();
        const grammar_symbol sym = p_.g.rules[pos_rule_[top]].alternatives[pos_alt_[top]][pos_dot_[top]];
        for (const grammar_char_range & r : lead_ranges(b, &need, &base)) {
            for (const grammar_char_range & c : clip(p_.g.sets[sym.index].ranges, r.lo, r.hi, base)) left.push_back(c);
        }
    } else if ((b & 0xC0) == 0x80) {
        need = uint8_t(s.need - 1);
        const uint32_t span = 1u << (6 * need), lo = uint32_t(b & 0x3F) * span;
        left = clip(patterns_[s.pattern], lo, lo + span - 1, lo);
    }
    uint32_t next = none;
    if (!left.empty() && need > 0) {
        nfa_state n;
        n.lexeme = s.lexeme;
        n.sig = s.sig;
        n.need = need;
        n.pattern = intern_pattern(std::move(left));
        n.origin = s.need == 0 ? id : s.origin;
        n.frames = s.frames;
        next = intern_nfa(std::move(n));
    }
    if (!left.empty() && need == 0) {  // the code point is complete and in the set
        partial_next_.emplace(key, complete);
        const uint32_t origin = nfa_[id].origin;  // advance may grow nfa_
        const std::vector<uint32_t> & adv = advance(origin);
        out.insert(out.end(), adv.begin(), adv.end());
        return;
    }
    partial_next_.emplace(key, next);
    if (next != none) out.push_back(next);
}

uint32_t grammar_lexer::intern_nfa(nfa_state s) {
    std::string key = bytes_key(s.frames);
    const uint32_t head[4] = {s.lexeme, s.pattern, uint32_t(s.need) | uint32_t(s.escaped) << 8, s.sig};
    key.append(reinterpret_cast<const char *>(head), sizeof(head));
    auto [it, fresh] = nfa_ids_.emplace(std::move(key), uint32_t(nfa_.size()));
    if (fresh) nfa_.push_back(std::move(s));
    return it->second;
}

int32_t grammar_lexer::intern_dfa(std::vector<uint32_t> & members) {
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());
    if (members.empty()) return dead;
    if (auto found = dfa_ids_.find(members); found != dfa_ids_.end()) return found->second;
    auto it = dfa_ids_.emplace(members, int32_t(dfa_.size())).first;
    dfa_state d;
    for (uint32_t m : it->first) {
        const nfa_state & x = nfa_[m];
        if (x.escaped) {
            d.escape = true;
        } else if (!x.frames.empty()) {
            d.can_continue = true;
        } else if (x.sig == 0) {
            d.accepts.push_back(x.lexeme);
        } else {  // a projected exit: the rest may read on, or be empty and end the lexeme
            d.can_continue = true;
            if (sigs_[x.sig].end_lexeme != UINT32_MAX) d.accepts.push_back(sigs_[x.sig].end_lexeme);
        }
    }
    std::sort(d.accepts.begin(), d.accepts.end());
    d.accepts.erase(std::unique(d.accepts.begin(), d.accepts.end()), d.accepts.end());
    if (!d.accepts.empty()) {
        d.accepts_id = accepts_ids_.emplace(bytes_key(d.accepts), int32_t(accepts_ids_.size())).first->second;
    }
    d.members = it->first;
    accepts_id_.push_back(d.accepts_id);
    marks_.push_back(uint8_t((d.accepts_id >= 0 ? mark_accepts : 0) | (d.escape ? mark_escape : 0)));
    proj_.push_back(unknown);
    loops_.emplace_back();
    loop_known_.push_back(0);
    dfa_.push_back(std::move(d));
    trans_.resize(dfa_.size() * 256, unknown);
    return it->second;
}

int32_t grammar_lexer::start(const std::vector<uint32_t> & lexemes) {
    const std::string key = bytes_key(lexemes);
    if (auto it = start_ids_.find(key); it != start_ids_.end()) return it->second;
    std::vector<uint32_t> members;
    for (uint32_t l : lexemes) {
        const uint32_t rule = p_.lexemes[l];
        for (uint32_t a = 0; a < p_.g.rules[rule].alternatives.size(); ++a) closure(l, {pos(rule, a, 0)}, members);
    }
    std::erase_if(members, [&](uint32_t m) { return nfa_[m].frames.empty(); });  // no empty lexemes
    const int32_t d = intern_dfa(members);
    start_ids_.emplace(key, d);
    return d;
}

int32_t grammar_lexer::compute(int32_t d, uint8_t b) {
    std::vector<uint32_t> & next = step_scratch_;
    next.clear();
    charge(dfa_[size_t(d)].members.size());
    // step_nfa grows nfa_ at most, not dfa_: the members stay in place.
    for (uint32_t m : dfa_[size_t(d)].members) step_nfa(m, b, next);
    const int32_t t = intern_dfa(next);
    trans_[size_t(d) * 256 + b] = t;
    return t;
}

const grammar_lexer::loop_info & grammar_lexer::loops(int32_t d) {
    if (!loop_known_[size_t(d)]) {
        loop_info l;
        for (uint32_t b = 0; b < 0x80; ++b) {
            if (step(d, uint8_t(b)) == d) l.ascii[b >> 6] |= uint64_t(1) << (b & 63);
        }
        l.non_ascii = code_points_loop(d);
        loops_[size_t(d)] = l;
        loop_known_[size_t(d)] = 1;
    }
    return loops_[size_t(d)];
}

// Every byte lo..hi from `from`, then k - 1 continuation bytes (80..BF), leads back to target
// through states where no lexeme ends. seen: the (state, k) already on their way (each is walked
// once, so a class with many distinct continuation states costs its states, not their paths).
bool grammar_lexer::continuations_reach(int32_t from, uint8_t lo, uint8_t hi, int k, int32_t target,
                                        std::unordered_set<uint64_t> & seen) {
    for (uint32_t b = lo; b <= hi; ++b) {
        const int32_t n = step(from, uint8_t(b));
        if (k == 1) {
            if (n != target) return false;
            continue;
        }
        if (n < 0 || marks_[size_t(n)] != 0) return false;
        if (!seen.insert(uint64_t(uint32_t(n)) << 8 | uint32_t(k - 1)).second) continue;
        if (!continuations_reach(n, 0x80, 0xBF, k - 1, target, seen)) return false;
    }
    return true;
}

// Every well-formed non-ASCII code point read from d comes back to d.
bool grammar_lexer::code_points_loop(int32_t d) {
    struct lead_range {
        uint8_t lead_lo, lead_hi, cont_lo, cont_hi;
        int k;  // continuation bytes
    };
    static constexpr lead_range leads[] = {
        {0xC2, 0xDF, 0x80, 0xBF, 1}, {0xE0, 0xE0, 0xA0, 0xBF, 2}, {0xE1, 0xEC, 0x80, 0xBF, 2},
        {0xED, 0xED, 0x80, 0x9F, 2}, {0xEE, 0xEF, 0x80, 0xBF, 2}, {0xF0, 0xF0, 0x90, 0xBF, 3},
        {0xF1, 0xF3, 0x80, 0xBF, 3}, {0xF4, 0xF4, 0x80, 0x8F, 3},
    };
    std::unordered_set<uint64_t> seen;  // (state after the lead, its continuation range)
    std::unordered_set<uint64_t> seen_cont;
    for (const lead_range & r : leads) {
        for (uint32_t lead = r.lead_lo; lead <= r.lead_hi; ++lead) {
            const int32_t n = step(d, uint8_t(lead));
            if (n < 0 || marks_[size_t(n)] != 0) return false;
            if (!seen.insert(uint64_t(uint32_t(n)) << 16 | uint32_t(r.cont_lo) << 8 | r.cont_hi).second) continue;
            if (!continuations_reach(n, r.cont_lo, r.cont_hi, r.k, d, seen_cont)) return false;
        }
    }
    return true;
}

bool grammar_lexer::exit_reads(uint32_t sig, uint8_t b) const {
    for (uint32_t set : sigs_[sig].sets) {
        const grammar_char_set & cs = p_.g.sets[set];
        if (b < 0x80) {
            if (cs.contains(b)) return true;
            continue;
        }
        uint8_t need = 0;
        uint32_t base = 0;
        for (const grammar_char_range & r : lead_ranges(b, &need, &base)) {
            if (!clip(cs.ranges, r.lo, r.hi, base).empty()) return true;
        }
    }
    return false;
}

uint32_t grammar_lexer::project_nfa(uint32_t id) {
    if (auto it = nfa_proj_.find(id); it != nfa_proj_.end()) return it->second;
    const nfa_state & s = nfa_[id];
    size_t cut = 0;  // the innermost looping frame with frames below it
    if (s.sig == 0 && !s.escaped) {
        for (size_t j = s.frames.size(); j-- > 1;) {
            if (p_.looping[pos_rule_[s.frames[j]]]) {
                cut = j;
                break;
            }
        }
    }
    if (cut == 0) return nfa_proj_[id] = id;
    const uint32_t lexeme = s.lexeme, pattern = s.pattern, origin = s.origin;
    const uint8_t need = s.need;
    std::vector<uint32_t> low(s.frames.begin(), s.frames.begin() + ptrdiff_t(cut));
    std::vector<uint32_t> high(s.frames.begin() + ptrdiff_t(cut), s.frames.end());
    std::vector<uint32_t> rest;
    closure(lexeme, std::move(low), rest);
    exit_sig sg;
    for (uint32_t r : rest) {
        const nfa_state & x = nfa_[r];
        if (x.frames.empty()) {
            sg.end_lexeme = lexeme;
            continue;
        }
        const uint32_t top = x.frames.back();
        sg.sets.push_back(p_.g.rules[pos_rule_[top]].alternatives[pos_alt_[top]][pos_dot_[top]].index);
    }
    std::sort(sg.sets.begin(), sg.sets.end());
    sg.sets.erase(std::unique(sg.sets.begin(), sg.sets.end()), sg.sets.end());
    std::string key = bytes_key(sg.sets);
    key.append(reinterpret_cast<const char *>(&sg.end_lexeme), sizeof(sg.end_lexeme));
    auto [it, fresh] = sig_ids_.emplace(std::move(key), uint32_t(sigs_.size()));
    if (fresh) sigs_.push_back(std::move(sg));
    nfa_state n;
    n.lexeme = UINT32_MAX;
    n.need = need;
    n.pattern = pattern;
    n.sig = it->second;
    n.frames = std::move(high);
    if (need > 0) n.origin = project_nfa(origin);
    const uint32_t p = intern_nfa(std::move(n));
    nfa_proj_[id] = p;
    return p;
}

int32_t grammar_lexer::project(int32_t d) {
    if (proj_[size_t(d)] != unknown) return proj_[size_t(d)];
    const std::vector<uint32_t> members = dfa_[size_t(d)].members;  // intern_dfa may grow dfa_
    charge(members.size());
    std::vector<uint32_t> out;
    bool same = true;
    for (uint32_t m : members) {
        out.push_back(project_nfa(m));
        same = same && out.back() == m;
    }
    const int32_t p = same ? d : intern_dfa(out);
    proj_[size_t(d)] = p;
    if (p != d) proj_[size_t(p)] = p;
    return p;
}

std::vector<int32_t> grammar_lexer::parts(int32_t d) {
    if (auto it = parts_.find(d); it != parts_.end()) return it->second;
    charge(dfa_[size_t(d)].members.size());
    std::unordered_map<uint32_t, std::vector<uint32_t>> by_lexeme;
    std::vector<uint32_t> order;
    for (uint32_t m : dfa_[size_t(d)].members) {
        auto [it, fresh] = by_lexeme.try_emplace(nfa_[m].lexeme);
        if (fresh) order.push_back(nfa_[m].lexeme);
        it->second.push_back(m);
    }
    std::vector<int32_t> out;
    if (order.size() > 1) {
        for (uint32_t l : order) out.push_back(intern_dfa(by_lexeme[l]));
    }
    parts_[d] = out;
    return out;
}
