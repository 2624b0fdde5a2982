// api/rerank.cpp — POST /v1/rerank bodies: the request, the ranking and the response.
#include "api/rerank.h"

#include "json-read.h"
#include "json-write.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace {

const char * document_forms = "a string or an object {\"text\": string}";

// Reads documents[i]: a string, or an object whose "text" is a string.
bool read_document(json_reader & r, const nlohmann::json & item, size_t i, std::string & out) {
    std::string key = api_cat({"documents[", std::to_string(i), "]"});
    if (item.is_string()) {
        out = item.get<std::string>();
        return true;
    }
    if (!item.is_object()) {
        r.fail(key, api_cat({document_forms, ", got ", json_value_text(item)}));
        return false;
    }
    auto text = item.find("text");
    if (text == item.end() || !text->is_string()) {
        key += ".text";
        r.fail(key, text == item.end() ? std::string("a string (it is missing)")
                                       : api_cat({"a string, got ", json_value_text(*text)}));
        return false;
    }
    out = text->get<std::string>();
    return true;
}

// What a `documents` value that is not a usable array is, for messages.
std::string documents_text(const nlohmann::json & v) {
    if (!v.is_array()) {
        return json_value_text(v);
    }
    return v.empty() ? std::string("an empty array") : api_cat({"an array of ", std::to_string(v.size())});
}

void read_documents(json_reader & r, std::vector<std::string> & out) {
    if (r.error()) {
        return;
    }
    const nlohmann::json * v = r.find("documents");
    if (!v) {
        r.fail(api_error_invalid_request("'documents' is required.", "documents"));
        return;
    }
    if (!v->is_array() || v->empty() || v->size() > rerank_max_documents) {
        r.fail("documents", api_cat({"a non-empty array of at most ", std::to_string(rerank_max_documents),
                                     " documents (each ", document_forms, "), got ", documents_text(*v)}));
        return;
    }
    std::vector<std::string> docs(v->size());
    for (size_t i = 0; i < v->size(); ++i) {
        if (!read_document(r, (*v)[i], i, docs[i])) {
            return;
        }
    }
    out = std::move(docs);
}

// JSON has no infinities: +inf is written as the largest double, -inf and NaN as the lowest.
double score_json(double s) {
    if (std::isnan(s) || s == -std::numeric_limits<double>::infinity()) {
        return std::numeric_limits<double>::lowest();
    }
    return std::isinf(s) ? std::numeric_limits<double>::max() : s;
}

}  // namespace

std::optional<api_error> rerank_request_parse(std::string_view body, rerank_request & out) {
    return json_parse_request(body, out, [&](json_reader & r, rerank_request & req) {
        r.string("model", req.model);
        if (!r.error() && !r.find("query")) {
            r.fail(api_error_invalid_request("'query' is required.", "query"));
        }
        r.string("query", req.query);
        read_documents(r, req.documents);
        r.integer("top_n", 1, std::numeric_limits<int32_t>::max(), req.top_n);
        r.boolean("return_documents", req.return_documents);
    });
}

void rerank_sort_and_cut(std::vector<rerank_result> & results, std::optional<int32_t> top_n) {
    auto key = [](double s) { return std::isnan(s) ? -std::numeric_limits<double>::infinity() : s; };
    std::sort(results.begin(), results.end(), [&](const rerank_result & a, const rerank_result & b) {
        double ka = key(a.relevance_score);
        double kb = key(b.relevance_score);
        return ka != kb ? ka > kb : a.index < b.index;
    });
    if (top_n && *top_n >= 0 && static_cast<size_t>(*top_n) < results.size()) {
        results.resize(static_cast<size_t>(*top_n));
    }
}

std::string rerank_response_to_json(const rerank_response & res) {
    ojson results = ojson::array();
    for (const rerank_result & r : res.results) {
        ojson item = {{"index", r.index}, {"relevance_score", score_json(r.relevance_score)}};
        if (res.return_documents && r.index >= 0 && static_cast<size_t>(r.index) < res.documents.size()) {
            item["document"] = {{"text", res.documents[static_cast<size_t>(r.index)]}};
        }
        results.push_back(std::move(item));
    }
    ojson usage = {{"prompt_tokens", res.prompt_tokens}, {"total_tokens", res.prompt_tokens}};
    return json_write(ojson{{"id", res.id}, {"model", res.model}, {"results", std::move(results)},
                            {"usage", std::move(usage)}});
}
