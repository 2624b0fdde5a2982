// tools/loadgen/loadgen-options.h — the command line of inferd-loadgen.
//
// Usage:
//   loadgen_options o;
//   std::string err;
//   if (!loadgen_parse_args(argc, argv, &o, &err)) { std::fprintf(stderr, "%s\n", err.c_str()); return 2; }
//   if (o.help) { std::fputs(loadgen_usage().c_str(), stdout); return 0; }
//
// loadgen_parse_args returns false with a one-line message for an unknown flag, a missing or
// invalid value (numbers must be whole and in range; durations may be fractional), a bad URL,
// --chat with --embeddings, or --inputs without --embeddings.
#pragma once

#include <cstdint>
#include <string>

struct loadgen_options {
    std::string url = "http://127.0.0.1:8080";
    std::string host = "127.0.0.1";   // from url
    std::string port = "8080";        // from url (80 when absent)
    std::string path_prefix;          // from url: path before /v1/..., no trailing '/'
    int concurrency = 8;
    double duration_s = 30;
    double warmup_s = 0;
    int max_tokens = 64;
    int prompt_words = 64;            // each prompt's own words
    int shared_prefix_words = 0;      // words common to every prompt, before its own
    bool chat = false;                // /v1/chat/completions instead of /v1/completions
    bool embeddings = false;          // /v1/embeddings (not streamed) instead of completions
    int inputs = 32;                  // with embeddings: the inputs of each request
    std::string api_key;              // sent as "Authorization: Bearer KEY" when set
    std::string model;                // the request's "model" field when set
    uint64_t seed = 1;
    double temperature = 0.8;         // the requests' sampling temperature (0: greedy)
    double timeout_s = 600;           // per read/write: a silent server fails the request
    bool json = false;
    bool help = false;
};

// Splits "http://host[:port][/prefix]" into o->host, o->port, o->path_prefix. https is not
// supported. False with *error set when the URL is not of that form.
bool loadgen_parse_url(const std::string & url, loadgen_options * o, std::string * error);

// Parses argv[1..argc); false with *error set (see above).
bool loadgen_parse_args(int argc, const char * const * argv, loadgen_options * o, std::string * error);

// The usage text, naming every flag and the fields of the --json object.
std::string loadgen_usage();
