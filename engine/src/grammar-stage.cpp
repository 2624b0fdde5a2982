// A grammar as a sampler stage (engine/grammar-stage.h).
#include "engine/grammar-stage.h"

#include "engine/tokenizer.h"
#include "engine/vocab.h"

#include <algorithm>
#include <cmath>

std::shared_ptr<const grammar_vocab> grammar_vocab_from_model(const vocab & v, const tokenizer & tok,
                                                              bool control_as_text) {
    const int32_t n = v.n_tokens();
    std::vector<std::string> bytes(static_cast<size_t>(n));
    std::vector<bool> special(static_cast<size_t>(n), false);
    for (int32_t t = 0; t < n; ++t) {
        const bool as_text = control_as_text && v.is_control(t) && !v.is_eog(t);
        bytes[size_t(t)] = tok.token_to_piece(t, as_text);
        special[size_t(t)] = v.is_control(t) && !as_text;
    }
    return grammar_vocab::build(bytes, special, v.eog_ids());
}

namespace {

class grammar_stage final : public sampler_stage_i {
public:
    grammar_stage(std::shared_ptr<const grammar_program> program, std::shared_ptr<const grammar_vocab> vocab)
        : m_(std::move(program), std::move(vocab)) {}

    const char * name() const override { return "grammar"; }

    void apply(float * logits, int32_t n_vocab) override {
        m_.fill_mask(mask_);
        const int32_t n = std::min(n_vocab, m_.vocab().n_vocab());
        for (int32_t w = 0; w * 64 < n; ++w) {
            const uint64_t bits = mask_[size_t(w)];
            if (bits == ~uint64_t(0)) continue;
            const int32_t hi = std::min(n, w * 64 + 64);
            for (int32_t t = w * 64; t < hi; ++t) {
                if (!((bits >> (t - w * 64)) & 1)) logits[t] = -INFINITY;
            }
        }
        // Tokens past the grammar's vocabulary (a model whose output row is wider) are never valid.
        for (int32_t t = n; t < n_vocab; ++t) logits[t] = -INFINITY;
    }

    bool accept(int32_t id) override { return m_.accept_token(id); }
    void reset() override { m_.reset(); }
    std::unique_ptr<sampler_stage_i> clone() const override { return std::make_unique<grammar_stage>(*this); }

    const grammar_matcher & matcher() const { return m_; }

private:
    grammar_matcher m_;
    grammar_token_mask mask_;
};

}  // namespace

std::unique_ptr<sampler_stage_i> grammar_stage_new(std::shared_ptr<const grammar_program> program,
                                                   std::shared_ptr<const grammar_vocab> vocab) {
    return std::make_unique<grammar_stage>(std::move(program), std::move(vocab));
}

const grammar_matcher * grammar_stage_matcher(const sampler_stage_i & stage) {
    const auto * g = dynamic_cast<const grammar_stage *>(&stage);
    return g ? &g->matcher() : nullptr;
}
