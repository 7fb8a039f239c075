// Joints defined by a frame in each body (JointDef::frames, src/world/joints.cpp): coordinates
// zero where the frames coincide, limits and drives in those coordinates, the check that the
// bodies satisfy the joint, and the scene-file form.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "mabd/error.h"
#include "mabd/scene.h"
#include "mabd/world.h"

namespace {

using namespace mabd;

/// A rod (0.05 x 0.05 x 1 m, 1 kg) hanging from a hinge with axis y at the origin, tilted by
/// `tilt` (rad) about +y.
BodyDef rod(double tilt) {
  BodyDef def;
  def.name = "rod";
  def.shape.type = ShapeType::Box;
  def.shape.size = Vec3(0.05, 0.05, 1);
  def.mass = 1;
  def.orientation = Quat(Eigen::AngleAxisd(tilt, Vec3::UnitY()));
  def.position = def.orientation * Vec3(0, 0, -0.5);
  return def;
}

/// Joint frame with z along +y (the hinge axis): x -> x, y -> -z, z -> y.
Quat y_axis_frame() { return Quat(Eigen::AngleAxisd(-M_PI / 2, Vec3::UnitX())); }

/// Largest differences between a hinge defined the classic way (its angle counts from the
/// initial tilt) and one defined by frames (its angle is 0 at tilt 0), both with limits [0.5,
/// 0.9] rad in the frames' coordinate and optionally a drive: of the frames' angle minus the
/// tilt against the classic angle (rad), and of the centre of mass (m), over 2000 steps.
struct Difference {
  double angle = 0, com = 0, lowest = INFINITY;
};
Difference classic_vs_frames(double youngs_modulus, bool drive) {
  const double tilt = 0.7, lower = 0.5, upper = 0.9;
  BodyDef body = rod(tilt);
  body.material.youngs_modulus = youngs_modulus;
  World a{WorldSettings{}};
  const BodyId ra = a.add_body(body);
  JointDef classic;
  classic.type = JointType::Hinge;
  classic.body_b = ra;
  classic.axis = Vec3::UnitY();
  classic.limits = JointLimits{lower - tilt, upper - tilt};
  if (drive) classic.drive = JointDrive{DriveMode::Position, 0.6 - tilt, 30.0, 1.0};
  const JointId ja = a.add_joint(classic);
  World b{WorldSettings{}};
  const BodyId rb = b.add_body(body);
  JointDef framed;
  framed.type = JointType::Hinge;
  framed.body_b = rb;
  // The world's frame at the pivot, and the rod's at its top (the rod's frame is its centre).
  framed.frames = JointFrames{Pose{Vec3::Zero(), y_axis_frame()},
                              Pose{Vec3(0, 0, 0.5), y_axis_frame()}};
  framed.limits = JointLimits{lower, upper};
  if (drive) framed.drive = JointDrive{DriveMode::Position, 0.6, 30.0, 1.0};
  const JointId jb = b.add_joint(framed);
  EXPECT_NEAR(b.joint_position(jb), tilt, 1e-14);
  EXPECT_NEAR(Eigen::AngleAxisd(b.joint_coordinates(jb).rotation).angle(), tilt, 1e-12);
  Difference d;
  for (int n = 0; n < 2000; ++n) {
    a.step();
    b.step();
    d.angle = std::max(d.angle, std::abs(b.joint_position(jb) - tilt - a.joint_position(ja)));
    d.com = std::max(d.com, (a.com_position(ra) - b.com_position(rb)).norm());
    d.lowest = std::min(d.lowest, b.joint_position(jb));
  }
  return d;
}

TEST(JointFrames, HingeCoordinateIsZeroWhereTheFramesCoincide) {
  // Limits act on the bodies' rigid frames: the motion is the same to round-off. The angle is
  // measured on the bodies' material axes, another one in each definition, so the two read
  // differently by the rod's strain (~1e-5 at the default 1e8 Pa).
  const Difference soft = classic_vs_frames(Material{}.youngs_modulus, false);
  std::printf("frames vs classic hinge with limits: COM %.3g m, angle %.3g rad\n", soft.com,
              soft.angle);
  EXPECT_LT(soft.com, 1e-12);
  EXPECT_LT(soft.angle, 1e-4);
  EXPECT_GT(soft.lowest, 0.5 - 1e-3);  // the lower limit held the falling rod
  EXPECT_LT(soft.lowest, 0.52);
  // A drive acts on the material axes too; on a rod 1e4 times stiffer both agree to ~1e-9.
  const Difference stiff = classic_vs_frames(1e12, true);
  std::printf("frames vs classic hinge with limits and drive, E = 1e12 Pa: COM %.3g m, angle "
              "%.3g rad\n",
              stiff.com, stiff.angle);
  EXPECT_LT(stiff.com, 1e-8);
  EXPECT_LT(stiff.angle, 1e-8);
}

TEST(JointFrames, PrismaticOffsetAlongTheAxis) {
  World w{WorldSettings{}};
  BodyDef block;
  block.shape.type = ShapeType::Box;
  block.shape.size = Vec3(0.1, 0.1, 0.1);
  block.position = Vec3(0, 0, -0.3);
  const BodyId id = w.add_body(block);
  JointDef slide;
  slide.type = JointType::Prismatic;
  slide.body_b = id;
  slide.frames = JointFrames{Pose{}, Pose{}};  // frames: world origin and the block's centre
  const JointId j = w.add_joint(slide);
  EXPECT_NEAR(w.joint_position(j), -0.3, 1e-15);
}

TEST(JointFrames, TheBodiesMustSatisfyTheJoint) {
  World w{WorldSettings{}};
  const BodyId r = w.add_body(rod(0.2));
  JointDef bad;
  bad.name = "pin";
  bad.type = JointType::Hinge;
  bad.body_b = r;
  bad.frames = JointFrames{Pose{Vec3(0.1, 0, 0), y_axis_frame()},
                           Pose{Vec3(0, 0, 0.5), y_axis_frame()}};
  try {
    w.add_joint(bad);
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()),
              "joint 'pin': frames: the frame origins are 0.1 m apart in the bodies' "
              "configuration");
  }
  bad.frames->a.position = Vec3::Zero();
  bad.frames->a.orientation = Quat::Identity();  // z along world z: not the rod's hinge axis
  try {
    w.add_joint(bad);
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()),
              "joint 'pin': frames: the z axes are not aligned in the bodies' configuration");
  }
}

TEST(JointFrames, SceneFilesTakeFrames) {
  const Scene scene = parse_scene(R"({
    "bodies": [{"name": "rod", "shape": {"type": "box", "size": [0.05, 0.05, 1]},
                "material": {"density": 1000}, "position": [-0.32210884, 0, -0.38242109],
                "orientation": [0.9393727128473789, 0, 0.34289780745545134, 0]}],
    "joints": [{"name": "pin", "type": "hinge", "bodies": ["world", "rod"],
                "frames": {"a": {"orientation": [0.7071067811865476, -0.7071067811865476, 0, 0]},
                           "b": {"position": [0, 0, 0.5],
                                 "orientation": [0.7071067811865476, -0.7071067811865476, 0, 0]}},
                "limits": {"lower": 0.5, "upper": 0.9}}]})",
                                  "frames.json");
  ASSERT_TRUE(scene.joints[0].def.frames);
  World w = build_world(scene);
  EXPECT_NEAR(w.joint_position(*w.find_joint("pin")), 0.7, 1e-8);
  try {
    parse_scene(R"({"bodies": [{"name": "rod", "shape": {"type": "sphere", "radius": 0.1},
      "material": {"density": 1000}}], "joints": [{"name": "pin", "type": "ball",
      "bodies": ["world", "rod"], "anchor": [0, 0, 0], "frames": {"a": {}, "b": {}}}]})",
                "both.json");
    FAIL() << "no error";
  } catch (const SceneError& e) {
    EXPECT_NE(std::string(e.what()).find("anchor: does not apply to a joint defined by 'frames'"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
