// Layer placement over GPUs and the memory accounting of each device (model-placement.h).
#include "model-placement.h"

#include <algorithm>
#include <cstdio>

namespace {

std::string gib(uint64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f GiB", double(bytes) / double(uint64_t(1) << 30));
    return buf;
}

}  // namespace

layer_placement placement_plan(uint32_t n_layer, int32_t n_gpu_layers, const std::vector<size_t> & gpu_free) {
    layer_placement pl;
    pl.layer_dev.assign(n_layer, -1);
    if (n_gpu_layers == 0 || gpu_free.empty() || n_layer == 0) return pl;
    const uint32_t n_gpu = n_gpu_layers < 0 ? n_layer : std::min<uint32_t>(uint32_t(n_gpu_layers), n_layer);
    // Shares in proportion to free memory, largest remainders first; every device at least 0.
    const size_t n_dev = gpu_free.size();
    double total = 0;
    for (size_t f : gpu_free) total += double(f);
    std::vector<uint32_t> share(n_dev, 0);
    std::vector<std::pair<double, size_t>> rest;
    uint32_t given = 0;
    for (size_t d = 0; d < n_dev; ++d) {
        const double exact = total > 0 ? double(n_gpu) * double(gpu_free[d]) / total : double(n_gpu) / double(n_dev);
        share[d] = uint32_t(exact);
        given += share[d];
        rest.push_back({exact - double(share[d]), d});
    }
    std::stable_sort(rest.begin(), rest.end(), [](const auto & a, const auto & b) { return a.first > b.first; });
    for (size_t i = 0; given < n_gpu; i = (i + 1) % n_dev, ++given) share[rest[i].second]++;
    uint32_t il = n_layer - n_gpu;
    for (size_t d = 0; d < n_dev; ++d) {
        for (uint32_t k = 0; k < share[d]; ++k) pl.layer_dev[il++] = int(d);
    }
    if (n_gpu_layers < 0 || uint32_t(n_gpu_layers) > n_layer) pl.output_dev = pl.layer_dev[n_layer - 1];
    return pl;
}

uint32_t kv_swa_cells(uint32_t n_swa, uint32_t n_seq_max, uint32_t n_ubatch, uint32_t kv_pad, uint32_t n_ctx) {
    const uint64_t pad = std::max<uint32_t>(1, kv_pad);
    const uint64_t n = (uint64_t(n_swa) * n_seq_max + n_ubatch + pad - 1) / pad * pad;
    return uint32_t(std::min<uint64_t>(n, n_ctx));
}

uint64_t kv_layer_bytes(const model_hparams & hp, uint32_t il, const model_memory_hint & h) {
    if (h.n_ctx == 0) return 0;
    const uint32_t cells = hp.is_swa(il) ? kv_swa_cells(hp.n_swa, h.n_seq_max, h.n_ubatch, h.kv_pad, h.n_ctx) : h.n_ctx;
    return uint64_t(cells) * (ggml_row_size(h.type_k, hp.n_embd_k_gqa()) + ggml_row_size(h.type_v, hp.n_embd_v_gqa()));
}

uint64_t compute_bytes_estimate(const model_hparams & hp, const model_memory_hint & h, bool output_here) {
    if (h.n_ctx == 0) return 0;
    const uint64_t n_tok = h.n_ubatch;
    const uint64_t ff = std::max<uint64_t>(hp.n_ff, uint64_t(hp.n_ff_exp) * std::max<uint32_t>(1, hp.n_expert_used));
    const uint64_t widest = std::max<uint64_t>({hp.n_embd, uint64_t(hp.n_embd_head_k) * hp.n_head, ff});
    uint64_t bytes = 6 * n_tok * widest * sizeof(float);  // a few activations alive at once
    if (output_here) bytes += n_tok * uint64_t(hp.n_vocab) * sizeof(float);
    if (!h.flash_attn) bytes += 2 * n_tok * uint64_t(h.n_ctx) * hp.n_head * sizeof(float);
    return bytes;
}

std::vector<model_device_usage> placement_usage(const layer_placement & pl, const layer_bytes & lb,
                                                const model_hparams & hp, const model_memory_hint & hint,
                                                const std::vector<ggml_backend_device_i *> & gpus) {
    std::vector<model_device_usage> u(gpus.size());
    for (size_t d = 0; d < gpus.size(); ++d) {
        u[d].device = gpus[d];
        gpus[d]->memory(&u[d].free, &u[d].total);
    }
    for (uint32_t il = 0; il < pl.layer_dev.size(); ++il) {
        const int d = pl.layer_dev[il];
        if (d < 0) continue;
        u[size_t(d)].n_layers++;
        u[size_t(d)].weight_bytes += il < lb.layer.size() ? lb.layer[il] : 0;
        u[size_t(d)].kv_bytes += kv_layer_bytes(hp, il, hint);
    }
    if (pl.output_dev >= 0) {
        u[size_t(pl.output_dev)].output = true;
        u[size_t(pl.output_dev)].weight_bytes += lb.output;
    }
    for (model_device_usage & x : u) {
        if (x.n_layers > 0 || x.output) x.compute_bytes = compute_bytes_estimate(hp, hint, x.output);
    }
    return u;
}

std::string placement_check(const std::vector<model_device_usage> & usage) {
    for (const model_device_usage & u : usage) {
        const uint64_t need = u.weight_bytes + u.kv_bytes + u.compute_bytes;
        if (need <= u.free) continue;
        return std::string("not enough memory on ") + u.device->name() + " (" + gib(u.free) + " free of " +
               gib(u.total) + "): " + std::to_string(u.n_layers) + " layers" + (u.output ? " and the output layer" : "") +
               " need " + gib(u.weight_bytes) + " of weights + " + gib(u.kv_bytes) + " of KV cache + ~" +
               gib(u.compute_bytes) + " of compute buffers = " + gib(need);
    }
    return "";
}

int32_t placement_max_fitting(const layer_bytes & lb, const model_hparams & hp, const model_memory_hint & hint,
                              const std::vector<ggml_backend_device_i *> & gpus, const std::vector<size_t> & gpu_free) {
    for (int32_t n = int32_t(hp.n_layer) + 1; n > 0; --n) {
        const layer_placement pl = placement_plan(hp.n_layer, n, gpu_free);
        if (placement_check(placement_usage(pl, lb, hp, hint, gpus)).empty()) return n;
    }
    return 0;
}
