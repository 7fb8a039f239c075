// MJCF import (src/io/mjcf.cpp): the double pendulum against the same system built by hand
// and against RK4 on its Lagrangian equations; angles, default classes, several joints on a
// body, equality constraints, actuators, malformed files and warnings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>
#include <string>
#include <vector>

#include "io/double_pendulum.h"
#include "io/model_test_util.h"
#include "mabd/error.h"
#include "mabd/scene.h"
#include "mabd/world.h"

namespace {

namespace fs = std::filesystem;
using namespace mabd;
using test::error_of;
using test::has_warning;
using test::write_model;

const std::string kSource = MABD_SOURCE_DIR;
const std::string kModel = kSource + "/models/double_pendulum.xml";
constexpr double kPi = 3.14159265358979323846;

/// The rods of models/double_pendulum.xml: box geoms of density 1000 and 500 kg/m^3.
const test::Rod kUpper{1000 * 0.05 * 0.05 * 1.0, 0.05, 1.0, 30 * kPi / 180};
const test::Rod kLower{500 * 0.04 * 0.04 * 0.8, 0.04, 0.8, 20 * kPi / 180};

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
  const double max_diff = test::max_pendulum_difference(imported, by_hand, 1000);
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

TEST(Mjcf, DegreesAndRadiansGiveTheSameModel) {
  std::ifstream in(kModel);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto replace = [&](const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  replace("angle=\"degree\"", "angle=\"radian\"");
  replace("euler=\"0 30 0\"", "euler=\"0 0.52359877559829882 0\"");
  replace("euler=\"0 20 0\"", "euler=\"0 0.34906585039886590 0\"");
  replace("range=\"-150 150\"", "range=\"-2.6179938779914941 2.6179938779914941\"");
  const Scene radians = load_model(write_model("radians.xml", text));
  const Scene degrees = load_model(kModel);
  ASSERT_EQ(radians.bodies.size(), degrees.bodies.size());
  for (std::size_t i = 0; i < degrees.bodies.size(); ++i) {
    EXPECT_LT(radians.bodies[i].orientation.angularDistance(degrees.bodies[i].orientation), 1e-15);
    EXPECT_LT((radians.bodies[i].position - degrees.bodies[i].position).norm(), 1e-15);
  }
  EXPECT_NEAR(radians.joints[1].def.limits->lower, degrees.joints[1].def.limits->lower, 1e-15);
  EXPECT_NEAR(degrees.joints[1].def.limits->upper, 150 * kPi / 180, 1e-15);
  // Read as radians, "30" would be 30 rad: the files differ only in the compiler angle.
  text.replace(text.find("0.52359877559829882"), 19, "30");
  const Scene thirty = load_model(write_model("thirty.xml", text));
  EXPECT_NEAR(thirty.bodies[0].orientation.angularDistance(Quat::Identity()),
              std::abs(std::remainder(30.0, 2 * kPi)), 1e-12);
}

TEST(Mjcf, EulerSequences) {
  // Lower case: axes that move with the frame (R = Rx Ry Rz for "xyz"); upper case: fixed
  // axes (R = Rz Ry Rx for "XYZ").
  const std::string body = R"(<worldbody><body name="b" euler="0.3 0.5 0.7">
      <joint/><geom size="0.1"/></body></worldbody></mujoco>)";
  const Quat rx(Eigen::AngleAxisd(0.3, Vec3::UnitX())), ry(Eigen::AngleAxisd(0.5, Vec3::UnitY())),
      rz(Eigen::AngleAxisd(0.7, Vec3::UnitZ()));
  const Scene moving = load_model(write_model(
      "xyz.xml", "<mujoco><compiler angle=\"radian\" eulerseq=\"xyz\"/>" + body));
  const Scene fixed = load_model(write_model(
      "XYZ.xml", "<mujoco><compiler angle=\"radian\" eulerseq=\"XYZ\"/>" + body));
  EXPECT_LT(moving.bodies[0].orientation.angularDistance(rx * ry * rz), 1e-15);
  EXPECT_LT(fixed.bodies[0].orientation.angularDistance(rz * ry * rx), 1e-15);
}

const char* const kFeatures = R"(<mujoco model="features">
  <compiler angle="radian"/>
  <default>
    <joint damping="1"/>
    <position kp="50"/>
    <default class="a">
      <joint stiffness="2"/>
      <default class="b">
        <joint damping="3"/>
      </default>
    </default>
  </default>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1"/>
    <body name="base" pos="0 0 1">
      <geom type="box" size="0.1 0.1 0.1"/>
      <body name="arm" childclass="a">
        <joint name="j1" axis="1 0 0"/>
        <joint name="j2" axis="0 1 0" class="b"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.03"/>
        <body name="hand" pos="0 0 -0.5">
          <joint name="slide" type="slide" axis="0 0 1" range="-0.1 0.1"/>
          <geom type="sphere" size="0.05"/>
          <site name="tip"/>
        </body>
        <body name="weight" pos="0.1 0 0">
          <geom type="sphere" size="0.02" mass="0.3"/>
        </body>
      </body>
    </body>
    <body name="crate" pos="1 0 1">
      <freejoint/>
      <geom type="box" size="0.1 0.1 0.1"/>
    </body>
    <body name="bob" pos="0 0 0.5">
      <joint name="lj" axis="0 1 0"/>
      <geom type="sphere" size="0.05"/>
    </body>
  </worldbody>
  <equality>
    <connect name="loop" body1="hand" body2="bob" anchor="0 0 0"/>
    <weld body1="crate" body2="bob"/>
  </equality>
  <actuator>
    <position joint="j1" kp="10" gear="2" forcerange="-5 5"/>
    <position joint="j2"/>
    <velocity joint="slide" kv="4"/>
    <motor joint="lj" gear="3" ctrllimited="true" ctrlrange="-2 2"/>
  </actuator>
  <contact>
    <exclude body1="hand" body2="bob"/>
  </contact>
  <sensor/>
</mujoco>
)";

const SceneJoint& joint_named(const Scene& scene, const std::string& name) {
  for (const SceneJoint& j : scene.joints) {
    if (j.def.name == name) return j;
  }
  ADD_FAILURE() << "no joint " << name;
  return scene.joints.front();
}

TEST(Mjcf, DefaultClassesJointsEqualitiesActuatorsAndExclusions) {
  const Scene scene = load_model(write_model("features.xml", kFeatures));
  std::vector<std::string> names;
  for (const BodyDef& b : scene.bodies) names.push_back(b.name);
  // The static floor and base; "arm" has two joints, so an auxiliary body sits between them;
  // "weight" has none, so it is welded into "arm".
  EXPECT_EQ(names, (std::vector<std::string>{"floor", "base", "arm/j1", "arm", "hand", "crate",
                                             "bob"}));
  EXPECT_EQ(scene.bodies[0].shape.type, ShapeType::Plane);
  EXPECT_EQ(scene.bodies[1].kind, BodyKind::Static);
  EXPECT_EQ(scene.settings.contact.model, ContactModel::Penalty);

  // Default classes: j1 takes class a (childclass), j2 class b (its own), both inherit.
  const SceneJoint& j1 = joint_named(scene, "j1");
  const SceneJoint& j2 = joint_named(scene, "j2");
  EXPECT_EQ(j1.body_a, "base");
  EXPECT_EQ(j1.body_b, "arm/j1");
  EXPECT_EQ(j2.body_a, "arm/j1");
  EXPECT_EQ(j2.body_b, "arm");
  EXPECT_EQ(j1.def.spring->damping, 1.0);
  EXPECT_EQ(j1.def.spring->stiffness, 2.0);
  EXPECT_EQ(j2.def.spring->damping, 3.0);
  EXPECT_EQ(j2.def.spring->stiffness, 2.0);
  EXPECT_EQ(joint_named(scene, "lj").def.spring->stiffness, 0.0);  // class main: damping only

  // Actuators: joint stiffness kp gear^2, force limit |gear| forcerange; class defaults.
  EXPECT_EQ(j1.def.drive->mode, DriveMode::Position);
  EXPECT_EQ(j1.def.drive->stiffness, 40.0);
  EXPECT_EQ(j1.def.drive->max_force, 10.0);
  EXPECT_EQ(j2.def.drive->stiffness, 50.0);
  EXPECT_TRUE(std::isinf(j2.def.drive->max_force));
  const SceneJoint& slide = joint_named(scene, "slide");
  EXPECT_EQ(slide.def.type, JointType::Prismatic);
  EXPECT_EQ(slide.def.limits->upper, 0.1);
  EXPECT_EQ(slide.def.drive->mode, DriveMode::Velocity);
  EXPECT_EQ(slide.def.drive->damping, 4.0);
  // A motor is an effort drive: torque gear * ctrl, limited to |gear| max|ctrlrange|.
  const SceneJoint& lj = joint_named(scene, "lj");
  EXPECT_EQ(lj.def.drive->mode, DriveMode::Effort);
  EXPECT_EQ(lj.def.drive->target, 0.0);
  EXPECT_EQ(lj.def.drive->max_force, 6.0);

  // Equalities: connect is a ball joint at body1's anchor, weld a fixed joint.
  const SceneJoint& loop = joint_named(scene, "loop");
  EXPECT_EQ(loop.def.type, JointType::Ball);
  EXPECT_EQ(loop.body_a, "hand");
  EXPECT_LT((loop.def.anchor - Vec3(0, 0, 0.5)).norm(), 1e-15);
  EXPECT_EQ(joint_named(scene, "equality 1").def.type, JointType::Fixed);
  ASSERT_EQ(scene.collision_exclude.size(), 1u);
  EXPECT_EQ(scene.collision_exclude[0], (std::pair<std::string, std::string>{"hand", "bob"}));

  // Unsupported elements are named in warnings.
  EXPECT_TRUE(has_warning(scene, "<site name='tip'>: element <site> is not supported"));
  EXPECT_TRUE(has_warning(scene, "<sensor>: element <sensor> is not supported"));

  // Masses: geoms at density 1000 unless given; the welded weight joins the arm; the
  // auxiliary body takes 1e-3 of the arm's mass.
  World world = build_world(scene);
  const double r = 0.03, capsule = 1000 * (kPi * r * r * 0.5 + 4.0 / 3.0 * kPi * r * r * r);
  const double arm = world.body_info(*world.find_body("arm")).mass;
  EXPECT_NEAR(arm, capsule + 0.3, 1e-9);
  EXPECT_NEAR(world.body_info(*world.find_body("arm/j1")).mass, 1e-3 * arm, 1e-12);
  for (int n = 0; n < 20; ++n) world.step();
  EXPECT_TRUE(world.com_position(*world.find_body("hand")).allFinite());
  EXPECT_LT(world.last_step().joint_residual, 1e-6);
}

TEST(Mjcf, ReferencePositionsSetTheJointZero) {
  // ref: the joint's value in the model's configuration (MuJoCo's qpos0 = ref).
  const Scene scene = load_model(write_model("ref.xml", R"(<mujoco>
  <worldbody>
    <body name="arm" pos="0 0 1" euler="0 40 0">
      <joint name="hinge" axis="0 1 0" ref="30" range="0 60"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.03"/>
      <body name="slider" pos="0 0 -0.5">
        <joint name="slide" type="slide" axis="0 0 1" ref="0.1" range="0 0.2"/>
        <geom type="box" size="0.05 0.05 0.05"/>
      </body>
    </body>
  </worldbody>
</mujoco>)"));
  World world = build_world(scene);
  EXPECT_NEAR(joint_angle(world, "hinge"), kPi / 6, 1e-14);
  EXPECT_NEAR(joint_angle(world, "slide"), 0.1, 1e-14);
  EXPECT_NEAR(world.joint_limits(*world.find_joint("hinge"))->upper, kPi / 3, 1e-15);
  // The arm, 40 degrees from hanging straight down, swings down onto the lower limit at 0.
  double lowest = INFINITY;
  for (int n = 0; n < 500; ++n) {
    world.step();
    lowest = std::min(lowest, joint_angle(world, "hinge"));
  }
  EXPECT_GT(lowest, -1e-3);
  EXPECT_LT(lowest, 0.01);
}

struct BadCase {
  const char* file;
  const char* message;  // after "PATH: "
};

TEST(Mjcf, MalformedFilesNameFileLineAndElement) {
  const BadCase cases[] = {
      {"mjcf_unclosed.xml",
       "line 3: malformed XML: an element opened here is not closed, or closed by another tag "
       "(XML_ERROR_MISMATCHED_ELEMENT)"},
      {"mjcf_missing_attribute.xml", "line 5: <inertial>: missing attribute 'mass'"},
      {"mjcf_unknown_joint_type.xml",
       "line 4: <joint name='pin'>: unknown joint type 'hinge2' (known: hinge, slide, ball, "
       "free)"},
      {"mjcf_bad_number.xml", "line 5: <geom>: attribute 'size': '0.02x' is not a number"},
  };
  for (const BadCase& c : cases) {
    const std::string path = kSource + "/tests/data/bad/" + c.file;
    EXPECT_EQ(error_of(path), path + ": " + c.message);
  }
}

TEST(Mjcf, NothingIsWrittenForARejectedFile) {
  const std::string bad = kSource + "/tests/data/bad/mjcf_bad_number.xml";
  const fs::path out = fs::path(testing::TempDir()) / "mjcf_rejected.csv";
  fs::remove(out);
  const std::string command = std::string(MABD_CLI_PATH) + " run -q '" + bad + "' --out '" +
                              out.string() + "' >/dev/null 2>&1";
  EXPECT_NE(std::system(command.c_str()), 0);
  EXPECT_FALSE(fs::exists(out));
}

TEST(Mjcf, CommandLineRunsAModel) {
  const fs::path out = fs::path(testing::TempDir()) / "mjcf_pendulum.csv";
  const std::string command = std::string(MABD_CLI_PATH) + " run -q '" + kModel +
                              "' --steps 10 --out '" + out.string() + "'";
  ASSERT_EQ(std::system(command.c_str()), 0);
  std::ifstream in(out);
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_EQ(lines, 1 + 11 * 2);  // header, two bodies at steps 0 to 10
}

/// Debian's libmujoco-samples (not a dependency of mabd): the humanoid, read where present.
TEST(Mjcf, MujocoSampleHumanoid) {
  const std::string path = "/usr/share/mujoco/model/humanoid/humanoid.xml";
  if (!fs::exists(path)) GTEST_SKIP() << path << " not installed (libmujoco-samples)";
  const Scene scene = load_model(path);
  // 13 MuJoCo bodies + 9 auxiliary bodies (bodies with 2 or 3 hinges) + the floor.
  EXPECT_EQ(scene.bodies.size(), 23u);
  EXPECT_EQ(scene.joints.size(), 21u);
  // Its 21 motors are effort drives at zero control.
  int motors = 0;
  for (const SceneJoint& j : scene.joints) {
    motors += j.def.drive && j.def.drive->mode == DriveMode::Effort;
  }
  EXPECT_EQ(motors, 21);
  World world = build_world(scene);
  const BodyId torso = *world.find_body("torso");
  const double z0 = world.com_position(torso).z();
  for (int n = 0; n < 100; ++n) world.step();
  EXPECT_LT(world.com_position(torso).z(), z0);  // it falls (no motor holds it)
  EXPECT_LT(world.last_step().joint_residual, 1e-6);
}

}  // namespace
