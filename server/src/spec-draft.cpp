// Draft sources for speculative decoding: n-gram lookup and a draft model (see spec-draft.h).
#include "spec-draft.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

size_t tokens_common_prefix(const std::vector<int32_t> & a, const std::vector<int32_t> & b) {
    size_t n = 0;
    const size_t lim = std::min(a.size(), b.size());
    while (n < lim && a[n] == b[n]) ++n;
    return n;
}

namespace {

// The latest start j < size - n of an earlier occurrence of history's last n tokens; -1 if none.
long find_earlier(const std::vector<int32_t> & h, size_t n) {
    const size_t len = h.size();
    const int32_t * suffix = h.data() + (len - n);
    for (long j = long(len - n) - 1; j >= 0; --j) {
        if (h[size_t(j)] == suffix[0] && std::equal(suffix, suffix + n, h.begin() + j)) return j;
    }
    return -1;
}

// How many leading token texts the vocabulary check compares (plus every special token).
constexpr int32_t k_vocab_check_tokens = 512;

std::string quoted(const std::string & t) {
    std::string out = "'";
    for (char c : t) {
        if (static_cast<unsigned char>(c) < 0x20) {
            out += "\\x" + std::string(1, "0123456789abcdef"[(c >> 4) & 0xf]) + "0123456789abcdef"[c & 0xf];
        } else {
            out += c;
        }
    }
    return out + "'";
}

}  // namespace

std::vector<int32_t> spec_ngram_draft(const std::vector<int32_t> & history, uint32_t n_gram, int32_t n_max) {
    if (n_max <= 0 || history.size() < 2) return {};
    for (size_t n = std::min<size_t>(n_gram, history.size() - 1); n >= 1; --n) {
        const long j = find_earlier(history, n);
        if (j < 0) continue;
        // What followed the match; past the end of history the draft copies itself, so that a
        // repetition with a period shorter than n_max is drafted further than one period.
        const size_t from = size_t(j) + n;  // < history.size(): the match ends before the suffix
        std::vector<int32_t> out;
        out.reserve(size_t(n_max));
        for (size_t p = from; out.size() < size_t(n_max); ++p) out.push_back(p < history.size() ? history[p] : out[p - history.size()]);
        return out;
    }
    return {};
}

std::string spec_vocab_mismatch(const model & target, const model & draft) {
    const vocab & a = target.get_vocab();
    const vocab & b = draft.get_vocab();
    const int32_t na = target.hparams().n_vocab, nb = draft.hparams().n_vocab;
    if (na != nb || a.n_tokens() != b.n_tokens()) {
        return "the draft model has " + std::to_string(nb) + " tokens, the model " + std::to_string(na);
    }
    if (a.type() != b.type()) return "the draft model's tokenizer is of another type than the model's";
    const std::pair<const char *, int32_t> specials[][2] = {
        {{"BOS", a.bos_id()}, {"BOS", b.bos_id()}},
        {{"EOS", a.eos_id()}, {"EOS", b.eos_id()}},
        {{"EOT", a.eot_id()}, {"EOT", b.eot_id()}},
    };
    for (const auto & sp : specials) {
        if (sp[0].second != sp[1].second) {
            return std::string("the draft model's ") + sp[0].first + " token is " + std::to_string(sp[1].second) +
                   ", the model's " + std::to_string(sp[0].second);
        }
    }
    if (a.eog_ids() != b.eog_ids()) return "the draft model has other end-of-generation tokens than the model";
    std::vector<int32_t> ids;
    for (int32_t i = 0; i < std::min(a.n_tokens(), k_vocab_check_tokens); ++i) ids.push_back(i);
    for (int32_t i = 0; i < a.n_tokens(); ++i) {
        if (i >= k_vocab_check_tokens && (a.is_control(i) || b.is_control(i))) ids.push_back(i);
    }
    for (int32_t id : a.eog_ids()) ids.push_back(id);
    for (int32_t id : ids) {
        if (a.token_text(id) != b.token_text(id) || a.token_type(id) != b.token_type(id)) {
            return "token " + std::to_string(id) + " is " + quoted(b.token_text(id)) + " in the draft model, " +
                   quoted(a.token_text(id)) + " in the model";
        }
    }
    return "";
}

spec_draft_model::spec_draft_model(const model & draft, const context_params & target, uint32_t n_seq, uint32_t n_ctx,
                                   int32_t n_max, float p_min)
    : cached_(n_seq), p_min_(p_min) {
    context_params cp = target;
    cp.embeddings = false;
    cp.n_seq_max = n_seq;
    // Room for every sequence's draft tokens beyond what the target holds.
    cp.n_ctx = n_ctx + n_seq * uint32_t(std::max(n_max, 0) + 1);
    const model_hparams & hp = draft.hparams();
    if (!hp.use_rope && hp.n_ctx_train > 0) cp.n_ctx = std::min(cp.n_ctx, hp.n_ctx_train);
    ctx_ = std::make_unique<context>(draft, cp);
}

spec_draft_model::~spec_draft_model() = default;

size_t spec_draft_model::sync(int32_t seq, const std::vector<int32_t> & tokens) {
    std::vector<int32_t> & have = cached_[size_t(seq)];
    size_t keep = tokens_common_prefix(have, tokens);
    if (keep > 0 && !ctx_->seq_resumable(seq, int32_t(keep))) keep = 0;  // sliding-window cells gone
    if (keep < have.size()) {
        ctx_->seq_rm(seq, int32_t(keep), -1);
        have.resize(keep);
    }
    return keep;
}

bool spec_draft_model::decode_with_room(const llm_batch & b, const std::vector<spec_draft_job> & jobs) {
    int st = ctx_->decode(b);
    if (st == decode_no_kv_space) {
        for (size_t seq = 0; seq < cached_.size(); ++seq) {
            const bool busy = std::any_of(jobs.begin(), jobs.end(), [&](const spec_draft_job & j) { return size_t(j.seq) == seq; });
            if (busy || cached_[seq].empty()) continue;
            ctx_->seq_rm(int32_t(seq), -1, -1);
            cached_[seq].clear();
        }
        st = ctx_->decode(b);
    }
    ++n_decodes_;
    return st == decode_ok;
}

int32_t spec_draft_model::propose(int32_t idx) const {
    const float * row = ctx_->logits(idx);
    const int32_t n = ctx_->n_vocab();
    int32_t best = 0;
    for (int32_t i = 1; i < n; ++i) {
        if (row[i] > row[best]) best = i;
    }
    if (!std::isfinite(row[best])) return -1;
    double sum = 0.0;
    for (int32_t i = 0; i < n; ++i) sum += std::isfinite(row[i]) ? std::exp(double(row[i]) - double(row[best])) : 0.0;
    return 1.0 / sum >= double(p_min_) ? best : -1;
}

// One decode with every job's missing tokens (at most n_batch in all); logits_idx[i] is the batch
// index of job i's pending token, -1 when job i did not get all of its tokens in.
bool spec_draft_model::catch_up(std::vector<spec_draft_job> & jobs, std::vector<int32_t> & logits_idx) {
    const size_t budget = ctx_->params().n_batch;
    llm_batch b;
    std::vector<size_t> n_in(jobs.size(), 0);
    logits_idx.assign(jobs.size(), -1);
    for (size_t i = 0; i < jobs.size(); ++i) {
        const spec_draft_job & j = jobs[i];
        const size_t keep = sync(j.seq, *j.tokens);
        const size_t missing = j.tokens->size() - keep + 1;  // and the pending token
        const size_t n = std::min(missing, budget - b.size());
        for (size_t k = 0; k < n; ++k) {
            const size_t p = keep + k;
            const bool last = p == j.tokens->size();
            if (last) logits_idx[i] = int32_t(b.size());
            b.add(last ? j.pending : (*j.tokens)[p], int32_t(p), j.seq, last);
        }
        n_in[i] = n;
        if (b.size() == budget) break;
    }
    if (b.size() == 0 || !decode_with_room(b, jobs)) return false;
    for (size_t i = 0; i < jobs.size(); ++i) {
        std::vector<int32_t> & have = cached_[size_t(jobs[i].seq)];
        for (size_t k = 0; k < n_in[i]; ++k) {
            const size_t p = have.size();
            have.push_back(p == jobs[i].tokens->size() ? jobs[i].pending : (*jobs[i].tokens)[p]);
        }
    }
    return true;
}

// One decode per draft position: every active job's last draft token in, its next one out.
void spec_draft_model::extend(std::vector<spec_draft_job> & jobs, std::vector<bool> & active) {
    llm_batch b;
    for (;;) {
        b.clear();
        std::vector<size_t> in;
        for (size_t i = 0; i < jobs.size(); ++i) {
            if (!active[i]) continue;
            in.push_back(i);
            b.add(jobs[i].draft.back(), int32_t(cached_[size_t(jobs[i].seq)].size()), jobs[i].seq, true);
        }
        if (in.empty() || !decode_with_room(b, jobs)) return;
        for (size_t k = 0; k < in.size(); ++k) {
            spec_draft_job & j = jobs[in[k]];
            cached_[size_t(j.seq)].push_back(j.draft.back());
            const int32_t t = propose(int32_t(k));
            if (t >= 0) j.draft.push_back(t);
            active[in[k]] = t >= 0 && int32_t(j.draft.size()) < j.n_max;
        }
    }
}

void spec_draft_model::draft(std::vector<spec_draft_job> & jobs) {
    for (spec_draft_job & j : jobs) j.draft.clear();
    std::vector<int32_t> idx;
    if (jobs.empty() || !catch_up(jobs, idx)) return;
    std::vector<bool> active(jobs.size(), false);
    for (size_t i = 0; i < jobs.size(); ++i) {
        if (idx[i] < 0 || jobs[i].n_max <= 0) continue;
        const int32_t t = propose(idx[i]);
        if (t < 0) continue;
        jobs[i].draft.push_back(t);
        active[i] = int32_t(jobs[i].draft.size()) < jobs[i].n_max;
    }
    extend(jobs, active);
}
