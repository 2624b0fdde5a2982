// api/info-response.h — bodies of GET /v1/models and GET /health.
//
// Usage:
//   respond(200, models_list_to_json({{"tinyllama", 1700000000, "inferd"}}));
//   // {"object":"list","data":[{"id":"tinyllama","object":"model","created":1700000000,"owned_by":"inferd"}]}
//   respond(loaded ? 200 : 503, health_to_json(loaded ? api_health::ok : api_health::loading));
//   // {"status":"ok"} / {"status":"loading"}
//
// Never throws.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct api_model_info {
    std::string id = {};        // the name clients put in "model"
    int64_t created = 0;   // unix seconds (the server's start or the file's time)
    std::string owned_by = {};  // e.g. "inferd"
    // Written as "meta" once the model is loaded (n_ctx > 0): the context a request may fill,
    // the model's training context and its vocabulary size.
    int64_t n_ctx = 0, n_ctx_train = 0, n_vocab = 0;
};

std::string models_list_to_json(const std::vector<api_model_info> & models);
// A single model object (GET /v1/models/{id}).
std::string model_info_to_json(const api_model_info & model);

enum class api_health { ok, loading, error };

// The HTTP status that goes with a health state: 200 for ok, 503 otherwise.
int api_health_status(api_health h);
std::string health_to_json(api_health h);
