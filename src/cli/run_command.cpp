// `mabd run`: simulate a scene, optionally streaming poses and joint wrenches (CSV) and
// per-step stats (JSONL), or recording an animated binary glTF (.glb).
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "cli/output_writers.h"
#include "cli/progress.h"
#include "io/gltf_export.h"
#include "mabd/error.h"

namespace mabd::cli {

namespace {

/// The signal (SIGINT or SIGTERM) that asked the run to stop, 0 while none has.
volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_run_stop_signal(int signal) { g_stop_signal = signal; }

/// Installs SIGINT and SIGTERM handlers for its lifetime so that an interrupted or terminated
/// run stops at the end of its step and still closes its outputs cleanly.
class InterruptGuard {
 public:
  InterruptGuard() {
    g_stop_signal = 0;
    previous_int_ = std::signal(SIGINT, on_run_stop_signal);
    previous_term_ = std::signal(SIGTERM, on_run_stop_signal);
  }
  ~InterruptGuard() {
    if (previous_int_ != SIG_ERR) std::signal(SIGINT, previous_int_);
    if (previous_term_ != SIG_ERR) std::signal(SIGTERM, previous_term_);
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  void (*previous_int_)(int) = SIG_DFL;
  void (*previous_term_)(int) = SIG_DFL;
};

/// The optional output files of a run.
struct Outputs {
  std::optional<PoseCsvWriter> poses;
  std::optional<GlbWriter> glb;
  std::optional<StatsJsonlWriter> stats;
  std::optional<JointForceCsvWriter> joint_forces;

  /// Closes every open output even if one fails, then reports the first failure.
  void close() {
    std::optional<OutputError> failure;
    const auto close_one = [&failure](auto& writer) {
      if (!writer) return;
      try {
        writer->close();
      } catch (const OutputError& e) {
        if (!failure) failure = e;
      }
    };
    close_one(poses);
    close_one(glb);
    close_one(stats);
    close_one(joint_forces);
    if (failure) throw *failure;
  }

  /// Closes and deletes every output created so far (setup failed before the run started).
  void discard() {
    if (poses) poses->discard();
    if (glb) glb->discard();
    if (stats) stats->discard();
    if (joint_forces) joint_forces->discard();
  }
};

/// Fails when two output options name the same file.
void check_distinct_outputs(const RunOptions& options) {
  const std::pair<const char*, const std::string*> outputs[] = {
      {"--out", &options.out}, {"--stats", &options.stats},
      {"--joint-forces", &options.joint_forces}, {"--checkpoint", &options.checkpoint}};
  for (std::size_t i = 0; i < std::size(outputs); ++i) {
    for (std::size_t j = i + 1; j < std::size(outputs); ++j) {
      if (outputs[i].second->empty() || outputs[j].second->empty()) continue;
      std::error_code ec_a, ec_b;
      const auto a = std::filesystem::weakly_canonical(*outputs[i].second, ec_a);
      const auto b = std::filesystem::weakly_canonical(*outputs[j].second, ec_b);
      const bool same = (ec_a || ec_b) ? *outputs[i].second == *outputs[j].second : a == b;
      if (same) {
        throw UsageError(std::string(outputs[j].first) + ": '" + *outputs[j].second +
                         "' is also the " + outputs[i].first + " file");
      }
    }
  }
}

/// Prints the world's warnings from index `first` on to stderr; returns how many there are.
/// Warnings raised while stepping are printed once the steps are over, so that they do not
/// break the progress bar.
std::size_t print_warnings(const World& world, std::size_t first) {
  const std::vector<std::string>& warnings = world.warnings();
  for (std::size_t i = first; i < warnings.size(); ++i) {
    std::fprintf(stderr, "mabd: warning: %s\n", one_line(warnings[i]).c_str());
  }
  std::fflush(stderr);
  return warnings.size();
}

bool is_glb(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  for (char& c : extension) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return extension == ".glb";
}

/// Prints what a large glTF export will hold and about how big it will be.
void report_gltf_size(const std::string& path, const io::GltfEstimate& estimate,
                      std::size_t all_bodies) {
  constexpr std::size_t kLarge = 200000;  // body x frame samples
  constexpr std::size_t kLargeBytes = kLarge * 28;  // what they weigh (28 bytes a pose)
  const bool many_samples = estimate.samples > kLarge;
  if (!many_samples && estimate.soft_bytes <= kLargeBytes) return;
  std::string soft;
  if (estimate.soft_bodies > 0) {
    char text[96];
    std::snprintf(text, sizeof text, " and %zu soft bodies' morph targets (%.1f MB)",
                  estimate.soft_bodies, static_cast<double>(estimate.soft_bytes) / 1e6);
    soft = text;
  }
  // --bodies N leaves the soft bodies' part as it is; fewer frames shrink both.
  const char* hint = !many_samples ? "a larger --frame-every K; --bodies N keeps every soft body"
                     : estimate.soft_bodies > 0
                         ? "--bodies N (rigid bodies only) or a larger --frame-every K"
                         : "--bodies N or a larger --frame-every K";
  std::fprintf(stderr,
               "mabd: --out %s: %zu of %zu bodies x %zu frames = %zu samples%s, about %.1f MB "
               "(kept in memory, written at the end; reduce with %s)\n",
               path.c_str(), estimate.bodies, all_bodies, estimate.frames, estimate.samples,
               soft.c_str(), static_cast<double>(estimate.bytes) / 1e6, hint);
  std::fflush(stderr);
}

/// Writes the run's checkpoint (an OutputError naming the option if it cannot).
void save_checkpoint(const World& world, const std::string& path) {
  try {
    write_checkpoint(world, path);
  } catch (const Error& e) {
    throw OutputError(std::string("--checkpoint: ") + e.what());
  }
}

}  // namespace

int run_command(const RunOptions& options) {
  // Everything that can be checked without the scene comes first.
  if (options.overrides.dt) check_positive("--dt", *options.overrides.dt);
  check_positive("--every", options.every);
  if (options.steps) check_positive("--steps", *options.steps);
  const bool glb = !options.out.empty() && is_glb(options.out);
  if (!options.out.empty() && !glb) check_extension("--out", options.out, {".csv"});
  if (options.frame_every) {
    check_positive("--frame-every", *options.frame_every);
    if (!glb) throw UsageError("--frame-every: only with --out x.glb");
  }
  check_non_negative("--bodies", options.gltf_bodies);
  if (options.gltf_bodies > 0 && !glb) throw UsageError("--bodies: only with --out x.glb");
  if (!options.stats.empty()) check_extension("--stats", options.stats, {".jsonl", ".ndjson"});
  if (!options.joint_forces.empty()) {
    check_extension("--joint-forces", options.joint_forces, {".csv"});
  }
  if (options.checkpoint_every != 0) {
    check_positive("--checkpoint-every", options.checkpoint_every);
    if (options.checkpoint.empty()) throw UsageError("--checkpoint-every: needs --checkpoint FILE");
  }
  check_distinct_outputs(options);
  // SIGINT and SIGTERM from here on end the run cleanly: one that arrives while the scene
  // loads or the outputs are set up stops it before its first step, with whole outputs.
  InterruptGuard interrupt_guard;

  // Load, validate and build before any output file is created.
  // The glTF export reads the bodies' shapes; the other outputs only the world.
  LoadedScene loaded = load_and_build(options.scene, options.overrides, glb);
  World& world = loaded.world;
  const std::int64_t steps = resolve_steps(options.steps, loaded.scene);
  if (!options.resume.empty()) {
    read_checkpoint(world, options.resume);  // InvalidArgument naming the file
    if (world.step_count() > steps) {
      throw UsageError("--resume: the checkpoint is at step " +
                       std::to_string(world.step_count()) + ", beyond the run's " +
                       std::to_string(steps) + " steps (--steps is the step to end at)");
    }
  }
  const std::int64_t first_step = world.step_count();
  const std::size_t warned = print_warnings(world, 0);
  const std::int64_t frame_every =
      options.frame_every ? *options.frame_every : io::default_frame_every(world.settings().dt);
  const std::size_t glb_frames = static_cast<std::size_t>(steps / frame_every) + 1;
  if (glb) {
    std::size_t bodies = world.body_count();
    if (options.gltf_bodies > 0) {
      bodies = std::min(bodies, static_cast<std::size_t>(options.gltf_bodies));
    }
    report_gltf_size(options.out,
                     io::estimate_gltf(bodies, glb_frames, io::soft_surface_sizes(world)),
                     world.body_count());
  }

  Outputs outputs;
  try {
    if (glb) {
      outputs.glb.emplace(options.out, world, loaded.scene.bodies,
                          static_cast<std::size_t>(options.gltf_bodies));
      outputs.glb->reserve(glb_frames);
    } else if (!options.out.empty()) {
      outputs.poses.emplace(options.out, world);
    }
    if (!options.stats.empty()) outputs.stats.emplace(options.stats);
    if (!options.joint_forces.empty()) outputs.joint_forces.emplace(options.joint_forces, world);
  } catch (...) {
    outputs.discard();
    throw;
  }
  loaded.scene = Scene{};  // the world and the outputs are set up: definitions no longer needed

  ProgressBar progress(steps, !options.quiet && ProgressBar::stderr_is_terminal());

  if (outputs.poses) outputs.poses->write(world);
  if (outputs.glb) outputs.glb->write(world);
  const auto start = std::chrono::steady_clock::now();
  std::int64_t done = 0;
  const std::int64_t to_do = steps - first_step;
  try {
    for (; done < to_do; ++done) {
      if (g_stop_signal != 0) break;
      world.step();
      // Sampled on the absolute step, so that a resumed run writes the same rows.
      const std::int64_t step = world.step_count();
      if (outputs.stats) outputs.stats->write(world);
      if (step % options.every == 0) {
        if (outputs.poses) outputs.poses->write(world);
        if (outputs.joint_forces) outputs.joint_forces->write(world);
      }
      if (outputs.glb && step % frame_every == 0) outputs.glb->write(world);
      if (options.checkpoint_every > 0 && step % options.checkpoint_every == 0) {
        save_checkpoint(world, options.checkpoint);
      }
      progress.update(step);
    }
  } catch (const SimulationError&) {
    progress.abort();
    print_warnings(world, warned);
    outputs.close();
    throw;
  } catch (...) {
    progress.abort();
    print_warnings(world, warned);
    try {
      outputs.close();
    } catch (const OutputError&) {
      // The original failure is the one to report.
    }
    throw;
  }
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // The final checkpoint: the end of the run, or where it was interrupted (a diverged run
  // keeps its last periodic one).
  const bool checkpointed = options.checkpoint_every > 0 &&
                            world.step_count() % options.checkpoint_every == 0 && done > 0;
  if (!options.checkpoint.empty() && !checkpointed) {
    try {
      save_checkpoint(world, options.checkpoint);
    } catch (const OutputError&) {
      progress.abort();
      outputs.close();
      throw;
    }
  }
  if (done < to_do) {
    progress.abort();
    print_warnings(world, warned);
    outputs.close();
    const bool terminated = g_stop_signal == SIGTERM;
    throw Interrupted(std::string(terminated ? "terminated (SIGTERM)" : "interrupted") +
                          " after " + std::to_string(done) + " of " + std::to_string(to_do) +
                          " steps (outputs are complete up to there)",
                      terminated ? kExitTerminated : kExitInterrupted);
  }
  progress.finish(world.step_count());
  print_warnings(world, warned);
  outputs.close();

  std::printf("%lld steps, %.6g s simulated in %.4g s wall (%.4g ms/step)\n",
              static_cast<long long>(done), world.time(), wall_s,
              done > 0 ? 1e3 * wall_s / static_cast<double>(done) : 0.0);
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace mabd::cli
