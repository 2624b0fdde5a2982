// engine/src/model-loader.h — creating a model's weight tensors on their devices (internal).
//
// Usage (model::load):
//   model_loader measure(m);                       // pass 1: shapes checked, bytes per layer
//   def->create_tensors(measure, hp, scratch_w);
//   layer_placement pl = placement_plan(…, measure.bytes() …);
//   model_loader loader(m, pl, gpus);              // pass 2: tensors on their devices
//   def->create_tensors(loader, m.hparams_, m.weights_);
//   loader.report_unused();
//   loader.bind_data({.repack = true, .mmap = true}); // CPU: in place in the file, or repacked
//                                                     // (mul_mat weights); GPUs: copied
#pragma once

#include "engine/model.h"
#include "model-placement.h"
#include "models/arch.h"

#include <set>
#include <string>
#include <vector>

class model_loader final : public tensor_creator {
public:
    // Measuring: tensors are checked and counted per layer, in a scratch context.
    explicit model_loader(model & m);
    // Placing: tensors go to the context of their layer's device (gpus[pl.layer_dev[il]]).
    model_loader(model & m, const layer_placement & pl, const std::vector<ggml_backend_device_i *> & gpus);

    ggml_tensor * create(const std::string & name, std::initializer_list<int64_t> ne, int il) override;
    ggml_tensor * create_optional(const std::string & name, std::initializer_list<int64_t> ne, int il) override;
    ggml_tensor * create_tied_output(ggml_tensor * tok_embd) override;
    int64_t file_ne(const std::string & name, int dim) const override;

    const layer_bytes & bytes() const { return bytes_; }
    struct bind_options {
        bool repack = true;  // CPU mul_mat weights of a repackable type into the CPU's repack buffer
        bool mmap = true;    // the file is mapped: the pages of repacked tensors are given back
        bool mlock = false;  // the file's bytes are locked: the repacked copies are locked too
    };
    void bind_data(const bind_options & opt);
    void report_unused();

private:
    struct entry {
        ggml_tensor * t;
        const gguf_tensor_info * info;
    };
    const gguf_tensor_info * find_checked(const std::string & name, std::initializer_list<int64_t> ne) const;
    int device_of(int il) const;        // index into the GPU contexts, -1 for the CPU
    ggml_context * context_for(int il);
    void count(int il, const gguf_tensor_info & info);
    bool repack_wanted(const entry & e) const;
    void bind_repacked(const std::vector<const entry *> & list, const bind_options & opt);

    model & m_;
    bool measuring_;
    layer_placement pl_;
    ggml_context_ptr scratch_;  // measuring
    std::vector<entry> infos_;
    std::set<std::string> used_;
    layer_bytes bytes_;
};
