#!/usr/bin/env bash
# Builds the libFuzzer targets in their own clang tree and runs the GGUF reader fuzzer and then
# the Jinja engine fuzzer, each for a bounded time. Used by `make test` (60 s for GGUF, 45 s for
# Jinja: JINJA_FUZZ_SECONDS); run them longer by hand, e.g.
#   JINJA_FUZZ_SECONDS=600 tests/fuzz/run-fuzz.sh build-fuzz 600
# Without clang or libFuzzer's runtime it prints why and skips (it fails under CI=true, where
# tools/install-deps.sh installs them). Findings (crash inputs) go to BUILD/fuzz-artifacts/.
set -euo pipefail

build="${1:-build-fuzz}"
seconds="${2:-60}"
jinja_seconds="${JINJA_FUZZ_SECONDS:-45}"
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
cmake --build "$build" -j"$jobs" --target fuzz-gguf fuzz-jinja

# Seeds: our own small files (every value type, nested arrays, v2, alignment 64) and the first
# 64 KiB of each shipped .gguf (the fuzzer reads at most -max_len bytes of an input anyway).
seeds="$build/fuzz-seeds"
corpus="$build/fuzz-corpus"
artifacts="$build/fuzz-artifacts"
mkdir -p "$seeds" "$corpus" "$artifacts"
cp tests/fuzz/seeds/*.gguf "$seeds/"
testdata="${INFERD_TESTDATA:-../shared/testdata}"
if [ -d "$testdata" ]; then
  for f in "$testdata"/vocab/*.gguf "$testdata"/models/*.gguf; do
    [ -f "$f" ] && head -c 65536 "$f" > "$seeds/$(basename "$f")"
  done
else
  echo "fuzz: $testdata not found: seeding with tests/fuzz/seeds only"
fi

echo "fuzz: running fuzz-gguf for ${seconds} s"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$build/tests/fuzz-gguf" -max_len=65536 -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" "$seeds"

# The Jinja engine: seeds are our small templates and the real chat templates of the golden data.
jinja_seeds="$build/fuzz-jinja-seeds"
jinja_corpus="$build/fuzz-jinja-corpus"
mkdir -p "$jinja_seeds" "$jinja_corpus"
cp tests/fuzz/seeds-jinja/*.jinja "$jinja_seeds/"
if [ -d "$testdata/chat/templates" ]; then
  cp "$testdata"/chat/templates/*.jinja "$jinja_seeds/"
fi
echo "fuzz: running fuzz-jinja for ${jinja_seconds} s"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$build/tests/fuzz-jinja" -max_len=65536 -max_total_time="$jinja_seconds" -timeout=20 -rss_limit_mb=2048 \
  -dict=tests/fuzz/jinja.dict -print_final_stats=1 -artifact_prefix="$artifacts/jinja-" "$jinja_corpus" "$jinja_seeds"
