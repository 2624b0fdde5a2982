// api/info-response.cpp — /v1/models and /health bodies.
#include "api/info-response.h"

#include "json-write.h"

namespace {

ojson model_json(const api_model_info & m) {
    ojson j = {{"id", m.id}, {"object", "model"}, {"created", m.created}, {"owned_by", m.owned_by}};
    if (m.n_ctx > 0) j["meta"] = {{"n_ctx", m.n_ctx}, {"n_ctx_train", m.n_ctx_train}, {"n_vocab", m.n_vocab}};
    return j;
}

}  // namespace

std::string models_list_to_json(const std::vector<api_model_info> & models) {
    ojson data = ojson::array();
    for (const api_model_info & m : models) {
        data.push_back(model_json(m));
    }
    return json_write(ojson{{"object", "list"}, {"data", std::move(data)}});
}

std::string model_info_to_json(const api_model_info & model) {
    return json_write(model_json(model));
}

int api_health_status(api_health h) {
    return h == api_health::ok ? 200 : 503;
}

std::string health_to_json(api_health h) {
    const char * status = h == api_health::ok ? "ok" : h == api_health::loading ? "loading" : "error";
    return json_write(ojson{{"status", status}});
}
