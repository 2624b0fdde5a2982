// inferd-quantize's logic: the plan of a file under a mix, and the streaming conversion.
#include "quantize-model.h"

#include "quantize-progress.h"
#include "tensor-convert.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <vector>

namespace {

constexpr uint32_t k_quantization_version = 2;

using steady = std::chrono::steady_clock;

double seconds_since(steady::time_point t0) {
    return std::chrono::duration<double>(steady::now() - t0).count();
}

int64_t metadata_uint(const gguf_metadata & md, const std::string & key) {
    uint64_t v = 0;
    return md.get_uint(key, &v) && v < uint64_t(INT64_MAX) ? int64_t(v) : 0;
}

quantize_plan_entry plan_tensor(const gguf_tensor_info & t, size_t index, const quantize_mix & mix,
                                const quantize_model_info & info) {
    quantize_plan_entry e;
    e.index = index;
    e.from = e.to = t.type;
    if (!quantize_tensor_is_quantizable(t.name, quantize_tensor_effective_dims(t))) return e;
    const quantize_tensor_choice c = quantize_mix_choose(mix, info, t.name, t.ne[0]);
    if (c.fallback) {
        e.fallback = true;
        e.note = t.name + ": " + c.message;
    }
    if (c.type == t.type) return e;
    if (!tensor_type_has_to_f32(t.type)) {
        e.note = t.name + ": type " + ggml_type_name(t.type) + " has no conversion to float: copied unchanged";
        return e;
    }
    e.to = c.type;
    e.convert = true;
    return e;
}

// Sets up the writer: the input's metadata with the file type updated, and every tensor with
// its planned type.
bool prepare_writer(const gguf_file & in, const quantize_mix & mix, const std::vector<quantize_plan_entry> & plan,
                    gguf_writer * w, std::string * error) {
    w->metadata() = in.metadata();
    w->metadata().set("general.file_type", gguf_value::from_u32(uint32_t(mix.file_type)));
    if (ggml_get_type_traits(mix.base_type).is_quantized) {
        w->metadata().set("general.quantization_version", gguf_value::from_u32(k_quantization_version));
    }
    for (const quantize_plan_entry & e : plan) {
        const gguf_tensor_info & t = in.tensor(e.index);
        const gguf_result r = w->add_tensor(t.name, e.to, std::span<const int64_t>(t.ne, t.n_dims));
        if (!r) {
            *error = "cannot add tensor " + t.name + " to the output: " + r.message;
            return false;
        }
    }
    return true;
}

// Converts one tensor into `out` (resized to the converted size).
bool convert_tensor(const gguf_file & in, const quantize_plan_entry & e, int n_threads, std::vector<float> * f32,
                    std::vector<uint8_t> * out, std::string * error) {
    const gguf_tensor_info & t = in.tensor(e.index);
    const int64_t n_per_row = t.ne[0];
    const int64_t n_rows = t.n_rows();
    f32->resize(size_t(t.n_elements));
    out->resize(ggml_row_size(e.to, n_per_row) * size_t(n_rows));
    const void * src = in.tensor_data(t);
    if (!src && t.size > 0) {
        *error = "the tensor data of " + t.name + " is not loaded";
        return false;
    }
    if (!tensor_rows_to_f32(e.from, src, n_per_row, n_rows, f32->data(), n_threads, error) ||
        !tensor_rows_quantize(e.to, f32->data(), out->data(), n_per_row, n_rows, n_threads, error)) {
        *error = t.name + ": " + *error;
        return false;
    }
    return true;
}

quantize_progress_tensor progress_entry(const gguf_tensor_info & t, const quantize_plan_entry & e, size_t bytes_out) {
    quantize_progress_tensor p;
    p.name = t.name;
    p.shape.assign(t.ne, t.ne + t.n_dims);
    p.from = e.from;
    p.to = e.to;
    p.bytes_in = t.size;
    p.bytes_out = bytes_out;
    p.converted = e.convert;
    return p;
}

// Streams every tensor of the plan into the writer (stream_begin already done).
bool stream_tensors(const gguf_file & in, const std::vector<quantize_plan_entry> & plan, const quantize_model_params & p,
                    gguf_writer * w, quantize_progress * progress, quantize_model_stats * stats, std::string * error) {
    std::vector<float> f32;
    std::vector<uint8_t> converted;
    for (const quantize_plan_entry & e : plan) {
        const gguf_tensor_info & t = in.tensor(e.index);
        const auto t0 = steady::now();
        const void * bytes = in.tensor_data(t);
        size_t size = t.size;
        if (e.convert) {
            if (!convert_tensor(in, e, p.n_threads, &f32, &converted, error)) return false;
            bytes = converted.data();
            size = converted.size();
        }
        if (!e.note.empty()) progress->note(e.note);
        const gguf_result r = w->stream_tensor_data(bytes, size);
        if (!r) {
            *error = "cannot write " + t.name + ": " + r.message;
            return false;
        }
        quantize_progress_tensor pt = progress_entry(t, e, size);
        pt.seconds = seconds_since(t0);
        progress->tensor_done(pt);
        (e.convert ? stats->n_converted : stats->n_copied) += 1;
    }
    std::vector<float>().swap(f32);
    return true;
}

bool same_file(const std::string & a, const std::string & b) {
    std::error_code ec;
    return std::filesystem::exists(b, ec) && std::filesystem::equivalent(a, b, ec);
}

}  // namespace

int quantize_tensor_effective_dims(const gguf_tensor_info & t) {
    int n = int(t.n_dims);
    while (n > 1 && t.ne[n - 1] == 1) --n;
    return std::max(n, 1);
}

quantize_model_info quantize_model_info_from_file(const gguf_file & f) {
    const gguf_metadata & md = f.metadata();
    std::string arch;
    (void)md.get_string("general.architecture", &arch);
    const int64_t n_layers = arch.empty() ? 0 : metadata_uint(md, arch + ".block_count");
    const int64_t n_head = arch.empty() ? 0 : metadata_uint(md, arch + ".attention.head_count");
    const int64_t n_head_kv = arch.empty() ? 0 : metadata_uint(md, arch + ".attention.head_count_kv");
    const int64_t n_gqa = n_head > 0 && n_head_kv > 0 ? n_head / n_head_kv : 1;
    std::vector<std::string> names;
    names.reserve(f.n_tensors());
    for (const gguf_tensor_info & t : f.tensors()) names.push_back(t.name);
    return quantize_model_info_from_names(names, n_layers, n_gqa);
}

bool quantize_plan_build(const gguf_file & f, const quantize_mix & mix, std::vector<quantize_plan_entry> * plan,
                         std::string * error) {
    uint64_t n_split = 0;
    if (f.metadata().get_uint("split.count", &n_split) && n_split > 1) {
        *error = "the file is one of " + std::to_string(n_split) + " shards of a split model: merge the shards first";
        return false;
    }
    const quantize_model_info info = quantize_model_info_from_file(f);
    plan->clear();
    plan->reserve(f.n_tensors());
    for (size_t i = 0; i < f.n_tensors(); ++i) plan->push_back(plan_tensor(f.tensor(i), i, mix, info));
    return true;
}

bool quantize_model(const quantize_model_params & p, quantize_model_stats * stats, std::string * error) {
    const auto t0 = steady::now();
    *stats = quantize_model_stats{};
    if (!p.mix) {
        *error = "no quantization type given";
        return false;
    }
    if (same_file(p.input_path, p.output_path)) {
        *error = "the output " + p.output_path + " is the input file";
        return false;
    }
    std::unique_ptr<gguf_file> in;
    if (const gguf_result r = gguf_file::open(p.input_path, gguf_open_options{}, &in); !r) {
        *error = p.input_path + ": " + r.message;
        return false;
    }
    quantize_progress progress(p.log, in->n_tensors());
    for (const std::string & w : in->warnings()) progress.note("warning: " + w);
    std::vector<quantize_plan_entry> plan;
    if (!quantize_plan_build(*in, *p.mix, &plan, error)) {
        *error = p.input_path + ": " + *error;
        return false;
    }
    size_t n_requantized = 0;
    for (const quantize_plan_entry & e : plan) {
        if (!e.note.empty()) stats->notes.push_back(e.note);
        stats->n_fallback += e.fallback ? 1 : 0;
        n_requantized += e.convert && ggml_get_type_traits(e.from).is_quantized ? 1 : 0;
    }
    if (n_requantized > 0) {
        progress.note("note: " + std::to_string(n_requantized) +
                      " tensor(s) are requantized from a quantized type: they carry both quantization errors");
    }
    auto w = std::make_unique<gguf_writer>();
    if (!prepare_writer(*in, *p.mix, plan, w.get(), error)) return false;
    const std::string part = p.output_path + ".part";
    gguf_result r = w->stream_begin(part);
    bool ok = bool(r);
    if (!ok) *error = r.message;
    ok = ok && stream_tensors(*in, plan, p, w.get(), &progress, stats, error);
    if (ok && !(r = w->stream_end())) {
        *error = r.message;
        ok = false;
    }
    std::error_code ec;
    if (ok) {
        std::filesystem::rename(part, p.output_path, ec);
        if (ec) *error = "cannot rename " + part + " to " + p.output_path + ": " + ec.message();
        ok = !ec;
    }
    if (!ok) {
        w.reset();  // closes the stream, if open
        std::filesystem::remove(part, ec);
        return false;
    }
    stats->bytes_in = progress.bytes_in();
    stats->bytes_out = progress.bytes_out();
    stats->seconds = seconds_since(t0);
    progress.finish(stats->seconds);
    return true;
}
