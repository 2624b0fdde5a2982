// Placement of layers on GPU devices and the memory each device is charged: the plan (last
// layers, proportional shares over several devices, the output layer), K/V bytes per layer
// (sliding-window layers at their window's cells), the check that refuses a placement that does
// not fit (with how many layers would), and models placed over two test devices decoding as on
// the CPU with each layer's K/V cells on its device.
#include "engine/logits-compare.h"
#include "engine/context.h"
#include "engine/model.h"
#include "engine/reference-data.h"
#include "engine/src/model-placement.h"
#include "scheduler/mock-backend.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

// A device that only answers memory() and name() (the placement functions ask nothing else).
class memory_only_device final : public ggml_backend_device_i {
public:
    memory_only_device(const char * name, size_t free, size_t total) : name_(name), free_(free), total_(total) {}
    const char * name() const override { return name_; }
    const char * description() const override { return "test device (memory only)"; }
    void memory(size_t * free, size_t * total) const override {
        *free = free_;
        *total = total_;
    }
    ggml_backend_dev_type type() const override { return ggml_backend_dev_type::gpu; }
    ggml_backend_ptr init_backend() override { return nullptr; }
    ggml_backend_buffer_type_i * buffer_type() override { return nullptr; }
    bool supports_op(const ggml_tensor *) const override { return false; }
    bool supports_buft(const ggml_backend_buffer_type_i *) const override { return false; }

private:
    const char * name_;
    size_t free_, total_;
};

std::vector<int> devices_of(const layer_placement & pl) { return pl.layer_dev; }

}  // namespace

TEST(placement, plan_puts_the_last_layers_on_the_gpus) {
    const std::vector<size_t> one = {size_t(1) << 30};
    EXPECT_EQ(devices_of(placement_plan(4, 0, one)), (std::vector<int>{-1, -1, -1, -1}));
    EXPECT_EQ(devices_of(placement_plan(4, 2, one)), (std::vector<int>{-1, -1, 0, 0}));
    EXPECT_EQ(placement_plan(4, 2, one).output_dev, -1);
    EXPECT_EQ(placement_plan(4, 4, one).output_dev, -1) << "the output layer only when more than every layer is asked";
    EXPECT_EQ(placement_plan(4, 5, one).output_dev, 0);
    EXPECT_EQ(placement_plan(4, 99, one).output_dev, 0);
    EXPECT_EQ(devices_of(placement_plan(4, -1, one)), (std::vector<int>{0, 0, 0, 0}));
    EXPECT_EQ(placement_plan(4, -1, one).output_dev, 0);
    EXPECT_EQ(devices_of(placement_plan(4, -1, {})), (std::vector<int>{-1, -1, -1, -1})) << "no GPU";
}

TEST(placement, plan_shares_layers_in_proportion_to_free_memory) {
    // 3 : 1 over 8 layers: 6 and 2, contiguous, in device order; the output on the last one.
    const layer_placement pl = placement_plan(8, -1, {3u << 20, 1u << 20});
    EXPECT_EQ(devices_of(pl), (std::vector<int>{0, 0, 0, 0, 0, 0, 1, 1}));
    EXPECT_EQ(pl.output_dev, 1);
    // 5 layers of 10 over equal devices: 3 + 2 or 2 + 3, on layers 5..9.
    const layer_placement half = placement_plan(10, 5, {1u << 20, 1u << 20});
    int n0 = 0, n1 = 0;
    for (int i = 0; i < 10; ++i) {
        EXPECT_EQ(half.layer_dev[size_t(i)] < 0, i < 5) << i;
        n0 += half.layer_dev[size_t(i)] == 0;
        n1 += half.layer_dev[size_t(i)] == 1;
    }
    EXPECT_EQ(n0 + n1, 5);
    EXPECT_LE(std::abs(n0 - n1), 1);
}

TEST(placement, kv_bytes_per_layer_and_window) {
    model_hparams hp;
    hp.n_layer = 6;
    hp.n_embd_head_k = hp.n_embd_head_v = 64;
    hp.n_head = 4;
    hp.n_head_kv = 1;
    hp.n_swa = 16;
    hp.swa_layers = {1, 1, 1, 1, 1, 0};
    model_memory_hint h;
    EXPECT_EQ(kv_layer_bytes(hp, 5, h), 0u) << "no context given: nothing counted";
    h.n_ctx = 4096;
    h.n_ubatch = 512;
    h.n_seq_max = 2;
    EXPECT_EQ(kv_layer_bytes(hp, 5, h), 4096u * 2 * 64 * 2);  // F16 K and V rows of 64
    EXPECT_EQ(kv_swa_cells(16, 2, 512, 256, 4096), 768u);    // 2 * 16 + 512, padded to 256
    EXPECT_EQ(kv_layer_bytes(hp, 0, h), 768u * 2 * 64 * 2);
    EXPECT_EQ(kv_swa_cells(16, 2, 512, 256, 600), 600u) << "never more than the context";
    h.type_k = h.type_v = GGML_TYPE_F32;
    EXPECT_EQ(kv_layer_bytes(hp, 5, h), 4096u * 2 * 64 * 4);
}

TEST(placement, check_refuses_what_does_not_fit_and_says_why) {
    model_hparams hp;
    hp.n_layer = 4;
    hp.n_embd = 256;
    hp.n_ff = 512;
    hp.n_head = hp.n_head_kv = 4;
    hp.n_embd_head_k = hp.n_embd_head_v = 64;
    hp.n_vocab = 1000;
    layer_bytes lb;
    lb.layer = {100u << 20, 100u << 20, 100u << 20, 100u << 20};  // 100 MiB per layer
    lb.output = 50u << 20;
    model_memory_hint h;  // weights only
    memory_only_device small("GPU-S", 250u << 20, 1u << 30);
    const std::vector<ggml_backend_device_i *> gpus = {&small};
    const std::vector<size_t> free = {250u << 20};
    EXPECT_EQ(placement_check(placement_usage(placement_plan(4, 2, free), lb, hp, h, gpus)), "");
    const std::string err = placement_check(placement_usage(placement_plan(4, 3, free), lb, hp, h, gpus));
    EXPECT_NE(err.find("not enough memory on GPU-S"), std::string::npos) << err;
    EXPECT_NE(err.find("3 layers"), std::string::npos) << err;
    EXPECT_EQ(placement_max_fitting(lb, hp, h, gpus, free), 2);
    // With a context, K/V cells and compute buffers count too: 2 layers no longer fit.
    h.n_ctx = 32768;
    h.type_k = h.type_v = GGML_TYPE_F32;  // 32768 * 2 * 256 * 4 = 64 MiB per layer
    const std::vector<model_device_usage> u = placement_usage(placement_plan(4, 2, free), lb, hp, h, gpus);
    ASSERT_EQ(u.size(), 1u);
    EXPECT_EQ(u[0].n_layers, 2u);
    EXPECT_EQ(u[0].kv_bytes, 2u * (64u << 20));
    EXPECT_GT(u[0].compute_bytes, 0u);
    EXPECT_NE(placement_check(u), "");
    EXPECT_EQ(placement_max_fitting(lb, hp, h, gpus, free), 1);
    // Everything with the output layer on a big device.
    memory_only_device big("GPU-B", size_t(8) << 30, size_t(8) << 30);
    EXPECT_EQ(placement_max_fitting(lb, hp, h, {&big}, {size_t(8) << 30}), 5);
}

namespace {

std::vector<float> decode_all(context & ctx, const std::vector<int32_t> & toks) {
    llm_batch b;
    for (size_t i = 0; i < toks.size(); ++i) b.add(toks[i], int32_t(i), 0, true);
    EXPECT_EQ(ctx.decode(b), 0) << ctx.last_error();
    std::vector<float> out;
    for (size_t i = 0; i < toks.size(); ++i) {
        const float * r = ctx.logits(int32_t(i));
        if (!r) return {};
        out.insert(out.end(), r, r + ctx.n_vocab());
    }
    return out;
}

}  // namespace

TEST(placement, layers_and_their_kv_cells_on_two_devices) {
    INFERD_REQUIRE_TESTDATA(dir);
    reference_case ref;
    std::string err;
    ASSERT_TRUE(reference_load(dir, "tiny-gemma3-f16", "p1", &ref, &err)) << err;
    context_params cp;
    cp.n_ctx = 256;
    cp.n_threads = 2;
    cp.type_k = cp.type_v = GGML_TYPE_F32;
    const std::string path = dir + "/models/tiny-gemma3-f16.gguf";
    std::unique_ptr<model> cpu_model = model::load(path, model_params{});
    context cpu_ctx(*cpu_model, cp);
    const std::vector<float> want = decode_all(cpu_ctx, ref.prompt_tokens);
    mock_device a, b;
    model_params mp;
    mp.n_gpu_layers = 4;  // layers 2..5 over the two devices, 2 each (equal memory)
    mp.devices = {&a, &b};
    mp.memory.n_ctx = cp.n_ctx;
    std::unique_ptr<model> m = model::load(path, mp);
    EXPECT_EQ(m->layer_device(1), nullptr);
    EXPECT_EQ(m->layer_device(2), &a);
    EXPECT_EQ(m->layer_device(3), &a);
    EXPECT_EQ(m->layer_device(4), &b);
    EXPECT_EQ(m->layer_device(5), &b);
    EXPECT_EQ(m->output_device(), nullptr);
    ASSERT_EQ(m->device_usage().size(), 2u);
    EXPECT_EQ(m->device_usage()[0].n_layers, 2u);
    EXPECT_GT(m->device_usage()[0].kv_bytes, 0u);
    context c(*m, cp);
    // tiny-gemma3: layers 0-4 local (window cache), layer 5 global: device a holds two local
    // layers' K/V, device b one local and the global one.
    const size_t row = size_t(m->hparams().n_embd_k_gqa()) * 4 * 2;  // K + V, F32
    ASSERT_NE(c.kv_swa(), nullptr);
    EXPECT_EQ(c.kv_swa()->bytes(a.buffer_type()), 2 * row * c.kv_swa()->size());
    EXPECT_EQ(c.kv_swa()->bytes(b.buffer_type()), 1 * row * c.kv_swa()->size());
    EXPECT_EQ(c.kv().bytes(b.buffer_type()), 1 * row * c.kv().size());
    EXPECT_EQ(c.kv().bytes(a.buffer_type()), 0u);
    EXPECT_LE(logits_max_rel(decode_all(c, ref.prompt_tokens), want), 1e-5);
    // Everything and the output layer: the tied output matrix gets a copy on the device.
    mp.n_gpu_layers = -1;
    std::unique_ptr<model> all = model::load(path, mp);
    EXPECT_TRUE(all->output_tied());
    EXPECT_NE(all->weights().output, all->weights().tok_embd);
    EXPECT_EQ(all->output_device(), &b);
    context c2(*all, cp);
    EXPECT_LE(logits_max_rel(decode_all(c2, ref.prompt_tokens), want), 1e-5);
}

namespace {

// Every decoder model of the test data (the BERT encoders keep every layer on the CPU).
std::vector<std::string> shipped_decoders(const std::string & dir) {
    std::vector<std::string> out;
    for (const char * name : {"stories260K-f32", "tiny-llama-q4_k_m", "tiny-llama-bf16", "tiny-qwen2-q8_0", "tiny-qwen3-f16",
                              "tiny-qwen3moe-q4_k_m", "tiny-mixtral-f16", "tiny-gemma2-q4_k_m", "tiny-gemma3-f16",
                              "tiny-phi3-q4_k_m", "tiny-gpt2-q8_0"}) {
        out.push_back(dir + "/models/" + name + ".gguf");
    }
    return out;
}

}  // namespace

// -ngl 0 … n_layer + 1 and -1 on the shipped models: which layers (and whether the output layer)
// go to the device, what the device is charged, what it really allocated, and a refusal with
// the largest count that fits when the device's memory is too small.
TEST(placement, every_layer_count_on_the_shipped_models) {
    INFERD_REQUIRE_TESTDATA(dir);
    for (const std::string & path : shipped_decoders(dir)) {
        SCOPED_TRACE(path);
        const uint32_t n_layer = model::load(path, model_params{})->hparams().n_layer;
        uint64_t prev_weights = 0;
        uint64_t all_weights = 0;
        for (int32_t ngl = -1; ngl <= int32_t(n_layer) + 1; ++ngl) {
            SCOPED_TRACE("n_gpu_layers " + std::to_string(ngl));
            mock_device dev;
            model_params mp;
            mp.n_gpu_layers = ngl;
            mp.devices = {&dev};
            mp.memory.n_ctx = 128;
            std::unique_ptr<model> m = model::load(path, mp);
            const uint32_t on_gpu = ngl < 0 ? n_layer : std::min<uint32_t>(uint32_t(ngl), n_layer);
            const bool output = ngl < 0 || ngl > int32_t(n_layer);
            for (uint32_t il = 0; il < n_layer; ++il) {
                EXPECT_EQ(m->layer_device(il), il >= n_layer - on_gpu ? &dev : nullptr) << "layer " << il;
            }
            EXPECT_EQ(m->output_device(), output ? &dev : nullptr);
            if (ngl == 0) {
                EXPECT_TRUE(m->device_usage().empty());
                EXPECT_EQ(dev.count().bytes_allocated, 0);
                continue;
            }
            ASSERT_EQ(m->device_usage().size(), 1u);
            const model_device_usage & u = m->device_usage()[0];
            EXPECT_EQ(u.device, &dev);
            EXPECT_EQ(u.n_layers, on_gpu);
            EXPECT_EQ(u.output, output);
            EXPECT_GT(u.kv_bytes, 0u);
            EXPECT_GT(u.compute_bytes, 0u);
            // What the device was charged for the weights is what it holds (tensors aligned to 64).
            const int64_t allocated = dev.count().bytes_allocated;
            EXPECT_GE(allocated, int64_t(u.weight_bytes));
            EXPECT_LE(allocated, int64_t(u.weight_bytes) + int64_t(64 * 32 * (on_gpu + 1)));
            if (ngl > 0) {
                EXPECT_GT(u.weight_bytes, prev_weights) << "one more layer, more bytes";
                prev_weights = u.weight_bytes;
            } else {
                all_weights = u.weight_bytes;
            }
            EXPECT_LE(u.weight_bytes, m->n_weight_bytes() + (m->output_tied() ? ggml_nbytes(m->weights().tok_embd) : 0));
        }
        EXPECT_EQ(prev_weights, all_weights) << "n_layer + 1 is everything, as -1";
        // A device with room for about half of it: refused before loading, with what fits.
        mock_device small("MOCK-S");
        small.set_memory(size_t(all_weights / 2), size_t(1) << 30);
        model_params mp;
        mp.n_gpu_layers = -1;
        mp.devices = {&small};
        try {
            (void) model::load(path, mp);
            ADD_FAILURE() << "a model twice the device's memory was loaded";
        } catch (const model_load_error & e) {
            const std::string what = e.what();
            EXPECT_NE(what.find("not enough memory on MOCK-S"), std::string::npos) << what;
            EXPECT_NE(what.find("layers fit"), std::string::npos) << what;
        }
        EXPECT_EQ(small.count().bytes_allocated, 0) << "nothing copied before the refusal";
    }
}
