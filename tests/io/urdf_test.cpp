// URDF import (src/io/urdf.cpp): the double pendulum against the same system built by hand,
// inertia frames and off-diagonal tensors, fixed joints, fixed and floating bases, malformed
// files and warnings.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <Eigen/Eigenvalues>

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
const std::string kModel = kSource + "/models/double_pendulum.urdf";

const BodyDef& body_named(const Scene& scene, const std::string& name) {
  for (const BodyDef& b : scene.bodies) {
    if (b.name == name) return b;
  }
  ADD_FAILURE() << "no body " << name;
  return scene.bodies.front();
}

TEST(Urdf, DoublePendulumMatchesTheSameSystemBuiltByHand) {
  const Scene scene = load_model(kModel);
  World imported = build_world(scene);
  World by_hand = test::build_double_pendulum(scene.settings, 2.0, {1.0, 0.05, 1.0, 0.6},
                                              {0.5, 0.04, 0.8, 0.4}, JointLimits{-2.5, 2.5});
  // The base is a static body welded to the world; the rods are the moving bodies.
  EXPECT_EQ(body_named(scene, "base").kind, BodyKind::Static);
  ASSERT_EQ(imported.joint_count(), 2u);
  for (const char* name : {"upper", "lower"}) {
    const BodyInfo& a = imported.body_info(*imported.find_body(name));
    const BodyInfo& b = by_hand.body_info(*by_hand.find_body(name));
    EXPECT_NEAR(a.mass, b.mass, 1e-14);
    EXPECT_LT((a.principal_inertia - b.principal_inertia).norm(), 1e-14);
  }
  const double max_diff = test::max_pendulum_difference(imported, by_hand, 1000);
  std::printf("imported vs by hand, 1000 steps: max COM / orientation difference %.3g\n",
              max_diff);
  EXPECT_LT(max_diff, 1e-9);
  EXPECT_GT(std::abs(imported.joint_position(*imported.find_joint("shoulder"))), 0.1);
  // The body frame is the link frame: the upper rod's frame stays at the shoulder.
  EXPECT_LT((imported.pose(*imported.find_body("upper")).position - Vec3(0, 0, 2)).norm(), 1e-6);
}

TEST(Urdf, InertiaInItsOwnFrameWithProductsOfInertia) {
  // A tensor with products of inertia, in a frame rotated and offset from the link frame.
  const Vec3 rpy(0.3, -0.2, 0.9), xyz(0.1, -0.05, 0.2);
  Mat3 I;
  I << 0.30, 0.02, -0.01, 0.02, 0.25, 0.03, -0.01, 0.03, 0.12;
  const double mass = 2.0;
  char text[1024];
  std::snprintf(text, sizeof text, R"(<robot name="r">
  <link name="base"/>
  <link name="arm"><inertial>
    <origin xyz="%.17g %.17g %.17g" rpy="%.17g %.17g %.17g"/>
    <mass value="%.17g"/>
    <inertia ixx="%.17g" ixy="%.17g" ixz="%.17g" iyy="%.17g" iyz="%.17g" izz="%.17g"/>
  </inertial></link>
  <joint name="pin" type="continuous"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 1" rpy="0 0 0.5"/><axis xyz="0 0 1"/></joint>
</robot>)",
                xyz.x(), xyz.y(), xyz.z(), rpy.x(), rpy.y(), rpy.z(), mass, I(0, 0), I(0, 1),
                I(0, 2), I(1, 1), I(1, 2), I(2, 2));
  const Scene scene = load_model(write_model("inertia.urdf", text));
  const BodyDef& arm = body_named(scene, "arm");
  // Expected, in the link frame: R I R^T about the centre of mass at xyz (URDF rpy: fixed
  // axes x, y, z).
  const Mat3 R = (Eigen::AngleAxisd(rpy.z(), Vec3::UnitZ()) *
                  Eigen::AngleAxisd(rpy.y(), Vec3::UnitY()) *
                  Eigen::AngleAxisd(rpy.x(), Vec3::UnitX()))
                     .toRotationMatrix();
  const Mat3 I_link = R * I * R.transpose();
  const MassProperties mp = compute_mass_properties(arm.shape, 1.0);
  const double density = mass / mp.volume;
  EXPECT_LT((mp.com - xyz).norm(), 1e-14);
  const Mat3 sigma = density * mp.second_moment;
  const Mat3 inertia = sigma.trace() * Mat3::Identity() - sigma;
  EXPECT_LT((inertia - I_link).norm(), 1e-14) << inertia << "\nexpected\n" << I_link;
  // The world's principal moments are the tensor's eigenvalues.
  World world = build_world(scene);
  Vec3 moments = world.body_info(*world.find_body("arm")).principal_inertia;
  std::sort(moments.data(), moments.data() + 3);
  const Vec3 expected = Eigen::SelfAdjointEigenSolver<Mat3>(I).eigenvalues();
  EXPECT_LT((moments - expected).norm(), 1e-12) << moments.transpose();
}

const char* const kLumped = R"(<robot name="lumped">
  <link name="base"/>
  <link name="arm">
    <inertial><origin xyz="0 0 -0.5"/><mass value="1"/>
      <inertia ixx="0.1" iyy="0.1" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 -0.5"/><geometry><cylinder radius="0.02" length="1"/></geometry>
    </collision>
  </link>
  <link name="tool">
    <inertial><mass value="0.5"/>
      <inertia ixx="0.002" iyy="0.002" izz="0.002" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><sphere radius="0.05"/></geometry></collision>
    <visual><geometry><sphere radius="0.05"/></geometry></visual>
  </link>
  <link name="sensor_frame"/>
  <joint name="pin" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 2"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="5" velocity="2"/>
    <dynamics damping="0.7" friction="0.1"/></joint>
  <joint name="weld" type="fixed"><parent link="arm"/><child link="tool"/>
    <origin xyz="0 0 -1"/></joint>
  <joint name="mount" type="fixed"><parent link="tool"/><child link="sensor_frame"/></joint>
  <transmission name="t"/>
  <gazebo/>
</robot>)";

TEST(Urdf, FixedJointsJoinLinksIntoOneBody) {
  const Scene scene = load_model(write_model("lumped.urdf", kLumped));
  ASSERT_EQ(scene.bodies.size(), 2u);  // base (static) and arm + tool + sensor_frame
  ASSERT_EQ(scene.joints.size(), 1u);
  const SceneJoint& pin = scene.joints[0];
  EXPECT_EQ(pin.def.type, JointType::Hinge);
  EXPECT_EQ(pin.def.limits->lower, -1.0);
  EXPECT_EQ(pin.def.spring->damping, 0.7);
  EXPECT_EQ(pin.def.spring->stiffness, 0.0);
  const BodyDef& arm = body_named(scene, "arm");
  EXPECT_EQ(*arm.mass, 1.5);
  ASSERT_EQ(arm.collision.primitives.size(), 2u);
  EXPECT_LT((arm.collision.primitives[1].pose.position - Vec3(0, 0, -1)).norm(), 1e-15);
  // Combined centre of mass and moment about y through it (parallel axes).
  const MassProperties mp = compute_mass_properties(arm.shape, 1.0);
  const double zc = (1.0 * -0.5 + 0.5 * -1.0) / 1.5;
  EXPECT_NEAR(mp.com.z(), zc, 1e-14);
  const Mat3 sigma = (1.5 / mp.volume) * mp.second_moment;
  const double iyy = sigma(0, 0) + sigma(2, 2);
  EXPECT_NEAR(iyy, 0.1 + 1.0 * std::pow(-0.5 - zc, 2) + 0.002 + 0.5 * std::pow(-1.0 - zc, 2),
              1e-14);
  // What has no equivalent is named.
  for (const char* w : {"<transmission name='t'>: element <transmission> is not supported",
                        "<gazebo>: element <gazebo> is not supported",
                        "joint friction is not supported",
                        "1 <visual> element(s): visual geometry is not imported",
                        "joint velocity limits are read but not enforced"}) {
    EXPECT_TRUE(has_warning(scene, w)) << w;
  }
  // The effort limit caps the joint's drives.
  EXPECT_EQ(pin.def.effort_limit, 5.0);
}

TEST(Urdf, FixedAndFloatingBase) {
  const std::string fixed_path = write_model("lumped.urdf", kLumped);
  EXPECT_EQ(body_named(load_model(fixed_path), "base").kind, BodyKind::Static);
  ModelOptions options;
  options.floating_base = true;
  const Scene floating = load_model(fixed_path, options);
  EXPECT_EQ(body_named(floating, "base").kind, BodyKind::Dynamic);
  // A massless root that floats gets a stand-in mass, with a warning.
  EXPECT_TRUE(has_warning(floating, "link without mass between moving joints"));

  // A "world" link and a floating joint: the robot's root moves freely.
  std::string text = kLumped;
  text.replace(text.find("<link name=\"base\"/>"), 19,
               "<link name=\"world\"/><link name=\"base\"><inertial><mass value=\"3\"/>"
               "<inertia ixx=\"0.1\" iyy=\"0.1\" izz=\"0.1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/>"
               "</inertial></link><joint name=\"float\" type=\"floating\"><parent link=\"world\"/>"
               "<child link=\"base\"/></joint>");
  const Scene world_root = load_model(write_model("world_root.urdf", text));
  EXPECT_EQ(body_named(world_root, "base").kind, BodyKind::Dynamic);
  EXPECT_EQ(world_root.bodies.size(), 2u);  // no body for the world link
  World world = build_world(world_root);
  const BodyId base = *world.find_body("base");
  const double z0 = world.com_position(base).z();
  for (int n = 0; n < 100; ++n) world.step();
  EXPECT_NEAR(world.com_position(base).z() - z0, -0.5 * 9.81 * 0.1 * 0.1, 1e-3);  // falls
}

TEST(Urdf, CollisionMeshes) {
  const Scene scene = load_model(kSource + "/tests/data/good/mesh_robot.urdf");
  const BodyDef& base = body_named(scene, "base");
  const BodyDef& arm = body_named(scene, "arm");
  ASSERT_EQ(base.collision.primitives.size(), 1u);
  ASSERT_EQ(arm.collision.primitives.size(), 1u);  // the STL mesh is left out
  const TriangleMesh& own = base.collision.primitives[0].shape.mesh;
  const TriangleMesh& scaled = arm.collision.primitives[0].shape.mesh;
  ASSERT_EQ(own.vertices.size(), 4u);
  ASSERT_EQ(scaled.vertices.size(), 4u);
  EXPECT_EQ(own.vertices[1], Vec3(1, 0, 0));
  EXPECT_EQ(scaled.vertices[1], Vec3(2, 0, 0));  // package:// found next to the model; scale 2
  EXPECT_TRUE(has_warning(scene, "mesh 'meshes/arm.stl': only OBJ meshes are read"));
  EXPECT_NO_THROW(build_world(scene));
}

TEST(Urdf, MalformedFilesNameFileLineAndElement) {
  const std::pair<const char*, const char*> cases[] = {
      {"urdf_unclosed.urdf",
       "line 5: malformed XML: an element opened here is not closed, or closed by another tag "
       "(XML_ERROR_MISMATCHED_ELEMENT)"},
      {"urdf_missing_attribute.urdf", "line 10: <joint name='pin'>: missing attribute 'type'"},
      {"urdf_unknown_joint_type.urdf",
       "line 10: <joint name='pin'>: unknown joint type 'hinge' (known: revolute, continuous, "
       "prismatic, fixed, floating, planar)"},
      {"urdf_bad_number.urdf", "line 13: <origin>: attribute 'xyz': '1,5' is not a number"},
  };
  for (const auto& [file, message] : cases) {
    const std::string path = kSource + "/tests/data/bad/" + file;
    EXPECT_EQ(error_of(path), path + ": " + message);
  }
  EXPECT_EQ(error_of("no_such_robot.urdf"), "no_such_robot.urdf: cannot open file");
}

TEST(Urdf, CommandLineInfoReadsAModel) {
  const fs::path out = fs::path(testing::TempDir()) / "urdf_info.txt";
  const std::string command = std::string(MABD_CLI_PATH) + " info '" + kModel + "' > '" +
                              out.string() + "' 2>/dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0);
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("joints                 2 (hinge 2)"), std::string::npos) << text;
  EXPECT_NE(text.find("bodies                 3 (2 dynamic, 1 static, 0 kinematic)"),
            std::string::npos)
      << text;
  // --floating-base frees the root link; a scene file refuses it (exit code 2).
  const std::string floating = std::string(MABD_CLI_PATH) + " info --floating-base '" + kModel +
                               "' > '" + out.string() + "' 2>/dev/null";
  ASSERT_EQ(std::system(floating.c_str()), 0);
  std::ifstream in2(out);
  const std::string text2((std::istreambuf_iterator<char>(in2)), std::istreambuf_iterator<char>());
  EXPECT_NE(text2.find("bodies                 3 (3 dynamic, 0 static, 0 kinematic)"),
            std::string::npos)
      << text2;
  const std::string scene = std::string(MABD_CLI_PATH) + " info --floating-base '" + kSource +
                            "/scenes/pendulum.json' > /dev/null 2>&1";
  EXPECT_EQ(WEXITSTATUS(std::system(scene.c_str())), 2);
}

}  // namespace
