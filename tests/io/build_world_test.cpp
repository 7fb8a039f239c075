// Scene -> World: items the world rejects are reported against the file, before a run starts.
#include <gtest/gtest.h>

#include <string>

#include "mabd/error.h"
#include "mabd/scene.h"
#include "mabd/world.h"

namespace {

/// A scene of four balls: "a" joined to "b", "c" and "d" (a tree) or in a row (a chain).
std::string star_or_row(const std::string& solver, bool star) {
  const std::string second = star ? "a" : "b";
  const std::string third = star ? "a" : "c";
  return R"({"settings": {"solver": ")" + solver + R"("},
    "materials": {"m": {"density": 1000, "youngs_modulus": 1e7}},
    "bodies": [
      {"name": "a", "shape": {"type": "sphere", "radius": 0.1}, "material": "m"},
      {"name": "b", "shape": {"type": "sphere", "radius": 0.1}, "material": "m",
       "position": [1, 0, 0]},
      {"name": "c", "shape": {"type": "sphere", "radius": 0.1}, "material": "m",
       "position": [2, 0, 0]},
      {"name": "d", "shape": {"type": "sphere", "radius": 0.1}, "material": "m",
       "position": [3, 0, 0]}],
    "joints": [
      {"name": "ab", "type": "ball", "bodies": ["a", "b"], "anchor": [0.5, 0, 0]},
      {"name": "bc", "type": "ball", "bodies": [")" + second +
         R"(", "c"], "anchor": [1.5, 0, 0]},
      {"name": "cd", "type": "ball", "bodies": [")" + third +
         R"(", "d"], "anchor": [2.5, 0, 0]}]})";
}

mabd::World build(const std::string& json) {
  mabd::Scene scene = mabd::parse_scene(json, "star.json");
  scene.path = "star.json";
  return mabd::build_world(scene);
}

TEST(BuildWorld, ChainSolverOnATreeIsRejectedWhenTheWorldIsBuilt) {
  try {
    build(star_or_row("chain", /*star=*/true));
    FAIL() << "expected SceneError";
  } catch (const mabd::SceneError& e) {
    EXPECT_EQ(std::string(e.what()),
              "star.json: settings.solver: \"chain\" needs every joint component to be a chain, "
              "but one is a tree (4 bodies, 3 joints, 0 loops; see mabd info); use \"auto\", "
              "\"tree\" or \"sparse\"");
  }
  // The same bodies in a row, and the star under the other solvers, are fine, and step.
  for (const auto& [solver, star] : {std::pair<const char*, bool>{"chain", false},
                                     {"auto", true}, {"tree", true}, {"sparse", true}}) {
    mabd::World world = build(star_or_row(solver, star));
    EXPECT_NO_THROW(world.step()) << solver;
  }
}

}  // namespace
