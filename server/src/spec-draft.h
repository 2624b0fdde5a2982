// Draft sources for speculative decoding in the batch loop (internal): n-gram lookup in a
// sequence's own tokens, and a draft model with one sequence per slot.
//
// Usage:
//   std::vector<int32_t> d = spec_ngram_draft(history, 3, 8);  // up to 8 tokens, maybe none
//
//   if (std::string why = spec_vocab_mismatch(target, draft_model); !why.empty()) refuse(why);
//   spec_draft_model dm(draft_model, target_ctx.params(), n_slots, target_ctx.n_ctx(), 16, 0.75f);
//   std::vector<spec_draft_job> jobs = {{.seq = 0, .tokens = &slot_tokens, .pending = next, .n_max = 8}};
//   dm.draft(jobs);  // jobs[0].draft: what the draft model predicts after slot_tokens + next
#pragma once

#include "engine/context.h"
#include "engine/model.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

// How many leading tokens a and b have in common.
size_t tokens_common_prefix(const std::vector<int32_t> & a, const std::vector<int32_t> & b);

// n_max tokens that followed the most recent earlier occurrence of the last n tokens of history,
// for n from n_gram down to 1 (the longest suffix that occurred before wins); where that runs
// into the end of history the draft repeats itself (history + draft read as one sequence), so a
// loop of any period is drafted n_max tokens ahead. Empty when no suffix occurred before, or
// n_max <= 0.
std::vector<int32_t> spec_ngram_draft(const std::vector<int32_t> & history, uint32_t n_gram, int32_t n_max);

// "" when draft can draft for target: the same number of tokens, the same tokenizer type, the
// same special token ids and the same texts for the first tokens and every special token. Else
// one sentence that names the first difference.
std::string spec_vocab_mismatch(const model & target, const model & draft);

// One slot's part of a drafting round.
struct spec_draft_job {
    int32_t seq = 0;                                // the slot's sequence id
    const std::vector<int32_t> * tokens = nullptr;  // what the target's KV cache holds for it
    int32_t pending = -1;                           // the token the target decodes next
    int32_t n_max = 0;                              // most draft tokens wanted
    std::vector<int32_t> draft;                     // out: the draft (maybe empty)
};

// A draft model's context, kept in step with the slots: its cache holds, per sequence, a prefix
// of what the target's holds (plus the pending and draft tokens of the last round, dropped again
// where the target rejected them).
class spec_draft_model {
public:
    // target: the target context's parameters (threads, batch sizes, cache types); n_ctx the
    // target's context size. Throws std::runtime_error when the context cannot be made.
    spec_draft_model(const model & draft, const context_params & target, uint32_t n_seq, uint32_t n_ctx,
                     int32_t n_max, float p_min);
    ~spec_draft_model();

    // Drafts greedily for every job: one decode with each sequence's missing tokens (the tokens
    // its cache lacks, then the pending token), then one decode per draft position for the jobs
    // still drafting. A job stops at n_max tokens or when the draft's top probability falls
    // below p_min. A job whose missing tokens do not fit this round's n_batch gets a part of them
    // computed and no draft (it catches up over the next rounds).
    void draft(std::vector<spec_draft_job> & jobs);
    // Decodes so far (statistics).
    uint64_t n_decodes() const { return n_decodes_; }

private:
    // Drops seq's cells past their common prefix with tokens; the number kept.
    size_t sync(int32_t seq, const std::vector<int32_t> & tokens);
    bool catch_up(std::vector<spec_draft_job> & jobs, std::vector<int32_t> & logits_idx);
    void extend(std::vector<spec_draft_job> & jobs, std::vector<bool> & active);
    // The draft token proposed by logits row idx, or -1 when its probability is below p_min.
    int32_t propose(int32_t idx) const;
    // decode(b); when the cache is full, first drops every sequence that is not in jobs.
    bool decode_with_room(const llm_batch & b, const std::vector<spec_draft_job> & jobs);

    std::unique_ptr<context> ctx_;
    std::vector<std::vector<int32_t>> cached_;  // per sequence: what the draft cache holds
    float p_min_;
    uint64_t n_decodes_ = 0;
};
