// qwen3moe: qwen3's attention (per-head Q/K norms, NEOX RoPE) with a mixture-of-experts
// feed-forward: a router (ffn_gate_inp) scores expert_count experts, the expert_used_count best
// by softmax run (SwiGLU, expert_feed_forward_length wide) and their outputs are summed with the
// softmax weights renormalized to sum 1.
#include "models/arch.h"
#include "models/graph-builder.h"

namespace {

void qwen3moe_load_hparams(const hparams_reader & r, model_hparams & hp) {
    llm_load_common_hparams(r, hp, "attention.layer_norm_rms_epsilon");
    llm_load_rope_hparams(r, hp);
    llm_load_moe_hparams(r, hp);
    if (hp.n_expert == 0) throw model_load_error("qwen3moe: expert_count is missing or zero");
    hp.rope_mode = GGML_ROPE_TYPE_NEOX;
}

void qwen3moe_create_tensors(tensor_creator & c, const model_hparams & hp, model_weights & w) {
    llm_create_llama_like_tensors(c, hp, w, /*with_bias=*/false, /*with_qk_norm=*/true);
}

}  // namespace

const llm_arch_def llm_arch_qwen3moe = {llm_arch::qwen3moe, "qwen3moe", qwen3moe_load_hparams,
                                        qwen3moe_create_tensors, llm_build_llama_like};
