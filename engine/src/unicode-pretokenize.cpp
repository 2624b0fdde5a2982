// engine/src/unicode-pretokenize.cpp — hand-written scanners for the split patterns of the
// byte-level BPE pre-tokenizers. Each pattern is applied like a regex split that keeps both the
// matches and the text between them; multi-pattern pre-tokenizers apply their patterns in turn,
// each one to every piece produced by the previous one.
//
// Patterns (as documented by the model families):
//   gpt-2:     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//   llama-bpe: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|
//              \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//   qwen2:     as llama-bpe with \p{N} instead of \p{N}{1,3}
//   starcoder: \p{N} then gpt-2;   falcon: [\p{P}$+<=>^~|`]+ then gpt-2 then [0-9][0-9][0-9]
//   deepseek-llm: [\r\n], then \s?[Latin/Greek/Cyrillic/… letters]+, then
//              \s?[!-/:-~！-／：-～‘-‟　-。]+, then \s+$, then [一-龥ࠀ-一가-퟿]+, then \p{N}+
#include "unicode.h"

namespace inferd::unicode {

namespace {

constexpr uint32_t k_none = 0xFFFFFFFF;

struct text_view {
    const std::vector<uint32_t> & cps;
    std::vector<uint8_t> flags;  // category flags; whitespace reported separately

    uint32_t at(size_t i, size_t end) const { return i < end ? cps[i] : k_none; }
    bool letter(size_t i, size_t end) const { return i < end && (flags[i] & flag_letter); }
    bool number(size_t i, size_t end) const { return i < end && (flags[i] & flag_number); }
    bool space(size_t i, size_t end) const { return i < end && is_whitespace(cps[i]); }
    // [^\s\p{L}\p{N}] over assigned code points.
    bool other(size_t i, size_t end) const {
        return i < end && flags[i] != 0 && !is_whitespace(cps[i]) &&
               !(flags[i] & (flag_letter | flag_number));
    }
};

// Match length at pos within [pos, end); 0 when the pattern does not match there.
using matcher = size_t (*)(const text_view & t, size_t pos, size_t end);

uint32_t ascii_lower(uint32_t c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

// 's 't 're 've 'm 'll 'd (optionally ignoring case); 0 when none.
size_t match_contraction(const text_view & t, size_t pos, size_t end, bool fold) {
    if (t.at(pos, end) != '\'') return 0;
    uint32_t c1 = t.at(pos + 1, end), c2 = t.at(pos + 2, end);
    if (fold) {
        c1 = ascii_lower(c1);
        c2 = ascii_lower(c2);
    }
    if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') return 2;
    if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l')) return 3;
    return 0;
}

// \s+(?!\S)|\s+ at pos (n whitespace code points there); 0 when n == 0.
size_t match_trailing_space(size_t pos, size_t n, size_t end) {
    if (n > 1 && pos + n < end) return n - 1;
    return n;
}

size_t count_spaces(const text_view & t, size_t pos, size_t end) {
    size_t n = 0;
    while (t.space(pos + n, end)) n++;
    return n;
}

size_t match_gpt2(const text_view & t, size_t pos, size_t end) {
    if (size_t n = match_contraction(t, pos, end, false)) return n;
    const size_t q = pos + (t.at(pos, end) == ' ' ? 1 : 0);
    size_t r = q;
    if (t.letter(q, end)) {
        while (t.letter(r, end)) r++;
        return r - pos;
    }
    if (t.number(q, end)) {
        while (t.number(r, end)) r++;
        return r - pos;
    }
    if (t.other(q, end)) {
        while (t.other(r, end)) r++;
        return r - pos;
    }
    const size_t n = match_trailing_space(pos, count_spaces(t, pos, end), end);
    return n > 0 ? n : 1;
}

size_t match_llama3_like(const text_view & t, size_t pos, size_t end, size_t max_digits) {
    if (size_t n = match_contraction(t, pos, end, true)) return n;
    const uint32_t c = t.at(pos, end);
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if (t.letter(pos, end) ||
        (c != '\r' && c != '\n' && !t.number(pos, end) && t.letter(pos + 1, end))) {
        size_t r = pos + 1;
        while (t.letter(r, end)) r++;
        return r - pos;
    }
    if (t.number(pos, end)) {
        size_t r = pos;
        while (r - pos < max_digits && t.number(r, end)) r++;
        return r - pos;
    }
    // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
    const size_t q = pos + (c == ' ' ? 1 : 0);
    if (t.other(q, end)) {
        size_t r = q;
        while (t.other(r, end)) r++;
        while (t.at(r, end) == '\r' || t.at(r, end) == '\n') r++;
        return r - pos;
    }
    // \s*[\r\n]+
    const size_t n = count_spaces(t, pos, end);
    size_t last_nl = 0;
    for (size_t k = 0; k < n; k++) {
        const uint32_t ck = t.cps[pos + k];
        if (ck == '\r' || ck == '\n') last_nl = k + 1;
    }
    if (last_nl > 0) return last_nl;
    const size_t m = match_trailing_space(pos, n, end);
    return m > 0 ? m : 1;
}

size_t match_llama3(const text_view & t, size_t pos, size_t end) {
    return match_llama3_like(t, pos, end, 3);
}

size_t match_qwen2(const text_view & t, size_t pos, size_t end) {
    return match_llama3_like(t, pos, end, 1);
}

size_t match_one_number(const text_view & t, size_t pos, size_t end) {
    return t.number(pos, end) ? 1 : 0;
}

bool falcon_punct(const text_view & t, size_t i, size_t end) {
    if (i >= end) return false;
    const uint32_t c = t.cps[i];
    if (t.flags[i] & flag_punctuation) return true;
    return c == '$' || c == '+' || c == '<' || c == '=' || c == '>' || c == '^' || c == '~' ||
           c == '|' || c == '`';
}

size_t match_falcon_punct(const text_view & t, size_t pos, size_t end) {
    size_t r = pos;
    while (falcon_punct(t, r, end)) r++;
    return r - pos;
}

size_t match_three_digits(const text_view & t, size_t pos, size_t end) {
    for (size_t k = 0; k < 3; k++) {
        const uint32_t c = t.at(pos + k, end);
        if (c < '0' || c > '9') return 0;
    }
    return 3;
}

struct cp_range {
    uint32_t first;
    uint32_t last;
};

// The letter class of deepseek-llm's second pattern (a fixed list of ranges, sorted).
const cp_range k_deepseek_letters[] = {
    {0x41, 0x5A}, {0x61, 0x7A}, {0xB5, 0xB5}, {0xC0, 0xD6},
    {0xD8, 0xF6}, {0xF8, 0x1BA}, {0x1BC, 0x1BF}, {0x1C4, 0x293},
    {0x295, 0x2AF}, {0x370, 0x373}, {0x376, 0x376}, {0x377, 0x377},
    {0x37B, 0x37D}, {0x37F, 0x37F}, {0x386, 0x386}, {0x388, 0x38A},
    {0x38C, 0x38C}, {0x38E, 0x3A1}, {0x3A3, 0x3F5}, {0x3F7, 0x481},
    {0x48A, 0x52F}, {0x531, 0x556}, {0x10A0, 0x10C5}, {0x13A0, 0x13F5},
    {0x13F8, 0x13FD}, {0x1C90, 0x1CBA}, {0x1CBD, 0x1CBF}, {0x1D00, 0x1D2B},
    {0x1D6B, 0x1D77}, {0x1D79, 0x1D9A}, {0x1E00, 0x1F15}, {0x1F18, 0x1F1D},
    {0x1F20, 0x1F45}, {0x1F48, 0x1F4D}, {0x1F50, 0x1F57}, {0x1F59, 0x1F59},
    {0x1F5B, 0x1F5B}, {0x1F5D, 0x1F5D}, {0x1F5F, 0x1F7D}, {0x1F80, 0x1FB4},
    {0x1FB6, 0x1FBC}, {0x1FBE, 0x1FBE}, {0x1FC2, 0x1FC4}, {0x1FC6, 0x1FCC},
    {0x1FD0, 0x1FD3}, {0x1FD6, 0x1FDB}, {0x1FE0, 0x1FEC}, {0x1FF2, 0x1FF4},
    {0x1FF6, 0x1FFC}, {0x2102, 0x2102}, {0x2107, 0x2107}, {0x210A, 0x2113},
    {0x2115, 0x2115}, {0x2119, 0x211D}, {0x2124, 0x2124}, {0x2126, 0x2126},
    {0x2128, 0x2128}, {0x212A, 0x212D}, {0x212F, 0x2134}, {0x2139, 0x2139},
    {0x213C, 0x213F}, {0x2145, 0x2149}, {0x214E, 0x214E}, {0x2183, 0x2183},
    {0x2184, 0x2184}, {0x2C00, 0x2C7B}, {0x2C7E, 0x2CE4}, {0x2CEB, 0x2CEE},
    {0x2CF2, 0x2CF2}, {0x2CF3, 0x2CF3}, {0xA640, 0xA66D}, {0xA680, 0xA69B},
    {0xA722, 0xA76F}, {0xA771, 0xA787}, {0xA78B, 0xA78E}, {0xAB70, 0xABBF},
    {0xFB00, 0xFB06}, {0xFB13, 0xFB17}, {0xFF21, 0xFF3A}, {0xFF41, 0xFF5A},
    {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB}, {0x10C80, 0x10CB2},
    {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
};

const cp_range k_deepseek_punct[] = {
    {0x21, 0x2F},     {0x3A, 0x7E},     {0x2018, 0x201F},
    {0x3000, 0x3002}, {0xFF01, 0xFF0F}, {0xFF1A, 0xFF5E},
};

const cp_range k_deepseek_cjk[] = {{0x800, 0x4E00}, {0x4E00, 0x9FA5}, {0xAC00, 0xD7FF}};

template <size_t N>
bool in_ranges(const cp_range (&r)[N], uint32_t c) {
    size_t lo = 0, hi = N;
    while (lo < hi) {
        const size_t mid = (lo + hi) / 2;
        if (r[mid].last < c) {
            lo = mid + 1;
        } else if (r[mid].first > c) {
            hi = mid;
        } else {
            return true;
        }
    }
    return false;
}

size_t match_newline(const text_view & t, size_t pos, size_t end) {
    const uint32_t c = t.at(pos, end);
    return (c == '\r' || c == '\n') ? 1 : 0;
}

// \s?[class]+
template <size_t N>
size_t match_space_then_class(const text_view & t, size_t pos, size_t end,
                              const cp_range (&r)[N]) {
    size_t q = pos;
    if (t.space(q, end) && q + 1 < end && in_ranges(r, t.cps[q + 1])) q++;
    size_t e = q;
    while (e < end && in_ranges(r, t.cps[e])) e++;
    return e > q ? e - pos : 0;
}

size_t match_deepseek_letters(const text_view & t, size_t pos, size_t end) {
    return match_space_then_class(t, pos, end, k_deepseek_letters);
}

size_t match_deepseek_punct(const text_view & t, size_t pos, size_t end) {
    return match_space_then_class(t, pos, end, k_deepseek_punct);
}

// \s+$ (the end of the piece)
size_t match_trailing_spaces(const text_view & t, size_t pos, size_t end) {
    size_t e = pos;
    while (t.space(e, end)) e++;
    return (e == end && e > pos) ? e - pos : 0;
}

size_t match_deepseek_cjk(const text_view & t, size_t pos, size_t end) {
    size_t e = pos;
    while (e < end && in_ranges(k_deepseek_cjk, t.cps[e])) e++;
    return e - pos;
}

size_t match_numbers(const text_view & t, size_t pos, size_t end) {
    size_t e = pos;
    while (t.number(e, end)) e++;
    return e - pos;
}

// Applies one pattern to every piece: matches and the text between them become pieces.
std::vector<piece_span> split_pass(const text_view & t, const std::vector<piece_span> & in,
                                   matcher m) {
    std::vector<piece_span> out;
    out.reserve(in.size() * 2);
    for (const piece_span & p : in) {
        size_t gap = p.begin, pos = p.begin;
        while (pos < p.end) {
            const size_t n = m(t, pos, p.end);
            if (n == 0) {
                pos++;
                continue;
            }
            if (gap < pos) out.push_back({gap, pos});
            out.push_back({pos, pos + n});
            pos += n;
            gap = pos;
        }
        if (gap < p.end) out.push_back({gap, p.end});
    }
    return out;
}

}  // namespace

std::vector<piece_span> pretokenize(const std::vector<uint32_t> & cps, bpe_pre_type type) {
    text_view t{cps, {}};
    t.flags.resize(cps.size());
    for (size_t i = 0; i < cps.size(); i++) t.flags[i] = category_flags(cps[i]);
    std::vector<piece_span> pieces;
    if (!cps.empty()) pieces.push_back({0, cps.size()});
    switch (type) {
        case bpe_pre_type::gpt2:
            return split_pass(t, pieces, match_gpt2);
        case bpe_pre_type::llama3:
            return split_pass(t, pieces, match_llama3);
        case bpe_pre_type::qwen2:
            return split_pass(t, pieces, match_qwen2);
        case bpe_pre_type::starcoder:
            return split_pass(t, split_pass(t, pieces, match_one_number), match_gpt2);
        case bpe_pre_type::falcon: {
            pieces = split_pass(t, pieces, match_falcon_punct);
            pieces = split_pass(t, pieces, match_gpt2);
            return split_pass(t, pieces, match_three_digits);
        }
        case bpe_pre_type::deepseek_llm: {
            for (matcher m : {match_newline, match_deepseek_letters, match_deepseek_punct,
                              match_trailing_spaces, match_deepseek_cjk, match_numbers}) {
                pieces = split_pass(t, pieces, m);
            }
            return pieces;
        }
    }
    return pieces;
}

}  // namespace inferd::unicode
