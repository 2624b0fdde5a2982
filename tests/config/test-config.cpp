// config_parse: defaults, every flag, the environment, the config file and their precedence.
#include "config-test-util.h"

#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <thread>

using namespace std::chrono_literals;

TEST(config, defaults) {
    server_config c = config_ok({});
    EXPECT_EQ(c.model_path, "model.gguf");
    EXPECT_EQ(c.host, "127.0.0.1");
    EXPECT_EQ(c.port, 8080);
    EXPECT_EQ(c.ctx_size, 0);
    EXPECT_EQ(c.parallel, 4);
    unsigned hw = std::thread::hardware_concurrency();
    EXPECT_EQ(c.threads, hw == 0 ? 1 : int(std::min(hw, 1024u)));
    EXPECT_EQ(c.batch_size, 2048);
    EXPECT_EQ(c.ubatch_size, 512);
    EXPECT_EQ(c.n_gpu_layers, 0);
    EXPECT_TRUE(c.flash_attn);
    EXPECT_EQ(c.cache_type_k, config_cache_type::f16);
    EXPECT_EQ(c.cache_type_v, config_cache_type::f16);
    EXPECT_EQ(c.max_queue, 64);
    EXPECT_EQ(c.io_threads, 2);
    EXPECT_EQ(c.compile_threads, 2);
    EXPECT_EQ(c.max_body_size, size_t{16} << 20);
    EXPECT_EQ(c.header_timeout, 10s);
    EXPECT_EQ(c.idle_timeout, 60s);
    EXPECT_EQ(c.shutdown_timeout, 30s);
    EXPECT_TRUE(c.cors_origins.empty());
    EXPECT_EQ(c.log_format, config_log_format::text);
    EXPECT_TRUE(c.api_keys.empty());
    EXPECT_EQ(c.api_key_file, "");
    EXPECT_EQ(c.metrics_key, "");
    EXPECT_FALSE(c.strict_model_name);
    EXPECT_TRUE(c.webui);
    EXPECT_EQ(c.webui_path, "");
    EXPECT_EQ(c.alias, "");
    EXPECT_EQ(c.chat_template, "");
    EXPECT_FALSE(c.list_devices);
    EXPECT_EQ(c.config_file, "");
}

// One case per flag that carries a setting: the arguments and what they must produce.
struct flag_case {
    std::string long_name;
    std::vector<std::string> args;
    std::function<void(const server_config &)> check;
};

static std::vector<flag_case> flag_cases() {
    return {
        {"model", {"--model", "a.gguf"}, [](auto & c) { EXPECT_EQ(c.model_path, "a.gguf"); }},
        {"alias", {"--alias", "tiny"}, [](auto & c) { EXPECT_EQ(c.alias, "tiny"); }},
        {"chat-template", {"--chat-template", "llama3"}, [](auto & c) { EXPECT_EQ(c.chat_template, "llama3"); }},
        {"chat-template-kwargs", {"--chat-template-kwargs", R"({"enable_thinking": false})"},
         [](auto & c) { EXPECT_EQ(c.chat_template_kwargs, R"({"enable_thinking":false})"); }},
        {"reasoning-format", {"--reasoning-format", "none"}, [](auto & c) { EXPECT_FALSE(c.reasoning_split); }},
        {"embeddings", {"--embeddings"}, [](auto & c) { EXPECT_TRUE(c.embeddings); }},
        {"pooling", {"--pooling", "mean"}, [](auto & c) { EXPECT_EQ(c.pooling, "mean"); }},
        {"embd-normalize", {"--embd-normalize", "none"}, [](auto & c) { EXPECT_FALSE(c.embd_normalize); }},
        {"no-repack", {"--no-repack"}, [](auto & c) { EXPECT_FALSE(c.repack); }},
        {"spec-always", {"--spec-always"}, [](auto & c) { EXPECT_FALSE(c.spec_adaptive); }},
        {"no-mmap", {"--no-mmap"}, [](auto & c) { EXPECT_FALSE(c.mmap); }},
        {"mlock", {"--mlock"}, [](auto & c) { EXPECT_TRUE(c.mlock); }},
        {"ctx-size", {"-c", "4096"}, [](auto & c) { EXPECT_EQ(c.ctx_size, 4096); }},
        {"parallel", {"-np", "8"}, [](auto & c) { EXPECT_EQ(c.parallel, 8); }},
        {"threads", {"-t", "3"}, [](auto & c) { EXPECT_EQ(c.threads, 3); }},
        {"batch-size", {"-b", "1024"}, [](auto & c) { EXPECT_EQ(c.batch_size, 1024); }},
        {"ubatch-size", {"-ub", "256"}, [](auto & c) { EXPECT_EQ(c.ubatch_size, 256); }},
        {"n-gpu-layers", {"-ngl", "-1"}, [](auto & c) { EXPECT_EQ(c.n_gpu_layers, -1); }},
        {"flash-attn", {"-fa", "off"}, [](auto & c) { EXPECT_FALSE(c.flash_attn); }},
        {"cache-type-k", {"-ctk", "q8_0"}, [](auto & c) { EXPECT_EQ(c.cache_type_k, config_cache_type::q8_0); }},
        {"cache-type-v", {"--cache-type-v", "f32"}, [](auto & c) { EXPECT_EQ(c.cache_type_v, config_cache_type::f32); }},
        {"max-queue", {"--max-queue", "0"}, [](auto & c) { EXPECT_EQ(c.max_queue, 0); }},
        {"model-draft", {"-md", "draft.gguf"}, [](auto & c) { EXPECT_EQ(c.model_draft, "draft.gguf"); }},
        {"draft-max", {"--draft-max", "8"}, [](auto & c) { EXPECT_EQ(c.draft_max, 8); }},
        {"draft-min", {"--draft-min", "2"}, [](auto & c) { EXPECT_EQ(c.draft_min, 2); }},
        {"draft-p-min", {"--draft-p-min", "0.5"}, [](auto & c) { EXPECT_FLOAT_EQ(c.draft_p_min, 0.5f); }},
        {"spec-ngram", {"--spec-ngram", "3"}, [](auto & c) { EXPECT_EQ(c.spec_ngram, 3); }},
        {"host", {"--host", "0.0.0.0"}, [](auto & c) { EXPECT_EQ(c.host, "0.0.0.0"); }},
        {"port", {"--port", "0"}, [](auto & c) { EXPECT_EQ(c.port, 0); }},
        {"io-threads", {"--io-threads", "4"}, [](auto & c) { EXPECT_EQ(c.io_threads, 4); }},
        {"compile-threads", {"--compile-threads", "3"}, [](auto & c) { EXPECT_EQ(c.compile_threads, 3); }},
        {"max-connections", {"--max-connections", "100"}, [](auto & c) { EXPECT_EQ(c.max_connections, 100); }},
        {"ssl-cert-file", {"--ssl-cert-file", "c.pem", "--ssl-key-file", "k.pem"},
         [](auto & c) { EXPECT_EQ(c.ssl_cert_file, "c.pem"); }},
        {"ssl-key-file", {"--ssl-key-file", "k.pem", "--ssl-cert-file", "c.pem"},
         [](auto & c) { EXPECT_EQ(c.ssl_key_file, "k.pem"); }},
        {"max-body-size", {"--max-body-size", "1MiB"}, [](auto & c) { EXPECT_EQ(c.max_body_size, size_t{1} << 20); }},
        {"header-timeout", {"--header-timeout", "2.5"}, [](auto & c) { EXPECT_EQ(c.header_timeout, 2500ms); }},
        {"idle-timeout", {"--idle-timeout", "5"}, [](auto & c) { EXPECT_EQ(c.idle_timeout, 5s); }},
        {"body-timeout", {"--body-timeout", "3"}, [](auto & c) { EXPECT_EQ(c.body_timeout, 3s); }},
        {"write-timeout", {"--write-timeout", "4"}, [](auto & c) { EXPECT_EQ(c.write_timeout, 4s); }},
        {"shutdown-timeout", {"--shutdown-timeout", "0"}, [](auto & c) { EXPECT_EQ(c.shutdown_timeout, 0ms); }},
        {"cors-origin",
         {"--cors-origin", "https://a.example", "--cors-origin", "http://b.example:8000, *"},
         [](auto & c) {
             EXPECT_EQ(c.cors_origins, (std::vector<std::string>{"https://a.example", "http://b.example:8000", "*"}));
         }},
        {"log-format", {"--log-format", "json"}, [](auto & c) { EXPECT_EQ(c.log_format, config_log_format::json); }},
        {"api-key", {"--api-key", "k1", "--api-key", "k,2"},
         [](auto & c) { EXPECT_EQ(c.api_keys, (std::vector<std::string>{"k1", "k,2"})); }},
        {"metrics-key", {"--metrics-key", "mk"}, [](auto & c) { EXPECT_EQ(c.metrics_key, "mk"); }},
        {"strict-model-name", {"--strict-model-name"}, [](auto & c) { EXPECT_TRUE(c.strict_model_name); }},
        {"no-webui", {"--no-webui"}, [](auto & c) { EXPECT_FALSE(c.webui); }},
        {"webui-path", {"--webui-path", "/srv/page"}, [](auto & c) { EXPECT_EQ(c.webui_path, "/srv/page"); }},
        {"list-devices", {"--list-devices"}, [](auto & c) { EXPECT_TRUE(c.list_devices); }},
    };
}

TEST(config, every_flag) {
    // Flags without a case here are tested elsewhere in this file or in test-config-errors.
    std::set<std::string> covered = {"api-key-file", "config", "help", "version"};
    for (const flag_case & fc : flag_cases()) {
        SCOPED_TRACE(fc.long_name);
        fc.check(config_ok(fc.args));
        covered.insert(fc.long_name);
    }
    for (const config_flag_doc & d : config_flags()) {
        EXPECT_TRUE(covered.count(d.long_name)) << "no test for --" << d.long_name;
    }
}

TEST(config, equals_syntax_and_switch_values) {
    server_config c = config_ok({"--port=9000", "--flash-attn=false", "--alias=a=b", "--log-format=JSON"});
    EXPECT_EQ(c.port, 9000);
    EXPECT_FALSE(c.flash_attn);
    EXPECT_EQ(c.alias, "a=b");
    EXPECT_EQ(c.log_format, config_log_format::json);
    EXPECT_TRUE(config_ok({"-fa", "--flash-attn=on"}).flash_attn);
    EXPECT_FALSE(config_ok({"-fa", "off"}).flash_attn);
    EXPECT_TRUE(config_ok({"--flash-attn", "on", "--port", "1"}).flash_attn);
    EXPECT_TRUE(config_ok({"--list-devices", "1"}).list_devices);
    EXPECT_EQ(config_ok({"--max-body-size", "512K"}).max_body_size, size_t{512} << 10);
    EXPECT_EQ(config_ok({"--max-body-size", "2g"}).max_body_size, size_t{2} << 30);
    EXPECT_EQ(config_ok({"--max-body-size", "4096"}).max_body_size, size_t{4096});
    EXPECT_EQ(config_ok({"--port", "+80"}).port, 80);
    // The last occurrence of a single-valued flag wins.
    EXPECT_EQ(config_ok({"--port", "1", "--port", "2"}).port, 2);
    // A value after a flag may start with one dash: "-1" is a value, not a flag.
    EXPECT_EQ(config_ok({"-ngl", "-1"}).n_gpu_layers, -1);
}

TEST(config, list_devices_needs_no_model) {
    config_parsed p = config_run({"--list-devices"});
    ASSERT_EQ(p.status, config_status::ok) << p.text;
    EXPECT_TRUE(p.cfg.list_devices);
}

TEST(config, environment) {
    config_env env = {
        {"INFERD_MODEL", "env.gguf"},        {"INFERD_PORT", "9001"},
        {"INFERD_CTX_SIZE", "2048"},         {"INFERD_PARALLEL", "2"},
        {"INFERD_THREADS", "5"},             {"INFERD_FLASH_ATTN", "no"},
        {"INFERD_API_KEY", "a, b,,c"},       {"INFERD_CORS_ORIGIN", "https://x.example,*"},
        {"INFERD_CACHE_TYPE_K", "q8_0"},     {"INFERD_LOG_FORMAT", "json"},
        {"INFERD_MAX_BODY_SIZE", "1M"},      {"INFERD_IDLE_TIMEOUT", "0.5"},
        {"INFERD_HOST", "::1"},              {"INFERD_ALIAS", ""},  // empty = unset
        {"INFERD_UNRELATED_THING", "whatever"},                     // not a setting: ignored
        {"PORT", "1"},                                              // not ours
    };
    config_parsed p = config_run({}, env);
    ASSERT_EQ(p.status, config_status::ok) << p.text;
    const server_config & c = p.cfg;
    EXPECT_EQ(c.model_path, "env.gguf");
    EXPECT_EQ(c.port, 9001);
    EXPECT_EQ(c.ctx_size, 2048);
    EXPECT_EQ(c.parallel, 2);
    EXPECT_EQ(c.threads, 5);
    EXPECT_FALSE(c.flash_attn);
    EXPECT_EQ(c.api_keys, (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_EQ(c.cors_origins, (std::vector<std::string>{"https://x.example", "*"}));
    EXPECT_EQ(c.cache_type_k, config_cache_type::q8_0);
    EXPECT_EQ(c.log_format, config_log_format::json);
    EXPECT_EQ(c.max_body_size, size_t{1} << 20);
    EXPECT_EQ(c.idle_timeout, 500ms);
    EXPECT_EQ(c.host, "::1");
    EXPECT_EQ(c.alias, "");
}

TEST(config, every_variable_is_read) {
    // Each documented variable, given a valid value, changes the configuration.
    std::map<std::string, std::string> value = {
        {"INFERD_MODEL", "x.gguf"},         {"INFERD_ALIAS", "al"},           {"INFERD_CHAT_TEMPLATE", "zephyr"},
        {"INFERD_CHAT_TEMPLATE_KWARGS", R"({"a":1})"}, {"INFERD_REASONING_FORMAT", "none"},
        {"INFERD_EMBEDDINGS", "1"},         {"INFERD_POOLING", "cls"},        {"INFERD_EMBD_NORMALIZE", "-1"},
        {"INFERD_NO_REPACK", "1"},          {"INFERD_NO_MMAP", "1"},          {"INFERD_MLOCK", "1"},
        {"INFERD_CTX_SIZE", "7"},           {"INFERD_PARALLEL", "7"},         {"INFERD_THREADS", "7"},
        {"INFERD_BATCH_SIZE", "700"},       {"INFERD_UBATCH_SIZE", "7"},      {"INFERD_N_GPU_LAYERS", "7"},
        {"INFERD_FLASH_ATTN", "0"},         {"INFERD_CACHE_TYPE_K", "f32"},   {"INFERD_CACHE_TYPE_V", "q8_0"},
        {"INFERD_MAX_QUEUE", "7"},          {"INFERD_COMPILE_THREADS", "7"}, {"INFERD_HOST", "10.0.0.7"},      {"INFERD_PORT", "7"},
        {"INFERD_IO_THREADS", "7"},         {"INFERD_MAX_CONNECTIONS", "7"},
        {"INFERD_SSL_CERT_FILE", "c.pem"},  {"INFERD_SSL_KEY_FILE", "k.pem"},         {"INFERD_MAX_BODY_SIZE", "7K"},   {"INFERD_HEADER_TIMEOUT", "7"},
        {"INFERD_IDLE_TIMEOUT", "7"},       {"INFERD_BODY_TIMEOUT", "7"},     {"INFERD_WRITE_TIMEOUT", "7"},       {"INFERD_SHUTDOWN_TIMEOUT", "7"}, {"INFERD_CORS_ORIGIN", "*"},
        {"INFERD_LOG_FORMAT", "json"},      {"INFERD_API_KEY", "k"},          {"INFERD_METRICS_KEY", "m"},
        {"INFERD_MODEL_DRAFT", "d.gguf"},   {"INFERD_DRAFT_MAX", "7"},        {"INFERD_DRAFT_MIN", "7"},
        {"INFERD_DRAFT_P_MIN", "0.25"},     {"INFERD_SPEC_NGRAM", "7"},
        {"INFERD_SPEC_ALWAYS", "1"},
        {"INFERD_STRICT_MODEL_NAME", "1"},  {"INFERD_NO_WEBUI", "1"},         {"INFERD_WEBUI_PATH", "/srv/page"},
    };
    config_temp_file keys("keys-env.txt", "kf\n");
    config_temp_file file("cfg-env.json", "{}");
    value["INFERD_API_KEY_FILE"] = keys.path();
    value["INFERD_CONFIG"] = file.path();
    server_config base = config_ok({});
    value["INFERD_THREADS"] = base.threads == 7 ? "6" : "7";  // differs from this machine's default
    for (const config_flag_doc & d : config_flags()) {
        if (d.env_name.empty()) continue;
        SCOPED_TRACE(d.env_name);
        ASSERT_TRUE(value.count(d.env_name)) << "no test value for " << d.env_name;
        config_env env = {{d.env_name, value[d.env_name]}};
        if (d.env_name != "INFERD_MODEL") env["INFERD_MODEL"] = "model.gguf";
        if (d.env_name == "INFERD_SSL_CERT_FILE") env["INFERD_SSL_KEY_FILE"] = "k.pem";  // needed together
        if (d.env_name == "INFERD_SSL_KEY_FILE") env["INFERD_SSL_CERT_FILE"] = "c.pem";
        config_parsed p = config_run({}, env);
        ASSERT_EQ(p.status, config_status::ok) << p.text;
        bool changed = p.cfg.model_path != base.model_path || p.cfg.alias != base.alias ||
                       p.cfg.chat_template != base.chat_template ||
                       p.cfg.chat_template_kwargs != base.chat_template_kwargs ||
                       p.cfg.reasoning_split != base.reasoning_split || p.cfg.embeddings != base.embeddings ||
                       p.cfg.pooling != base.pooling || p.cfg.embd_normalize != base.embd_normalize ||
                       p.cfg.repack != base.repack || p.cfg.mmap != base.mmap || p.cfg.mlock != base.mlock ||
                       p.cfg.ctx_size != base.ctx_size ||
                       p.cfg.parallel != base.parallel || p.cfg.threads != base.threads ||
                       p.cfg.batch_size != base.batch_size || p.cfg.ubatch_size != base.ubatch_size ||
                       p.cfg.n_gpu_layers != base.n_gpu_layers || p.cfg.flash_attn != base.flash_attn ||
                       p.cfg.cache_type_k != base.cache_type_k || p.cfg.cache_type_v != base.cache_type_v ||
                       p.cfg.max_queue != base.max_queue || p.cfg.compile_threads != base.compile_threads || p.cfg.host != base.host || p.cfg.port != base.port ||
                       p.cfg.model_draft != base.model_draft || p.cfg.draft_max != base.draft_max ||
                       p.cfg.draft_min != base.draft_min || p.cfg.draft_p_min != base.draft_p_min ||
                       p.cfg.spec_ngram != base.spec_ngram || p.cfg.spec_adaptive != base.spec_adaptive ||
                       p.cfg.io_threads != base.io_threads || p.cfg.max_connections != base.max_connections ||
                       p.cfg.ssl_cert_file != base.ssl_cert_file || p.cfg.ssl_key_file != base.ssl_key_file || p.cfg.max_body_size != base.max_body_size ||
                       p.cfg.header_timeout != base.header_timeout || p.cfg.idle_timeout != base.idle_timeout ||
                       p.cfg.body_timeout != base.body_timeout || p.cfg.write_timeout != base.write_timeout ||
                       p.cfg.shutdown_timeout != base.shutdown_timeout || p.cfg.cors_origins != base.cors_origins ||
                       p.cfg.log_format != base.log_format || p.cfg.api_keys != base.api_keys ||
                       p.cfg.api_key_file != base.api_key_file || p.cfg.metrics_key != base.metrics_key ||
                       p.cfg.strict_model_name != base.strict_model_name || p.cfg.webui != base.webui ||
                       p.cfg.webui_path != base.webui_path || p.cfg.config_file != base.config_file;
        EXPECT_TRUE(changed);
    }
}

TEST(config, config_file) {
    config_temp_file f("settings.json", R"({
        // comments are allowed
        "model": "file.gguf",
        "ctx-size": 4096,
        "parallel": "6",
        "flash-attn": false,
        "header-timeout": 1.5,
        "api-key": ["k1", "k2"],
        "cors-origin": "https://a.example, https://b.example",
        "max-body-size": "32M", /* a size with a suffix */
        "chat-template-kwargs": {"enable_thinking": false}
    })");
    config_parsed p = config_run({"--config", f.path()});
    ASSERT_EQ(p.status, config_status::ok) << p.text;
    const server_config & c = p.cfg;
    EXPECT_EQ(c.model_path, "file.gguf");
    EXPECT_EQ(c.ctx_size, 4096);
    EXPECT_EQ(c.parallel, 6);
    EXPECT_FALSE(c.flash_attn);
    EXPECT_EQ(c.header_timeout, 1500ms);
    EXPECT_EQ(c.api_keys, (std::vector<std::string>{"k1", "k2"}));
    EXPECT_EQ(c.cors_origins, (std::vector<std::string>{"https://a.example", "https://b.example"}));
    EXPECT_EQ(c.max_body_size, size_t{32} << 20);
    EXPECT_EQ(c.chat_template_kwargs, R"({"enable_thinking":false})");  // an object, as JSON
    EXPECT_EQ(c.config_file, f.path());
}

TEST(config, config_file_from_environment_and_flag_override) {
    config_temp_file a("a.json", R"({"model": "a.gguf"})");
    config_temp_file b("b.json", R"({"model": "b.gguf"})");
    config_parsed p = config_run({}, {{"INFERD_CONFIG", a.path()}});
    ASSERT_EQ(p.status, config_status::ok) << p.text;
    EXPECT_EQ(p.cfg.model_path, "a.gguf");
    p = config_run({"--config=" + b.path()}, {{"INFERD_CONFIG", a.path()}});
    ASSERT_EQ(p.status, config_status::ok) << p.text;
    EXPECT_EQ(p.cfg.model_path, "b.gguf");
    EXPECT_EQ(p.cfg.config_file, b.path());
}

TEST(config, precedence_flag_over_env_over_file_over_default) {
    config_temp_file f("prec.json", R"({"model": "m.gguf", "port": 1000, "ctx-size": 100, "threads": 3,
                                        "api-key": ["fa", "fb"], "cors-origin": ["https://f.example"]})");
    config_env env = {{"INFERD_CONFIG", f.path()}, {"INFERD_PORT", "2000"}, {"INFERD_CTX_SIZE", "200"},
                      {"INFERD_API_KEY", "ea"}};
    config_parsed p = config_run({"--port", "3000", "--cors-origin", "https://c.example"}, env);
    ASSERT_EQ(p.status, config_status::ok) << p.text;
    EXPECT_EQ(p.cfg.port, 3000);     // flag
    EXPECT_EQ(p.cfg.ctx_size, 200);  // environment
    EXPECT_EQ(p.cfg.threads, 3);     // file
    EXPECT_EQ(p.cfg.batch_size, 2048);  // default
    // A list from a higher source replaces the lower one.
    EXPECT_EQ(p.cfg.api_keys, (std::vector<std::string>{"ea"}));
    EXPECT_EQ(p.cfg.cors_origins, (std::vector<std::string>{"https://c.example"}));
}

TEST(config, api_key_file) {
    config_temp_file keys("keys.txt", "# production keys\n  key-one  \n\nkey-two\r\n# key-three\n");
    server_config c = config_ok({"--api-key", "flag-key", "--api-key-file", keys.path()});
    EXPECT_EQ(c.api_keys, (std::vector<std::string>{"flag-key", "key-one", "key-two"}));
    EXPECT_EQ(c.api_key_file, keys.path());
}

TEST(config, args_and_environment_helpers) {
    const char * argv[] = {"inferd", "-m", "x.gguf", "--port", "1"};
    EXPECT_EQ(config_args_from_argv(5, argv), (std::vector<std::string>{"-m", "x.gguf", "--port", "1"}));
    ASSERT_EQ(::setenv("INFERD_CONFIG_TEST_VARIABLE", "v=1", 1), 0);
    ASSERT_EQ(::setenv("NOT_INFERD_CONFIG_TEST", "x", 1), 0);
    config_env env = config_env_from_process();
    EXPECT_EQ(env["INFERD_CONFIG_TEST_VARIABLE"], "v=1");
    EXPECT_EQ(env.count("NOT_INFERD_CONFIG_TEST"), 0u);
    for (const auto & [name, value] : env) EXPECT_EQ(name.rfind("INFERD_", 0), 0u) << name;
    ::unsetenv("INFERD_CONFIG_TEST_VARIABLE");
    ::unsetenv("NOT_INFERD_CONFIG_TEST");
}

TEST(config, names_of_enums) {
    EXPECT_STREQ(config_cache_type_name(config_cache_type::q8_0), "q8_0");
    EXPECT_STREQ(config_cache_type_name(config_cache_type::f32), "f32");
    EXPECT_STREQ(config_log_format_name(config_log_format::json), "json");
}
