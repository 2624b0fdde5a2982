// tools/common/gguf-inspect.h — the logic of inferd-gguf: the info listing and the dequant
// command, and the command-line front end the program's main() calls.
//
// Usage:
//   int rc = gguf_tool_main({"info", "model.gguf"}, stdout, stderr);
//   int rc = gguf_tool_main({"dequant", "model.gguf", "output.weight", "out.f32"}, stdout, stderr);
//   // "synth …" is dispatched to synth_tool_main (gguf-synth.h)
//
//   std::unique_ptr<gguf_file> f;  …open…
//   gguf_inspect_print_info(*f, stdout);
//   std::string err;
//   if (!gguf_inspect_dequant(*f, "output.weight", "out.f32", 2, &err)) fprintf(stderr, "%s\n", err.c_str());
//
// Exit codes of gguf_tool_main: 0 success; 1 a bad file, a missing tensor, a type without a
// float conversion, an unwritable output; 2 a usage error (unknown command, wrong arguments).
#pragma once

#include "ggml/gguf.h"

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

// "u32", "str", "arr[str,4096]", "arr[arr,2]": the type column of the metadata listing.
std::string gguf_inspect_value_type(const gguf_value & v);
// The value column: scalars in full, strings quoted with control characters escaped and long
// ones cut, arrays as their first few elements and the length.
std::string gguf_inspect_value_text(const gguf_value & v);

// Writes version, alignment, counts, every metadata key with type and value, then the tensor
// table (name, type, shape, offset in the data section, bytes) and a per-type summary.
void gguf_inspect_print_info(const gguf_file & f, std::FILE * out);

// Writes the tensor called `name` to out_path as little-endian float32, row-major (ne[0] the
// fastest), converting rows in chunks so that a large tensor never needs a float copy of
// itself. False with *error naming the problem otherwise (the partial file is removed).
bool gguf_inspect_dequant(const gguf_file & f, std::string_view name, const std::string & out_path, int n_threads,
                          std::string * error);

// The whole program: args without the program name.
int gguf_tool_main(const std::vector<std::string> & args, std::FILE * out, std::FILE * err);
