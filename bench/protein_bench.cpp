// The protein row of the paper's timing table (Tab. stats: 14K links, 14 ms/step): a generated
// backbone of alternating helices and strands (Engh-Huber geometry) as C-alpha and peptide
// bodies on phi/psi hinges (src/io/protein.h), every hinge position-driven away from its
// start, the chain free. Reported: ms per step (World::step wall time), bodies,
// hinges, constraint rows. Model units: Angstrom-scaled SI (see src/io/protein.h).
#include <benchmark/benchmark.h>

#include <cmath>
#include <memory>
#include <vector>

#include "io/protein.h"
#include "mabd/mabd.h"

namespace {

using namespace mabd::io;

/// Residues in alternating blocks of 20 helix (-57, -47) and 10 strand (-120, 130) degrees.
std::vector<PhiPsi> secondary_structure(std::size_t residues) {
  const double deg = M_PI / 180;
  std::vector<PhiPsi> d(residues);
  for (std::size_t i = 0; i < residues; ++i) {
    d[i] = i % 30 < 20 ? PhiPsi{-57 * deg, -47 * deg} : PhiPsi{-120 * deg, 130 * deg};
  }
  return d;
}

constexpr double kAmplitude = 0.05;  // rad
// Drive gains (model units), soft enough for one Newton iteration at h = 0.01 s: the period
// 2 pi sqrt(I / k) of a peptide body (I ~ 46 Da A^2) on its hinge is 0.04 s.
constexpr double kStiffness = 1e6, kDamping = 1e4;

/// Steps the backbone of `residues` residues (2 bodies each) with `newton` Newton iterations.
void run(benchmark::State& state, std::size_t residues, int newton) {
  const BackboneModel model = build_backbone(ideal_backbone(secondary_structure(residues)));
  BackboneWorldOptions options;
  options.settings.dt = 0.01;
  options.settings.gravity = mabd::Vec3::Zero();
  options.settings.newton_iterations = newton;
  options.drive = mabd::JointDrive{mabd::DriveMode::Position, 0.0, kStiffness, kDamping};
  mabd::World world = make_backbone_world(model, options);
  // Every hinge is driven towards a new angle, +-AMPLITUDE rad: the free chain moves
  // throughout (its momentum stays zero).
  for (std::size_t j = 0; j < model.hinges.size(); ++j) {
    world.set_drive_target(mabd::JointId{static_cast<std::uint32_t>(j)},
                           kAmplitude * std::sin(0.7 * j));
  }
  for (int i = 0; i < 3; ++i) world.step();  // warm-up: allocations, symbolic analysis
  double ms = 0;
  std::int64_t steps = 0;
  double residual = 0, body_ms = 0, dual_ms = 0;
  for (auto _ : state) {
    world.step();
    ms += world.last_step().wall_ms;
    body_ms += world.last_step().body_ms;
    dual_ms += world.last_step().dual_ms;
    residual = std::max(residual, world.last_step().joint_residual);
    ++steps;
  }
  state.counters["ms_per_step"] = ms / steps;
  state.counters["body_ms"] = body_ms / steps;
  state.counters["dual_ms"] = dual_ms / steps;
  state.counters["bodies"] = static_cast<double>(world.body_count());
  state.counters["hinges"] = static_cast<double>(world.joint_count());
  state.counters["rows"] = static_cast<double>(world.constraint_rows());
  state.counters["joint_residual_A"] = residual;
  state.SetLabel(world.last_step().solver);
}

// 7000 residues = 14000 bodies (the paper's 14K links); 14000 residues = 28000 bodies.
void BM_Protein14kBodies(benchmark::State& s) { run(s, 7000, 1); }
void BM_Protein14kBodies4Newton(benchmark::State& s) { run(s, 7000, 4); }
void BM_Protein14kResidues(benchmark::State& s) { run(s, 14000, 1); }

BENCHMARK(BM_Protein14kBodies)->Unit(benchmark::kMillisecond)->Iterations(50);
BENCHMARK(BM_Protein14kBodies4Newton)->Unit(benchmark::kMillisecond)->Iterations(20);
BENCHMARK(BM_Protein14kResidues)->Unit(benchmark::kMillisecond)->Iterations(30);

}  // namespace

BENCHMARK_MAIN();
