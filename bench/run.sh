#!/usr/bin/env bash
# Runs the benchmarks: the Google Benchmark programs, then `mabd bench` on the shipped scenes.
# Usage: bench/run.sh BUILD_DIR
set -euo pipefail
build=${1:-build}
export OMP_NUM_THREADS=1  # single thread (CHOLMOD would use OpenMP)
cd "$(dirname "$0")/.."
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo
echo "== the machine: streaming bandwidth and clock, one thread (bench/machine_bench) =="
"$build/bench/machine_bench" --benchmark_format=console
echo
echo "== single body, 10K steps at h = 0.01 s (paper Fig. performance) =="
"$build/bench/single_body_bench" --benchmark_format=console
echo
echo "== mabd bench on scenes =="
for scene in scenes/spinning_cylinder.json scenes/t_handle.json scenes/demo.json \
             scenes/pendulum.json scenes/heavy_chain.json scenes/welded_chain.json; do
  "$build/mabd" bench "$scene"
done
echo
echo "== dual solvers on net-like block graphs (bench/dual_solver_bench) =="
"$build/bench/dual_solver_bench" --benchmark_format=console
echo
echo "== scale: one Newton iteration, h = 0.01 s (paper Table stats) =="
# Steady state: the chains hang from pegs and tighten over the first steps (more bodies need
# the geometric-stiffness term), so the first steps are not timed.
steps=${MABD_SCALE_STEPS:-20}
warmup=${MABD_SCALE_WARMUP:-10}
echo "(median of $steps steps after $warmup warm-up steps each)"
# The paper's per-step times (its Table "Experiment statistics": AMD 9950X3D, one thread) for
# the scenes that are its rows; "-" where the paper has no such row.
paper_ms() {
  case "$1" in
    chain_1e6) echo 904 ;;  # "A huge pulley system", 1M links (its chains without the wheels)
    net_100) echo 84 ;;     # "Joint net", 100 x 100
    tree_willow) echo 18 ;;
    tree_pear) echo 23 ;;
    *) echo - ;;
  esac
}
summary=()
for scene in chain_1e3 chain_1e4 chain_1e5 chain_1e6 net_10 net_20 net_50 net_100 \
             tree_willow tree_pear; do
  line=$("$build/mabd" bench "scenes/$scene.json" --steps "$steps" --warmup "$warmup")
  echo "$line"
  ms=$(echo "$line" | grep -o '"ms_per_step_median":[^,]*' | cut -d: -f2)
  summary+=("$(printf '%-12s %12.2f %12s' "$scene" "$ms" "$(paper_ms "$scene")")")
done
echo
printf '%-12s %12s %12s\n' scene "ms/step" "paper ms"
printf '%s\n' "${summary[@]}"
echo
echo "== contact: nets draped on a static cylinder, a cloak on a keyframed avatar, a pulley, ragdolls on a net, the armadillo =="
echo "(median of $steps steps after $warmup warm-up steps each; the ragdolls after 150, once they land)"
# A scene that fails is reported, and the others go on.
for scene in net_on_cylinder net_100_cylinder cloak pulley ragdolls; do
  skip=$warmup
  [ "$scene" = ragdolls ] && skip=150
  "$build/mabd" bench "scenes/$scene.json" --steps "$steps" --warmup "$skip" ||
    echo "$scene: did not finish"
done
# The paper's armadillo (116 ms a step and 7 Newton iterations in the paper): the soft body
# resting on the net, after it lands.
"$build/mabd" bench scenes/armadillo.json --steps 10 --warmup 60 || echo "armadillo: did not finish"
# The paper's huge pulley system (1,080,000 links over 1,440 wheels, 904 ms per step in the
# paper): about 25 s per step and 7.8 GB here, so a few steps only.
"$build/mabd" bench scenes/pulley_1e6.json --steps 3 --warmup 1 || echo "pulley_1e6: did not finish"
echo
echo "== peers: the same chain in Bullet's Featherstone multibody and MuJoCo (bench/compare_peers.cpp) =="
"$build/bench/compare_peers" --links 1000,10000 --seconds 2
