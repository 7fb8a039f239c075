#!/usr/bin/env bash
# Runs the benchmarks: the Google Benchmark programs, then `mabd bench` on the shipped scenes.
# Usage: bench/run.sh BUILD_DIR
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo
echo "== single body, 10K steps at h = 0.01 s (paper Fig. performance) =="
"$build/bench/single_body_bench" --benchmark_format=console
echo
echo "== mabd bench on scenes =="
for scene in scenes/spinning_cylinder.json scenes/t_handle.json scenes/demo.json \
             scenes/pendulum.json scenes/heavy_chain.json; do
  "$build/mabd" bench "$scene"
done
