// The flag table: every setting of server_config, its names, variable, default and parser.
#include "config-internal.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cstdio>

namespace {

constexpr long long k_int_max = INT_MAX;

// --- appliers shared by several flags ------------------------------------------------------

// A "--no-X" switch: the setting X is on unless the switch is given (or its value is true).
bool apply_switch_off(bool * setting, std::string_view v, std::string * err) {
    bool off = false;
    if (!config_parse_bool(v, &off, err)) return false;
    *setting = !off;
    return true;
}

bool apply_string_nonempty(std::string * dst, std::string_view v, std::string * err) {
    if (v.empty()) {
        *err = "the value is empty";
        return false;
    }
    *dst = std::string(v);
    return true;
}

// "*" or scheme://host[:port] with nothing after the authority.
bool check_origin(std::string_view v, std::string * err) {
    if (v == "*") return true;
    size_t sep = v.find("://");
    bool ok = sep != std::string_view::npos && sep > 0 && sep + 3 < v.size();
    if (ok) {
        std::string_view rest = v.substr(sep + 3);
        ok = rest.find_first_of("/?# ") == std::string_view::npos;
    }
    if (!ok) *err = config_quote(v) + " is not an origin (scheme://host[:port], or * for any)";
    return ok;
}

bool apply_cors(server_config & c, std::string_view v, std::string * err) {
    std::vector<std::string> items = config_split_list(v);
    if (items.empty()) {
        *err = "the value is empty";
        return false;
    }
    for (const std::string & o : items) {
        if (!check_origin(o, err)) return false;
    }
    c.cors_origins.insert(c.cors_origins.end(), items.begin(), items.end());
    return true;
}

bool apply_host(server_config & c, std::string_view v, std::string * err) {
    if (v.empty() || v.find_first_of(" \t\r\n") != std::string_view::npos) {
        *err = config_quote(v) + " is not a host name or address";
        return false;
    }
    c.host = std::string(v);
    return true;
}

// A JSON object (extra chat template variables).
bool apply_template_kwargs(server_config & c, std::string_view v, std::string * err) {
    const nlohmann::json j = nlohmann::json::parse(v, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        *err = config_quote(v) + " is not a JSON object (e.g. {\"enable_thinking\": false})";
        return false;
    }
    c.chat_template_kwargs = j.dump();
    return true;
}

// auto (or deepseek, its other name) | none.
bool apply_reasoning_format(server_config & c, std::string_view v, std::string * err) {
    if (v == "auto" || v == "deepseek") {
        c.reasoning_split = true;
    } else if (v == "none") {
        c.reasoning_split = false;
    } else {
        *err = config_quote(v) + " is not a reasoning format (auto or none)";
        return false;
    }
    return true;
}

bool apply_pooling(server_config & c, std::string_view v, std::string * err) {
    for (const char * p : {"none", "mean", "cls", "last", "rank"}) {
        if (v == p) {
            c.pooling = std::string(v);
            return true;
        }
    }
    *err = config_quote(v) + " is not a pooling type (none, mean, cls, last or rank)";
    return false;
}

// l2 (or 2, llama-server's number for it) | none (or -1).
bool apply_embd_normalize(server_config & c, std::string_view v, std::string * err) {
    if (v == "l2" || v == "2") {
        c.embd_normalize = true;
    } else if (v == "none" || v == "-1") {
        c.embd_normalize = false;
    } else {
        *err = config_quote(v) + " is not a normalization (l2 or none)";
        return false;
    }
    return true;
}

std::string no_default(const server_config &) { return ""; }

// "0.75": the shortest decimal text of a float default.
std::string config_float_text(float v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", double(v));
    return buf;
}

// --- the table ------------------------------------------------------------------------------

// Field order: group, long, short, value, env, help, in_file, is_list, secret, action,
// apply, clear, default_text.
const config_flag k_flags[] = {
    {"Model and engine", "model", "-m", "FILE", "INFERD_MODEL", "GGUF model file to serve (required)", true,
     false, false, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) { return apply_string_nonempty(&c.model_path, v, e); },
     nullptr, no_default},
    {"Model and engine", "alias", "", "NAME", "INFERD_ALIAS",
     "model id shown by /v1/models and in responses (default: the model file name)", true, false, false,
     config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) { return apply_string_nonempty(&c.alias, v, e); },
     nullptr, no_default},
    {"Model and engine", "chat-template", "", "TEMPLATE", "INFERD_CHAT_TEMPLATE",
     "chat template: a built-in name (chatml, llama3, zephyr, ...), a Jinja template file or Jinja text "
     "(default: the model's own, run as written)",
     true, false, false, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         return apply_string_nonempty(&c.chat_template, v, e);
     },
     nullptr, no_default},
    {"Model and engine", "chat-template-kwargs", "", "JSON", "INFERD_CHAT_TEMPLATE_KWARGS",
     "extra chat template variables for every chat request, a JSON object (e.g. {\"enable_thinking\": false}); "
     "a request's chat_template_kwargs override them key by key",
     true, false, false, config_flag_action::set, apply_template_kwargs, nullptr, no_default},
    {"Model and engine", "reasoning-format", "", "FORMAT", "INFERD_REASONING_FORMAT",
     "auto: a chat answer's thinking (<think> blocks, reasoning channels) goes to reasoning_content; "
     "none: it stays in content as generated; a request's reasoning_format overrides it",
     true, false, false, config_flag_action::set, apply_reasoning_format, nullptr,
     [](const server_config & d) { return std::string(d.reasoning_split ? "auto" : "none"); }},
    {"Model and engine", "embeddings", "", nullptr, "INFERD_EMBEDDINGS",
     "serve POST /v1/embeddings and /v1/rerank beside generation (on by itself for encoder-only models)",
     true, false, false, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) { return config_parse_bool(v, &c.embeddings, e); },
     nullptr, [](const server_config & d) { return std::string(d.embeddings ? "on" : "off"); }},
    {"Model and engine", "pooling", "", "TYPE", "INFERD_POOLING",
     "how an input's token states become its embedding: none, mean, cls, last or rank (default: the model's "
     "pooling_type, else last for decoder models)",
     true, false, false, config_flag_action::set, apply_pooling, nullptr, no_default},
    {"Model and engine", "embd-normalize", "", "NORM", "INFERD_EMBD_NORMALIZE",
     "embeddings returned L2-normalized (l2) or raw (none)", true, false, false, config_flag_action::set,
     apply_embd_normalize, nullptr, [](const server_config & d) { return std::string(d.embd_normalize ? "l2" : "none"); }},
    {"Model and engine", "no-repack", "", nullptr, "INFERD_NO_REPACK",
     "keep CPU matrix weights in the file's layout (mapped, not copied) instead of repacking Q4_0, Q4_1, "
     "Q5_0, Q8_0, Q2_K to Q6_K, IQ4_NL, IQ4_XS and MXFP4 weights at load into the interleaved layout of the "
     "fast kernels",
     true, false, false, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) { return apply_switch_off(&c.repack, v, e); },
     nullptr, [](const server_config & d) { return std::string(d.repack ? "off" : "on"); }},
    {"Model and engine", "no-mmap", "", nullptr, "INFERD_NO_MMAP",
     "read the model file into memory instead of mapping it (a file changed on disk while serving then "
     "cannot affect the weights; loading takes longer and the bytes cannot be shared with other processes)",
     true, false, false, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) { return apply_switch_off(&c.mmap, v, e); },
     nullptr, [](const server_config & d) { return std::string(d.mmap ? "off" : "on"); }},
    {"Model and engine", "mlock", "", nullptr, "INFERD_MLOCK",
     "lock the weights in RAM so that they are never paged out; when RLIMIT_MEMLOCK refuses it, a warning "
     "names the limit and loading goes on",
     true, false, false, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) { return config_parse_bool(v, &c.mlock, e); },
     nullptr, [](const server_config & d) { return std::string(d.mlock ? "on" : "off"); }},
    {"Model and engine", "ctx-size", "-c", "N", "INFERD_CTX_SIZE",
     "KV cache size in tokens, shared by all slots; 0 = the model's trained context", true, false, false,
     config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         return config_parse_int(v, 0, k_int_max, "0..2147483647", &c.ctx_size, e);
     },
     nullptr, [](const server_config & d) { return std::to_string(d.ctx_size); }},
    {"Model and engine", "parallel", "-np", "N", "INFERD_PARALLEL", "number of slots: requests decoded together",
     true, false, false, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         return config_parse_int(v, 1, 256, "1..256", &c.parallel, e);
     },
     nullptr, [](const server_config & d) { return std::to_string(d.parallel); }},
    {"Model and engine", "threads", "-t", "N", "INFERD_THREADS", "compute threads (default: the CPU cores)", true,
     false, false, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         return config_parse_int(v, 1, 1024, "1..1024", &c.threads, e);
     },
     nullptr, no_default},
    {"Model and engine", "batch-size", "-b", "N", "INFERD_BATCH_SIZE",
     "most tokens (prompt chunks + generated) put into one decode step", true, false, false,
     config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         return config_parse_int(v, 1, k_int_max, "1..2147483647", &c.batch_size, e);
     },
     nullptr, [](const server_config & d) { return std::to_string(d.batch_size); }},
    {"Model and engine", "ubatch-size", "-ub", "N", "INFERD_UBATCH_SIZE",
     "most tokens computed at once (physical batch); at most --batch-size", true, false, false,
     config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         return config_parse_int(v, 1, k_int_max, "1..2147483647", &c.ubatch_size, e);
     },
     nullptr, [](const server_config & d) { return std::to_string(d.ubatch_size); }},
    {"Model and engine", "n-gpu-layers", "-ngl", "N", "INFERD_N_GPU_LAYERS",
     "layers to offload to the GPU; -1 = all", true, false, false, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         return config_parse_int(v, -1, k_int_max, "-1..2147483647; -1 = all", &c.n_gpu_layers, e);
     },
     nullptr, [](const server_config & d) { return std::to_string(d.n_gpu_layers); }},
    {"Model and engine", "flash-attn", "-fa", nullptr, "INFERD_FLASH_ATTN",
     "fused flash-attention kernel (off: the reference engine's plain attention arithmetic, slower with long contexts and many slots)",
     true, false, false, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) { return config_parse_bool(v, &c.flash_attn, e); },
     nullptr, [](const server_config & d) { return std::string(d.flash_attn ? "on" : "off"); }},
    {"Model and engine", "cache-type-k", "-ctk", "TYPE", "INFERD_CACHE_TYPE_K",
     "element type of the K cache: f16, f32 or q8_0", true, false, false, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         return config_parse_cache_type(v, &c.cache_type_k, e);
     },
     nullptr, [](const server_config & d) { return std::string(config_cache_type_name(d.cache_type_k)); }},
    {"Model and engine", "cache-type-v", "-ctv", "TYPE", "INFERD_CACHE_TYPE_V",
     "element type of the V cache: f16, f32 or q8_0", true, false, false, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         return config_parse_cache_type(v, &c.cache_type_v, e);
     },
     nullptr, [](const server_config & d) { return std::string(config_cache_type_name(d.cache_type_v)); }},
    {"Model and engine", "max-queue", "", "N", "INFERD_MAX_QUEUE",
     "requests that may wait for a slot; more get 503 with Retry-After", true, false, false,
     config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         return config_parse_int(v, 0, 1'000'000, "0..1000000", &c.max_queue, e);
     },
     nullptr, [](const server_config & d) { return std::to_string(d.max_queue); }},
    {"Model and engine", "compile-threads", "", "N", "INFERD_COMPILE_THREADS",
     "threads that compile requests' JSON Schemas, grammars and tool-call grammars (off the HTTP threads); "
     "at most --max-queue requests wait for one, more get 503 with Retry-After",
     true, false, false, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         return config_parse_int(v, 1, 64, "1..64", &c.compile_threads, e);
     },
     nullptr, [](const server_config & d) { return std::to_string(d.compile_threads); }},

    {"Speculative decoding", "model-draft", "-md", "FILE", "INFERD_MODEL_DRAFT",
     "a smaller GGUF model with the same vocabulary that drafts tokens for the model to verify several at "
     "once in one step (the output stays the same; default: none)",
     true, false, false, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) { return apply_string_nonempty(&c.model_draft, v, e); },
     nullptr, no_default},
    {"Speculative decoding", "draft-max", "", "N", "INFERD_DRAFT_MAX",
     "most draft tokens verified per request and step", true, false, false, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         return config_parse_int(v, 1, 256, "1..256", &c.draft_max, e);
     },
     nullptr, [](const server_config & d) { return std::to_string(d.draft_max); }},
    {"Speculative decoding", "draft-min", "", "N", "INFERD_DRAFT_MIN",
     "drafts shorter than this are not verified; at most --draft-max", true, false, false,
     config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         return config_parse_int(v, 0, 256, "0..256", &c.draft_min, e);
     },
     nullptr, [](const server_config & d) { return std::to_string(d.draft_min); }},
    {"Speculative decoding", "draft-p-min", "", "P", "INFERD_DRAFT_P_MIN",
     "the draft model stops drafting when its most likely token is less probable than this", true, false,
     false, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         return config_parse_float(v, 0.0, 1.0, "0..1", &c.draft_p_min, e);
     },
     nullptr, [](const server_config & d) { return config_float_text(d.draft_p_min); }},
    {"Speculative decoding", "spec-ngram", "", "N", "INFERD_SPEC_NGRAM",
     "n-gram lookup drafting without a draft model: the tokens that followed the latest earlier occurrence of "
     "a request's last N (down to 1) tokens in its prompt and output are verified as a draft; 0 = off",
     true, false, false, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         return config_parse_int(v, 0, 64, "0..64", &c.spec_ngram, e);
     },
     nullptr, [](const server_config & d) { return std::to_string(d.spec_ngram); }},
    {"Speculative decoding", "spec-always", "", nullptr, "INFERD_SPEC_ALWAYS",
     "draft on every step even while drafting makes generation slower (by default the daemon times steps "
     "with and without drafts, turns drafting off while it loses and tries again later; /metrics "
     "inferd_spec_active says which)",
     true, false, false, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) { return apply_switch_off(&c.spec_adaptive, v, e); },
     nullptr, [](const server_config & d) { return std::string(d.spec_adaptive ? "off" : "on"); }},

    {"HTTP", "host", "", "ADDR", "INFERD_HOST", "address to listen on", true, false, false,
     config_flag_action::set, apply_host, nullptr, [](const server_config & d) { return d.host; }},
    {"HTTP", "port", "", "N", "INFERD_PORT", "TCP port to listen on; 0 = any free port", true, false, false,
     config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         return config_parse_int(v, 0, 65535, "1..65535, or 0 for any free port", &c.port, e);
     },
     nullptr, [](const server_config & d) { return std::to_string(d.port); }},
    {"HTTP", "io-threads", "", "N", "INFERD_IO_THREADS", "threads serving HTTP connections", true, false, false,
     config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         return config_parse_int(v, 1, 256, "1..256", &c.io_threads, e);
     },
     nullptr, [](const server_config & d) { return std::to_string(d.io_threads); }},
    {"HTTP", "ssl-cert-file", "", "FILE", "INFERD_SSL_CERT_FILE",
     "serve HTTPS (TLS 1.2+) with this PEM certificate chain; needs --ssl-key-file", true, false, false,
     config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) { return apply_string_nonempty(&c.ssl_cert_file, v, e); },
     nullptr, no_default},
    {"HTTP", "ssl-key-file", "", "FILE", "INFERD_SSL_KEY_FILE",
     "the PEM private key of --ssl-cert-file", true, false, false, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) { return apply_string_nonempty(&c.ssl_key_file, v, e); },
     nullptr, no_default},
    {"HTTP", "max-connections", "", "N", "INFERD_MAX_CONNECTIONS",
     "open connections at most; beyond, a new connection gets 503 with Retry-After and is closed "
     "(0 = the open-file limit less 64)",
     true, false, false, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         return config_parse_int(v, 0, 1'000'000, "0..1000000", &c.max_connections, e);
     },
     nullptr, [](const server_config & d) { return std::to_string(d.max_connections); }},
    {"HTTP", "max-body-size", "", "BYTES", "INFERD_MAX_BODY_SIZE",
     "largest request body (K, M, G suffixes); larger ones get 413", true, false, false,
     config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         return config_parse_size(v, size_t{1} << 10, size_t{1} << 32, &c.max_body_size, e);
     },
     nullptr, [](const server_config & d) { return config_size_text(d.max_body_size); }},
    {"HTTP", "header-timeout", "", "SECONDS", "INFERD_HEADER_TIMEOUT",
     "a request whose headers take longer is dropped", true, false, false, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         return config_parse_seconds(v, 1, 86'400'000, &c.header_timeout, e);
     },
     nullptr, [](const server_config & d) { return config_seconds_text(d.header_timeout); }},
    {"HTTP", "idle-timeout", "", "SECONDS", "INFERD_IDLE_TIMEOUT",
     "an idle keep-alive connection is closed after this", true, false, false, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         return config_parse_seconds(v, 1, 86'400'000, &c.idle_timeout, e);
     },
     nullptr, [](const server_config & d) { return config_seconds_text(d.idle_timeout); }},
    {"HTTP", "body-timeout", "", "SECONDS", "INFERD_BODY_TIMEOUT",
     "a request body that takes longer to arrive (after its header) is dropped", true, false, false,
     config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         return config_parse_seconds(v, 1, 86'400'000, &c.body_timeout, e);
     },
     nullptr, [](const server_config & d) { return config_seconds_text(d.body_timeout); }},
    {"HTTP", "write-timeout", "", "SECONDS", "INFERD_WRITE_TIMEOUT",
     "a client that reads nothing of its response for this long is dropped (its request is cancelled)", true,
     false, false, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         return config_parse_seconds(v, 1, 86'400'000, &c.write_timeout, e);
     },
     nullptr, [](const server_config & d) { return config_seconds_text(d.write_timeout); }},
    {"HTTP", "shutdown-timeout", "", "SECONDS", "INFERD_SHUTDOWN_TIMEOUT",
     "on SIGTERM / SIGINT, how long in-flight requests may finish", true, false, false,
     config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         return config_parse_seconds(v, 0, 86'400'000, &c.shutdown_timeout, e);
     },
     nullptr, [](const server_config & d) { return config_seconds_text(d.shutdown_timeout); }},
    {"HTTP", "cors-origin", "", "ORIGIN", "INFERD_CORS_ORIGIN",
     "allowed browser origin (repeatable or a comma list; * = any); none by default", true, true, false,
     config_flag_action::set, apply_cors, [](server_config & c) { c.cors_origins.clear(); }, no_default},
    {"HTTP", "log-format", "", "FORMAT", "INFERD_LOG_FORMAT", "log lines as text or json", true, false, false,
     config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) { return config_parse_log_format(v, &c.log_format, e); },
     nullptr, [](const server_config & d) { return std::string(config_log_format_name(d.log_format)); }},

    {"HTTP", "strict-model-name", "", nullptr, "INFERD_STRICT_MODEL_NAME",
     "answer 404 to a request whose \"model\" is not the served model's name (default: any name is served "
     "by the loaded model, and the response names it)",
     true, false, false, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) { return config_parse_bool(v, &c.strict_model_name, e); },
     nullptr, [](const server_config & d) { return std::string(d.strict_model_name ? "on" : "off"); }},

    {"Web page", "no-webui", "", nullptr, "INFERD_NO_WEBUI", "do not serve the chat page at /", true, false, false,
     config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) { return apply_switch_off(&c.webui, v, e); },
     nullptr, [](const server_config & d) { return std::string(d.webui ? "off" : "on"); }},
    {"Web page", "webui-path", "", "DIR", "INFERD_WEBUI_PATH",
     "serve this folder (its index.html at /) instead of the page built into inferd", true, false, false,
     config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) { return apply_string_nonempty(&c.webui_path, v, e); },
     nullptr, no_default},

    {"Authentication", "api-key", "", "KEY", "INFERD_API_KEY",
     "accepted Bearer key for /v1/*, /tokenize, /detokenize (repeatable; comma list in the variable)", true,
     true, true, config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         if (!config_check_key(v, e)) return false;
         c.api_keys.emplace_back(v);
         return true;
     },
     [](server_config & c) { c.api_keys.clear(); }, no_default},
    {"Authentication", "api-key-file", "", "FILE", "INFERD_API_KEY_FILE",
     "file of further API keys, one per line ('#' starts a comment)", true, false, false,
     config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) { return apply_string_nonempty(&c.api_key_file, v, e); },
     nullptr, no_default},
    {"Authentication", "metrics-key", "", "KEY", "INFERD_METRICS_KEY",
     "Bearer key that /metrics requires (default: /metrics is public)", true, false, true,
     config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) {
         if (!config_check_key(v, e)) return false;
         c.metrics_key = std::string(v);
         return true;
     },
     nullptr, no_default},

    {"General", "config", "", "FILE", "INFERD_CONFIG",
     "JSON file of settings, keys = long flag names ({\"ctx-size\": 4096})", false, false, false,
     config_flag_action::config_file, nullptr, nullptr, no_default},
    {"General", "list-devices", "", nullptr, nullptr,
     "print every compute device (name, type, description, free/total memory) and exit", false, false, false,
     config_flag_action::set,
     [](server_config & c, std::string_view v, std::string * e) { return config_parse_bool(v, &c.list_devices, e); },
     nullptr, no_default},
    {"General", "help", "-h", nullptr, nullptr, "print this help and exit", false, false, false,
     config_flag_action::help, nullptr, nullptr, no_default},
    {"General", "version", "", nullptr, nullptr, "print the version and exit", false, false, false,
     config_flag_action::version, nullptr, nullptr, no_default},
};

// Levenshtein distance, for "did you mean".
size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

bool short_names_contain(std::string_view list, std::string_view name) {
    while (!list.empty()) {
        size_t sp = list.find(' ');
        if (list.substr(0, sp) == name) return true;
        if (sp == std::string_view::npos) break;
        list.remove_prefix(sp + 1);
    }
    return false;
}

}  // namespace

bool config_check_key(std::string_view v, std::string * err) {
    if (v.empty()) {
        *err = "the key is empty";
        return false;
    }
    for (char c : v) {
        if (c <= 0x20 || c >= 0x7f) {
            *err = "the key contains a space, control or non-ASCII character";
            return false;
        }
    }
    return true;
}

std::span<const config_flag> config_flag_table() { return k_flags; }

const config_flag * config_flag_find_long(std::string_view long_name) {
    for (const config_flag & f : k_flags) {
        if (long_name == f.long_name) return &f;
    }
    return nullptr;
}

const config_flag * config_flag_find_cli(std::string_view name) {
    if (name.size() > 2 && name.substr(0, 2) == "--") return config_flag_find_long(name.substr(2));
    if (name.size() < 2 || name[0] != '-') return nullptr;
    for (const config_flag & f : k_flags) {
        if (short_names_contain(f.short_names, name)) return &f;
    }
    return nullptr;
}

std::string config_flag_suggest(std::string_view misspelt) {
    std::string best;
    size_t best_d = std::max<size_t>(2, misspelt.size() / 3) + 1;
    for (const config_flag & f : k_flags) {
        size_t d = edit_distance(misspelt, f.long_name);
        if (d < best_d) {
            best_d = d;
            best = f.long_name;
        }
    }
    return best;
}
