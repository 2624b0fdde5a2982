// qwen3: the llama block without biases, with a per-head RMSNorm of Q and K (attn_q_norm,
// attn_k_norm, one weight per head dimension) before NEOX RoPE; the head size comes from
// attention.key_length / value_length, so Q may be wider than the embedding.
#include "models/arch.h"
#include "models/graph-builder.h"

namespace {

void qwen3_load_hparams(const hparams_reader & r, model_hparams & hp) {
    llm_load_common_hparams(r, hp, "attention.layer_norm_rms_epsilon");
    llm_load_rope_hparams(r, hp);
    hp.rope_mode = GGML_ROPE_TYPE_NEOX;
}

void qwen3_create_tensors(tensor_creator & c, const model_hparams & hp, model_weights & w) {
    llm_create_llama_like_tensors(c, hp, w, /*with_bias=*/false, /*with_qk_norm=*/true);
}

}  // namespace

const llm_arch_def llm_arch_qwen3 = {llm_arch::qwen3, "qwen3", qwen3_load_hparams, qwen3_create_tensors,
                                     llm_build_llama_like};
