// tools/loadgen/loadgen-embeddings.cpp — inputs, request body and response check of the
// embeddings mode.
#include "loadgen/loadgen-embeddings.h"

#include <nlohmann/json.hpp>

namespace {

constexpr size_t k_max_detail = 300;

std::string entry_problem(int64_t index, const char * what) {
    std::string s = "data entry with index ";
    s.append(std::to_string(index)).append(": ").append(what);
    return s;
}

// What is wrong with one entry of "data" ("" when nothing), given the indices seen so far and
// the embedding length of the first entry (0 before it, then set).
std::string data_entry_problem(const nlohmann::json & e, std::vector<bool> * seen, size_t * length) {
    if (!e.is_object()) {
        return "a \"data\" entry is not an object";
    }
    const auto index = e.find("index");
    if (index == e.end() || !index->is_number_integer()) {
        return "a \"data\" entry has no integer \"index\"";
    }
    const int64_t i = index->get<int64_t>();
    if (i < 0 || i >= int64_t(seen->size()) || (*seen)[size_t(i)]) {
        return entry_problem(i, "index out of range or repeated");
    }
    (*seen)[size_t(i)] = true;
    const auto embedding = e.find("embedding");
    if (embedding == e.end() || !embedding->is_array() || embedding->empty()) {
        return entry_problem(i, "\"embedding\" is not a non-empty array");
    }
    for (const nlohmann::json & x : *embedding) {
        if (!x.is_number()) {
            return entry_problem(i, "\"embedding\" holds something other than a number");
        }
    }
    if (*length == 0) {
        *length = embedding->size();
    } else if (embedding->size() != *length) {
        std::string what = "\"embedding\" has ";
        what.append(std::to_string(embedding->size())).append(" numbers, another entry ");
        what.append(std::to_string(*length));
        return entry_problem(i, what.c_str());
    }
    return "";
}

// What is wrong with a parsed response ("" when nothing); sets *prompt_tokens when nothing is.
std::string response_problem(const nlohmann::json & j, int inputs, int64_t * prompt_tokens) {
    if (!j.is_object()) {
        return "the body is not a JSON object";
    }
    const auto data = j.find("data");
    if (data == j.end() || !data->is_array()) {
        return "no \"data\" array";
    }
    if (data->size() != size_t(inputs)) {
        std::string what = "\"data\" has ";
        what.append(std::to_string(data->size())).append(" entries for ").append(std::to_string(inputs));
        what.append(" inputs");
        return what;
    }
    std::vector<bool> seen(size_t(inputs), false);
    size_t length = 0;
    for (const nlohmann::json & e : *data) {
        std::string problem = data_entry_problem(e, &seen, &length);
        if (!problem.empty()) {
            return problem;
        }
    }
    const auto usage = j.find("usage");
    if (usage == j.end() || !usage->is_object()) {
        return "no \"usage\" object";
    }
    const auto tokens = usage->find("prompt_tokens");
    if (tokens == usage->end() || !tokens->is_number_integer() || tokens->get<int64_t>() < 0) {
        return "usage.prompt_tokens is not a whole number >= 0";
    }
    *prompt_tokens = tokens->get<int64_t>();
    return "";
}

}  // namespace

std::vector<std::string> loadgen_embedding_inputs(const loadgen_prompt_gen & gen, const loadgen_options & o,
                                                  int client, int64_t request) {
    std::vector<std::string> inputs;
    inputs.reserve(size_t(o.inputs));
    for (int k = 0; k < o.inputs; ++k) {
        inputs.push_back(gen.prompt(client, request * o.inputs + k, o.prompt_words));
    }
    return inputs;
}

std::string loadgen_embeddings_body(const loadgen_options & o, const std::vector<std::string> & inputs) {
    nlohmann::json j = {
        {"input", inputs},
        {"encoding_format", "float"},
    };
    if (!o.model.empty()) {
        j["model"] = o.model;
    }
    return j.dump();
}

void loadgen_check_embeddings(int status, const std::string & body, int inputs, loadgen_request_result * r) {
    r->status = status;
    if (status != 200) {
        r->error = "http_";
        r->error.append(std::to_string(status));
        r->detail = body.substr(0, k_max_detail);
        return;
    }
    const nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
    int64_t prompt_tokens = 0;
    std::string problem = j.is_discarded() ? "the body is not JSON" : response_problem(j, inputs, &prompt_tokens);
    if (!problem.empty()) {
        r->error = "malformed_json";
        problem.append("; body: ").append(body, 0, k_max_detail);
        r->detail = problem.substr(0, k_max_detail);
        return;
    }
    r->inputs = inputs;
    r->prompt_tokens = prompt_tokens;
}
