# inferd — the two commands a new user needs:
#   make serve   build and start the main program
#   make test    install missing Debian packages, build, and run every test
BUILD      ?= build
BUILD_ASAN ?= build-asan
BUILD_FUZZ ?= build-fuzz
FUZZ_SECONDS ?= 60
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=

# Other targets: demo-tensor (the tensor-library demo).
.PHONY: all deps configure build serve demo-tensor test test-release test-asan test-fuzz bench-kernels clean

all: build

deps:
	@bash tools/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)

build: configure
	cmake --build $(BUILD) -j$(JOBS)

# The daemon on 127.0.0.1:8080 (HOST / PORT to change) with MODEL=path, or else with a small demo
# model (random weights, ChatML template) that inferd-gguf synth writes into $(BUILD)/demo/.
MODEL ?=
HOST  ?= 127.0.0.1
PORT  ?= 8080
DEMO_MODEL = $(BUILD)/demo/inferd-demo-llama.gguf
serve: build
	@if [ -z "$(MODEL)" ] && [ ! -f "$(DEMO_MODEL)" ]; then \
		mkdir -p $(BUILD)/demo && \
		./$(BUILD)/tools/inferd-gguf synth --arch llama --n-embd 256 --n-layer 4 --n-head 8 --n-head-kv 4 \
			--n-ff 768 --n-vocab 4096 --seed 1 $(DEMO_MODEL); fi
	@if [ -z "$(MODEL)" ]; then echo "make serve: no MODEL=path given: serving the demo model $(DEMO_MODEL)" \
		"(random weights: its text is gibberish; use make serve MODEL=your.gguf)"; fi
	./$(BUILD)/server/inferd -m $(if $(MODEL),$(MODEL),$(DEMO_MODEL)) --host $(HOST) --port $(PORT)

demo-tensor: build
	./$(BUILD)/tools/inferd-ggml-demo

test: test-release test-fuzz test-asan

test-release: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

# The same tests built with AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan: deps
	cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINFERD_SANITIZE=ON -DINFERD_BUILD_BENCHMARKS=OFF $(CMAKE_ARGS)
	cmake --build $(BUILD_ASAN) -j$(JOBS)
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --output-on-failure -j$(JOBS)

# The GGUF reader fuzzer (libFuzzer, clang tree in $(BUILD_FUZZ)) for FUZZ_SECONDS; skips with a
# reason when clang or libFuzzer is missing (fails under CI=true).
test-fuzz: deps
	JOBS=$(JOBS) bash tests/fuzz/run-fuzz.sh $(BUILD_FUZZ) $(FUZZ_SECONDS)

# Kernel benchmarks (Google Benchmark): mat-vec / mat-mat GFLOP/s and GB/s, read bandwidth.
bench-kernels: build
	./$(BUILD)/tests/inferd-kernel-bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_FUZZ)
