// tools/common/tool-args.h — a small command-line parser shared by the tools.
//
// Usage:
//   tool_args a;
//   std::string err;
//   if (!tool_args_parse(args, {{"-t", "--threads"}}, &a, &err)) { usage error: err }
//   if (a.help) { print usage }
//   if (const std::string * v = a.option("--threads")) tool_args_parse_int(*v, 1, 1024, &n);
//   a.positional  // everything else, in order
//
// Options that take a value are given as {short, long} pairs ("-t 4", "--threads 4",
// "--threads=4"); -h / --help set `help`; "--" ends the options; any other word starting with
// '-' (except "-" itself) is an error that names it. Flags ({short, long, true}) take no value
// ("--ids"; "--ids=x" is an error).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct tool_option_spec {
    const char * short_name;  // "-t", or nullptr
    const char * long_name;   // "--threads"
    bool flag = false;        // true: takes no value ("--ids"); recorded with the value "1"
};

struct tool_args {
    std::vector<std::string> positional;
    std::vector<std::pair<std::string, std::string>> options;  // long name -> value (last one wins)
    bool help = false;

    // The value of an option by its long name, nullptr when not given.
    const std::string * option(std::string_view long_name) const;
};

bool tool_args_parse(const std::vector<std::string> & args, std::initializer_list<tool_option_spec> specs,
                     tool_args * out, std::string * error);

// True when a flag (or an option) was given.
inline bool tool_args_has(const tool_args & a, std::string_view long_name) { return a.option(long_name) != nullptr; }

// Parses a whole decimal integer in [min, max]; false otherwise.
bool tool_args_parse_int(const std::string & s, int min, int max, int * out);
