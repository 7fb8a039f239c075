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
	$(BUILD_DIR)/mabd run scenes/demo.json --out $(OUT_DIR)/demo.csv --stats $(OUT_DIR)/demo_stats.jsonl
	@echo "Output: $(OUT_DIR)/demo.csv (poses: step,time,body,x,y,z,qw,qx,qy,qz)"
	@echo "        $(OUT_DIR)/demo_stats.jsonl (one JSON object per step: energies, momenta, residual)"

test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

bench: build
	@bash bench/run.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)
