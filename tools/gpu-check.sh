#!/usr/bin/env bash
# make gpu-check: the CUDA backend verified on a machine with an NVIDIA GPU.
#   1. builds with CUDA (INFERD_CUDA=ON) in $BUILD_GPU;
#   2. runs every op test on every device (CUDA included) against the double-precision reference,
#      and fails if no CUDA device is found (INFERD_REQUIRE_GPU=1);
#   3. runs the engine references of ../shared/testdata with all layers, then half of them, on the
#      GPU (INFERD_TEST_N_GPU_LAYERS);
#   4. benchmarks, all layers offloaded, the TinyLlama-shaped model and an 8B-shaped one (4096 wide,
#      32 layers, 32 / 8 heads, FF 14336, vocab 128256) in Q4_K_M, Q8_0 and F16 with inferd-bench,
#      and prints one table: tokens/s and % of the GPU's measured memory bandwidth.
# Models are written once into $BENCH_DIR (about 30 GiB for the 8B-shaped set).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_GPU=${BUILD_GPU:-build-gpu}
BENCH_DIR=${BENCH_DIR:-$BUILD_GPU/bench-models}
JOBS=${JOBS:-$(nproc)}
REPS=${GPU_CHECK_REPS:-3}

cmake -S . -B "$BUILD_GPU" -DCMAKE_BUILD_TYPE=Release -DINFERD_CUDA=ON -DINFERD_BUILD_BENCHMARKS=OFF
cmake --build "$BUILD_GPU" -j"$JOBS"
"$BUILD_GPU"/server/inferd --list-devices | tee "$BUILD_GPU/devices.txt"
if ! grep -q "(gpu)" "$BUILD_GPU/devices.txt"; then
  echo "gpu-check: no GPU device found (see above)" >&2
  exit 1
fi
export INFERD_REQUIRE_GPU=1

echo "== op tests on every device"
(cd "$BUILD_GPU" && ctest --output-on-failure -L ggml)

echo "== engine references with layers on the GPU"
for ngl in all half; do
  echo "-- INFERD_TEST_N_GPU_LAYERS=$ngl"
  INFERD_TEST_N_GPU_LAYERS=$ngl "$BUILD_GPU"/tests/test-model-reference
done

echo "== inferd-bench, every layer on the GPU"
mkdir -p "$BENCH_DIR"
synth=$BUILD_GPU/tools/inferd-gguf
quant=$BUILD_GPU/tools/inferd-quantize
make_models() {  # name, synth arguments...
  local name=$1; shift
  [ -f "$BENCH_DIR/$name-f16.gguf" ] || "$synth" synth --arch llama "$@" "$BENCH_DIR/$name-f16.gguf"
  for t in q8_0 q4_k_m; do
    [ -f "$BENCH_DIR/$name-$t.gguf" ] || "$quant" "$BENCH_DIR/$name-f16.gguf" "$BENCH_DIR/$name-$t.gguf" "$t" --threads "$JOBS"
  done
}
make_models tinyllama-synth --n-embd 2048 --n-layer 22 --n-head 32 --n-head-kv 4 --n-ff 5632 --n-vocab 32000
make_models llama8b-synth --n-embd 4096 --n-layer 32 --n-head 32 --n-head-kv 8 --n-ff 14336 --n-vocab 128256
models=""
for name in tinyllama-synth llama8b-synth; do
  for t in q4_k_m q8_0 f16; do models="$models${models:+,}$BENCH_DIR/$name-$t.gguf"; done
done
"$BUILD_GPU"/tools/inferd-bench -m "$models" -ngl 99 -p 512 -n 128 -r "$REPS" -fa 1
