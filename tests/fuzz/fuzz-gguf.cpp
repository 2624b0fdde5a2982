// libFuzzer target for the GGUF reader (built with clang, -fsanitize=fuzzer,address,undefined;
// see tests/fuzz/run-fuzz.sh). For each input:
//   1. parse it as a whole file; on success touch every tensor byte and render every value;
//   2. rewrite what was read with the writer and parse that again: the round trip must give
//      the same metadata, tensor infos and bytes (a mismatch aborts: a finding);
//   3. parse it as the header of a larger file (header-only mode), which must not crash either
//      and must agree with (1) about the metadata when both succeed.
#include "ggml/gguf.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace {

[[noreturn]] void finding(const char * what) {
    std::fprintf(stderr, "fuzz-gguf: %s\n", what);
    std::abort();
}

void check(bool ok, const char * what) {
    if (!ok) finding(what);
}

volatile uint64_t g_sink = 0;  // keeps the byte reads below from being optimised away

void touch(const gguf_file & f) {
    uint64_t sum = 0;
    for (const gguf_kv & kv : f.metadata().kvs()) sum += kv.value.to_string(16).size() + kv.key.size();
    for (const gguf_tensor_info & t : f.tensors()) {
        check(f.find_tensor(t.name) == &t, "find_tensor does not find a listed tensor");
        const auto * p = static_cast<const uint8_t *>(f.tensor_data(t));
        if (!p) continue;
        for (size_t i = 0; i < t.size; ++i) sum += p[i];
    }
    g_sink = g_sink + sum;
}

bool same_infos(const gguf_file & a, const gguf_file & b) {
    if (a.n_tensors() != b.n_tensors()) return false;
    for (size_t i = 0; i < a.n_tensors(); ++i) {
        const gguf_tensor_info & x = a.tensor(i);
        const gguf_tensor_info & y = b.tensor(i);
        if (x.name != y.name || x.type != y.type || x.size != y.size || x.n_elements != y.n_elements) return false;
        if (std::memcmp(x.ne, y.ne, sizeof x.ne) != 0) return false;
    }
    return true;
}

bool same_metadata(const gguf_metadata & a, const gguf_metadata & b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (a.at(i).key != b.at(i).key || !(a.at(i).value == b.at(i).value)) return false;
    }
    return true;
}

void round_trip(const gguf_file & f) {
    gguf_writer w;
    w.metadata() = f.metadata();
    for (const gguf_tensor_info & t : f.tensors()) {
        // The writer is stricter in one way (tensor names must not be empty): skip such files.
        if (!w.add_tensor(t, f.tensor_data(t))) return;
    }
    std::vector<uint8_t> out;
    gguf_result r = w.write_to_buffer(&out);
    check(bool(r), "the writer refused what the reader accepted");
    std::unique_ptr<gguf_file> g;
    r = gguf_file::parse(out.data(), out.size(), gguf_parse_options{}, &g);
    check(bool(r), "the reader refused what the writer wrote");
    check(same_metadata(f.metadata(), g->metadata()), "round trip changed the metadata");
    check(same_infos(f, *g), "round trip changed the tensor infos");
    check(g->alignment() == f.alignment(), "round trip changed the alignment");
    for (size_t i = 0; i < f.n_tensors(); ++i) {
        const size_t n = f.tensor(i).size;
        if (n && std::memcmp(f.tensor_data(f.tensor(i)), g->tensor_data(g->tensor(i)), n) != 0) {
            finding("round trip changed tensor bytes");
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    std::unique_ptr<gguf_file> whole;
    gguf_result r = gguf_file::parse(data, size, gguf_parse_options{}, &whole);
    if (r) {
        check(whole != nullptr, "success without a file");
        touch(*whole);
        round_trip(*whole);
    } else {
        check(!r.message.empty() && whole == nullptr, "an error without a message");
    }

    gguf_parse_options header_only;
    header_only.with_tensor_data = false;
    header_only.file_size = size + 4096;  // tensors may lie in the (absent) rest of the file
    std::unique_ptr<gguf_file> head;
    gguf_result rh = gguf_file::parse(data, size, header_only, &head);
    if (rh) {
        touch(*head);
        if (r) check(same_metadata(whole->metadata(), head->metadata()), "header-only parse disagrees");
    } else {
        check(!rh.message.empty(), "an error without a message (header only)");
    }
    return 0;
}
