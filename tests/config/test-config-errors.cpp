// config_parse: every class of bad input gives usage_error with a message naming the source.
#include "config-test-util.h"

// Expects a usage error whose message contains every one of `parts`.
static void expect_error(const std::vector<std::string> & args, const std::vector<std::string> & parts,
                         const config_env & env = {}) {
    std::string msg = config_error(args, env);
    for (const std::string & part : parts) EXPECT_TRUE(config_contains(msg, part)) << "'" << msg << "' lacks '" << part << "'";
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;  // one line
}

TEST(config_errors, unknown_flags_and_arguments) {
    expect_error({"--prot", "80"}, {"unknown flag '--prot'", "did you mean --port?"});
    expect_error({"--ctx-sise=5"}, {"unknown flag '--ctx-sise'", "--ctx-size"});
    expect_error({"--zzzzzzzzzzzz"}, {"unknown flag '--zzzzzzzzzzzz'", "see --help"});
    expect_error({"-x"}, {"unknown flag '-x'"});
    expect_error({"serve"}, {"unexpected argument 'serve'"});
    expect_error({"--"}, {"unknown flag '--'"});
}

TEST(config_errors, missing_values) {
    expect_error({"--port"}, {"--port: missing value (expects N)"});
    expect_error({"--alias", "--port", "1"}, {"--alias: missing value (expects NAME)"});
    config_parsed p = config_run({"-m"});
    EXPECT_EQ(p.status, config_status::usage_error);
    EXPECT_EQ(p.text, "-m: missing value (expects FILE)");
    expect_error({"--alias="}, {"--alias: the value is empty"});
}

TEST(config_errors, bad_numbers) {
    expect_error({"--port", "http"}, {"--port: 'http' is not an integer"});
    expect_error({"-c", "12abc"}, {"-c: '12abc' is not an integer"});
    expect_error({"--parallel", "1.5"}, {"--parallel: '1.5' is not a whole number"});
    expect_error({"--threads", ""}, {"--threads: the value is empty"});
    expect_error({"--ctx-size", "99999999999999999999"}, {"--ctx-size: '99999999999999999999' is out of range"});
    expect_error({"--ctx-size", "3000000000"}, {"--ctx-size: '3000000000' is out of range (0..2147483647)"});
    expect_error({"--header-timeout", "soon"}, {"--header-timeout: 'soon' is not a number of seconds"});
    expect_error({"--max-body-size", "12Q"}, {"--max-body-size: '12Q' is not a size"});
    expect_error({"--max-body-size", "M"}, {"--max-body-size: 'M' is not a size"});
    expect_error({"--draft-p-min", "high"}, {"--draft-p-min: 'high' is not a number"});
    expect_error({"--draft-max", "1.5"}, {"--draft-max: '1.5' is not a whole number"});
}

TEST(config_errors, ranges) {
    expect_error({"--port", "70000"}, {"--port: '70000' is out of range (1..65535, or 0 for any free port)"});
    expect_error({"--port", "-1"}, {"--port: '-1' is out of range"});
    expect_error({"-t", "0"}, {"-t: '0' is out of range (1..1024)"});
    expect_error({"-np", "0"}, {"-np: '0' is out of range (1..256)"});
    expect_error({"-np", "257"}, {"-np: '257' is out of range (1..256)"});
    expect_error({"-c", "-1"}, {"-c: '-1' is out of range (0..2147483647)"});
    expect_error({"-b", "0"}, {"-b: '0' is out of range"});
    expect_error({"-ngl", "-2"}, {"-ngl: '-2' is out of range"});
    expect_error({"--max-queue", "-1"}, {"--max-queue: '-1' is out of range"});
    expect_error({"--io-threads", "0"}, {"--io-threads: '0' is out of range"});
    expect_error({"--max-body-size", "100"}, {"--max-body-size: '100' is out of range (1KiB..4GiB)"});
    expect_error({"--max-body-size", "99999999999999999G"}, {"--max-body-size", "out of range"});
    expect_error({"--idle-timeout", "0"}, {"--idle-timeout: '0' is out of range (0.001..86400 seconds)"});
    expect_error({"--shutdown-timeout", "-3"}, {"--shutdown-timeout: '-3' is out of range"});
    expect_error({"--draft-max", "0"}, {"--draft-max: '0' is out of range (1..256)"});
    expect_error({"--draft-min", "-1"}, {"--draft-min: '-1' is out of range (0..256)"});
    expect_error({"--draft-p-min", "1.5"}, {"--draft-p-min: '1.5' is out of range (0..1)"});
    expect_error({"--spec-ngram", "65"}, {"--spec-ngram: '65' is out of range (0..64)"});
}

TEST(config_errors, between_settings) {
    expect_error({"--ssl-cert-file", "c.pem"}, {"--ssl-cert-file: HTTPS needs --ssl-key-file as well"});
    expect_error({"--ssl-key-file", "k.pem"}, {"HTTPS needs --ssl-cert-file as well"});
    expect_error({"-ub", "4096"}, {"-ub: the ubatch size 4096 is larger than the batch size 2048",
                                   "--batch-size (default)"});
    expect_error({"-b", "64"}, {"--ubatch-size (default)", "larger than the batch size 64 (-b)"});
    expect_error({"--draft-min", "20"}, {"--draft-min: the minimum draft 20 is larger than the maximum draft 16",
                                         "--draft-max (default)"});
    expect_error({"--draft-max", "4"}, {"INFERD_DRAFT_MIN: the minimum draft 5"}, {{"INFERD_DRAFT_MIN", "5"}});
    config_parsed p = config_run({"--port", "1"});
    EXPECT_EQ(p.status, config_status::usage_error);
    EXPECT_TRUE(config_contains(p.text, "no model given")) << p.text;
}

TEST(config_errors, bad_words) {
    expect_error({"--cache-type-k", "q4_0"}, {"--cache-type-k: 'q4_0' is not a cache type (f16, f32 or q8_0)"});
    expect_error({"-ctv", "f64"}, {"-ctv: 'f64' is not a cache type"});
    expect_error({"--log-format", "xml"}, {"--log-format: 'xml' is not a log format (text or json)"});
    expect_error({"--flash-attn=maybe"}, {"--flash-attn: 'maybe' is not a boolean"});
    expect_error({"--cors-origin", "example.com"}, {"--cors-origin: 'example.com' is not an origin"});
    expect_error({"--cors-origin", "https://a.example/path"}, {"'https://a.example/path' is not an origin"});
    expect_error({"--cors-origin", ","}, {"--cors-origin: the value is empty"});
    expect_error({"--host", "a b"}, {"--host: 'a b' is not a host name or address"});
    // Control characters in a value are shown escaped, long values shortened.
    std::string msg = config_error({"--port", std::string("1\x01") + std::string(100, '9')});
    EXPECT_TRUE(config_contains(msg, "'1\\x01999")) << msg;
    EXPECT_TRUE(config_contains(msg, "...'")) << msg;
}

TEST(config_errors, secrets_are_not_echoed) {
    std::string msg = config_error({"--api-key", "sekrit value"});
    EXPECT_TRUE(config_contains(msg, "--api-key: the key contains a space")) << msg;
    EXPECT_FALSE(config_contains(msg, "sekrit")) << msg;
    msg = config_error({"--metrics-key", "bad\tkey"});
    EXPECT_TRUE(config_contains(msg, "--metrics-key:")) << msg;
    EXPECT_FALSE(config_contains(msg, "bad")) << msg;
    expect_error({"--api-key="}, {"--api-key: the key is empty"});
    expect_error({"--chat-template-kwargs", "[1]"}, {"--chat-template-kwargs: '[1]' is not a JSON object"});
    expect_error({"--chat-template-kwargs", "{"}, {"--chat-template-kwargs: '{' is not a JSON object"});
    expect_error({"--reasoning-format", "raw"}, {"--reasoning-format: 'raw' is not a reasoning format (auto or none)"});
    expect_error({"--pooling", "max"}, {"--pooling: 'max' is not a pooling type (none, mean, cls, last or rank)"});
    expect_error({"--embd-normalize", "1"}, {"--embd-normalize: '1' is not a normalization (l2 or none)"});
}

TEST(config_errors, environment_names_the_variable) {
    expect_error({}, {"INFERD_PORT: 'abc' is not an integer"}, {{"INFERD_PORT", "abc"}});
    expect_error({}, {"INFERD_PARALLEL: '0' is out of range"}, {{"INFERD_PARALLEL", "0"}});
    expect_error({}, {"INFERD_FLASH_ATTN: 'maybe' is not a boolean"}, {{"INFERD_FLASH_ATTN", "maybe"}});
    expect_error({}, {"INFERD_API_KEY: the key contains"}, {{"INFERD_API_KEY", "ok,not ok"}});
    expect_error({}, {"INFERD_UBATCH_SIZE: the ubatch size 4096"}, {{"INFERD_UBATCH_SIZE", "4096"}});
    // A valid flag does not hide a bad variable of another setting.
    expect_error({"--port", "1"}, {"INFERD_THREADS"}, {{"INFERD_THREADS", "-4"}});
}

TEST(config_errors, config_file_problems) {
    expect_error({"--config", "/no/such/inferd.json"}, {"--config: cannot read '/no/such/inferd.json'"});
    expect_error({}, {"INFERD_CONFIG: cannot read '/no/such/x.json'"}, {{"INFERD_CONFIG", "/no/such/x.json"}});
    expect_error({"--config", "/tmp"}, {"--config: cannot read '/tmp': it is a directory"});
    expect_error({"--config="}, {"--config: the value is empty"});

    config_temp_file broken("broken.json", "{\"port\": 80,,}");
    expect_error({"--config", broken.path()}, {"config file '" + broken.path() + "': invalid JSON:", "line 1"});
    config_temp_file array("array.json", "[1, 2]");
    expect_error({"--config", array.path()}, {"expected a JSON object of settings, got an array"});
    config_temp_file unknown("unknown.json", R"({"prot": 80})");
    expect_error({"--config", unknown.path()}, {"unknown key 'prot'", "did you mean 'port'?"});
    config_temp_file cli_only("cli-only.json", R"({"help": true})");
    expect_error({"--config", cli_only.path()}, {"unknown key 'help'", "use it on the command line"});
    config_temp_file nested("nested.json", R"({"config": "other.json"})");
    expect_error({"--config", nested.path()}, {"unknown key 'config'"});
    config_temp_file bad_value("bad-value.json", R"({"threads": 0})");
    expect_error({"--config", bad_value.path()}, {"config file '" + bad_value.path() + "': key 'threads': '0' is out of range"});
    config_temp_file object("object.json", R"({"port": {"value": 80}})");
    expect_error({"--config", object.path()}, {"key 'port': expected a string, number or boolean, got object"});
    config_temp_file null_value("null.json", R"({"alias": null})");
    expect_error({"--config", null_value.path()}, {"key 'alias': expected a string, number or boolean, got null"});
    config_temp_file array_single("array-single.json", R"({"port": [80]})");
    expect_error({"--config", array_single.path()}, {"key 'port': expected a string, number or boolean, got an array"});
    config_temp_file nested_array("nested-array.json", R"({"api-key": [["k"]]})");
    expect_error({"--config", nested_array.path()}, {"key 'api-key': expected strings in the array"});
    config_temp_file fractional("fractional.json", R"({"ctx-size": 1.5})");
    expect_error({"--config", fractional.path()}, {"key 'ctx-size': '1.5' is not a whole number"});
}

TEST(config_errors, api_key_file_problems) {
    expect_error({"--api-key-file", "/no/such/keys"}, {"--api-key-file: cannot read '/no/such/keys'"});
    config_temp_file empty("empty-keys.txt", "# nothing\n\n");
    expect_error({"--api-key-file", empty.path()}, {"--api-key-file: '" + empty.path() + "' holds no key"});
    config_temp_file bad("bad-keys.txt", "good\nnot good\n");
    std::string msg = config_error({"--api-key-file", bad.path()});
    EXPECT_TRUE(config_contains(msg, "--api-key-file: line 2 of '" + bad.path() + "': the key contains")) << msg;
    EXPECT_FALSE(config_contains(msg, "not good")) << msg;
    expect_error({}, {"INFERD_API_KEY_FILE: cannot read"}, {{"INFERD_API_KEY_FILE", "/no/such/keys"}});
}

TEST(config_errors, exit_codes) {
    EXPECT_EQ(config_exit_code(config_status::ok), 0);
    EXPECT_EQ(config_exit_code(config_status::help), 0);
    EXPECT_EQ(config_exit_code(config_status::version), 0);
    EXPECT_EQ(config_exit_code(config_status::usage_error), 2);
}

TEST(config_errors, failed_parse_leaves_defaults) {
    server_config cfg;
    cfg.port = 1234;
    std::string text;
    EXPECT_EQ(config_parse({"-m", "x", "--port", "99999"}, {}, &cfg, &text), config_status::usage_error);
    EXPECT_EQ(cfg.port, 8080);
    EXPECT_EQ(cfg.model_path, "");
}
