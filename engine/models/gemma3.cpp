// gemma3: gemma2's block (see gemma2.cpp) with per-head RMSNorm of Q and K, no soft-caps, and
// sliding-window attention on five of every six layers (every 6th layer global unless the file
// says otherwise). Local layers rotate with their own base (rope.freq_base_swa) and no scaling;
// the global layers with rope.freq_base and the file's RoPE scaling.
#include "models/arch.h"
#include "models/graph-builder.h"

namespace {

void gemma3_load_hparams(const hparams_reader & r, model_hparams & hp) {
    llm_load_common_hparams(r, hp, "attention.layer_norm_rms_epsilon");
    llm_load_rope_hparams(r, hp);
    llm_load_swa_hparams(r, hp, /*default_period=*/6);
    hp.rope_mode = GGML_ROPE_TYPE_NEOX;
    llm_load_gemma_scales(r, hp, /*n_layer_27b=*/62);
}

void gemma3_create_tensors(tensor_creator & c, const model_hparams & hp, model_weights & w) {
    llm_create_gemma_tensors(c, hp, w, /*with_qk_norm=*/true);
}

}  // namespace

const llm_arch_def llm_arch_gemma3 = {llm_arch::gemma3, "gemma3", gemma3_load_hparams, gemma3_create_tensors,
                                      llm_build_gemma};
