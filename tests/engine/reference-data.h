// tests/engine/reference-data.h — the reference outputs of ../shared/testdata/reference and the
// README's comparison rules (tolerances by file type).
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

struct reference_case {
    std::string model;    // "tiny-llama-f32"
    std::string prompt;   // "p1"
    int32_t n_vocab = 0;
    std::vector<int32_t> prompt_tokens;
    std::vector<int32_t> greedy_tokens;
    std::vector<float> greedy_top2_gap;
    std::vector<float> logits;  // n_rows x n_vocab
    size_t n_rows = 0;          // 1 (last position) or prompt_tokens.size()
};

// Tolerances by the model file's type suffix (README "How to compare").
struct reference_tolerance {
    double rel_rms = 0;   // rms(ours - ref) / std(ref), per position
    double top2_gap = 0;  // positions whose reference gap is below this are near-ties
};

inline reference_tolerance reference_tolerance_for(const std::string & model) {
    auto ends = [&](const char * s) { return model.size() >= strlen(s) && model.rfind(s) == model.size() - strlen(s); };
    if (ends("-f32")) return {5e-3, 1e-2};
    if (ends("-f16")) return {1.5e-2, 5e-2};
    if (ends("-bf16")) return {2e-2, 5e-2};
    return {6e-2, 0.5};
}

inline bool reference_load(const std::string & dir, const std::string & model, const std::string & prompt,
                           reference_case * out, std::string * err) {
    const std::string base = dir + "/reference/" + model + "." + prompt;
    std::ifstream jf(base + ".json");
    if (!jf) return *err = "cannot open " + base + ".json", false;
    nlohmann::json j = nlohmann::json::parse(jf, nullptr, false);
    if (j.is_discarded()) return *err = "bad JSON in " + base + ".json", false;
    out->model = model;
    out->prompt = prompt;
    out->n_vocab = j.at("n_vocab").get<int32_t>();
    out->prompt_tokens = j.at("prompt_tokens").get<std::vector<int32_t>>();
    out->greedy_tokens = j.at("greedy_tokens").get<std::vector<int32_t>>();
    out->greedy_top2_gap = j.at("greedy_top2_gap").get<std::vector<float>>();
    std::ifstream lf(base + ".logits.f32", std::ios::binary);
    if (!lf) return *err = "cannot open " + base + ".logits.f32", false;
    const size_t bytes = size_t(std::filesystem::file_size(base + ".logits.f32"));
    out->logits.resize(bytes / sizeof(float));
    lf.read(reinterpret_cast<char *>(out->logits.data()), std::streamsize(bytes));
    out->n_rows = out->logits.size() / size_t(out->n_vocab);
    if (out->n_rows != 1 && out->n_rows != out->prompt_tokens.size()) {
        return *err = base + ".logits.f32 has " + std::to_string(out->n_rows) + " rows", false;
    }
    return true;
}

// rms(a - ref) / std(ref) over one row.
inline double reference_rel_rms(const float * a, const float * ref, size_t n) {
    double mean = 0, d2 = 0, var = 0;
    for (size_t i = 0; i < n; ++i) mean += ref[i];
    mean /= double(n);
    for (size_t i = 0; i < n; ++i) {
        d2 += (double(a[i]) - ref[i]) * (double(a[i]) - ref[i]);
        var += (ref[i] - mean) * (ref[i] - mean);
    }
    return std::sqrt(d2 / double(n)) / std::sqrt(var / double(n));
}

inline int32_t reference_argmax(const float * row, size_t n) {
    return int32_t(std::max_element(row, row + n) - row);
}

// Best minus second-best value of a row.
inline double reference_top2_gap(const float * row, size_t n) {
    float a = -INFINITY, b = -INFINITY;
    for (size_t i = 0; i < n; ++i) {
        if (row[i] > a) b = a, a = row[i];
        else if (row[i] > b) b = row[i];
    }
    return double(a) - double(b);
}

// Every "MODEL" with a MODEL.p1.json in the reference directory, sorted.
inline std::vector<std::string> reference_models(const std::string & dir) {
    std::vector<std::string> out;
    if (dir.empty()) return out;
    for (const auto & e : std::filesystem::directory_iterator(dir + "/reference")) {
        const std::string name = e.path().filename().string();
        const std::string suffix = ".p1.json";
        if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
            out.push_back(name.substr(0, name.size() - suffix.size()));
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}
