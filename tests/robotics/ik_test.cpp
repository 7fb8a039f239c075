// Inverse kinematics on the Panda model (models/panda.urdf) against an independent forward
// kinematics: the modified Denavit-Hartenberg table the model was written from.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "mabd/mabd.h"

namespace mabd {
namespace {

constexpr double kPi = 3.14159265358979323846;

/// Franka's modified DH table: (a_{i-1}, d_i, alpha_{i-1}); flange d = 0.107 m.
const double kMdh[7][3] = {{0, 0.333, 0},          {0, 0, -kPi / 2},     {0, 0.316, kPi / 2},
                           {0.0825, 0, kPi / 2},   {-0.0825, 0.384, -kPi / 2},
                           {0, 0, kPi / 2},        {0.088, 0, kPi / 2}};
const double kLower[7] = {-2.8973, -1.7628, -2.8973, -3.0718, -2.8973, -0.0175, -2.8973};
const double kUpper[7] = {2.8973, 1.7628, 2.8973, -0.0698, 2.8973, 3.7525, 2.8973};

Eigen::Isometry3d mdh(double a, double d, double alpha, double theta) {
  Eigen::Isometry3d t = Eigen::Isometry3d::Identity();
  t.rotate(Eigen::AngleAxisd(alpha, Vec3::UnitX()));
  t.translate(Vec3(a, 0, 0));
  t.rotate(Eigen::AngleAxisd(theta, Vec3::UnitZ()));
  t.translate(Vec3(0, 0, d));
  return t;
}

/// Flange pose (link 7 frame moved 0.107 m along its z) for joint angles q.
Eigen::Isometry3d flange(const std::vector<double>& q) {
  Eigen::Isometry3d t = Eigen::Isometry3d::Identity();
  for (int i = 0; i < 7; ++i) t = t * mdh(kMdh[i][0], kMdh[i][1], kMdh[i][2], q[i]);
  return t * mdh(0, 0.107, 0, 0);
}

struct Panda {
  World world;
  BodyId ee;
  std::vector<JointId> chain;
  Pose tool;  ///< the flange in the end effector's (link 7's) frame
};

Panda load_panda(bool gravity = true) {
  Scene scene = load_model(std::string(MABD_SOURCE_DIR) + "/models/panda.urdf");
  if (!gravity) scene.settings.gravity.setZero();
  Panda p{build_world(scene), BodyId{}, {}, Pose{}};
  p.ee = *p.world.find_body("panda_link7");
  p.chain = arm_chain(p.world, p.ee);
  p.tool.position = Vec3(0, 0, 0.107);
  return p;
}

std::vector<double> random_configuration(std::mt19937& rng) {
  std::vector<double> q(7);
  for (int i = 0; i < 7; ++i) {
    // Inside the limits with a margin, so that the solution is not on a bound.
    const double m = 0.1 * (kUpper[i] - kLower[i]);
    q[i] = std::uniform_real_distribution<double>(kLower[i] + m, kUpper[i] - m)(rng);
  }
  return q;
}

Pose pose_of(const Eigen::Isometry3d& t) {
  return Pose{t.translation(), Quat(t.rotation()).normalized()};
}

double angle_between(const Quat& a, const Quat& b) { return a.angularDistance(b); }

/// Franka's "ready" pose: the elbow bent, the flange down (away from the straight-arm
/// singularity of the zero pose).
IkOptions from_ready() {
  IkOptions o;
  o.start = {0, -kPi / 4, 0, -3 * kPi / 4, 0, kPi / 2, kPi / 4};
  return o;
}

TEST(ArmChain, FindsThePandaJointsBaseFirst) {
  const Panda p = load_panda();
  ASSERT_EQ(p.chain.size(), 7u);
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(p.world.joint_name(p.chain[i]), "panda_joint" + std::to_string(i + 1));
  }
  EXPECT_THROW(arm_chain(p.world, *p.world.find_body("panda_link0")), InvalidArgument);
}

TEST(ChainPose, MatchesTheDenavitHartenbergTable) {
  const Panda p = load_panda();
  // The model's zero configuration: the flange at (0.088, 0, 0.926), pointing down.
  const Pose zero = chain_pose(p.world, p.chain, p.ee, p.tool, std::vector<double>(7, 0.0));
  EXPECT_NEAR((zero.position - Vec3(0.088, 0, 0.926)).norm(), 0, 1e-12);
  std::mt19937 rng(3);
  for (int k = 0; k < 20; ++k) {
    const std::vector<double> q = random_configuration(rng);
    const Pose got = chain_pose(p.world, p.chain, p.ee, p.tool, q);
    const Pose want = pose_of(flange(q));
    EXPECT_LT((got.position - want.position).norm(), 1e-12) << "configuration " << k;
    EXPECT_LT(angle_between(got.orientation, want.orientation), 1e-12) << "configuration " << k;
  }
}

TEST(SolveIk, ReachesPosesOfTheTable) {
  const Panda p = load_panda();
  std::mt19937 rng(11);
  int converged = 0;
  double worst_p = 0, worst_o = 0;
  for (int k = 0; k < 20; ++k) {
    const Pose target = pose_of(flange(random_configuration(rng)));
    const IkResult r = solve_ik(p.world, p.chain, p.ee, p.tool, target, from_ready());
    if (!r.converged) continue;
    ++converged;
    // Checked with the table, not with the solver's own forward kinematics.
    const Pose reached = pose_of(flange(r.positions));
    worst_p = std::max(worst_p, (reached.position - target.position).norm());
    worst_o = std::max(worst_o, angle_between(reached.orientation, target.orientation));
    for (int i = 0; i < 7; ++i) {
      EXPECT_GE(r.positions[i], kLower[i] - 1e-12);
      EXPECT_LE(r.positions[i], kUpper[i] + 1e-12);
    }
  }
  std::printf("  IK from the ready pose: %d of 20 random reachable poses, worst error %.2e m, "
              "%.2e rad\n", converged, worst_p, worst_o);
  // Local damped least squares from one start can stop at a joint limit for far targets;
  // most targets are reached, each to the tolerance.
  EXPECT_GE(converged, 15);
  EXPECT_LT(worst_p, 2e-6);
  EXPECT_LT(worst_o, 2e-5);
}

TEST(SolveIk, DrivenArmArrivesWhereTheSolutionSays) {
  Panda p = load_panda(/*gravity=*/false);
  // A target 10 cm forward, 5 cm aside and 10 cm down from the ready pose, flange down.
  const Pose ready = chain_pose(p.world, p.chain, p.ee, p.tool, from_ready().start);
  Pose target = ready;
  target.position += Vec3(0.1, 0.05, -0.1);
  const IkResult r = solve_ik(p.world, p.chain, p.ee, p.tool, target, from_ready());
  ASSERT_TRUE(r.converged) << r.position_error << " m, " << r.orientation_error << " rad";
  for (std::size_t i = 0; i < p.chain.size(); ++i) {
    p.world.set_drive(p.chain[i], JointDrive{DriveMode::Position, r.positions[i], 400, 40});
  }
  for (int k = 0; k < 3000; ++k) p.world.step();
  const Pose ee = p.world.pose(p.ee);
  const Vec3 flange_now = ee.position + ee.orientation * p.tool.position;
  EXPECT_LT((flange_now - target.position).norm(), 1e-3);
}

TEST(SolveIk, RejectsBadInput) {
  const Panda p = load_panda();
  Pose target = chain_pose(p.world, p.chain, p.ee, p.tool, from_ready().start);
  EXPECT_THROW(solve_ik(p.world, {}, p.ee, p.tool, target), InvalidArgument);
  IkOptions short_start;
  short_start.start = {0, 0};
  EXPECT_THROW(solve_ik(p.world, p.chain, p.ee, p.tool, target, short_start), InvalidArgument);
  IkOptions bad;
  bad.max_step = 0;
  EXPECT_THROW(solve_ik(p.world, p.chain, p.ee, p.tool, target, bad), InvalidArgument);
  target.position.x() = std::nan("");
  EXPECT_THROW(solve_ik(p.world, p.chain, p.ee, p.tool, target), InvalidArgument);
  EXPECT_THROW(chain_pose(p.world, p.chain, p.ee, p.tool, {0.0}), InvalidArgument);
}

TEST(CartesianLine, InterpolatesPositionsAndOrientations) {
  const Pose a{Vec3(0, 0, 0), Quat::Identity()};
  const Pose b{Vec3(1, 2, 3), Quat(Eigen::AngleAxisd(1.0, Vec3::UnitZ()))};
  const std::vector<Pose> line = cartesian_line(a, b, 4);
  ASSERT_EQ(line.size(), 5u);
  EXPECT_EQ(line.front().position, a.position);
  EXPECT_NEAR((line.back().position - b.position).norm(), 0, 1e-15);
  EXPECT_NEAR((line[2].position - Vec3(0.5, 1, 1.5)).norm(), 0, 1e-15);
  EXPECT_NEAR(angle_between(line[1].orientation, a.orientation), 0.25, 1e-12);
  EXPECT_THROW(cartesian_line(a, b, 0), InvalidArgument);
}

}  // namespace
}  // namespace mabd
