// Effort drives (a joint torque or force held over each step, MJCF's motor) and joint effort
// limits (URDF's effort, capping every drive on the joint), against closed forms: a rod
// hinged at its end turns as theta = alpha t^2 / 2 with alpha = tau / I (implicit Euler:
// h^2 alpha n (n + 1) / 2 exactly for a rigid rod); a slider accelerates at F / m; an effort
// between two free bodies is internal (momenta stay zero); a stiff position drive capped by
// the effort limit accelerates the rod at limit / I; state round trips; bad input is rejected.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include "mabd/mabd.h"

namespace mabd {
namespace {

WorldSettings euler_no_gravity(double h) {
  WorldSettings s;
  s.dt = h;
  s.gravity = Vec3::Zero();
  s.time_integration = TimeIntegration::ImplicitEuler;
  return s;
}

BodyDef rod(const Vec3& centre) {
  BodyDef d;
  d.shape.type = ShapeType::Box;
  d.shape.size = Vec3(1.0, 0.05, 0.05);
  d.material = {1000.0, 1e12, 0.3};
  d.mass = 1.0;
  d.position = centre;
  return d;
}

/// Moment of inertia (kg m^2) of the 1 m, 1 kg rod about a z axis through its end.
constexpr double kEndInertia = (1.0 + 0.05 * 0.05) / 12.0 + 0.25;

JointDrive effort(double tau, double max_force = INFINITY) {
  JointDrive d;
  d.mode = DriveMode::Effort;
  d.target = tau;
  d.max_force = max_force;
  return d;
}

/// The rod along +x hinged at the origin to the world about z.
JointId hinged_rod(World& w, const std::optional<JointDrive>& drive, double effort_limit = INFINITY) {
  JointDef j;
  j.name = "pin";
  j.type = JointType::Hinge;
  j.body_b = w.add_body(rod(Vec3(0.5, 0, 0)));
  j.axis = Vec3::UnitZ();
  j.drive = drive;
  j.effort_limit = effort_limit;
  return w.add_joint(j);
}

/// theta after n implicit Euler steps of constant angular acceleration alpha from rest.
double euler_angle(double alpha, double h, int n) { return h * h * alpha * n * (n + 1) / 2.0; }

TEST(EffortDrive, HingeTurnsAtTorqueOverInertia) {
  // theta(t) = alpha t^2 / 2, omega = alpha t at t = 0.5 s; first order in h.
  const double tau = 0.5, alpha = tau / kEndInertia, t = 0.5;
  double error[2];
  for (int k = 0; k < 2; ++k) {
    const double h = 1e-3 / (1 << k);
    World w(euler_no_gravity(h));
    const JointId pin = hinged_rod(w, effort(tau));
    const int n = static_cast<int>(std::lround(t / h));
    for (int i = 0; i < n; ++i) w.step();
    error[k] = w.joint_position(pin) - 0.5 * alpha * t * t;
    std::printf("effort hinge, h = %g: theta %.9f rad (closed form %.9f), omega %.9f (%.9f)\n", h,
                w.joint_position(pin), 0.5 * alpha * t * t, w.joint_velocity(pin), alpha * t);
    EXPECT_NEAR(w.joint_velocity(pin), alpha * t, 1e-4 * alpha * t);
    EXPECT_LT(std::abs(error[k]), 2e-3 * 0.5 * alpha * t * t);
  }
  EXPECT_NEAR(error[0] / error[1], 2.0, 0.1);  // first order
  // Opposite sign, clamped by max_force: -0.2 N m.
  const double h = 1e-3;
  World w2(euler_no_gravity(h));
  const JointId pin2 = hinged_rod(w2, effort(-3.0, 0.2));
  for (int i = 0; i < 500; ++i) w2.step();
  EXPECT_NEAR(w2.joint_velocity(pin2), -0.2 / kEndInertia * t, 1e-4 * 0.2 / kEndInertia * t);
}

TEST(EffortDrive, SliderAcceleratesAtForceOverMass) {
  const double h = 1e-3, force = 3.0;
  World w(euler_no_gravity(h));
  JointDef j;
  j.type = JointType::Prismatic;
  j.body_b = w.add_body(rod(Vec3(0.5, 0, 0)));
  j.axis = Vec3(1, 1, 0).normalized();
  j.drive = effort(force);
  const JointId slide = w.add_joint(j);
  const int n = 400;
  for (int i = 0; i < n; ++i) w.step();
  const double expect = euler_angle(force / 1.0, h, n);
  EXPECT_NEAR(w.joint_position(slide), expect, 1e-9);
  const Vec3 moved = w.com_position(BodyId{0}) - Vec3(0.5, 0, 0);
  EXPECT_LT((moved - expect * j.axis).norm(), 1e-9);
}

TEST(EffortDrive, TorqueBetweenTwoFreeBodiesIsInternal) {
  const double h = 1e-3;
  World w(euler_no_gravity(h));
  JointDef j;
  j.type = JointType::Hinge;
  j.body_a = w.add_body(rod(Vec3(-0.5, 0, 0)));
  j.body_b = w.add_body(rod(Vec3(0.5, 0, 0)));
  j.axis = Vec3::UnitZ();
  j.drive = effort(0.8);
  const JointId pin = w.add_joint(j);
  for (int i = 0; i < 300; ++i) w.step();
  std::printf("internal effort: |p| %.3g, |L| %.3g, angle %.4f rad\n", w.linear_momentum().norm(),
              w.angular_momentum().norm(), w.joint_position(pin));
  EXPECT_LT(w.linear_momentum().norm(), 1e-12);
  EXPECT_LT(w.angular_momentum().norm(), 1e-12);
  EXPECT_GT(w.joint_position(pin), 0.05);  // b turns positively relative to a
}

TEST(EffortLimit, CapsAStiffPositionDrive) {
  const double h = 1e-3, limit = 0.3;
  World w(euler_no_gravity(h));
  JointDrive far;
  far.target = 2.0;  // rad, far away: the stiff drive saturates at the limit
  far.stiffness = 1e4;
  const JointId pin = hinged_rod(w, far, limit);
  EXPECT_EQ(w.joint_effort_limit(pin), limit);
  EXPECT_EQ(w.joint_drive(pin)->max_force, limit);
  const int n = 300;
  for (int i = 0; i < n; ++i) w.step();
  const double expect = euler_angle(limit / kEndInertia, h, n);
  std::printf("effort limit: theta %.9f rad, closed form %.9f rad\n", w.joint_position(pin), expect);
  EXPECT_NEAR(w.joint_position(pin), expect, 1e-5 * expect);
  // Later drives are capped too: new gains with an unlimited force stay at the limit.
  w.set_drive_gains(pin, 5e3, 10.0);
  EXPECT_EQ(w.joint_drive(pin)->max_force, limit);
  w.set_drive(pin, JointDrive{DriveMode::Effort, 5.0, 0, 0, 2.0});
  EXPECT_EQ(w.joint_drive(pin)->max_force, limit);
}

TEST(EffortDrive, StateRoundTripsAndContinuesBitwise) {
  World a(euler_no_gravity(1e-3));
  hinged_rod(a, effort(0.4));
  for (int i = 0; i < 50; ++i) a.step();
  const WorldState s = a.save_state();
  World b(euler_no_gravity(1e-3));
  hinged_rod(b, effort(-1.0));
  b.restore_state(s);
  ASSERT_EQ(b.joint_drive(JointId{0})->mode, DriveMode::Effort);
  EXPECT_EQ(b.joint_drive(JointId{0})->target, 0.4);
  for (int i = 0; i < 50; ++i) {
    a.step();
    b.step();
  }
  EXPECT_EQ(a.coordinates(BodyId{0}), b.coordinates(BodyId{0}));
}

TEST(EffortDrive, BadInputIsRejected) {
  World w(euler_no_gravity(1e-3));
  JointDrive with_gain = effort(1.0);
  with_gain.stiffness = 10;
  EXPECT_THROW(hinged_rod(w, with_gain), InvalidArgument);
  EXPECT_THROW(hinged_rod(w, std::nullopt, 0.0), InvalidArgument);
  JointDef ball;
  ball.type = JointType::Ball;
  ball.body_b = w.add_body(rod(Vec3(3, 0, 0)));
  ball.anchor = Vec3(2.5, 0, 0);
  ball.effort_limit = 5;
  try {
    w.add_joint(ball);
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("effort_limit"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mabd
