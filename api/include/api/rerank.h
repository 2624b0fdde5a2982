// api/rerank.h — POST /v1/rerank and POST /rerank (the shape of Jina's, Cohere's and
// llama-server's rerank APIs): a query and documents in, the documents ranked by relevance out.
//
// Usage:
//   rerank_request req;
//   if (auto err = rerank_request_parse(body, req)) return respond(err->status, api_error_to_json(*err));
//   rerank_response res{.id = new_id("rerank-"), .model = model_name};
//   for (size_t i = 0; i < req.documents.size(); ++i)
//       res.results.push_back({int32_t(i), score(req.query, req.documents[i])});
//   rerank_sort_and_cut(res.results, req.top_n);             // best first, at most top_n
//   res.return_documents = req.return_documents;
//   if (req.return_documents) res.documents = req.documents;   // indexed by rerank_result::index
//   respond(200, rerank_response_to_json(res));
//
// Request fields (absent or null: the default; unknown fields are ignored):
//   model (string), query (required string, may be ""), documents (required: a non-empty array of
//   at most rerank_max_documents items, each a string or an object {"text": string}; other
//   members of the object are ignored), top_n (integer >= 1; more than the documents means all),
//   return_documents (bool, default false).
// Return: nullopt on success, otherwise a 400 invalid_request_error whose param names the field
// ("query", "documents", "documents[3]", "documents[3].text"), or is empty when the body itself
// is malformed. Never throws.
//
// Response: {"id":…,"model":…,"results":[{"index":i,"relevance_score":s,"document":{"text":…}}],
// "usage":{"prompt_tokens":n,"total_tokens":n}}, "document" only with return_documents and a
// result whose index names one of `documents`. A score of +inf is written as the largest double,
// -inf and NaN as the lowest (JSON has no infinities).
#pragma once

#include "api/error.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// The most documents one request may rank (the limit of an embeddings request's inputs).
constexpr size_t rerank_max_documents = 2048;

struct rerank_request {
    std::string model = {};                 // "" when the request names none
    std::string query = {};
    std::vector<std::string> documents = {};  // 1..rerank_max_documents texts (each may be "")
    std::optional<int32_t> top_n = {};      // >= 1; nullopt: every document
    bool return_documents = false;          // echo each result's document text
};

struct rerank_result {
    int32_t index = 0;             // the document's position in the request
    double relevance_score = 0.0;  // higher is more relevant
};

struct rerank_response {
    std::string id = {};
    std::string model = {};
    std::vector<rerank_result> results = {};  // in the order to send (see rerank_sort_and_cut)
    int64_t prompt_tokens = 0;                // tokens over all query + document pairs
    bool return_documents = false;
    std::vector<std::string> documents = {};  // the request's documents, with return_documents
};

std::optional<api_error> rerank_request_parse(std::string_view body, rerank_request & out);

// Sorts `results` by relevance_score, highest first (NaN counts as -inf), equal scores by
// ascending index; then keeps the first top_n when top_n is set (a negative top_n keeps all).
void rerank_sort_and_cut(std::vector<rerank_result> & results, std::optional<int32_t> top_n);

std::string rerank_response_to_json(const rerank_response & res);
