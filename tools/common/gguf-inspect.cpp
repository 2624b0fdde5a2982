// inferd-gguf's logic: the info listing and the value rendering it uses.
#include "gguf-inspect.h"

#include <cinttypes>
#include <map>

namespace {

constexpr size_t k_max_array_elems = 6;   // array elements shown before "... (N)"
constexpr size_t k_max_string_chars = 72; // string characters shown before "..."

std::string escape_string(const std::string & s, size_t max_chars) {
    std::string out = "\"";
    size_t shown = 0;
    for (char c : s) {
        if (shown == max_chars) {
            out += "\"... (" + std::to_string(s.size()) + " bytes)";
            return out;
        }
        ++shown;
        switch (c) {
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
                    char buf[8];
                    std::snprintf(buf, sizeof(buf), "\\x%02x", unsigned(static_cast<unsigned char>(c)));
                    out += buf;
                } else {
                    out += c;
                }
        }
    }
    return out + "\"";
}

std::string float_text(double v) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.9g", v);
    return buf;
}

std::string scalar_text(const gguf_value & v) {
    int64_t i = 0;
    uint64_t u = 0;
    double d = 0;
    bool b = false;
    if (v.type() == gguf_value_type::boolean && v.get_bool(&b)) return b ? "true" : "false";
    if (v.get_uint(&u)) return std::to_string(u);
    if (v.get_int(&i)) return std::to_string(i);
    if (v.get_float(&d)) return float_text(d);
    if (const std::string * s = v.get_string()) return escape_string(*s, k_max_string_chars);
    return "?";
}

std::string array_elem_text(const gguf_value & v, size_t i) {
    const gguf_value_type t = v.array_type();
    int64_t si = 0;
    uint64_t u = 0;
    double d = 0;
    bool b = false;
    if (t == gguf_value_type::string) return escape_string(v.array_strings()[i], k_max_string_chars / 3);
    if (t == gguf_value_type::array) return gguf_inspect_value_text(v.array_values()[i]);
    if (t == gguf_value_type::boolean && v.array_get_bool(i, &b)) return b ? "true" : "false";
    if (v.array_get_uint(i, &u)) return std::to_string(u);
    if (v.array_get_int(i, &si)) return std::to_string(si);
    if (v.array_get_float(i, &d)) return float_text(d);
    return "?";
}

std::string shape_text(const gguf_tensor_info & t) {
    std::string s = "[";
    for (uint32_t d = 0; d < t.n_dims; ++d) {
        if (d) s += ", ";
        s += std::to_string(t.ne[d]);
    }
    return s + "]";
}

void print_metadata(const gguf_metadata & md, std::FILE * out) {
    size_t key_width = 8;
    for (const gguf_kv & kv : md.kvs()) key_width = std::max(key_width, kv.key.size());
    std::fprintf(out, "metadata: %zu keys\n", md.size());
    for (const gguf_kv & kv : md.kvs()) {
        std::fprintf(out, "  %-*s  %-14s  %s\n", int(key_width), kv.key.c_str(),
                     gguf_inspect_value_type(kv.value).c_str(), gguf_inspect_value_text(kv.value).c_str());
    }
}

void print_tensors(const gguf_file & f, std::FILE * out) {
    size_t name_width = 4;
    for (const gguf_tensor_info & t : f.tensors()) name_width = std::max(name_width, t.name.size());
    const int index_width = int(std::to_string(f.n_tensors()).size());
    std::fprintf(out, "tensors: %zu (data section at byte %zu)\n", f.n_tensors(), f.data_offset());
    std::fprintf(out, "  %*s  %-*s  %-6s  %-22s  %12s  %12s\n", index_width, "#", int(name_width), "name", "type",
                 "shape", "offset", "bytes");
    std::map<std::string, std::pair<size_t, size_t>> per_type;  // name -> (count, bytes)
    size_t total = 0;
    for (size_t i = 0; i < f.n_tensors(); ++i) {
        const gguf_tensor_info & t = f.tensor(i);
        std::fprintf(out, "  %*zu  %-*s  %-6s  %-22s  %12" PRIu64 "  %12zu\n", index_width, i, int(name_width),
                     t.name.c_str(), ggml_type_name(t.type), shape_text(t).c_str(), t.offset, t.size);
        auto & pt = per_type[ggml_type_name(t.type)];
        pt.first += 1;
        pt.second += t.size;
        total += t.size;
    }
    std::fprintf(out, "types:");
    for (const auto & [name, cb] : per_type) std::fprintf(out, " %s x%zu (%zu bytes);", name.c_str(), cb.first, cb.second);
    std::fprintf(out, " total %zu bytes\n", total);
}

}  // namespace

std::string gguf_inspect_value_type(const gguf_value & v) {
    if (!v.is_array()) return gguf_value_type_name(v.type());
    return std::string("arr[") + gguf_value_type_name(v.array_type()) + "," + std::to_string(v.array_size()) + "]";
}

std::string gguf_inspect_value_text(const gguf_value & v) {
    if (!v.is_array()) return scalar_text(v);
    const size_t n = v.array_size();
    std::string s = "[";
    for (size_t i = 0; i < n && i < k_max_array_elems; ++i) {
        if (i) s += ", ";
        s += array_elem_text(v, i);
    }
    if (n > k_max_array_elems) s += ", ... (" + std::to_string(n) + " elements)";
    return s + "]";
}

void gguf_inspect_print_info(const gguf_file & f, std::FILE * out) {
    std::fprintf(out, "version: %u\n", f.version());
    std::fprintf(out, "alignment: %zu\n", f.alignment());
    std::fprintf(out, "file size: %zu bytes\n", f.file_size());
    std::fprintf(out, "tensor count: %zu\n", f.n_tensors());
    print_metadata(f.metadata(), out);
    print_tensors(f, out);
}
