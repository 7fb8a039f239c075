// Single-body speed comparison of the paper (Fig. performance): 10K steps of one spinning,
// tumbling body at h = 0.01 s with the co-rotated integrator (polar and normalized
// rotation) and with vanilla ABD (Hessian assembled and factored every iteration).
#include <benchmark/benchmark.h>

#include "mabd/mabd.h"

namespace {

void run_10k(benchmark::State& state, mabd::IntegratorMode integrator, mabd::RotationMode rotation) {
  const mabd::Scene scene = mabd::load_scene(std::string(MABD_SOURCE_DIR) + "/scenes/spinning_cylinder.json");
  for (auto _ : state) {
    state.PauseTiming();
    mabd::Scene s = scene;
    s.settings.integrator = integrator;
    s.settings.rotation = rotation;
    mabd::World world = mabd::build_world(s);
    state.ResumeTiming();
    for (int i = 0; i < 10000; ++i) world.step();
    benchmark::DoNotOptimize(world.coordinates(mabd::BodyId{0}));
  }
  state.counters["us_per_step"] = benchmark::Counter(
      10000.0 * state.iterations(), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_CoRotatedPolar(benchmark::State& s) {
  run_10k(s, mabd::IntegratorMode::CoRotated, mabd::RotationMode::Polar);
}
void BM_CoRotatedNormalized(benchmark::State& s) {
  run_10k(s, mabd::IntegratorMode::CoRotated, mabd::RotationMode::Normalized);
}
void BM_VanillaABD(benchmark::State& s) {
  run_10k(s, mabd::IntegratorMode::Vanilla, mabd::RotationMode::Polar);
}

BENCHMARK(BM_VanillaABD)->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_CoRotatedPolar)->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_CoRotatedNormalized)->Unit(benchmark::kMillisecond)->MinTime(1.0);

}  // namespace

BENCHMARK_MAIN();
