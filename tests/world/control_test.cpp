// Run-time joint control and joint-space queries against independent references: a rigid
// motor's hinge rate is its target; a body spinning freely about its centre on a ball or
// universal joint has the closed-form relative rotation exp([w] t) (in a rotated parent's
// frame too); reported rates match finite differences of the coordinates (implicit Euler,
// where the body velocity is exactly the backward difference of q); changing a drive's target,
// gains or limits mid-run moves the joint to the new goal; invalid changes are rejected.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>

#include "mabd/mabd.h"

namespace mabd {
namespace {

constexpr double kPi = 3.14159265358979323846;

BodyDef cube(const Vec3& position, double side = 0.2, double mass = 1.0) {
  BodyDef d;
  d.shape.type = ShapeType::Box;
  d.shape.size = Vec3::Constant(side);
  d.material = {1000.0, 1e10, 0.3};
  d.mass = mass;
  d.position = position;
  return d;
}

WorldSettings no_gravity(double h, TimeIntegration ti = TimeIntegration::GeneralizedAlpha) {
  WorldSettings s;
  s.dt = h;
  s.gravity = Vec3::Zero();
  s.time_integration = ti;
  return s;
}

/// Rotation vector of R (rad).
Vec3 log_rotation(const Mat3& R) {
  const Eigen::AngleAxisd aa(R);
  return aa.angle() * aa.axis();
}

Vec3 vec(const std::array<double, 3>& a) { return Vec3(a[0], a[1], a[2]); }

/// A 1 m rod (1 kg) along +x hinged at the origin to the world about z, with `drive`.
JointId add_rod_hinge(World& w, const std::optional<JointDrive>& drive) {
  BodyDef rod = cube(Vec3(0.5, 0, 0));
  rod.shape.size = Vec3(1.0, 0.05, 0.05);
  JointDef j;
  j.type = JointType::Hinge;
  j.body_b = w.add_body(rod);
  j.axis = Vec3::UnitZ();
  j.drive = drive;
  return w.add_joint(j);
}

TEST(JointSpace, RigidMotorTurnsTheHingeAtItsRate) {
  World w(no_gravity(1e-3));
  const JointId id =
      add_rod_hinge(w, JointDrive{DriveMode::Velocity, 1.5, 0.0, 0.0, INFINITY});  // motor
  for (int i = 0; i < 500; ++i) w.step();
  EXPECT_NEAR(w.joint_velocity(id), 1.5, 1e-6);
  EXPECT_NEAR(w.joint_position(id), 1.5 * w.time(), 1e-3);  // the start takes a few steps
  const JointCoordinates c = w.joint_coordinates(id);
  EXPECT_EQ(c.dofs, 1);
  EXPECT_EQ(c.position[0], w.joint_position(id));
  EXPECT_EQ(c.velocity[0], w.joint_velocity(id));
  // The relative rotation is the hinge angle about the axis.
  EXPECT_NEAR(c.angular_velocity.z(), 1.5, 1e-6);
  EXPECT_LT(c.angular_velocity.head<2>().norm(), 1e-6);
  EXPECT_NEAR(Eigen::AngleAxisd(c.rotation).angle(), std::fmod(1.5 * w.time(), 2 * kPi), 1e-3);
}

TEST(JointSpace, BallJointRotationOfAFreelySpinningCube) {
  // A cube (isotropic inertia) on a ball joint at its centre spins at constant w: D(t) =
  // exp([w] t) in the parent frame. The parent is a body welded to the world turned by P:
  // the same spin seen from it is P^T w.
  const Mat3 P = Eigen::AngleAxisd(0.7, Vec3(1, 2, 3).normalized()).toRotationMatrix();
  const Vec3 w0(0.3, -1.2, 2.0);
  World w(no_gravity(1e-3));
  BodyDef base = cube(Vec3(0, 0, 0), 0.3, 100.0);
  base.orientation = Quat(P);
  const BodyId parent = w.add_body(base);
  JointDef weld;
  weld.type = JointType::Fixed;
  weld.body_b = parent;
  w.add_joint(weld);
  BodyDef spinning = cube(Vec3(0, 0, 0.5));
  spinning.angular_velocity = w0;
  const BodyId child = w.add_body(spinning);
  JointDef ball;
  ball.type = JointType::Ball;
  ball.body_a = parent;
  ball.body_b = child;
  ball.anchor = Vec3(0, 0, 0.5);
  const JointId id = w.add_joint(ball);
  const JointCoordinates c0 = w.joint_coordinates(id);
  EXPECT_EQ(c0.dofs, 3);
  EXPECT_LT(vec(c0.position).norm(), 1e-12);
  EXPECT_LT((vec(c0.velocity) - P.transpose() * w0).norm(), 1e-9);
  for (int i = 0; i < 400; ++i) w.step();
  const JointCoordinates c = w.joint_coordinates(id);
  const Mat3 expected = Eigen::AngleAxisd(w0.norm() * w.time(), P.transpose() * w0.normalized())
                            .toRotationMatrix();
  const double angle_error = log_rotation(expected.transpose() * c.rotation.toRotationMatrix()).norm();
  std::printf("ball: rotation error %.3g rad after %.2f rad\n", angle_error, w0.norm() * w.time());
  EXPECT_LT(angle_error, 1e-4);
  EXPECT_LT((vec(c.position) - log_rotation(expected)).norm(), 1e-4);
  EXPECT_LT((vec(c.velocity) - P.transpose() * w0).norm(), 1e-4);
  EXPECT_EQ(c.angular_velocity, vec(c.velocity));
}

TEST(JointSpace, UniversalAnglesOfSpinsAboutEitherAxis) {
  // Spinning about the first axis turns theta1 only, about the second theta2 only.
  const Vec3 u = Vec3(1, 1, 0).normalized(), v = Vec3(-1, 1, 0.5).normalized();
  for (int axis = 0; axis < 2; ++axis) {
    World w(no_gravity(1e-3));
    BodyDef d = cube(Vec3(0, 0, 0));
    const Vec3 v_perp = (v - u * u.dot(v)).normalized();
    d.angular_velocity = 0.8 * (axis == 0 ? u : v_perp);
    const BodyId b = w.add_body(d);
    JointDef j;
    j.type = JointType::Universal;
    j.body_b = b;
    j.axes = {u, v};
    const JointId id = w.add_joint(j);
    for (int i = 0; i < 500; ++i) w.step();
    const JointCoordinates c = w.joint_coordinates(id);
    EXPECT_EQ(c.dofs, 2);
    const double turned = 0.8 * w.time();
    EXPECT_NEAR(c.position[axis], turned, 1e-4) << "axis " << axis;
    EXPECT_NEAR(c.position[1 - axis], 0.0, 1e-6) << "axis " << axis;
    EXPECT_NEAR(c.velocity[axis], 0.8, 1e-4) << "axis " << axis;
    EXPECT_NEAR(c.velocity[1 - axis], 0.0, 1e-6) << "axis " << axis;
  }
}

TEST(JointSpace, RatesMatchFiniteDifferencesOfTheCoordinates) {
  // A tumbling chain under gravity on implicit Euler: hinge, prismatic, universal and ball
  // joints. qdot_n = (q_n - q_{n-1}) / h exactly, so the backward difference of each
  // coordinate is its rate at q_n up to O(h) curvature terms.
  const double h = 1e-4;
  WorldSettings s = no_gravity(h, TimeIntegration::ImplicitEuler);
  s.gravity = Vec3(0, 0, -9.81);
  World w(s);
  BodyDef d0 = cube(Vec3(0.3, 0, 0));
  d0.angular_velocity = Vec3(0, 0, 2.0);
  const BodyId b0 = w.add_body(d0);
  BodyDef d1 = cube(Vec3(0.3, 0, -0.4));
  d1.linear_velocity = Vec3(0.3, 0.2, 0.1);
  const BodyId b1 = w.add_body(d1);
  BodyDef d2 = cube(Vec3(0.3, 0, -0.8));
  d2.angular_velocity = Vec3(1.0, -2.0, 0.5);
  const BodyId b2 = w.add_body(d2);
  BodyDef d3 = cube(Vec3(0.3, 0, -1.2));
  d3.angular_velocity = Vec3(-1.5, 1.0, 3.0);
  const BodyId b3 = w.add_body(d3);
  JointDef hinge;
  hinge.type = JointType::Hinge;
  hinge.body_b = b0;
  hinge.axis = Vec3::UnitZ();
  JointDef slide;
  slide.type = JointType::Prismatic;
  slide.body_a = b0;
  slide.body_b = b1;
  slide.anchor = Vec3(0.3, 0, -0.2);
  slide.axis = Vec3(0, 0, 1);
  JointDef cardan;
  cardan.type = JointType::Universal;
  cardan.body_a = b1;
  cardan.body_b = b2;
  cardan.anchor = Vec3(0.3, 0, -0.6);
  cardan.axes = {Vec3::UnitX(), Vec3::UnitY()};
  JointDef ball;
  ball.type = JointType::Ball;
  ball.body_a = b2;
  ball.body_b = b3;
  ball.anchor = Vec3(0.3, 0, -1.0);
  const JointId ids[] = {w.add_joint(hinge), w.add_joint(slide), w.add_joint(cardan),
                         w.add_joint(ball)};
  for (int i = 0; i < 300; ++i) w.step();
  JointCoordinates before[4];
  for (int k = 0; k < 4; ++k) before[k] = w.joint_coordinates(ids[k]);
  w.step();
  double moved = 0;
  for (int k = 0; k < 4; ++k) {
    const JointCoordinates c = w.joint_coordinates(ids[k]);
    Vec3 fd;
    if (k < 3) {
      fd = (vec(c.position) - vec(before[k].position)) / h;
    } else {  // D_n = exp([w] h) D_{n-1}
      fd = log_rotation(c.rotation.toRotationMatrix() *
                        before[k].rotation.toRotationMatrix().transpose()) / h;
    }
    const Vec3 rate = vec(c.velocity);
    std::printf("joint %d: rate (%.6f %.6f %.6f), backward difference (%.6f %.6f %.6f)\n", k,
                rate.x(), rate.y(), rate.z(), fd.x(), fd.y(), fd.z());
    EXPECT_LT((rate - fd).norm(), 2e-3 * std::max(1.0, rate.norm())) << "joint " << k;
    moved = std::max(moved, rate.norm());
    // The relative angular velocity of every type against the rotation's difference.
    const Vec3 w_fd = log_rotation(c.rotation.toRotationMatrix() *
                                   before[k].rotation.toRotationMatrix().transpose()) / h;
    EXPECT_LT((c.angular_velocity - w_fd).norm(), 2e-3 * std::max(1.0, w_fd.norm())) << k;
  }
  EXPECT_GT(moved, 0.5);  // the joints do move
  const JointCoordinates fixed_like = w.joint_coordinates(ids[1]);
  EXPECT_LT(fixed_like.angular_velocity.norm(), 1e-6);  // a prismatic joint does not turn
}

TEST(JointSpace, FixedJointHasNoCoordinates) {
  World w(no_gravity(1e-3));
  const BodyId b = w.add_body(cube(Vec3(0, 0, 0)));
  JointDef j;
  j.type = JointType::Fixed;
  j.body_b = b;
  const JointId id = w.add_joint(j);
  w.step();
  const JointCoordinates c = w.joint_coordinates(id);
  EXPECT_EQ(c.dofs, 0);
  EXPECT_EQ(vec(c.position), Vec3::Zero());
  EXPECT_EQ(w.joint_velocity(id), 0.0);
}

/// A rod hinged at one end (zero gravity) on a position drive towards `target`.
struct DrivenRod {
  World w{no_gravity(1e-3)};
  JointId id;
  explicit DrivenRod(double target) {
    // About critically damped for the rod's 1/3 kg m^2 about its end.
    id = add_rod_hinge(w, JointDrive{DriveMode::Position, target, 30.0, 6.0, INFINITY});
  }
  void run(double seconds) {
    for (int i = 0; i < static_cast<int>(seconds / w.settings().dt); ++i) w.step();
  }
};

TEST(JointControl, ChangingTheDriveTargetMovesTheJointThere) {
  DrivenRod rod(0.5);
  rod.run(3.0);
  EXPECT_NEAR(rod.w.joint_position(rod.id), 0.5, 1e-3);
  rod.w.set_drive_target(rod.id, -0.3);
  EXPECT_EQ(rod.w.joint_drive(rod.id)->target, -0.3);
  rod.w.step();
  EXPECT_LT(rod.w.joint_velocity(rod.id), 0.0);  // heading for the new target at once
  rod.run(3.0);
  EXPECT_NEAR(rod.w.joint_position(rod.id), -0.3, 1e-3);
  EXPECT_NEAR(rod.w.joint_velocity(rod.id), 0.0, 1e-3);
}

TEST(JointControl, StifferGainsReachTheTargetFaster) {
  // Critically damped second order: the error after t is (1 + wn t) exp(-wn t) of the step.
  auto error_after = [](double stiffness, double damping) {
    DrivenRod rod(0.0);
    rod.w.set_drive_gains(rod.id, stiffness, damping);
    rod.w.set_drive_target(rod.id, 1.0);
    rod.run(0.5);
    return std::abs(1.0 - rod.w.joint_position(rod.id));
  };
  const double inertia = 1.0 * (1.0 + 0.05 * 0.05) / 12 + 0.25;
  for (double wn : {4.0, 12.0}) {
    const double k = inertia * wn * wn, c = 2 * inertia * wn;
    const double expected = (1 + wn * 0.5) * std::exp(-wn * 0.5);
    const double got = error_after(k, c);
    std::printf("wn %.0f rad/s: error after 0.5 s %.4f (closed form %.4f)\n", wn, got, expected);
    EXPECT_NEAR(got, expected, 0.02);
  }
}

TEST(JointControl, RunTimeLimitsHoldAndRelease) {
  DrivenRod rod(0.5);
  rod.w.set_joint_limits(rod.id, JointLimits{-0.1, 0.1});
  rod.run(2.0);
  EXPECT_NEAR(rod.w.joint_position(rod.id), 0.1, 2e-3);  // held at the upper limit
  rod.w.set_joint_limits(rod.id, std::nullopt);
  EXPECT_FALSE(rod.w.joint_limits(rod.id).has_value());
  rod.run(3.0);
  EXPECT_NEAR(rod.w.joint_position(rod.id), 0.5, 1e-3);
}

TEST(JointControl, ADriveAddedAtRunTimeActs) {
  World w(no_gravity(1e-3));
  const JointId id = add_rod_hinge(w, std::nullopt);  // no extras at all
  for (int i = 0; i < 10; ++i) w.step();
  EXPECT_EQ(w.joint_position(id), 0.0);
  w.set_drive(id, JointDrive{DriveMode::Velocity, -0.7, 0.0, 0.0, INFINITY});
  for (int i = 0; i < 200; ++i) w.step();
  EXPECT_NEAR(w.joint_velocity(id), -0.7, 1e-6);
  w.set_drive(id, std::nullopt);
  EXPECT_FALSE(w.joint_drive(id).has_value());
  const double rate = w.joint_velocity(id);
  for (int i = 0; i < 100; ++i) w.step();
  EXPECT_NEAR(w.joint_velocity(id), rate, 1e-6);  // coasts freely
}

TEST(JointControl, InvalidChangesAreRejected) {
  World w(no_gravity(1e-3));
  const BodyId b = w.add_body(cube(Vec3(0, 0, 0)));
  JointDef hinge;
  hinge.name = "pivot";
  hinge.type = JointType::Hinge;
  hinge.body_b = b;
  const JointId h = w.add_joint(hinge);
  const BodyId c = w.add_body(cube(Vec3(0, 0, 1)));
  JointDef ball;
  ball.type = JointType::Ball;
  ball.body_b = c;
  ball.anchor = Vec3(0, 0, 1);
  const JointId s = w.add_joint(ball);
  auto expect_error = [](const std::function<void()>& f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << "accepted, expected: " << what;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_error([&] { w.set_drive_target(h, 1.0); }, "joint 'pivot': set_drive_target: the joint has no drive");
  expect_error([&] { w.set_drive_gains(h, 1.0, 1.0); }, "has no drive");
  w.set_drive(h, JointDrive{});
  expect_error([&] { w.set_drive_target(h, NAN); }, "drive: target, stiffness and damping");
  expect_error([&] { w.set_drive_gains(h, -1.0, 0.0); }, "gains >= 0");
  expect_error([&] { w.set_drive_gains(h, 1.0, 0.0, 0.0); }, "drive.max_force: must be positive");
  expect_error([&] { w.set_joint_limits(h, JointLimits{0.5, -0.5}); }, "limits: need finite lower <= upper");
  expect_error([&] { w.set_joint_limits(s, JointLimits{-1, 1}); }, "only hinge and prismatic");
  expect_error([&] { w.set_drive(s, JointDrive{}); }, "only hinge and prismatic joints take a drive");
  expect_error([&] { w.set_joint_spring(s, JointSpring{1, 0, 0}); }, "cannot take one later");
  expect_error([&] { w.set_drive_target(JointId{9}, 0.0); }, "unknown joint id 9");
  expect_error([&] { (void)w.joint_coordinates(JointId{9}); }, "unknown joint id 9");
  // Nothing changed by the rejected calls.
  EXPECT_EQ(w.joint_drive(h)->target, 0.0);
  EXPECT_EQ(w.joint_drive(h)->max_force, INFINITY);
  EXPECT_FALSE(w.joint_limits(h).has_value());
}

}  // namespace
}  // namespace mabd
