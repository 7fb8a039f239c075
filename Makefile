# mabd — top-level commands. `make run` and `make test` bootstrap everything themselves.
BUILD_DIR ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
OUT_DIR ?= out
# Sanitizer builds, each in a directory of its own (the main build is left alone).
FUZZ_DIR ?= build-fuzz
ASAN_DIR ?= build-asan
FUZZ_SECONDS ?= 30
# The interpreter of the Python package and its tests: Debian's, which sees python3-numpy etc.
PYTHON ?= /usr/bin/python3
CCACHE := $(if $(shell command -v ccache 2>/dev/null),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

.PHONY: all deps configure build run test bench clean fuzz-build fuzz test-asan check

all: build

deps:
	@bash scripts/bootstrap.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=$(PYTHON) > /dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	@mkdir -p $(OUT_DIR)
	$(BUILD_DIR)/mabd run scenes/demo.json --out $(OUT_DIR)/demo.glb --stats $(OUT_DIR)/demo_stats.jsonl
	$(BUILD_DIR)/mabd view $(OUT_DIR)/demo.glb --stats $(OUT_DIR)/demo_stats.jsonl -o $(OUT_DIR)/demo.html
	$(BUILD_DIR)/mabd plot $(OUT_DIR)/demo_stats.jsonl -o $(OUT_DIR)/demo_stats.svg
	@echo
	@echo "Output: $(OUT_DIR)/demo.glb (animated binary glTF 2.0: one node per body, 5 s of motion)"
	@echo "        $(OUT_DIR)/demo_stats.jsonl (one JSON object per step: energies, momenta, residuals, wall time)"
	@echo "        $(OUT_DIR)/demo.html (self-contained web viewer: 3D playback + charts of the stats)"
	@echo "        $(OUT_DIR)/demo_stats.svg (the stats as one SVG, no browser needed)"
	@echo "Open the viewer: xdg-open $(OUT_DIR)/demo.html  (or any browser: file://$(abspath $(OUT_DIR))/demo.html),"
	@echo "  or serve it:   $(BUILD_DIR)/mabd view $(OUT_DIR)/demo.glb --stats $(OUT_DIR)/demo_stats.jsonl --serve  (then http://127.0.0.1:8000/)"

test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)
	@$(MAKE) --no-print-directory fuzz

bench: build
	@bash bench/run.sh $(BUILD_DIR)

# libFuzzer targets (clang, -fsanitize=fuzzer,address,undefined), each run for FUZZ_SECONDS
# on a copy of its seed corpus in tests/fuzz/corpus.
fuzz-build: deps
	@cmake -S . -B $(FUZZ_DIR) -DCMAKE_CXX_COMPILER=clang++ -DMABD_FUZZ=ON \
	  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" $(CCACHE) \
	  -DMABD_BUILD_CLI=OFF -DMABD_BUILD_TESTS=OFF -DMABD_BUILD_BENCH=OFF -DMABD_INSTALL=OFF \
	  -DMABD_BUILD_PYTHON=OFF \
	  > /dev/null
	@cmake --build $(FUZZ_DIR) -j $(JOBS) --target scene_fuzz model_fuzz obj_fuzz

fuzz: fuzz-build
	@bash tests/fuzz/run_fuzzers.sh $(FUZZ_DIR) $(FUZZ_SECONDS)

# The whole test suite built with AddressSanitizer + UndefinedBehaviorSanitizer (-O1, asserts
# on). The install tests are left out: they build other projects against the library, without
# the sanitizer runtime. The library is shared here: each test executable linking its own copy
# of a full-debug-info static library would take some 300 MB apiece, over 12 GB in all.
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
test-asan: deps
	@cmake -S . -B $(ASAN_DIR) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
	  -DCMAKE_CXX_FLAGS="$(ASAN_FLAGS)" -DCMAKE_EXE_LINKER_FLAGS="$(ASAN_FLAGS)" \
	  -DCMAKE_SHARED_LINKER_FLAGS="$(ASAN_FLAGS)" $(CCACHE) \
	  -DBUILD_SHARED_LIBS=ON -DMABD_BUILD_BENCH=OFF -DMABD_INSTALL=OFF -DMABD_BUILD_PYTHON=OFF \
	  > /dev/null
	@cmake --build $(ASAN_DIR) -j $(JOBS)
	@cd $(ASAN_DIR) && ASAN_OPTIONS=strict_string_checks=1:detect_stack_use_after_return=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS) -E '^install_'

# Everything CI runs: the tests, the fuzzers and the sanitizer build.
check: test fuzz test-asan

clean:
	rm -rf $(BUILD_DIR) $(FUZZ_DIR) $(ASAN_DIR)
