// The `mabd` command-line program: options and entry points of its subcommands.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "mabd/scene.h"
#include "mabd/settings.h"
#include "mabd/world.h"

namespace mabd::cli {

inline constexpr const char* kVersion = "0.1.0";

/// Process exit codes.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,      ///< I/O failure while writing outputs, unexpected internal error
  kExitUsage = 2,        ///< bad command line or invalid scene
  kExitSimulation = 3,   ///< the simulation diverged (mabd::SimulationError)
  kExitInterrupted = 130,  ///< SIGINT (Ctrl-C): 128 + 2
  kExitTerminated = 143,   ///< SIGTERM: 128 + 15
};

/// Bad command-line value detected after parsing (exit code 2). what() is one line that
/// names the option.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An output file could not be written (exit code 1).
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The user interrupted (SIGINT, exit code 130) or terminated (SIGTERM, exit code 143) a run;
/// outputs were closed cleanly.
class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(const std::string& message, int exit_code = kExitInterrupted)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

/// Command-line overrides of scene settings.
struct SettingsOverrides {
  std::optional<double> dt;
  std::optional<RotationMode> rotation;
  std::optional<DualSolverKind> solver;
  std::optional<IntegratorMode> integrator;
  std::optional<int> threads;  ///< --threads N
  bool floating_base = false;  ///< URDF: the root link moves freely (--floating-base)
};

struct RunOptions {
  std::string scene;
  std::optional<std::int64_t> steps;  ///< default: scene.default_steps
  SettingsOverrides overrides;
  std::string out;     ///< pose CSV or binary glTF (.glb) ("" = none)
  std::string stats;   ///< per-step JSONL ("" = none)
  std::string joint_forces;  ///< joint wrench CSV ("" = none)
  std::int64_t every = 1;
  /// .glb output: sample every K steps (default: about 60 frames per simulated second).
  std::optional<std::int64_t> frame_every;
  /// .glb output: export only the first N bodies (0 = all).
  std::int64_t gltf_bodies = 0;
  bool quiet = false;
  /// Checkpoint file written at the end of the run (also when interrupted) and, with
  /// checkpoint_every > 0, every that many steps ("" = none).
  std::string checkpoint;
  std::int64_t checkpoint_every = 0;
  /// Checkpoint to continue from ("" = start at step 0); `steps` is then the step to end at.
  std::string resume;
};

struct BenchOptions {
  std::string scene;
  std::optional<std::int64_t> steps;  ///< default: scene.default_steps
  SettingsOverrides overrides;
  std::int64_t warmup = 0;
};

struct InfoOptions {
  std::string scene;
  bool floating_base = false;  ///< URDF: the root link moves freely (--floating-base)
};

int run_command(const RunOptions& options);
int bench_command(const BenchOptions& options);
int info_command(const InfoOptions& options);

/// `mabd plot STATS.jsonl -o plots.svg`.
struct PlotOptions {
  std::string stats;
  std::string output = "plots.svg";
};
int plot_command(const PlotOptions& options);

/// `mabd view RUN.glb [--stats STATS.jsonl] [-o page.html] [--serve [--port P]]`.
struct ViewOptions {
  std::string glb;
  std::string stats;   ///< "" = no charts
  std::string output;  ///< "" = next to the .glb, same stem, .html
  bool serve = false;
  int port = 8000;     ///< with --serve; 0 = any free port
};
int view_command(const ViewOptions& options);

// ---- shared helpers (common.cpp) --------------------------------------------------------

/// A loaded scene and the world built from it.
struct LoadedScene {
  Scene scene;
  World world;
};

/// Loads `path`, applies `overrides` to its settings and builds the world. Throws SceneError
/// (one line, naming the file) if the scene or the resulting world is invalid. Without
/// `keep_definitions`, the scene's bodies and joints are released while the world is built
/// (LoadedScene::scene keeps the rest): a large scene's definitions and its world are not held
/// in full at once.
LoadedScene load_and_build(const std::string& path, const SettingsOverrides& overrides,
                           bool keep_definitions = true);

/// Number of steps to take: the explicit value or the scene default. Throws UsageError when
/// it is not positive.
std::int64_t resolve_steps(const std::optional<std::int64_t>& steps, const Scene& scene);

/// Checks --dt / --steps style values; throw UsageError naming `option`.
void check_positive(const char* option, double value);
void check_positive(const char* option, std::int64_t value);
void check_non_negative(const char* option, std::int64_t value);

const char* rotation_name(RotationMode mode);      ///< "polar" | "normalized"
const char* integrator_name(IntegratorMode mode);  ///< "corotated" | "vanilla"
RotationMode parse_rotation(std::string_view name);      ///< throws UsageError
IntegratorMode parse_integrator(std::string_view name);  ///< throws UsageError

/// Counts of the constraint structure reported by `bench` (joints and constraint rows).
/// Kept in one place so that models with joints report them everywhere.
struct StructureCounts {
  std::int64_t joints = 0;
  std::int64_t rows = 0;
};
StructureCounts structure_counts(const World& world);

/// Replaces line breaks so that a message prints as one line.
std::string one_line(std::string message);

}  // namespace mabd::cli
