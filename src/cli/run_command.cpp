// `mabd run`: simulate a scene, optionally streaming poses (CSV) and per-step stats (JSONL).
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/output_writers.h"
#include "cli/progress.h"
#include "mabd/error.h"

namespace mabd::cli {

namespace {

volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void on_sigint(int) { g_interrupted = 1; }

/// Installs a SIGINT handler for its lifetime so that an interrupted run still closes its
/// outputs cleanly.
class InterruptGuard {
 public:
  InterruptGuard() {
    g_interrupted = 0;
    previous_ = std::signal(SIGINT, on_sigint);
  }
  ~InterruptGuard() {
    if (previous_ != SIG_ERR) std::signal(SIGINT, previous_);
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  void (*previous_)(int) = SIG_DFL;
};

/// The optional output files of a run.
struct Outputs {
  std::optional<PoseCsvWriter> poses;
  std::optional<StatsJsonlWriter> stats;

  void close() {
    // Close both even if the first fails, then report the first failure.
    std::optional<OutputError> failure;
    if (poses) {
      try {
        poses->close();
      } catch (const OutputError& e) {
        failure = e;
      }
    }
    if (stats) {
      try {
        stats->close();
      } catch (const OutputError& e) {
        if (!failure) failure = e;
      }
    }
    if (failure) throw *failure;
  }
};

}  // namespace

int run_command(const RunOptions& options) {
  // Everything that can be checked without the scene comes first.
  if (options.overrides.dt) check_positive("--dt", *options.overrides.dt);
  check_positive("--every", options.every);
  if (options.steps) check_positive("--steps", *options.steps);
  if (!options.out.empty()) check_extension("--out", options.out, {".csv"});
  if (!options.stats.empty()) check_extension("--stats", options.stats, {".jsonl", ".ndjson"});

  // Load, validate and build before any output file is created.
  LoadedScene loaded = load_and_build(options.scene, options.overrides);
  World& world = loaded.world;
  const std::int64_t steps = resolve_steps(options.steps, loaded.scene);

  Outputs outputs;
  if (!options.out.empty()) outputs.poses.emplace(options.out, world);
  if (!options.stats.empty()) {
    try {
      outputs.stats.emplace(options.stats);
    } catch (...) {
      if (outputs.poses) outputs.poses->discard();
      throw;
    }
  }

  ProgressBar progress(steps, !options.quiet && ProgressBar::stderr_is_terminal());
  InterruptGuard interrupt_guard;

  if (outputs.poses) outputs.poses->write(world);
  const auto start = std::chrono::steady_clock::now();
  std::int64_t done = 0;
  try {
    for (; done < steps; ++done) {
      if (g_interrupted) break;
      world.step();
      if (outputs.stats) outputs.stats->write(world);
      if (outputs.poses && (done + 1) % options.every == 0) outputs.poses->write(world);
      progress.update(done + 1);
    }
  } catch (const SimulationError&) {
    progress.abort();
    outputs.close();
    throw;
  } catch (...) {
    progress.abort();
    try {
      outputs.close();
    } catch (const OutputError&) {
      // The original failure is the one to report.
    }
    throw;
  }
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (done < steps) {
    progress.abort();
    outputs.close();
    throw Interrupted("interrupted after " + std::to_string(done) + " of " +
                      std::to_string(steps) + " steps (outputs are complete up to there)");
  }
  progress.finish(done);
  outputs.close();

  std::printf("%lld steps, %.6g s simulated in %.4g s wall (%.4g ms/step)\n",
              static_cast<long long>(done), world.time(), wall_s,
              done > 0 ? 1e3 * wall_s / static_cast<double>(done) : 0.0);
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace mabd::cli
