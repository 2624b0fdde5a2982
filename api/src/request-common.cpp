// api/request-common.cpp — validation of the fields shared by completions and chat.
#include "api/request-common.h"

#include "generation-read.h"

#include <charconv>
#include <limits>

namespace {

void read_stop(json_reader & r, std::vector<std::string> & out) {
    const nlohmann::json * v = r.find("stop");
    if (!v || r.error()) {
        return;
    }
    const std::string what = "a non-empty string or an array of at most " + std::to_string(api_max_stop) +
                              " non-empty strings";
    if (v->is_string()) {
        if (v->get_ref<const std::string &>().empty()) {
            r.fail("stop", what);
            return;
        }
        out = {v->get<std::string>()};
        return;
    }
    if (!v->is_array() || v->size() > api_max_stop) {
        r.fail("stop", what);
        return;
    }
    std::vector<std::string> stops;
    for (const auto & s : *v) {
        if (!s.is_string() || s.get_ref<const std::string &>().empty()) {
            r.fail("stop", what);
            return;
        }
        stops.push_back(s.get<std::string>());
    }
    out = std::move(stops);
}

// A token id written as a JSON object key: decimal digits only, 0..INT32_MAX.
bool token_id_from_key(const std::string & key, int32_t & out) {
    if (key.empty() || key.size() > 10) {
        return false;
    }
    for (char c : key) {
        if (c < '0' || c > '9') {
            return false;
        }
    }
    int64_t id = 0;
    auto res = std::from_chars(key.data(), key.data() + key.size(), id);
    if (res.ec != std::errc() || id > std::numeric_limits<int32_t>::max()) {
        return false;
    }
    out = static_cast<int32_t>(id);
    return true;
}

void read_logit_bias(json_reader & r, std::vector<api_logit_bias> & out) {
    const nlohmann::json * v = r.find("logit_bias");
    if (!v || r.error()) {
        return;
    }
    if (!v->is_object()) {
        r.fail("logit_bias", "an object mapping token ids to biases between -100 and 100");
        return;
    }
    std::vector<api_logit_bias> biases;
    for (auto it = v->begin(); it != v->end(); ++it) {
        api_logit_bias b;
        if (!token_id_from_key(it.key(), b.token)) {
            r.fail(api_error_invalid_request("'logit_bias' keys must be token ids (non-negative integers), got \"" +
                                                 it.key() + "\".",
                                             r.param("logit_bias")));
            return;
        }
        const nlohmann::json & val = it.value();
        double d = val.is_number() ? val.get<double>() : std::numeric_limits<double>::quiet_NaN();
        if (!(d >= -100.0 && d <= 100.0)) {
            r.fail(api_error_invalid_request("'logit_bias' values must be numbers between -100 and 100 (token " +
                                                 it.key() + ").",
                                             r.param("logit_bias")));
            return;
        }
        b.bias = static_cast<float>(d);
        biases.push_back(b);
    }
    out = std::move(biases);
}

void read_stream(json_reader & r, api_generation_options & out) {
    r.boolean("stream", out.stream);
    const nlohmann::json * so = r.find("stream_options");
    if (!so || r.error()) {
        return;
    }
    if (!so->is_object()) {
        r.fail("stream_options", "an object");
        return;
    }
    if (!out.stream) {
        r.fail(api_error_invalid_request("'stream_options' is only allowed when 'stream' is true.",
                                         r.param("stream_options")));
        return;
    }
    json_reader inner(*so, r.param("stream_options."));
    inner.boolean("include_usage", out.include_usage);
    if (inner.error()) {
        r.fail(*inner.error());
    }
}

}  // namespace

void api_read_generation_options(json_reader & r, std::string_view body, api_generation_options & out) {
    constexpr double no_max = std::numeric_limits<double>::max();
    r.string("model", out.model);
    r.integer("n", 1, api_max_n, out.n);
    read_stream(r, out);
    read_stop(r, out.stop);
    r.string("user", out.user);
    r.boolean("ignore_eos", out.ignore_eos);
    api_sampling_params & s = out.sampling;
    r.number("temperature", 0.0, 2.0, s.temperature);
    r.number("top_p", 0.0, 1.0, s.top_p, true);
    r.integer("top_k", 0, std::numeric_limits<int32_t>::max(), s.top_k);
    r.number("min_p", 0.0, 1.0, s.min_p);
    r.number("repeat_penalty", 0.0, no_max, s.repeat_penalty, true);
    r.number("presence_penalty", -2.0, 2.0, s.presence_penalty);
    r.number("frequency_penalty", -2.0, 2.0, s.frequency_penalty);
    r.integer("seed", s.seed);
    read_logit_bias(r, s.logit_bias);
    api_read_constraint(r, body, out.constraint);
}

std::optional<api_error> api_sampling_check_vocab(const api_sampling_params & s, int32_t n_vocab) {
    for (const api_logit_bias & b : s.logit_bias) {
        if (b.token >= n_vocab) {
            return api_error_invalid_request("'logit_bias' names token " + std::to_string(b.token) +
                                                 ", but the vocabulary has " + std::to_string(n_vocab) + " tokens.",
                                             "logit_bias");
        }
    }
    return std::nullopt;
}
