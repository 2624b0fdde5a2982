// tools/cli/cli.h — inferd-cli: generate, tokenize, detokenize, chat and embed on the engine; devices
// lists the compute devices; grammar compile prints a GBNF grammar or JSON Schema compiled,
// grammar check walks a text through a grammar token by token, grammar bench measures a folder of
// JSON Schemas with instances; template parse reads a model's raw output as its chat template's
// tool-call format and prints the message as JSON.
//
// Usage (from main or a test):
//   int rc = cli_tool_main({"generate", "-m", "m.gguf", "--tokens", "1", "-n", "8", "--temp", "0", "--ids"},
//                          stdin, stdout, stderr);
//
// Exit codes: 0 success; 1 the model cannot be loaded, a token id is outside the vocabulary,
// decoding failed, an output file cannot be written; 2 usage error (unknown option, bad value).
// grammar check: 0 the text is accepted, 1 rejected, 2 a usage, file or compile error.
// template render: 0 printed, 2 a usage, file or template error.
// template parse: 0 printed, 2 a usage or file error (unknown family, bad tools JSON, no template).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

int cli_tool_main(const std::vector<std::string> & args, std::FILE * in, std::FILE * out, std::FILE * err);

// "1,2,3" (spaces allowed around the numbers) → ids; false on anything else or an empty list.
bool cli_parse_token_list(const std::string & s, std::vector<int32_t> * out);
// A whole finite decimal number; false otherwise.
bool cli_parse_float(const std::string & s, float * out);
bool cli_parse_u64(const std::string & s, uint64_t * out);
