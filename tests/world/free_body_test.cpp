// Free affine bodies without gravity or joints: conservation laws and physical deformation.
#include <gtest/gtest.h>

#include <cmath>

#include "mabd/mabd.h"

namespace mabd {
namespace {

struct RunResult {
  double L_loss_per_s = 0;       // relative change of the spin angular momentum per second
  double p_error = 0;            // max |p - p0| / |p0|
  double mean_deviation = 0;     // mean |A^T A - I| over the second half
};

BodyDef asymmetric_box(double E) {
  BodyDef d;
  d.name = "box";
  d.shape.type = ShapeType::Box;
  d.shape.size = Vec3(0.2, 0.1, 0.05);
  d.material = {1000.0, E, 0.3};
  d.position = Vec3(1, 2, 3);
  d.orientation = Quat(Eigen::AngleAxisd(0.3, Vec3(1, 2, 3).normalized()));
  d.linear_velocity = Vec3(0.5, -0.25, 1.0);
  d.angular_velocity = Vec3(0.4, 0.2, 3.0);
  return d;
}

/// Angular momentum about the centre of mass (kg m^2/s).
Vec3 spin(const World& w, BodyId id) {
  return w.angular_momentum(id) - w.com_position(id).cross(w.linear_momentum(id));
}

RunResult simulate(const BodyDef& def, double h, double seconds,
                   TimeIntegration scheme = TimeIntegration::GeneralizedAlpha) {
  WorldSettings s;
  s.dt = h;
  s.gravity = Vec3::Zero();
  s.time_integration = scheme;
  World w(s);
  const BodyId id = w.add_body(def);
  const Vec3 L0 = spin(w, id), p0 = w.linear_momentum();
  const int n = static_cast<int>(std::lround(seconds / h));
  RunResult r;
  int samples = 0;
  for (int i = 0; i < n; ++i) {
    w.step();
    r.p_error = std::max(r.p_error, (w.linear_momentum() - p0).norm() / p0.norm());
    if (i >= n / 2) {
      r.mean_deviation += w.rigidity_deviation(id);
      ++samples;
    }
  }
  r.mean_deviation /= samples;
  r.L_loss_per_s = (spin(w, id) - L0).norm() / L0.norm() / seconds;
  return r;
}

TEST(FreeBody, LinearMomentumIsConservedToRoundOff) {
  for (TimeIntegration scheme : {TimeIntegration::GeneralizedAlpha, TimeIntegration::ImplicitEuler}) {
    for (double h : {1e-2, 1e-3}) {
      const RunResult r = simulate(asymmetric_box(1e8), h, 1.0, scheme);
      EXPECT_LT(r.p_error, 1e-14) << "h = " << h;
    }
  }
  BodyDef sphere = asymmetric_box(1e8);
  sphere.shape.type = ShapeType::Sphere;
  sphere.shape.radius = 0.1;
  EXPECT_LT(simulate(sphere, 1e-3, 1.0).p_error, 1e-14);
}

TEST(FreeBody, AngularMomentumLossShrinksWithTimeStep) {
  // The asymmetric box tumbles (w not on a principal axis); its spin angular momentum is
  // constant in the exact solution.
  for (TimeIntegration scheme : {TimeIntegration::GeneralizedAlpha, TimeIntegration::ImplicitEuler}) {
    double previous = INFINITY;
    for (double h : {1e-2, 1e-3, 1e-4}) {
      const RunResult r = simulate(asymmetric_box(1e8), h, 1.0, scheme);
      std::printf("  %s h = %g: |L(1 s) - L(0)| / |L(0)| = %.3e per second\n",
                  scheme == TimeIntegration::GeneralizedAlpha ? "gen-alpha" : "implicit euler", h,
                  r.L_loss_per_s);
      EXPECT_LT(r.L_loss_per_s, previous / 5) << "h = " << h;
      previous = r.L_loss_per_s;
    }
    // Generalized-alpha is second order; implicit Euler damps rotation at ~h w^2 per second.
    if (scheme == TimeIntegration::GeneralizedAlpha) EXPECT_LT(previous, 1e-6);
  }
}

TEST(FreeBody, RigidityDeviationIsCentrifugalStrainAndFallsAsOneOverE) {
  // A box spun about its short axis: the centrifugal strain is of order rho w^2 L^2 / E.
  BodyDef d = asymmetric_box(1e8);
  d.orientation = Quat::Identity();
  d.angular_velocity = Vec3(0, 0, 3.0);  // major axis: stable spin
  const double rho = 1000, w = 3, L = 0.1;  // half-length of the long side
  double previous = 0;
  for (double E : {1e6, 1e8, 1e10}) {
    d.material.youngs_modulus = E;
    const RunResult r = simulate(d, 1e-3, 1.0);
    const double physical = rho * w * w * L * L / E;
    std::printf("  E = %g: |A^T A - I| = %.3e, rho w^2 L^2 / E = %.3e, ratio %.3f\n", E,
                r.mean_deviation, physical, r.mean_deviation / physical);
    EXPECT_GT(r.mean_deviation / physical, 0.1);
    EXPECT_LT(r.mean_deviation / physical, 10.0);
    if (previous > 0) EXPECT_NEAR(previous / r.mean_deviation / 100.0, 1.0, 0.1) << "E = " << E;
    previous = r.mean_deviation;
  }
}

TEST(FreeBody, FreeFallIsExact) {
  // Constant gravity: generalized-alpha is exact (a parabola); implicit Euler gives
  // t_n = t_0 + n h v_0 + h^2 g n (n + 1) / 2.
  for (TimeIntegration scheme : {TimeIntegration::GeneralizedAlpha, TimeIntegration::ImplicitEuler}) {
    WorldSettings s;
    s.dt = 1e-2;
    s.gravity = Vec3(0, 0, -9.81);
    s.time_integration = scheme;
    World w(s);
    BodyDef d = asymmetric_box(1e8);
    d.angular_velocity = Vec3::Zero();
    const BodyId id = w.add_body(d);
    const Vec3 c0 = w.com_position(id);
    const int n = 100;
    for (int i = 0; i < n; ++i) w.step();
    const double T = n * s.dt;
    const Vec3 expected = scheme == TimeIntegration::GeneralizedAlpha
                              ? Vec3(c0 + T * d.linear_velocity + 0.5 * T * T * s.gravity)
                              : Vec3(c0 + T * d.linear_velocity + s.dt * s.dt * s.gravity * n * (n + 1) / 2.0);
    EXPECT_LT((w.com_position(id) - expected).norm(), 1e-12);
    EXPECT_LT(w.rigidity_deviation(id), 1e-12);
  }
}

TEST(FreeBody, StaticAndKinematicBodiesFollowTheirPrescription) {
  WorldSettings s;
  s.dt = 1e-3;
  World w(s);
  BodyDef st = asymmetric_box(1e8);
  st.name = "static";
  st.kind = BodyKind::Static;
  BodyDef kin = asymmetric_box(1e8);
  kin.name = "kinematic";
  kin.kind = BodyKind::Kinematic;
  kin.orientation = Quat::Identity();
  kin.linear_velocity = Vec3(1, 0, 0);
  kin.angular_velocity = Vec3(0, 0, 2.0);
  const BodyId a = w.add_body(st), b = w.add_body(kin);
  const Pose pa = w.pose(a);
  const Vec3 cb = w.com_position(b);
  for (int i = 0; i < 500; ++i) w.step();
  EXPECT_LT((w.pose(a).position - pa.position).norm(), 1e-15);
  EXPECT_LT((w.com_position(b) - (cb + Vec3(0.5, 0, 0))).norm(), 1e-12);
  // Velocities are chords of the step: |w| = sin(w h) / h.
  EXPECT_NEAR(w.twist(b).angular.z(), std::sin(2.0 * s.dt) / s.dt, 1e-12);
  EXPECT_NEAR(Eigen::AngleAxisd(w.pose(b).orientation).angle(), 1.0, 1e-9);
  EXPECT_LT(w.rigidity_deviation(b), 1e-12);

  // An explicit target overrides the constant twist for one step.
  Pose target{Vec3(5, 5, 5), Quat(Eigen::AngleAxisd(0.5, Vec3::UnitX()))};
  w.set_kinematic_target(b, target);
  w.step();
  EXPECT_LT((w.pose(b).position - target.position).norm(), 1e-12);
  EXPECT_LT(w.pose(b).orientation.angularDistance(target.orientation), 1e-12);
  EXPECT_THROW(w.set_kinematic_target(a, target), InvalidArgument);
}

TEST(FreeBody, WrenchGivesRigidBodyImpulse) {
  // A stiff body at rest pushed by a force and a torque during one step: it gains the
  // momentum F h and the angular velocity I^{-1} tau h, up to its elastic compliance
  // (relative size sigma / (beta h^2 mu V)). The second-order scheme spreads the impulse over a few steps, so
  // the velocities are compared 50 steps later (the body is then rotated slightly: the
  // comparison uses the current inertia).
  WorldSettings s;
  s.dt = 1e-3;
  s.gravity = Vec3::Zero();
  World w(s);
  BodyDef d = asymmetric_box(1e10);
  d.linear_velocity = Vec3::Zero();
  d.angular_velocity = Vec3::Zero();
  const BodyId id = w.add_body(d);
  const Vec3 F(1, 2, 3), tau(0.01, -0.02, 0.03);
  w.apply_wrench(id, F, tau);
  for (int i = 0; i < 50; ++i) w.step();
  const BodyInfo& info = w.body_info(id);
  EXPECT_LT((w.linear_momentum(id) - F * s.dt).norm(), 1e-14);
  const Mat3 R = w.pose(id).orientation.toRotationMatrix();
  const MassProperties mp = compute_mass_properties(d.shape, d.material.density);
  const Mat3 I_body = mp.second_moment.trace() * Mat3::Identity() - mp.second_moment;
  const Mat3 I_world = R * I_body * R.transpose();
  const Vec3 expected = I_world.inverse() * tau * s.dt;
  const double mu = d.material.youngs_modulus / (2 * (1 + d.material.poisson_ratio));
  const double compliance =
      mp.principal_second_moment.maxCoeff() / (0.25 * s.dt * s.dt * mu * info.volume);
  std::printf("  angular velocity error %.3e (relative), compliance bound %.3e\n",
              (w.twist(id).angular - expected).norm() / expected.norm(), compliance);
  EXPECT_LT((w.twist(id).angular - expected).norm(), 10 * compliance * expected.norm());
  // Wrenches last one step only: the momentum stays.
  w.step();
  EXPECT_LT((w.linear_momentum(id) - F * s.dt).norm(), 1e-14);
}

TEST(FreeBody, BadBodiesAreRejectedWithTheirName) {
  World w(WorldSettings{});
  BodyDef d = asymmetric_box(1e8);
  d.material.youngs_modulus = 0;
  try {
    w.add_body(d);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("body 'box': material.youngs_modulus"), std::string::npos) << e.what();
  }
  d = asymmetric_box(1e8);
  d.mass = 0.0;
  EXPECT_THROW(w.add_body(d), InvalidArgument);
  d = asymmetric_box(1e8);
  d.position.x() = NAN;
  EXPECT_THROW(w.add_body(d), InvalidArgument);
  d = asymmetric_box(1e8);
  d.orientation = Quat(0, 0, 0, 0);
  EXPECT_THROW(w.add_body(d), InvalidArgument);
  d = asymmetric_box(1e8);
  d.shape.size.y() = -1;
  EXPECT_THROW(w.add_body(d), InvalidArgument);
  w.add_body(asymmetric_box(1e8));
  EXPECT_THROW(w.add_body(asymmetric_box(1e8)), InvalidArgument);  // duplicate name
  WorldSettings bad;
  bad.dt = 0;
  EXPECT_THROW(World{bad}, InvalidArgument);
  bad = WorldSettings{};
  bad.newton_iterations = 0;
  EXPECT_THROW(World{bad}, InvalidArgument);
}

TEST(FreeBody, DivergenceStopsWithAMessageAndKeepsTheLastValidState) {
  // A very soft body spun hard at a huge step flies apart; the step must refuse to produce it.
  WorldSettings s;
  s.dt = 0.5;
  s.gravity = Vec3::Zero();
  World w(s);
  BodyDef d = asymmetric_box(1.0);
  d.angular_velocity = Vec3(0, 0, 50);
  const BodyId id = w.add_body(d);
  bool threw = false;
  for (int i = 0; i < 100 && !threw; ++i) {
    try {
      w.step();
    } catch (const SimulationError& e) {
      threw = true;
      const std::string msg = e.what();
      EXPECT_NE(msg.find("step"), std::string::npos);
      EXPECT_NE(msg.find("'box'"), std::string::npos);
    }
  }
  ASSERT_TRUE(threw);
  EXPECT_TRUE(w.coordinates(id).allFinite());
  EXPECT_LE(w.rigidity_deviation(id), 1.0);
}

}  // namespace
}  // namespace mabd
