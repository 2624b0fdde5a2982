// qwen2: the llama block with Q/K/V biases and NEOX-style RoPE (rotating the two halves of each
// head rather than adjacent pairs); output tied to the embeddings when output.weight is absent.
#include "models/arch.h"
#include "models/graph-builder.h"

namespace {

void qwen2_load_hparams(const hparams_reader & r, model_hparams & hp) {
    llm_load_common_hparams(r, hp, "attention.layer_norm_rms_epsilon");
    llm_load_rope_hparams(r, hp);
    hp.rope_mode = GGML_ROPE_TYPE_NEOX;
}

void qwen2_create_tensors(tensor_creator & c, const model_hparams & hp, model_weights & w) {
    llm_create_llama_like_tensors(c, hp, w, /*with_bias=*/true, /*with_qk_norm=*/false);
}

}  // namespace

const llm_arch_def llm_arch_qwen2 = {llm_arch::qwen2, "qwen2", qwen2_load_hparams, qwen2_create_tensors,
                                     llm_build_llama_like};
