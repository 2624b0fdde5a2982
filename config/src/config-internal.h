// config/src/config-internal.h — the flag table and the value parsers behind config_parse.
// Not installed: only config/src/*.cpp include it.
#pragma once

#include "config/config.h"

#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

// What a flag does when it is seen.
enum class config_flag_action {
    set,           // apply() stores the value in server_config
    help,          // --help
    version,       // --version
    config_file,   // --config: names the file layer
};

struct config_flag {
    const char * group;        // heading in --help
    const char * long_name;    // without the leading "--"
    const char * short_names;  // space-separated short forms with their '-', "" when none
    const char * value_name;   // nullptr: a switch (no value; "--x=false" is allowed)
    const char * env_name;     // nullptr: no environment variable
    const char * help;
    bool in_file;              // accepted as a config-file key
    bool is_list;              // repeatable; comma lists in the environment
    bool secret;               // its value never appears in a message
    config_flag_action action;
    // Stores one value (for a list flag: one element). False with *err: the reason without the
    // flag's name, e.g. "'x' is not an integer".
    bool (*apply)(server_config & cfg, std::string_view value, std::string * err);
    // Empties a list flag's list (a higher source replaces the list of a lower one).
    void (*clear)(server_config & cfg);
    // The default as shown by --help, from a default-constructed server_config.
    std::string (*default_text)(const server_config & defaults);
};

// Every flag, in help order.
std::span<const config_flag> config_flag_table();
// The flag called "--name" / "-s" on the command line (name with its dashes), nullptr if none.
const config_flag * config_flag_find_cli(std::string_view name);
// The flag of a config-file key ("ctx-size"), nullptr if none.
const config_flag * config_flag_find_long(std::string_view long_name);
// The long name closest to a misspelt one ("prot" -> "port"), "" when none is close.
std::string config_flag_suggest(std::string_view misspelt);

// An API key or the metrics key: printable ASCII without spaces (it travels in a header). The
// reason in *err never contains the key.
bool config_check_key(std::string_view v, std::string * err);

// Value parsers. Each returns false with *err = "'<value>' is not …" style reasons.
bool config_parse_int(std::string_view s, long long lo, long long hi, const char * range_text, int * out,
                      std::string * err);
// A finite decimal number in [lo, hi]; range_text as for config_parse_int.
bool config_parse_float(std::string_view s, double lo, double hi, const char * range_text, float * out,
                        std::string * err);
// Bytes with an optional binary suffix: 512, 64K, 16M, 16MiB, 1G (K = 1024).
bool config_parse_size(std::string_view s, size_t lo, size_t hi, size_t * out, std::string * err);
// Seconds, fractional allowed ("2.5"), stored in milliseconds; lo / hi in milliseconds.
bool config_parse_seconds(std::string_view s, long long lo_ms, long long hi_ms, std::chrono::milliseconds * out,
                          std::string * err);
// 1/0, true/false, yes/no, on/off (any case).
bool config_parse_bool(std::string_view s, bool * out, std::string * err);
bool config_parse_cache_type(std::string_view s, config_cache_type * out, std::string * err);
bool config_parse_log_format(std::string_view s, config_log_format * out, std::string * err);
// Splits "a, b,,c" into {"a", "b", "c"} (trimmed, empty items dropped).
std::vector<std::string> config_split_list(std::string_view s);
// s without leading and trailing spaces / tabs / CR / LF.
std::string_view config_trim(std::string_view s);
// A value quoted for a message: 'abc', control characters escaped, long values shortened.
std::string config_quote(std::string_view s);
// "12.5" from 12500 ms (for defaults in help).
std::string config_seconds_text(std::chrono::milliseconds ms);
// "16MiB" style for sizes that are whole KiB / MiB / GiB, else the byte count.
std::string config_size_text(size_t bytes);
// Reads a whole file. False with *err = "cannot read 'path': reason".
bool config_read_file(const std::string & path, std::string * out, std::string * err);
