// POST /v1/rerank (api/rerank.h): parsing and validation of the request, the ranking of the
// results, and the response parsed back.
#include "api/rerank.h"

#include "api-test-util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using nlohmann::json;

namespace {

rerank_request parse_ok(const std::string & body) {
    rerank_request req;
    auto err = rerank_request_parse(body, req);
    EXPECT_FALSE(err.has_value()) << body << " → " << (err ? err->message : "");
    return req;
}

// `fields` is inserted into an otherwise valid body.
void expect_rejected(const std::string & fields, const std::string & param) {
    std::string body = R"({"model":"m","query":"q","documents":["a"],)";
    body += fields;
    body += "}";
    rerank_request req;
    expect_invalid(rerank_request_parse(body, req), param, body);
}

// A body with `n` documents, each `doc`.
std::string documents_body(size_t n, const std::string & doc) {
    std::string body = R"({"query":"q","documents":[)";
    for (size_t i = 0; i < n; ++i) {
        if (i > 0) {
            body += ',';
        }
        body += doc;
    }
    body += "]}";
    return body;
}

std::vector<int32_t> indices(const std::vector<rerank_result> & results) {
    std::vector<int32_t> out;
    for (const rerank_result & r : results) {
        out.push_back(r.index);
    }
    return out;
}

}  // namespace

TEST(RerankRequest, DefaultsAndEveryField) {
    rerank_request req = parse_ok(R"({"query":"what is a panda?","documents":["hi","the giant panda"]})");
    EXPECT_EQ(req.model, "");
    EXPECT_EQ(req.query, "what is a panda?");
    EXPECT_EQ(req.documents, (std::vector<std::string>{"hi", "the giant panda"}));
    EXPECT_FALSE(req.top_n.has_value());
    EXPECT_FALSE(req.return_documents);

    req = parse_ok(R"({"model":"rr","query":"","documents":[""],"top_n":3,"return_documents":true})");
    EXPECT_EQ(req.model, "rr");
    EXPECT_EQ(req.query, "");
    EXPECT_EQ(req.documents, (std::vector<std::string>{""}));
    ASSERT_TRUE(req.top_n.has_value());
    EXPECT_EQ(*req.top_n, 3);  // more than the documents: kept as given, means all
    EXPECT_TRUE(req.return_documents);
}

TEST(RerankRequest, NullMeansDefaultAndUnknownFieldsAreIgnored) {
    rerank_request req = parse_ok(R"({"query":"q","documents":["a"],"model":null,"top_n":null,
        "return_documents":null,"max_chunks_per_doc":10,"rank_fields":["x"]})");
    EXPECT_EQ(req.model, "");
    EXPECT_FALSE(req.top_n.has_value());
    EXPECT_FALSE(req.return_documents);
}

TEST(RerankRequest, DocumentsAsStringsAndObjects) {
    rerank_request req = parse_ok(
        R"({"query":"q","documents":["plain",{"text":"object"},{"text":"","title":"ignored"},"last"]})");
    EXPECT_EQ(req.documents, (std::vector<std::string>{"plain", "object", "", "last"}));
}

TEST(RerankRequest, AtMost2048Documents) {
    EXPECT_EQ(rerank_max_documents, 2048u);
    EXPECT_EQ(parse_ok(documents_body(2048, R"("d")")).documents.size(), 2048u);
    EXPECT_EQ(parse_ok(documents_body(2048, R"({"text":"d"})")).documents.size(), 2048u);
    rerank_request req;
    auto err = rerank_request_parse(documents_body(2049, R"("d")"), req);
    expect_invalid(err, "documents", "2049 documents");
    if (err) {
        EXPECT_NE(err->message.find("2048"), std::string::npos) << err->message;
        EXPECT_NE(err->message.find("2049"), std::string::npos) << err->message;
    }
}

TEST(RerankRequest, InvalidFieldsNameTheirField) {
    rerank_request req;
    expect_invalid(rerank_request_parse(R"({"documents":["a"]})", req), "query", "no query");
    expect_invalid(rerank_request_parse(R"({"query":null,"documents":["a"]})", req), "query", "null query");
    expect_invalid(rerank_request_parse(R"({"query":"q"})", req), "documents", "no documents");
    expect_invalid(rerank_request_parse(R"({"query":"q","documents":null})", req), "documents", "null");
    expect_rejected(R"("query":5)", "query");
    expect_rejected(R"("query":["q"])", "query");
    expect_rejected(R"("model":1)", "model");
    expect_rejected(R"("documents":[])", "documents");
    expect_rejected(R"("documents":"a")", "documents");
    expect_rejected(R"("documents":{"text":"a"})", "documents");
    expect_rejected(R"("documents":["a","b","c",4])", "documents[3]");
    expect_rejected(R"("documents":[null])", "documents[0]");
    expect_rejected(R"("documents":[["a"]])", "documents[0]");
    expect_rejected(R"("documents":["a",true])", "documents[1]");
    expect_rejected(R"("documents":["a",{}])", "documents[1].text");
    expect_rejected(R"("documents":[{"text":1}])", "documents[0].text");
    expect_rejected(R"("documents":[{"text":null}])", "documents[0].text");
    expect_rejected(R"("documents":[{"content":"a"}])", "documents[0].text");
    expect_rejected(R"("top_n":0)", "top_n");
    expect_rejected(R"("top_n":-1)", "top_n");
    expect_rejected(R"("top_n":1.5)", "top_n");
    expect_rejected(R"("top_n":"3")", "top_n");
    expect_rejected(R"("top_n":2147483648)", "top_n");
    expect_rejected(R"("return_documents":1)", "return_documents");
    expect_rejected(R"("return_documents":"true")", "return_documents");
}

TEST(RerankRequest, MalformedBodiesAndUntouchedOutput) {
    for (const char * body : {"", "{", "[\"q\"]", "null", "{\"query\":\"q\",}", "{\"query\":\"\xff\"}"}) {
        rerank_request req;
        expect_invalid(rerank_request_parse(body, req), "", body);
    }
    rerank_request req;
    req.query = "kept";
    ASSERT_TRUE(rerank_request_parse(R"({"query":"other","documents":["a"],"top_n":0})", req).has_value());
    EXPECT_EQ(req.query, "kept");
    EXPECT_TRUE(req.documents.empty());
}

TEST(RerankSort, HighestFirstTiesByIndex) {
    std::vector<rerank_result> results = {{0, 0.1}, {1, 0.9}, {2, 0.5}, {3, 0.9}, {4, -3.0}, {5, 0.5}};
    rerank_sort_and_cut(results, std::nullopt);
    EXPECT_EQ(indices(results), (std::vector<int32_t>{1, 3, 2, 5, 0, 4}));
    EXPECT_EQ(results[0].relevance_score, 0.9);
    EXPECT_EQ(results[5].relevance_score, -3.0);

    // The order of ties does not depend on the order given.
    results = {{5, 0.5}, {3, 0.9}, {2, 0.5}, {1, 0.9}, {0, 0.5}};
    rerank_sort_and_cut(results, std::nullopt);
    EXPECT_EQ(indices(results), (std::vector<int32_t>{1, 3, 0, 2, 5}));
}

TEST(RerankSort, TopNCuts) {
    const std::vector<rerank_result> given = {{0, 0.1}, {1, 0.9}, {2, 0.5}, {3, 0.9}};
    std::vector<rerank_result> results = given;
    rerank_sort_and_cut(results, 1);
    EXPECT_EQ(indices(results), (std::vector<int32_t>{1}));
    results = given;
    rerank_sort_and_cut(results, 3);
    EXPECT_EQ(indices(results), (std::vector<int32_t>{1, 3, 2}));
    results = given;
    rerank_sort_and_cut(results, 4);
    EXPECT_EQ(results.size(), 4u);
    results = given;
    rerank_sort_and_cut(results, 100);  // more than the documents: all
    EXPECT_EQ(indices(results), (std::vector<int32_t>{1, 3, 2, 0}));
    results = given;
    rerank_sort_and_cut(results, -1);
    EXPECT_EQ(results.size(), 4u);
    results = given;
    rerank_sort_and_cut(results, 0);
    EXPECT_TRUE(results.empty());
    results.clear();
    rerank_sort_and_cut(results, 2);
    EXPECT_TRUE(results.empty());
}

TEST(RerankSort, NonFiniteScores) {
    const double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<rerank_result> results = {{0, nan}, {1, -inf}, {2, 1.0}, {3, inf}, {4, nan}, {5, -1e300}};
    rerank_sort_and_cut(results, std::nullopt);
    EXPECT_EQ(indices(results), (std::vector<int32_t>{3, 2, 5, 0, 1, 4}));  // NaN ties with -inf
}

TEST(RerankResponse, Json) {
    rerank_response res;
    res.id = "rerank-1";
    res.model = "rr";
    res.results = {{2, 0.75}, {0, -1.5}};
    res.prompt_tokens = 42;
    res.documents = {"first", "second", "third \"quoted\""};
    std::string text = rerank_response_to_json(res);
    EXPECT_EQ(text.rfind(R"({"id":"rerank-1","model":"rr","results":[{"index":2,"relevance_score":0.75},)", 0), 0u)
        << text;
    EXPECT_EQ(parse_output(text), json::parse(R"({"id":"rerank-1","model":"rr",
        "results":[{"index":2,"relevance_score":0.75},{"index":0,"relevance_score":-1.5}],
        "usage":{"prompt_tokens":42,"total_tokens":42}})"));

    res.return_documents = true;
    EXPECT_EQ(parse_output(rerank_response_to_json(res)), json::parse(R"({"id":"rerank-1","model":"rr",
        "results":[{"index":2,"relevance_score":0.75,"document":{"text":"third \"quoted\""}},
                   {"index":0,"relevance_score":-1.5,"document":{"text":"first"}}],
        "usage":{"prompt_tokens":42,"total_tokens":42}})"));

    res.results.push_back({7, 0.0});   // no such document: no "document"
    res.results.push_back({-1, 0.0});
    json j = parse_output(rerank_response_to_json(res));
    ASSERT_EQ(j["results"].size(), 4u);
    EXPECT_FALSE(j["results"][2].contains("document"));
    EXPECT_FALSE(j["results"][3].contains("document"));

    res.results.clear();
    j = parse_output(rerank_response_to_json(res));
    EXPECT_TRUE(j["results"].is_array());
    EXPECT_TRUE(j["results"].empty());
}

TEST(RerankResponse, ScoresRoundTripAndNonFiniteAreNumbers) {
    rerank_response res;
    res.results = {{0, 0.1}, {1, 1.0 / 3.0}, {2, 5e-324}, {3, std::numeric_limits<double>::infinity()},
                   {4, -std::numeric_limits<double>::infinity()}, {5, std::nan("")}};
    json j = parse_output(rerank_response_to_json(res));
    ASSERT_EQ(j["results"].size(), 6u);
    EXPECT_EQ(j["results"][0]["relevance_score"].get<double>(), 0.1);
    EXPECT_EQ(j["results"][1]["relevance_score"].get<double>(), 1.0 / 3.0);
    EXPECT_EQ(j["results"][2]["relevance_score"].get<double>(), 5e-324);
    EXPECT_EQ(j["results"][3]["relevance_score"].get<double>(), std::numeric_limits<double>::max());
    EXPECT_EQ(j["results"][4]["relevance_score"].get<double>(), std::numeric_limits<double>::lowest());
    EXPECT_EQ(j["results"][5]["relevance_score"].get<double>(), std::numeric_limits<double>::lowest());
}
