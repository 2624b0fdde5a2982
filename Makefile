# inferd — the two commands a new user needs:
#   make serve   build and start the main program
#   make test    install missing Debian packages, build, and run every test
BUILD      ?= build
BUILD_ASAN ?= build-asan
BUILD_FUZZ ?= build-fuzz
FUZZ_SECONDS ?= 600
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=

# Other targets: demo-tensor (the tensor-library demo), bench (the CPU speed table), bench-compare
# (the same side by side with the reference engine), server-compare (the server side by side with
# llama-server), spec-compare (speculative decoding's speed-up), bench-kernels, bench-grammar.
.PHONY: all deps configure build serve demo-tensor test test-release test-asan test-fuzz fuzz soak bench-models bench bench-compare server-compare spec-compare bench-kernels bench-grammar gpu-check clean

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
	@echo "make serve: the chat page will be at http://$(HOST):$(PORT)/ (open it in a browser once the model is loaded)"
	./$(BUILD)/server/inferd -m $(if $(MODEL),$(MODEL),$(DEMO_MODEL)) --host $(HOST) --port $(PORT)

demo-tensor: build
	./$(BUILD)/tools/inferd-ggml-demo

test: test-release test-fuzz test-asan

test-release: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

# The same tests built with AddressSanitizer + UndefinedBehaviorSanitizer (the CUDA backend is
# left out there: the release tree compiles it, and its kernels cannot run under the sanitizers).
test-asan: deps
	cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINFERD_SANITIZE=ON -DINFERD_BUILD_BENCHMARKS=OFF \
		-DINFERD_CUDA=OFF $(CMAKE_ARGS)
	cmake --build $(BUILD_ASAN) -j$(JOBS)
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --output-on-failure -j$(JOBS)

# The libFuzzer targets (clang tree in $(BUILD_FUZZ); tests/fuzz/run-fuzz.sh lists them): GGUF
# reader, Jinja engine, API request parsers, HTTP layer, streamed text, JSON Schema compiler, GBNF
# parser and matcher, schema patterns, each for its budget in `make test` (about 4.5 minutes of
# fuzzing in all); skips with a reason when clang or libFuzzer is missing
# (fails under CI=true). `make fuzz` runs each for FUZZ_SECONDS (FUZZ_TARGETS="api http" for some).
test-fuzz: deps
	JOBS=$(JOBS) bash tests/fuzz/run-fuzz.sh $(BUILD_FUZZ)

fuzz: deps
	JOBS=$(JOBS) FUZZ_TARGETS="$(FUZZ_TARGETS)" bash tests/fuzz/run-fuzz.sh $(BUILD_FUZZ) $(FUZZ_SECONDS)

# Soak: SOAK_MINUTES (30) at 16 clients against a fresh daemon on MODEL (default the shipped
# stories260K), after a 60 s overload at 4x its capacity; RSS, descriptors and metrics sampled
# every 10 s into $(BUILD)/soak.csv, checks and a summary printed (tools/soak.py).
SOAK_MINUTES ?= 30
SOAK_MODEL = $(if $(MODEL),$(MODEL),../shared/testdata/models/stories260K-f32.gguf)
soak: build
	python3 tools/soak.py --inferd ./$(BUILD)/server/inferd --model $(SOAK_MODEL) --minutes $(SOAK_MINUTES) \
		--overload-seconds 60 --csv $(BUILD)/soak.csv -- -t 2

# The CPU speed table (README "Performance"): the TinyLlama-shaped synthetic model (2048 wide,
# 22 layers, 32 / 4 heads, 5632 FF, 32000 vocab; random weights) in F16, Q8_0 and Q4_K_M,
# written into $(BENCH_DIR) the first time (~3 GiB of disk, a few minutes); then pp512 and tg128
# on BENCH_THREADS threads, and tg128 after 4096 tokens of context, plain and fused attention.
BENCH_DIR     ?= $(BUILD)/bench-models
BENCH_THREADS ?= 2
BENCH_REPS    ?= 5
BENCH_MODEL    = $(BENCH_DIR)/tinyllama-synth
bench-models: build
	@mkdir -p $(BENCH_DIR)
	@if [ ! -f $(BENCH_MODEL)-f16.gguf ]; then ./$(BUILD)/tools/inferd-gguf synth --arch llama --n-embd 2048 \
		--n-layer 22 --n-head 32 --n-head-kv 4 --n-ff 5632 --n-vocab 32000 $(BENCH_MODEL)-f16.gguf; fi
	@for t in q8_0 q4_k_m; do [ -f $(BENCH_MODEL)-$$t.gguf ] || \
		./$(BUILD)/tools/inferd-quantize $(BENCH_MODEL)-f16.gguf $(BENCH_MODEL)-$$t.gguf $$t || exit 1; done

bench: bench-models
	./$(BUILD)/tools/inferd-bench -m $(BENCH_MODEL)-q4_k_m.gguf,$(BENCH_MODEL)-q8_0.gguf,$(BENCH_MODEL)-f16.gguf \
		-p 512 -n 128 -t $(BENCH_THREADS) -r $(BENCH_REPS) -fa 1
	./$(BUILD)/tools/inferd-bench -m $(BENCH_MODEL)-q4_k_m.gguf -p 0 -n 128 -d 4096 -fa 0,1 \
		-t $(BENCH_THREADS) -r $(BENCH_REPS)

# The same models side by side with the reference engine's llama-bench (built outside the
# repository by ../shared/tools/reference-engine.sh; LLAMA_BENCH=path/to/llama-bench): pp512,
# tg128 and tg128 after 4096 tokens, each engine at its better -fa setting, one table of ratios.
bench-compare: bench-models
	@[ -n "$(LLAMA_BENCH)" ] || { echo "bench-compare: set LLAMA_BENCH=path/to/llama-bench"; exit 2; }
	python3 tools/bench-compare.py --llama-bench $(LLAMA_BENCH) --inferd-bench ./$(BUILD)/tools/inferd-bench \
		-t $(BENCH_THREADS) -r $(BENCH_REPS) -p 512 -n 128 -d 0,4096 \
		$(BENCH_MODEL)-q4_k_m.gguf $(BENCH_MODEL)-q8_0.gguf $(BENCH_MODEL)-f16.gguf

# The server side by side with the reference engine's llama-server (LLAMA_SERVER=path/to/llama-server,
# built by ../shared/tools/reference-engine.sh) on the Q4_K_M bench model: the same flags
# (-np 8 -t $(BENCH_THREADS) -c 4096) and the same inferd-loadgen loads, fresh servers taking turns.
SERVER_COMPARE_ROUNDS ?= 1
server-compare: bench-models
	@[ -n "$(LLAMA_SERVER)" ] || { echo "server-compare: set LLAMA_SERVER=path/to/llama-server"; exit 2; }
	python3 tools/server-compare.py --llama-server $(LLAMA_SERVER) --inferd ./$(BUILD)/server/inferd \
		--loadgen ./$(BUILD)/tools/inferd-loadgen -np 8 -t $(BENCH_THREADS) -c 4096 \
		--rounds $(SERVER_COMPARE_ROUNDS) $(BENCH_MODEL)-q4_k_m.gguf

# Speculative decoding's speed-up through the server (tools/spec-compare.py): the TinyLlama-shaped
# model written by `inferd-gguf synth --confident` (a model whose quantized copy agrees with it) in
# F16 as the model and in Q4_0 as the draft model, one client, greedy, with and without -md, and
# with prompt lookup (--spec-ngram 3) on a prompt whose continuation repeats a passage of it.
SPEC_MODEL = $(BENCH_DIR)/tinyllama-confident
spec-compare: build
	@mkdir -p $(BENCH_DIR)
	@if [ ! -f $(SPEC_MODEL)-f16.gguf ]; then ./$(BUILD)/tools/inferd-gguf synth --arch llama --n-embd 2048 \
		--n-layer 22 --n-head 32 --n-head-kv 4 --n-ff 5632 --n-vocab 32000 --confident $(SPEC_MODEL)-f16.gguf; fi
	@[ -f $(SPEC_MODEL)-q4_0.gguf ] || ./$(BUILD)/tools/inferd-quantize $(SPEC_MODEL)-f16.gguf $(SPEC_MODEL)-q4_0.gguf q4_0
	python3 tools/spec-compare.py --inferd ./$(BUILD)/server/inferd -t $(BENCH_THREADS) --draft $(SPEC_MODEL)-q4_0.gguf \
		--rounds 3 $(SPEC_MODEL)-f16.gguf
	python3 tools/spec-compare.py --inferd ./$(BUILD)/server/inferd -t $(BENCH_THREADS) --ngram 3 --rounds 3 \
		--repeat $(SPEC_MODEL)-f16.gguf

# Kernel benchmarks (Google Benchmark): mat-vec / mat-mat GFLOP/s and GB/s, read bandwidth.
bench-kernels: build
	./$(BUILD)/tests/inferd-kernel-bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

# Token-mask speed of the grammar engine (Google Benchmark) on deepseek-llm's vocabulary; the
# collection-wide figures come from `inferd-cli grammar bench` (engine/grammar/README.md).
bench-grammar: build
	./$(BUILD)/tests/inferd-grammar-bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

# On a machine with an NVIDIA GPU: CUDA build, op tests on the GPU, engine references with layers
# on the GPU, and inferd-bench with every layer offloaded (tools/gpu-check.sh says what it runs).
gpu-check: deps
	JOBS=$(JOBS) bash tools/gpu-check.sh

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_FUZZ)
