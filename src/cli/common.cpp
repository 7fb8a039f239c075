// Helpers shared by the subcommands: scene loading with overrides, option checks, names.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <cstdio>
#include <string>
#include <utility>

#include "cli/commands.h"
#include "io/build_world.h"
#include "mabd/error.h"

namespace mabd::cli {

LoadedScene load_and_build(const std::string& path, const SettingsOverrides& overrides,
                           bool keep_definitions) {
  ModelOptions model_options;
  if (overrides.floating_base) {
    std::string ext = std::filesystem::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (ext != ".urdf") {
      throw SceneError(path + ": --floating-base: applies to URDF models only (an MJCF body "
                              "floats with a free joint; in a scene file, set "
                              "models[i].floating_base)");
    }
    model_options.floating_base = true;
  }
  Scene scene = load_model(path, model_options);
  for (const std::string& warning : scene.warnings) {
    std::fprintf(stderr, "mabd: warning: %s\n", one_line(warning).c_str());
  }
  std::fflush(stderr);
  if (overrides.dt) scene.settings.dt = *overrides.dt;
  if (overrides.rotation) scene.settings.rotation = *overrides.rotation;
  if (overrides.solver) scene.settings.solver = *overrides.solver;
  if (overrides.integrator) scene.settings.integrator = *overrides.integrator;
  if (overrides.threads) scene.settings.threads = *overrides.threads;
  // A solver chosen on the command line is named as such.
  const auto name_option = [&](std::string message) {
    const std::string solver_item = path + ": settings.solver: ";
    if (overrides.solver && message.rfind(solver_item, 0) == 0) {
      message = path + ": --solver: " + message.substr(solver_item.size());
    }
    const std::string threads_item = "settings.threads: ";
    if (overrides.threads && message.rfind(threads_item, 0) == 0) {
      message = "--threads: " + message.substr(threads_item.size());
    }
    return message;
  };
  try {
    validate_settings(scene.settings);
    World world = keep_definitions ? build_world(scene) : io::build_world_releasing(scene);
    return LoadedScene{std::move(scene), std::move(world)};
  } catch (const SceneError& e) {
    throw SceneError(name_option(e.what()));
  } catch (const InvalidArgument& e) {
    // The world rejected something the loader let through: report it against the file.
    std::string message = e.what();
    if (message.rfind(path, 0) != 0) message = path + ": " + message;
    throw SceneError(name_option(message));
  }
}

std::int64_t resolve_steps(const std::optional<std::int64_t>& steps, const Scene& scene) {
  if (steps) {
    check_positive("--steps", *steps);
    return *steps;
  }
  if (scene.default_steps <= 0) {
    throw UsageError("--steps: the scene sets no positive step count; pass --steps N");
  }
  return scene.default_steps;
}

void check_positive(const char* option, double value) {
  if (!std::isfinite(value) || value <= 0) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    throw UsageError(std::string(option) + ": must be a positive number (got " + text + ")");
  }
}

void check_positive(const char* option, std::int64_t value) {
  if (value <= 0) {
    throw UsageError(std::string(option) + ": must be a positive integer (got " +
                     std::to_string(value) + ")");
  }
}

void check_non_negative(const char* option, std::int64_t value) {
  if (value < 0) {
    throw UsageError(std::string(option) + ": must be a non-negative integer (got " +
                     std::to_string(value) + ")");
  }
}

const char* rotation_name(RotationMode mode) {
  switch (mode) {
    case RotationMode::Polar: return "polar";
    case RotationMode::Normalized: return "normalized";
  }
  return "unknown";
}

const char* integrator_name(IntegratorMode mode) {
  switch (mode) {
    case IntegratorMode::CoRotated: return "corotated";
    case IntegratorMode::Vanilla: return "vanilla";
  }
  return "unknown";
}

RotationMode parse_rotation(std::string_view name) {
  if (name == "polar") return RotationMode::Polar;
  if (name == "normalized") return RotationMode::Normalized;
  throw UsageError("--rotation: unknown mode '" + std::string(name) +
                   "' (expected polar or normalized)");
}

IntegratorMode parse_integrator(std::string_view name) {
  if (name == "corotated") return IntegratorMode::CoRotated;
  if (name == "vanilla") return IntegratorMode::Vanilla;
  throw UsageError("--integrator: unknown mode '" + std::string(name) +
                   "' (expected corotated or vanilla)");
}

StructureCounts structure_counts(const World& world) {
  StructureCounts counts;
  counts.joints = static_cast<std::int64_t>(world.joint_count());
  counts.rows = static_cast<std::int64_t>(world.constraint_rows());
  return counts;
}

std::string one_line(std::string message) {
  for (char& c : message) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!message.empty() && message.back() == ' ') message.pop_back();
  return message;
}

}  // namespace mabd::cli
