// The lazily built lexeme DFA (grammar-lexer.h).
#include "grammar-lexer.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>

namespace {

// Whether s has a code point in lo..hi (surrogates excluded).
bool set_meets(const grammar_char_set & s, uint32_t lo, uint32_t hi) {
    auto meets = [&](uint32_t a, uint32_t b) {
        if (a > b) return false;
        auto it = std::lower_bound(s.ranges.begin(), s.ranges.end(), a,
                                   [](const grammar_char_range & r, uint32_t v) { return r.hi < v; });
        return it != s.ranges.end() && it->lo <= b;
    };
    return meets(lo, std::min(hi, 0xD7FFu)) || meets(std::max(lo, 0xE000u), hi);
}

constexpr uint32_t k_min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};

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

void grammar_lexer::closure(uint32_t lexeme, std::vector<uint32_t> frames, std::vector<uint32_t> & out) {
    std::vector<std::vector<uint32_t>> work{std::move(frames)};
    std::unordered_set<std::string> seen;
    while (!work.empty()) {
        std::vector<uint32_t> f = std::move(work.back());
        work.pop_back();
        if (!seen.insert(bytes_key(f)).second) continue;
        nfa_state s;
        s.lexeme = lexeme;
        if (f.empty()) {  // the lexeme ends here
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
        closure(nfa_[id].lexeme, std::move(frames), out);
        nfa_[id].advance = std::move(out);  // closure may have grown nfa_
        nfa_[id].advance_known = true;
    }
    return nfa_[id].advance;
}

void grammar_lexer::step_nfa(uint32_t id, uint8_t b, std::vector<uint32_t> & out) {
    const nfa_state & s = nfa_[id];
    if (s.frames.empty()) return;
    const uint32_t top = s.frames.back();
    const grammar_symbol sym = p_.g.rules[pos_rule_[top]].alternatives[pos_alt_[top]][pos_dot_[top]];
    const grammar_char_set & set = p_.g.sets[sym.index];
    if (s.need == 0 && b < 0x80) {
        if (set.contains(b)) {
            const std::vector<uint32_t> & adv = advance(id);
            out.insert(out.end(), adv.begin(), adv.end());
        }
        return;
    }
    const uint64_t key = uint64_t(id) << 8 | b;
    if (auto it = partial_next_.find(key); it != partial_next_.end()) {
        if (it->second != UINT32_MAX) out.push_back(it->second);
        return;
    }
    nfa_state n;
    n.lexeme = s.lexeme;
    n.frames = s.frames;
    if (s.need == 0) {
        if (b >= 0xC2 && b <= 0xDF) {
            n.prefix = b & 0x1F, n.need = 1, n.len = 2;
        } else if (b >= 0xE0 && b <= 0xEF) {
            n.prefix = b & 0x0F, n.need = 2, n.len = 3;
        } else if (b >= 0xF0 && b <= 0xF4) {
            n.prefix = b & 0x07, n.need = 3, n.len = 4;
        } else {
            partial_next_.emplace(key, UINT32_MAX);
            return;
        }
    } else {
        if ((b & 0xC0) != 0x80) return;
        n.prefix = s.prefix << 6 | (b & 0x3F);
        n.need = uint8_t(s.need - 1);
        n.len = s.len;
    }
    if (n.need > 0) {  // a code point still incomplete: go on only if the set has one with this start
        const uint32_t shift = 6u * n.need;
        const uint32_t lo = std::max(n.prefix << shift, k_min_cp[n.len]);
        const uint32_t hi = std::min((n.prefix << shift) | ((1u << shift) - 1), grammar_max_code_point);
        const bool alive = lo <= hi && set_meets(set, lo, hi);
        const uint32_t next = alive ? intern_nfa(std::move(n)) : UINT32_MAX;
        partial_next_.emplace(key, next);
        if (alive) out.push_back(next);
        return;
    }
    const uint32_t cp = n.prefix;  // a multi-byte code point just completed
    const bool ok = cp >= k_min_cp[n.len] && cp <= grammar_max_code_point && (cp < 0xD800 || cp > 0xDFFF) && set.contains(cp);
    if (!ok) return;
    // The pending state's advance is the advance of the state it came from (same frames).
    uint32_t origin = UINT32_MAX;
    {
        nfa_state o;
        o.lexeme = s.lexeme;
        o.frames = s.frames;
        origin = intern_nfa(std::move(o));
    }
    const std::vector<uint32_t> & adv = advance(origin);
    out.insert(out.end(), adv.begin(), adv.end());
}

uint32_t grammar_lexer::intern_nfa(nfa_state s) {
    std::string key = bytes_key(s.frames);
    const uint32_t head[3] = {s.lexeme, s.prefix, uint32_t(s.need) | uint32_t(s.len) << 8};
    key.append(reinterpret_cast<const char *>(head), sizeof(head));
    auto [it, fresh] = nfa_ids_.emplace(std::move(key), uint32_t(nfa_.size()));
    if (fresh) nfa_.push_back(std::move(s));
    return it->second;
}

int32_t grammar_lexer::intern_dfa(std::vector<uint32_t> members) {
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());
    if (members.empty()) return dead;
    auto [it, fresh] = dfa_ids_.emplace(std::move(members), int32_t(dfa_.size()));
    if (!fresh) return it->second;
    dfa_state d;
    for (uint32_t m : it->first) {
        if (nfa_[m].frames.empty()) {
            d.accepts.push_back(nfa_[m].lexeme);
        } else {
            d.can_continue = true;
        }
    }
    std::sort(d.accepts.begin(), d.accepts.end());
    d.accepts.erase(std::unique(d.accepts.begin(), d.accepts.end()), d.accepts.end());
    if (!d.accepts.empty()) {
        d.accepts_id = accepts_ids_.emplace(bytes_key(d.accepts), int32_t(accepts_ids_.size())).first->second;
    }
    d.members = it->first;
    accepts_id_.push_back(d.accepts_id);
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
    const int32_t d = intern_dfa(std::move(members));
    start_ids_.emplace(key, d);
    return d;
}

int32_t grammar_lexer::compute(int32_t d, uint8_t b) {
    std::vector<uint32_t> next;
    const std::vector<uint32_t> members = dfa_[size_t(d)].members;  // intern_dfa may grow dfa_
    for (uint32_t m : members) step_nfa(m, b, next);
    const int32_t t = intern_dfa(std::move(next));
    trans_[size_t(d) * 256 + b] = t;
    return t;
}
