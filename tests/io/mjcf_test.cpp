// MJCF import (src/io/mjcf.cpp): the double pendulum against the same system built by hand
// and against RK4 on its Lagrangian equations; angles, default classes, several joints on a
// body, equality constraints, actuators, malformed files and warnings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/double_pendulum.h"
#include "mabd/error.h"
#include "mabd/scene.h"
#include "mabd/world.h"

namespace {

namespace fs = std::filesystem;
using namespace mabd;

const std::string kSource = MABD_SOURCE_DIR;
const std::string kModel = kSource + "/models/double_pendulum.xml";
constexpr double kPi = 3.14159265358979323846;

/// The rods of models/double_pendulum.xml: box geoms of density 1000 and 500 kg/m^3.
const test::Rod kUpper{1000 * 0.05 * 0.05 * 1.0, 0.05, 1.0, 30 * kPi / 180};
const test::Rod kLower{500 * 0.04 * 0.04 * 0.8, 0.04, 0.8, 20 * kPi / 180};

/// Writes `text` to a file named `name` in a fresh directory; returns its path.
std::string write_model(const std::string& name, const std::string& text) {
  const fs::path dir = fs::path(testing::TempDir()) / ("mjcf_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

std::string error_of(const std::string& path) {
  try {
    load_model(path);
  } catch (const SceneError& e) {
    return e.what();
  }
  ADD_FAILURE() << path << ": no SceneError";
  return {};
}

bool has_warning(const Scene& scene, const std::string& part) {
  return std::any_of(scene.warnings.begin(), scene.warnings.end(),
                     [&](const std::string& w) { return w.find(part) != std::string::npos; });
}

double joint_angle(const World& world, const char* name) {
  return world.joint_position(*world.find_joint(name));
}

TEST(Mjcf, DoublePendulumMatchesTheSameSystemBuiltByHand) {
  const Scene scene = load_model(kModel);
  EXPECT_TRUE(scene.warnings.empty()) << scene.warnings.front();
  World imported = build_world(scene);
  World by_hand = test::build_double_pendulum(scene.settings, 2.0, kUpper, kLower,
                                              JointLimits{-150 * kPi / 180, 150 * kPi / 180});
  ASSERT_EQ(imported.body_count(), 2u);
  for (const char* name : {"upper", "lower"}) {
    EXPECT_NEAR(imported.body_info(*imported.find_body(name)).mass,
                by_hand.body_info(*by_hand.find_body(name)).mass, 1e-12);
  }
  ASSERT_TRUE(imported.joint_limits(*imported.find_joint("elbow")));
  EXPECT_NEAR(imported.joint_limits(*imported.find_joint("elbow"))->upper, 150 * kPi / 180, 1e-15);
  double max_diff = 0;
  for (int n = 0; n < 1000; ++n) {
    imported.step();
    by_hand.step();
    for (const char* name : {"upper", "lower"}) {
      const BodyId a = *imported.find_body(name), b = *by_hand.find_body(name);
      max_diff = std::max(max_diff, (imported.com_position(a) - by_hand.com_position(b)).norm());
      max_diff = std::max(max_diff, imported.pose(a).orientation.angularDistance(
                                        by_hand.pose(b).orientation));
    }
  }
  std::printf("imported vs by hand, 1000 steps: max COM / orientation difference %.3g\n",
              max_diff);
  EXPECT_LT(max_diff, 1e-9);
  // The pendulum moved: the comparison is not between two resting systems.
  EXPECT_GT(std::abs(joint_angle(imported, "shoulder")), 0.1);
}

/// Largest hinge-angle error (rad) over 1 s against RK4 (2e5 steps: its error is ~1e-13 rad),
/// the bodies' Young's modulus set to `youngs_modulus` (Pa).
double pendulum_error(double dt, double youngs_modulus) {
  Scene scene = load_model(kModel);
  scene.settings.dt = dt;
  for (BodyDef& body : scene.bodies) body.material.youngs_modulus = youngs_modulus;
  World world = build_world(scene);
  const double g = 9.81;
  test::PendulumState s = {kUpper.tilt, kUpper.tilt + kLower.tilt, 0, 0};
  const int steps = static_cast<int>(std::lround(1.0 / dt));
  const int substeps = 200000 / steps;
  double max_error = 0;
  for (int n = 0; n < steps; ++n) {
    world.step();
    s = test::integrate_pendulum(s, kUpper, kLower, g, dt, substeps);
    const double theta1 = s[0] - kUpper.tilt;
    const double theta2 = s[1] - s[0] - kLower.tilt;
    max_error = std::max(max_error, std::abs(joint_angle(world, "shoulder") - theta1));
    max_error = std::max(max_error, std::abs(joint_angle(world, "elbow") - theta2));
  }
  return max_error;
}

TEST(Mjcf, DoublePendulumFollowsItsLagrangianEquations) {
  // Affine bodies are elastic: at the default Young's modulus (1e8 Pa) the rods stretch and
  // bend enough to shift the angles by ~3e-4 rad over 1 s whatever the step. Made 1e4 times
  // stiffer they are rigid to ~1e-7 rad, and the integrator (generalized-alpha, second order)
  // converges to the rigid RK4 reference: the error falls by ~4 when the step halves
  // (measured: 3.2e-6, 8.1e-7, 2.1e-7 rad).
  const double e1 = pendulum_error(1e-3, 1e12), e2 = pendulum_error(5e-4, 1e12),
               e3 = pendulum_error(2.5e-4, 1e12);
  std::printf("max hinge angle error over 1 s, E = 1e12 Pa: h=1e-3 %.3g rad, h=5e-4 %.3g, "
              "h=2.5e-4 %.3g\n",
              e1, e2, e3);
  EXPECT_LT(e1, 5e-6);
  EXPECT_GT(e1 / e2, 3.5);
  EXPECT_GT(e2 / e3, 3.5);
  // The default material: within the elastic offset.
  const double elastic = pendulum_error(1e-3, Material{}.youngs_modulus);
  std::printf("max hinge angle error over 1 s, default E: %.3g rad\n", elastic);
  EXPECT_LT(elastic, 5e-4);
}

}  // namespace
