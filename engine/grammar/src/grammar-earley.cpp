// The Earley parser over lexemes (grammar-earley.h).
#include "grammar-earley.h"

#include <algorithm>

grammar_earley::grammar_earley(const grammar_program & p) : p_(p) { reset(); }

void grammar_earley::reset() {
    items_.clear();
    sets_.clear();
    begin_set();
    for (uint32_t pa : p_.rule_palts[p_.proot]) add({pa, 0, 0});
    predicted_.insert(p_.proot);
    finish_set();
}

void grammar_earley::truncate(uint32_t n_sets) {
    if (n_sets >= sets_.size()) return;
    items_.resize(sets_[n_sets].begin);
    sets_.resize(n_sets);
}

void grammar_earley::begin_set() {
    building_ = uint32_t(sets_.size());
    set_info s;
    s.begin = s.end = uint32_t(items_.size());
    sets_.push_back(std::move(s));
    seen_.clear();
    predicted_.clear();
}

void grammar_earley::add(const item & it) {
    if (!seen_.insert({uint64_t(it.palt) << 32 | it.dot, it.origin}).second) return;
    items_.push_back(it);
}

void grammar_earley::add_scan(uint32_t from, const std::vector<uint32_t> & lexemes) {
    const set_info & s = sets_[from];
    for (uint32_t i = s.begin; i < s.end; ++i) {
        const item it = items_[i];
        const grammar_palt & pa = p_.palts[it.palt];
        if (it.dot < pa.syms.size() && pa.syms[it.dot].lexeme &&
            std::binary_search(lexemes.begin(), lexemes.end(), pa.syms[it.dot].index)) {
            add({it.palt, it.dot + 1, it.origin});
        }
    }
}

uint32_t grammar_earley::finish_set() {
    close(building_);
    sets_[building_].end = uint32_t(items_.size());
    return building_;
}

void grammar_earley::close(uint32_t s) {
    for (size_t i = sets_[s].begin; i < items_.size(); ++i) {
        const item it = items_[i];
        const grammar_palt & pa = p_.palts[it.palt];
        if (it.dot == pa.syms.size()) {
            if (it.origin == s) continue;  // an empty derivation: the predictor skipped it already
            const set_info & o = sets_[it.origin];
            for (uint32_t j = o.begin; j < o.end; ++j) {
                const item w = items_[j];
                const grammar_palt & wa = p_.palts[w.palt];
                if (w.dot < wa.syms.size() && !wa.syms[w.dot].lexeme && wa.syms[w.dot].index == pa.rule) {
                    add({w.palt, w.dot + 1, w.origin});
                }
            }
            continue;
        }
        const grammar_psym sym = pa.syms[it.dot];
        if (sym.lexeme) {
            if (p_.nullable[p_.lexemes[sym.index]]) add({it.palt, it.dot + 1, it.origin});
            continue;
        }
        if (predicted_.insert(sym.index).second) {
            for (uint32_t alt : p_.rule_palts[sym.index]) add({alt, 0, s});
        }
        if (p_.nullable[sym.index]) add({it.palt, it.dot + 1, it.origin});
    }
}

const std::vector<uint32_t> & grammar_earley::expected(uint32_t s) {
    set_info & si = sets_[s];
    if (!si.expected_known) {
        si.expected.clear();
        for (uint32_t i = si.begin; i < si.end; ++i) {
            const grammar_palt & pa = p_.palts[items_[i].palt];
            if (items_[i].dot < pa.syms.size() && pa.syms[items_[i].dot].lexeme) {
                si.expected.push_back(pa.syms[items_[i].dot].index);
            }
        }
        std::sort(si.expected.begin(), si.expected.end());
        si.expected.erase(std::unique(si.expected.begin(), si.expected.end()), si.expected.end());
        si.expected_known = true;
    }
    return si.expected;
}

bool grammar_earley::root_complete(uint32_t s) const {
    const set_info & si = sets_[s];
    for (uint32_t i = si.begin; i < si.end; ++i) {
        const item & it = items_[i];
        const grammar_palt & pa = p_.palts[it.palt];
        if (pa.rule == p_.proot && it.origin == 0 && it.dot == pa.syms.size()) return true;
    }
    return false;
}
