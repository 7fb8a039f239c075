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

/// Largest count a generator may ask for here. The loader accepts up to 1e8 bodies per
/// generator on purpose; the fuzzer would only measure memory and time with such counts.
constexpr std::int64_t kMaxGeneratorCount = 2000;
/// Largest tree depth a generator may ask for here (branches grow as 2^depth).
constexpr std::int64_t kMaxTreeDepth = 6;
/// Worlds up to this many bodies take one step.
constexpr std::size_t kMaxSteppedBodies = 64;

/// True if the "generators" section of `json` asks for more bodies than the fuzzer allows.
bool too_large(const nlohmann::json& json, bool in_generators) {
  if (json.is_object()) {
    for (const auto& [key, value] : json.items()) {
      if (in_generators && key == "depth" && value.is_number() &&
          value.get<double>() > kMaxTreeDepth) {
        return true;
      }
      if (too_large(value, in_generators || key == "generators")) return true;
    }
  } else if (json.is_array()) {
    for (const auto& value : json) {
      if (too_large(value, in_generators)) return true;
    }
  } else if (in_generators && json.is_number() && json.get<double>() > kMaxGeneratorCount) {
    return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > mabd::fuzz::kMaxInputBytes) return -1;
  const std::string text = mabd::fuzz::as_text(data, size);
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_discarded() && too_large(json, false)) return -1;
  try {
    const mabd::Scene scene = mabd::parse_scene(text, "fuzz.json", MABD_FUZZ_MESH_DIR);
    mabd::World world = mabd::build_world(scene);
    if (scene.bodies.size() <= kMaxSteppedBodies) world.step();
  } catch (const mabd::SceneError&) {
  } catch (const mabd::SimulationError&) {
  }
  return 0;
}
