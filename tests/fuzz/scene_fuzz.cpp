// libFuzzer target: the JSON scene loader. Any bytes are parsed as a scene (parse_scene) and,
// when valid, built into a world (build_world) that takes one step when it is small. The only
// exceptions the API documents for these calls are SceneError (parse and build) and
// SimulationError (step); anything else that escapes, a crash or a sanitizer report is a
// finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz_util.h"
#include "mabd/error.h"
#include "mabd/scene.h"
#include "mabd/world.h"

namespace {

/// Largest number a generator may hold here. The loader accepts up to 1e8 bodies per
/// generator on purpose; the fuzzer would only measure memory and time with such counts.
constexpr std::int64_t kMaxGeneratorCount = 1000;
/// Scenes up to this many bodies are built into a world (a net of side n has about 3 n^2).
constexpr std::size_t kMaxBuiltBodies = 300;
/// Largest tree depth a generator may ask for here (branches grow as 2^depth).
constexpr std::int64_t kMaxTreeDepth = 6;
/// Worlds up to this many bodies take one step, with at most these iteration counts (a step
/// is as long as its settings ask for).
constexpr std::size_t kMaxSteppedBodies = 64;
constexpr double kMaxNewtonIterations = 50;
constexpr double kMaxDualIterations = 5000;

/// Largest cell count per axis of a generated soft box here (4^3 cubes: 384 tets; the loader
/// accepts up to a million cubes).
constexpr double kMaxSoftCells = 4;

/// Nesting depth below which too_large looks (generator counts are near the top; the loader
/// itself gets the deeper inputs).
constexpr int kMaxLookDepth = 16;

/// True if the "generators" section of `json` asks for more bodies, or a soft body's "box" for
/// more cells, than the fuzzer allows.
bool too_large(const nlohmann::json& json, bool in_generators, int depth = 0) {
  if (depth > kMaxLookDepth) return false;
  if (json.is_object()) {
    for (const auto& [key, value] : json.items()) {
      if (in_generators && key == "depth" && value.is_number() &&
          value.get<double>() > kMaxTreeDepth) {
        return true;
      }
      if (key == "cells" && value.is_array()) {
        for (const auto& n : value) {
          if (n.is_number() && n.get<double>() > kMaxSoftCells) return true;
        }
      }
      if (too_large(value, in_generators || key == "generators", depth + 1)) return true;
    }
  } else if (json.is_array()) {
    for (const auto& value : json) {
      if (too_large(value, in_generators, depth + 1)) return true;
    }
  } else if (in_generators && json.is_number() && json.get<double>() > kMaxGeneratorCount) {
    return true;
  }
  return false;
}

/// True if the settings ask for more iterations per step than the fuzzer allows.
bool too_slow(const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("settings") || !json["settings"].is_object()) {
    return false;
  }
  const auto& settings = json["settings"];
  const auto above = [&](const char* key, double limit) {
    return settings.contains(key) && settings[key].is_number() &&
           settings[key].get<double>() > limit;
  };
  return above("newton_iterations", kMaxNewtonIterations) ||
         above("dual_max_iterations", kMaxDualIterations);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > mabd::fuzz::kMaxInputBytes) return -1;
  const std::string text = mabd::fuzz::as_text(data, size);
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_discarded() && too_large(json, false)) return -1;
  const bool may_step = json.is_discarded() || !too_slow(json);
  try {
    const mabd::Scene scene = mabd::parse_scene(text, "fuzz.json", MABD_FUZZ_MESH_DIR);
    if (scene.bodies.size() > kMaxBuiltBodies) return 0;
    mabd::World world = mabd::build_world(scene);
    if (may_step && scene.bodies.size() <= kMaxSteppedBodies) world.step();
  } catch (const mabd::SceneError&) {
  } catch (const mabd::SimulationError&) {
  }
  return 0;
}
