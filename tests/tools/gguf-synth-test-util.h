// What the inferd-gguf synth tests share: the command line of one synth run, opening the file it
// wrote, and its tensor table in a comparable form.
#pragma once

#include "ggml/gguf.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

// {"synth", shape…, extra…, "-t", "2", out}
inline std::vector<std::string> synth_args(const std::vector<std::string> & shape, const std::vector<std::string> & extra,
                                           const std::string & out) {
    std::vector<std::string> a = {"synth"};
    a.insert(a.end(), shape.begin(), shape.end());
    a.insert(a.end(), extra.begin(), extra.end());
    a.insert(a.end(), {"-t", "2", out});
    return a;
}

// nullptr (and a test failure naming the file) when it does not open.
inline std::unique_ptr<gguf_file> open_gguf(const std::string & path) {
    std::unique_ptr<gguf_file> f;
    const gguf_result r = gguf_file::open(path, gguf_open_options{}, &f);
    EXPECT_TRUE(r) << path << ": " << r.message;
    return f;
}

// name -> "type [ne0, ne1, …]"
inline std::map<std::string, std::string> tensor_table(const gguf_file & f) {
    std::map<std::string, std::string> t;
    for (size_t i = 0; i < f.n_tensors(); ++i) {
        const gguf_tensor_info & info = f.tensor(i);
        std::string s = ggml_type_name(info.type);
        s += " [";
        for (uint32_t d = 0; d < info.n_dims; ++d) {
            if (d) s += ", ";
            s += std::to_string(info.ne[d]);
        }
        t[info.name] = s + "]";
    }
    return t;
}
