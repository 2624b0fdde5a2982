#!/usr/bin/env bash
# Builds the libFuzzer targets in their own clang tree and runs each for a bounded time:
#   fuzz-gguf         the GGUF reader (55 s by default)
#   fuzz-jinja        the Jinja engine, hostile templates included (40 s)
#   fuzz-api          the API's request parsers: completions, chat, embeddings, rerank, (de)tokenize (30 s)
#   fuzz-http         the server's HTTP layer over loopback: request line, headers, bodies, limits (35 s)
#   fuzz-stream       streamed text: UTF-8 completion and stop strings (20 s)
#   fuzz-json-schema  the JSON Schema compiler, structure-aware ($ref cycles, not, allOf, extremes),
#                     then the token-mask program of what compiles (45 s)
#   fuzz-gbnf         the GBNF parser, the token-mask program and a short matcher walk (25 s)
#   fuzz-regex        the schema compiler's patterns: parser, automaton, their GBNF, and a
#                     {"type":"string","pattern":…} schema (25 s)
# `make test` runs them with these budgets (about 4.5 minutes in all, plus the build); a grammar
# target's input that runs past 10 s is a finding (-timeout=10; the schema targets set the
# compiler's deadline to 2 s).
# `make fuzz FUZZ_SECONDS=N` gives each N seconds:
#   tests/fuzz/run-fuzz.sh build-fuzz 600            # every target 600 s
#   FUZZ_TARGETS="api http" tests/fuzz/run-fuzz.sh build-fuzz 300
# Without clang or libFuzzer's runtime it prints why and skips (it fails under CI=true, where
# tools/install-deps.sh installs them). Findings (crash inputs) go to BUILD/fuzz-artifacts/;
# a finding that was fixed goes into the target's seeds (tests/fuzz/seeds-*), so every run
# replays it.
set -euo pipefail

build="${1:-build-fuzz}"
seconds="${2:-}"
targets="${FUZZ_TARGETS:-gguf jinja api http stream json-schema gbnf regex}"
jobs="${JOBS:-2}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

skip() {
  if [ "${CI:-}" = "true" ]; then
    echo "fuzz: $1 (required under CI=true)" >&2
    exit 1
  fi
  echo "fuzz: skipped: $1"
  exit 0
}

command -v clang >/dev/null 2>&1 && command -v clang++ >/dev/null 2>&1 ||
  skip "clang/clang++ not found (Debian packages clang and libclang-rt-dev)"
probe_dir="$(mktemp -d)"
trap 'rm -rf "$probe_dir"' EXIT
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char *, unsigned long) { return 0; }\n' > "$probe_dir/p.cpp"
clang++ -fsanitize=fuzzer,address,undefined "$probe_dir/p.cpp" -o "$probe_dir/p" >/dev/null 2>&1 ||
  skip "clang cannot link libFuzzer with ASan/UBSan (Debian package libclang-rt-dev missing?)"

CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINFERD_FUZZ=ON -DINFERD_CUDA=OFF \
  -DINFERD_BUILD_BENCHMARKS=OFF >/dev/null
build_targets=""
for t in $targets; do build_targets="$build_targets fuzz-$t"; done
cmake --build "$build" -j"$jobs" --target $build_targets

testdata="${INFERD_TESTDATA:-../shared/testdata}"
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"

# run NAME DEFAULT_SECONDS MAX_LEN [extra libFuzzer flags]: seeds in $build/fuzz-NAME-seeds,
# the growing corpus in $build/fuzz-NAME-corpus. -timeout=20 unless the flags give another.
# With fresh_corpus=1 a run shorter than 5 minutes starts from the seeds alone (an empty
# $build/fuzz-NAME-corpus-short): libFuzzer runs every input it is given before it looks at its
# time limit, and the schema and pattern targets' inputs take up to seconds each, so a corpus
# grown by earlier runs would take a short budget several times over just to load.
run() {
  local name="$1" budget="${seconds:-$2}" max_len="$3" corpus="$build/fuzz-$1-corpus"
  shift 3
  if [ "${fresh_corpus:-0}" = 1 ] && [ "$budget" -lt 300 ]; then
    corpus="$build/fuzz-$name-corpus-short"
    rm -rf "$corpus"
    mkdir -p "$corpus"
  fi
  echo "fuzz: running fuzz-$name for ${budget} s"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$build/tests/fuzz-$name" -max_len="$max_len" -max_total_time="$budget" -timeout=20 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/$name-" "$@" "$corpus" "$build/fuzz-$name-seeds"
}

seed_dir() {  # a fresh seed folder for target $1
  rm -rf "$build/fuzz-$1-seeds"
  mkdir -p "$build/fuzz-$1-seeds" "$build/fuzz-$1-corpus"
  echo "$build/fuzz-$1-seeds"
}

for t in $targets; do
  case "$t" in
    gguf)
      # Our own small files (every value type, nested arrays, v2, alignment 64) and the first
      # 64 KiB of each shipped .gguf (the fuzzer reads at most -max_len bytes of an input anyway).
      s="$(seed_dir gguf)"
      cp tests/fuzz/seeds/*.gguf "$s/"
      if [ -d "$testdata" ]; then
        for f in "$testdata"/vocab/*.gguf "$testdata"/models/*.gguf; do
          [ -f "$f" ] && head -c 65536 "$f" > "$s/$(basename "$f")"
        done
      else
        echo "fuzz: $testdata not found: seeding fuzz-gguf with tests/fuzz/seeds only"
      fi
      run gguf 55 65536 ;;
    jinja)
      # Our small templates and the real chat templates of the golden data.
      s="$(seed_dir jinja)"
      cp tests/fuzz/seeds-jinja/*.jinja "$s/"
      if [ -d "$testdata/chat/templates" ]; then cp "$testdata"/chat/templates/*.jinja "$s/"; fi
      run jinja 40 65536 -dict=tests/fuzz/jinja.dict ;;
    api)
      s="$(seed_dir api)"
      cp tests/fuzz/seeds-api/* "$s/"
      run api 30 65536 -dict=tests/fuzz/json.dict ;;
    http)
      s="$(seed_dir http)"
      cp tests/fuzz/seeds-http/* "$s/"
      run http 35 16384 -dict=tests/fuzz/http.dict ;;
    stream)
      s="$(seed_dir stream)"
      cp tests/fuzz/seeds-stream/* "$s/"
      run stream 20 4096 ;;
    json-schema)
      # Our hostile schemas ($ref cycles under not, deep nests, extremes) and the golden JSON
      # Schema cases' schemas (tests/fuzz/schema-seeds.py): every one up to -max_len for a run of
      # 5 minutes or more, else the shortest of each feature list up to 1 KiB (loading every
      # seed takes ~140 s, past a short budget: libFuzzer runs all seeds before its time limit).
      s="$(seed_dir json-schema)"
      cp tests/fuzz/seeds-json-schema/*.json "$s/"
      if [ -d "$testdata/jsonschema" ]; then
        if [ "${seconds:-45}" -ge 300 ]; then
          python3 tests/fuzz/schema-seeds.py "$testdata/jsonschema" "$s" --all --max-bytes 16384
        else
          python3 tests/fuzz/schema-seeds.py "$testdata/jsonschema" "$s" --max-bytes 1024
        fi
      else
        echo "fuzz: $testdata/jsonschema not found: seeding fuzz-json-schema with tests/fuzz/seeds-json-schema only"
      fi
      fresh_corpus=1 run json-schema 45 16384 -timeout=10 -dict=tests/fuzz/json-schema.dict ;;
    gbnf)
      s="$(seed_dir gbnf)"
      cp tests/fuzz/seeds-gbnf/*.gbnf "$s/"
      run gbnf 25 8192 -timeout=10 -dict=tests/fuzz/gbnf.dict ;;
    regex)
      # An options byte, then the pattern (see fuzz-regex.cpp).
      s="$(seed_dir regex)"
      cp tests/fuzz/seeds-regex/*.re "$s/"
      fresh_corpus=1 run regex 25 1024 -timeout=10 -dict=tests/fuzz/regex.dict ;;
    *)
      echo "fuzz: unknown target '$t' (gguf, jinja, api, http, stream, json-schema, gbnf, regex)" >&2
      exit 2 ;;
  esac
done
