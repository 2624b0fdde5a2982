// config/config.h — the daemon's typed configuration and how it is read.
//
// Usage (in main):
//   server_config cfg;
//   std::string text;
//   config_status st = config_parse(config_args_from_argv(argc, argv), config_env_from_process(), &cfg, &text);
//   if (st != config_status::ok) {
//       (st == config_status::usage_error ? std::cerr : std::cout) << text << "\n";
//       return config_exit_code(st);          // 0 for --help / --version, 2 for a usage error
//   }
//   ... cfg.port, cfg.model_path, cfg.api_keys ...
//
// Sources, highest precedence first:
//   1. command-line flags: `--port 9000`, `--port=9000`, short forms such as `-c 4096`;
//      repeatable flags (--api-key, --cors-origin) add one value per occurrence; a switch
//      (-fa, --list-devices) may be followed by a boolean word (-fa off) or use --flash-attn=0;
//   2. INFERD_* environment variables: the long flag name upper-cased with '-' -> '_'
//      (--ctx-size -> INFERD_CTX_SIZE); list flags take a comma-separated list there
//      (INFERD_API_KEY=k1,k2); boolean flags take 1/0, true/false, yes/no, on/off;
//   3. the config file (--config FILE or INFERD_CONFIG): one JSON object whose keys are the long
//      flag names without dashes in front ({"ctx-size": 4096, "api-key": ["k1", "k2"]});
//      // and /* */ comments are allowed;
//   4. the defaults of server_config below.
// A list flag given in a higher source replaces the list of the lower ones (it does not add).
// config_flags() describes every flag; config_help_text() is what `inferd --help` prints.
//
// Errors: config_parse returns usage_error with a one-line message that names the flag,
// environment variable or config-file key and the offending value, e.g.
//   "--port: '70000' is out of range (1..65535, or 0 for any free port)"
//   "INFERD_CTX_SIZE: 'big' is not an integer"
//   "config file 'x.json': key 'threads': '0' is out of range (1..1024)"
//   "--api-key-file: cannot read '/no/such': No such file or directory"
// Nothing here throws to the caller or terminates the process.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

// Element type of the KV cache (--cache-type-k / --cache-type-v).
enum class config_cache_type { f16, f32, q8_0 };

// Access-log / log line format (--log-format).
enum class config_log_format { text, json };

struct server_config {
    // Model and engine.
    std::string model_path;          // -m/--model; required unless list_devices
    std::string alias;               // --alias: the model id the API shows; "" = file name
    std::string chat_template;       // --chat-template: "" = the model's own template
    std::string chat_template_kwargs = "{}";  // --chat-template-kwargs: a JSON object's text
    bool reasoning_split = true;     // --reasoning-format: auto (true) splits thinking into
                                     // reasoning_content; none (false) leaves it in content
    bool embeddings = false;         // --embeddings: serve /v1/embeddings (and /v1/rerank) beside
                                     // generation; automatic for encoder-only models
    std::string pooling;             // --pooling: none, mean, cls, last or rank; "" = the model's
    bool embd_normalize = true;      // --embd-normalize: l2 (true) or none
    bool repack = true;              // --no-repack (false): CPU weights stay in the file's layout
    bool mmap = true;                // --no-mmap (false): the model file is read, not mapped
    bool mlock = false;              // --mlock: the weights are locked in RAM
    int ctx_size = 0;                // -c/--ctx-size: KV cache cells; 0 = the model's trained length
    int parallel = 4;                // -np/--parallel: slots decoded together (1..256)
    int threads = 0;                 // -t/--threads: compute threads; config_parse sets the
                                     // number of CPU cores when nothing else is given
    int batch_size = 2048;           // -b/--batch-size: tokens per engine batch (logical)
    int ubatch_size = 512;           // -ub/--ubatch-size: tokens per compute step; <= batch_size
    int n_gpu_layers = 0;            // -ngl/--n-gpu-layers: -1 = all
    bool flash_attn = true;          // -fa/--flash-attn (off: plain attention arithmetic)
    config_cache_type cache_type_k = config_cache_type::f16;
    config_cache_type cache_type_v = config_cache_type::f16;
    int max_queue = 64;              // --max-queue: waiting requests before 503; 0 = none wait
    int compile_threads = 2;         // --compile-threads: threads compiling constraints (1..64)

    // Speculative decoding.
    std::string model_draft;         // -md/--model-draft: a draft model (same vocabulary); "" = none
    int draft_max = 16;              // --draft-max: most draft tokens per slot and step (1..256)
    int draft_min = 0;               // --draft-min: shorter drafts are not verified (<= draft_max)
    float draft_p_min = 0.75f;       // --draft-p-min: the draft model stops below this probability
    int spec_ngram = 0;              // --spec-ngram: n-gram lookup drafting, the longest suffix
                                     // matched; 0 = off
    bool spec_adaptive = true;       // --spec-always (false): drafting never turns itself off

    // HTTP.
    std::string host = "127.0.0.1";  // --host
    int port = 8080;                 // --port: 1..65535, 0 = any free port
    std::string ssl_cert_file;       // --ssl-cert-file: PEM certificate chain; with the key: HTTPS
    std::string ssl_key_file;        // --ssl-key-file: PEM private key
    int max_connections = 0;         // --max-connections: open connections at most; 0 = automatic
    int io_threads = 2;              // --io-threads
    size_t max_body_size = size_t{16} << 20;          // --max-body-size (accepts K/M/G suffixes)
    std::chrono::milliseconds header_timeout{10'000};  // --header-timeout SECONDS
    std::chrono::milliseconds idle_timeout{60'000};    // --idle-timeout SECONDS
    std::chrono::milliseconds body_timeout{60'000};    // --body-timeout SECONDS
    std::chrono::milliseconds write_timeout{60'000};   // --write-timeout SECONDS
    std::chrono::milliseconds shutdown_timeout{30'000};  // --shutdown-timeout SECONDS (drain)
    std::vector<std::string> cors_origins;  // --cors-origin (repeatable or comma list); "*" = any
    config_log_format log_format = config_log_format::text;  // --log-format text|json
    bool strict_model_name = false;  // --strict-model-name: a request naming another model gets 404

    // The web chat page at /.
    bool webui = true;        // --no-webui turns it off
    std::string webui_path;   // --webui-path DIR: that folder's files instead of the built-in page

    // Authentication.
    std::vector<std::string> api_keys;  // --api-key (repeatable) plus every key of api_key_file
    std::string api_key_file;           // --api-key-file: one key per line, '#' comments
    std::string metrics_key;            // --metrics-key: /metrics needs it when set

    // Actions and provenance.
    bool list_devices = false;  // --list-devices: print the compute devices and exit
    std::string config_file;    // --config / INFERD_CONFIG: the file that was read, "" if none
};

enum class config_status {
    ok,           // *cfg is complete and valid
    help,         // --help: *text holds the help to print on stdout; exit 0
    version,      // --version: *text holds the version line; exit 0
    usage_error,  // *text holds the message for stderr; exit 2
};

// Environment variables by name (only INFERD_* ones are looked at).
using config_env = std::map<std::string, std::string>;

// Reads args (argv without the program name), env and the config file into *cfg (which is
// reset to the defaults first). *text receives the help, version or error text, "" when ok.
config_status config_parse(const std::vector<std::string> & args, const config_env & env, server_config * cfg,
                           std::string * text);

// argv[1..argc) as strings.
std::vector<std::string> config_args_from_argv(int argc, const char * const * argv);
// The INFERD_* variables of this process's environment.
config_env config_env_from_process();
// 0 for ok / help / version, 2 for usage_error.
int config_exit_code(config_status st);

// "f16" | "f32" | "q8_0", "text" | "json".
const char * config_cache_type_name(config_cache_type t);
const char * config_log_format_name(config_log_format f);

// One flag as documented by --help and the README.
struct config_flag_doc {
    std::string long_name;    // "ctx-size" (used as "--ctx-size" and as the config-file key)
    std::string short_names;  // "-c", "" when none; several are separated by ", "
    std::string value_name;   // "N", "FILE", ""  for a switch
    std::string env_name;     // "INFERD_CTX_SIZE", "" when the flag has no variable
    std::string default_text; // "0", "127.0.0.1", "" when there is no default
    std::string help;         // one sentence
    bool in_file = false;     // accepted as a config-file key
};

// Every flag, in the order of the help text.
std::vector<config_flag_doc> config_flags();
// The text `inferd --help` prints: usage line, every flag with its default and variable.
std::string config_help_text();
// "inferd VERSION".
std::string config_version_text();
// A GitHub-flavoured markdown table of the flags (Flag | Environment | Default | Description).
std::string config_markdown_table();
