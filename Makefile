# mabd — top-level commands. `make run` and `make test` bootstrap everything themselves.
BUILD_DIR ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
OUT_DIR ?= out

.PHONY: all deps configure build run test bench clean

all: build

deps:
	@bash scripts/bootstrap.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release > /dev/null

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

bench: build
	@bash bench/run.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)
