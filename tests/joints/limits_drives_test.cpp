// Joint limits, drives and springs on top of the exact joint rows; invalid joint definitions
// and redundant closed loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "mabd/mabd.h"

namespace mabd {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kRodMass = 1.0, kRodLength = 1.0, kRodThick = 0.02;

/// Inertia of the rod about a hinge through its end, perpendicular to it.
double rod_end_inertia() {
  return kRodMass * (kRodLength * kRodLength + kRodThick * kRodThick) / 12.0 +
         kRodMass * 0.25 * kRodLength * kRodLength;
}

double wrap(double a) {
  a = std::fmod(a + kPi, 2 * kPi);
  if (a < 0) a += 2 * kPi;
  return a - kPi;
}

WorldSettings settings(double h, bool gravity) {
  WorldSettings s;
  s.dt = h;
  s.gravity = gravity ? Vec3(0, 0, -9.81) : Vec3::Zero();
  return s;
}

/// Uniform rod 1 m x 0.02 x 0.02, 1 kg, along +x from the origin.
BodyId add_rod(World& w) {
  BodyDef d;
  d.name = "rod";
  d.shape.type = ShapeType::Box;
  d.shape.size = Vec3(kRodLength, kRodThick, kRodThick);
  d.material = {1000.0, 1e10, 0.3};
  d.mass = kRodMass;
  d.position = Vec3(0.5 * kRodLength, 0, 0);
  return w.add_body(d);
}

/// Hinge from the world to the rod at the origin.
JointDef rod_hinge(BodyId rod, const Vec3& axis) {
  JointDef j;
  j.name = "hinge";
  j.type = JointType::Hinge;
  j.body_b = rod;
  j.anchor = Vec3::Zero();
  j.axis = axis;
  return j;
}

void hinge_limit_pendulum(double h) {
  {
    World w(settings(h, true));
    const BodyId rod = add_rod(w);
    JointDef j = rod_hinge(rod, Vec3::UnitY());
    j.limits = JointLimits{-0.5, 0.5};
    const JointId id = w.add_joint(j);
    double violation = 0, reached = 0, geo_violation = 0, max_res = 0;
    const long n = std::lround(3.0 / h);
    for (long i = 0; i < n; ++i) {
      w.step();
      const double q = w.joint_position(id);
      violation = std::max({violation, q - 0.5, -0.5 - q});
      reached = std::max(reached, std::abs(q));
      const Vec3 c = w.com_position(rod);
      const double geo = std::atan2(-c.z(), c.x());  // rotation about +y
      geo_violation = std::max({geo_violation, geo - 0.5, -0.5 - geo});
      max_res = std::max(max_res, w.last_step().joint_residual);
    }
    std::printf("  h = %g: max |angle| %.6f rad, limit violation %.3e rad (geometric %.3e), "
                "final angle %.6f, max joint residual %.2e\n",
                h, reached, violation, geo_violation, w.joint_position(id), max_res);
    EXPECT_GT(reached, 0.5 - 1e-3) << "the pendulum swings to the limit, h = " << h;
    EXPECT_LE(violation, 1e-6) << "h = " << h;
    EXPECT_LE(geo_violation, 1e-6) << "h = " << h;
  }
}

TEST(JointLimits, HingeLimitHoldsAPendulum) { hinge_limit_pendulum(1e-3); }

TEST(JointLimits, HingeLimitHoldsAPendulumAtLargeSteps) {
  hinge_limit_pendulum(1e-2);
}

TEST(JointLimits, PrismaticRangeHoldsUnderGravity) {
  // A block thrown up a vertical slide with limits [0, 0.2] m: hits the top, falls back to the
  // bottom stop and rests there.
  for (double h : {1e-2, 1e-3}) {
    World w(settings(h, true));
    BodyDef d;
    d.name = "block";
    d.shape.type = ShapeType::Box;
    d.shape.size = Vec3(0.1, 0.1, 0.1);
    d.material = {1000.0, 1e9, 0.3};
    d.position = Vec3(0.3, 0.2, 1.0);
    d.linear_velocity = Vec3(0, 0, 3.0);
    const BodyId b = w.add_body(d);
    JointDef j;
    j.type = JointType::Prismatic;
    j.body_b = b;
    j.anchor = d.position;
    j.axis = Vec3::UnitZ();
    j.limits = JointLimits{0.0, 0.2};
    const JointId id = w.add_joint(j);
    double lo = 0, hi = 0, glo = 0, ghi = 0, mismatch = 0;
    const long n = std::lround(2.0 / h);
    for (long i = 0; i < n; ++i) {
      w.step();
      const double q = w.joint_position(id);
      const double geo = w.com_position(b).z() - d.position.z();
      lo = std::min(lo, q), hi = std::max(hi, q);
      glo = std::min(glo, geo), ghi = std::max(ghi, geo);
      mismatch = std::max(mismatch, std::abs(q - geo));
    }
    std::printf("  h = %g: slide range [%.3e, %.7f] m (geometric [%.3e, %.7f]), final %.3e m, "
                "|q - geometric| <= %.2e\n",
                h, lo, hi, glo, ghi, w.joint_position(id), mismatch);
    EXPECT_GE(lo, -1e-6) << "h = " << h;
    EXPECT_LE(hi, 0.2 + 1e-6) << "h = " << h;
    EXPECT_GT(hi, 0.2 - 1e-3) << "reaches the upper stop, h = " << h;
    EXPECT_LT(mismatch, 1e-6) << "joint_position is the slide along the axis, h = " << h;
    EXPECT_NEAR(w.joint_position(id), 0.0, 1e-3) << "rests on the lower stop, h = " << h;
  }
}

TEST(JointLimits, BallConeLimitHolds) {
  // A rod hanging from a ball joint, kicked sideways: the swing would reach ~0.8 rad; the cone
  // stops it at 0.3 rad.
  const double swing = 0.3;
  for (double h : {1e-2, 1e-3}) {
    World w(settings(h, true));
    BodyDef d;
    d.name = "rod";
    d.shape.type = ShapeType::Box;
    d.shape.size = Vec3(kRodThick, kRodThick, kRodLength);
    d.material = {1000.0, 1e10, 0.3};
    d.mass = kRodMass;
    d.position = Vec3(0, 0, -0.5 * kRodLength);
    d.angular_velocity = Vec3(3.0, 1.0, 0.0);
    d.linear_velocity = d.angular_velocity.cross(d.position);
    const BodyId b = w.add_body(d);
    JointDef j;
    j.type = JointType::Ball;
    j.body_b = b;
    j.anchor = Vec3::Zero();
    j.axis = Vec3(0, 0, -1);
    j.cone = ConeLimits{swing, std::nullopt, std::nullopt};
    w.add_joint(j);
    const Mat3 A0inv = w.affine_matrix(b).inverse();
    const Quat R0 = w.pose(b).orientation;
    double max_swing = 0, max_swing_rot = 0, max_res = 0;
    const long n = std::lround(3.0 / h);
    for (long i = 0; i < n; ++i) {
      w.step();
      // The cone axis carried by the rod (material direction).
      const Vec3 a = (w.affine_matrix(b) * A0inv * Vec3(0, 0, -1)).normalized();
      max_swing = std::max(max_swing, std::acos(std::clamp(-a.z(), -1.0, 1.0)));
      const Vec3 ar = w.pose(b).orientation * (R0.inverse() * Vec3(0, 0, -1));
      max_swing_rot = std::max(max_swing_rot, std::acos(std::clamp(-ar.z(), -1.0, 1.0)));
      max_res = std::max(max_res, w.last_step().joint_residual);
    }
    std::printf("  h = %g: max swing %.7f rad (limit %.1f; from the polar rotation %.7f), "
                "violation %.3e rad, max joint residual %.2e\n",
                h, max_swing, swing, max_swing_rot, std::max(0.0, max_swing - swing), max_res);
    EXPECT_GT(max_swing, swing - 1e-3) << "reaches the cone, h = " << h;
    EXPECT_LE(max_swing, swing + 1e-6) << "h = " << h;
  }
}

TEST(JointDrives, PositionDriveReachesItsTarget) {
  const double I = rod_end_inertia(), k = 10.0, c = 2 * std::sqrt(k * I);  // critical damping
  for (double h : {1e-2, 1e-3}) {
    World w(settings(h, false));
    const BodyId rod = add_rod(w);
    JointDef j = rod_hinge(rod, Vec3::UnitZ());
    j.drive = JointDrive{DriveMode::Position, 1.0, k, c, INFINITY};
    const JointId id = w.add_joint(j);
    const long n = std::lround(4.0 / h);
    double at1 = 0;
    for (long i = 0; i < n; ++i) {
      w.step();
      if (i + 1 == std::lround(1.0 / h)) at1 = w.joint_position(id);
    }
    // Critically damped: q(t) = 1 - (1 + w t) exp(-w t), w = sqrt(k / I).
    const double wn = std::sqrt(k / I), expect1 = 1 - (1 + wn) * std::exp(-wn);
    std::printf("  h = %g: angle at 1 s %.6f (critically damped reference %.6f), at 4 s %.9f, "
                "error %.2e rad\n",
                h, at1, expect1, w.joint_position(id), std::abs(w.joint_position(id) - 1.0));
    EXPECT_NEAR(w.joint_position(id), 1.0, 1e-3) << "h = " << h;
  }
}

TEST(JointDrives, VelocityDriveReachesItsRate) {
  const double target = 2.0;
  for (double damping : {1.0, 0.0}) {  // 0 = rigid motor
    for (double h : {1e-2, 1e-3}) {
      World w(settings(h, false));
      const BodyId rod = add_rod(w);
      JointDef j = rod_hinge(rod, Vec3::UnitZ());
      j.drive = JointDrive{DriveMode::Velocity, target, 0.0, damping, INFINITY};
      const JointId id = w.add_joint(j);
      const long n = std::lround(4.0 / h);
      double prev = w.joint_position(id), rate = 0;
      for (long i = 0; i < n; ++i) {
        w.step();
        const double q = w.joint_position(id);
        rate = wrap(q - prev) / h;
        prev = q;
      }
      const double spin = w.twist(rod).angular.z();
      std::printf("  %s, h = %g: rate from joint_position %.9f rad/s, body angular velocity "
                  "%.9f rad/s\n",
                  damping > 0 ? "damped (1 N m s/rad)" : "rigid motor", h, rate, spin);
      EXPECT_NEAR(rate, target, 1e-3) << "damping " << damping << " h = " << h;
    }
  }
}

TEST(JointDrives, DriveForceSaturatesAtMaxForce) {
  const double I = rod_end_inertia(), max_force = 0.5;
  struct Case {
    const char* name;
    JointDrive drive;
  };
  const Case cases[] = {
      {"position k=100 c=20", {DriveMode::Position, 1.0, 100.0, 20.0, max_force}},
      {"rigid position", {DriveMode::Position, 1.0, 0.0, 0.0, max_force}},
      {"rigid velocity", {DriveMode::Velocity, 3.0, 0.0, 0.0, max_force}},
  };
  for (const Case& cs : cases) {
    const double h = 1e-3;
    World w(settings(h, false));
    const BodyId rod = add_rod(w);
    JointDef j = rod_hinge(rod, Vec3::UnitZ());
    j.drive = cs.drive;
    const JointId id = w.add_joint(j);
    double max_torque = 0, q_at = 0;
    const double t_check = 0.2;
    const long n = std::lround(3.0 / h);
    for (long i = 0; i < n; ++i) {
      w.step();
      max_torque = std::max(max_torque, std::abs(w.joint_wrench(id).torque.z()));
      if (i + 1 == std::lround(t_check / h)) q_at = w.joint_position(id);
    }
    // While saturated the torque is max_force: q = max_force t^2 / (2 I).
    const double q_expect = max_force * t_check * t_check / (2 * I);
    std::printf("  %-20s: max |torque about axis| %.9f N m (max_force %.1f), angle at %.1f s "
                "%.6f (constant-torque reference %.6f), final angle %.6f\n",
                cs.name, max_torque, max_force, t_check, q_at, q_expect, w.joint_position(id));
    EXPECT_LE(max_torque, max_force * (1 + 1e-6)) << cs.name;
    EXPECT_GT(max_torque, max_force * (1 - 1e-3)) << cs.name << " saturates";
    EXPECT_NEAR(q_at, q_expect, 0.02 * q_expect) << cs.name;
  }
}

TEST(JointSprings, HingeSpringOscillatesWithItsNaturalPeriod) {
  const double I = rod_end_inertia(), k = 10.0, rest = 0.3;
  const double period = 2 * kPi * std::sqrt(I / k);
  for (double h : {1e-2, 1e-3}) {
    World w(settings(h, false));
    const BodyId rod = add_rod(w);
    JointDef j = rod_hinge(rod, Vec3::UnitZ());
    j.spring = JointSpring{k, 0.0, rest};
    const JointId id = w.add_joint(j);
    std::vector<double> crossings;
    double prev = w.joint_position(id) - rest, lo = 0, hi = 0;
    const long n = std::lround(5.0 / h);
    for (long i = 0; i < n; ++i) {
      w.step();
      const double x = w.joint_position(id) - rest;
      lo = std::min(lo, x), hi = std::max(hi, x);
      if (prev * x < 0) crossings.push_back(i * h + h * prev / (prev - x));
      prev = x;
    }
    ASSERT_GE(crossings.size(), 3u) << "h = " << h;
    const double measured = 2 * (crossings.back() - crossings.front()) / (crossings.size() - 1);
    const double err = std::abs(measured - period) / period;
    std::printf("  h = %g: period %.6f s, 2 pi sqrt(I/k) = %.6f s, error %.3e; swing [%.4f, "
                "%.4f] about rest\n",
                h, measured, period, err, lo, hi);
    if (h == 1e-3) {
      EXPECT_LT(err, 0.02);
    }
  }
}

// ---- Invalid definitions and redundant loops ---------------------------------------------------

TEST(JointValidation, BadJointsAreRejected) {
  World w(settings(1e-3, true));
  BodyDef d;
  d.shape.type = ShapeType::Box;
  d.shape.size = Vec3(0.3, 0.1, 0.1);
  d.material = {1000.0, 1e9, 0.3};
  d.name = "a";
  const BodyId a = w.add_body(d);
  d.name = "b";
  d.position = Vec3(0.3, 0, 0);
  const BodyId b = w.add_body(d);
  auto base = [&](JointType type) {
    JointDef j;
    j.name = "bad";
    j.type = type;
    j.body_a = a;
    j.body_b = b;
    j.anchor = Vec3(0.15, 0, 0);
    return j;
  };
  struct Case {
    const char* what;
    std::function<void(JointDef&)> edit;
    JointType type;
  };
  const Case cases[] = {
      {"body joined to itself", [&](JointDef& j) { j.body_b = a; }, JointType::Ball},
      {"world joined to the world", [&](JointDef& j) { j.body_a = j.body_b = BodyId{}; },
       JointType::Ball},
      {"unknown body id", [&](JointDef& j) { j.body_b = BodyId{57}; }, JointType::Ball},
      {"zero hinge axis", [&](JointDef& j) { j.axis = Vec3::Zero(); }, JointType::Hinge},
      {"zero prismatic axis", [&](JointDef& j) { j.axis = Vec3::Zero(); }, JointType::Prismatic},
      {"parallel universal axes", [&](JointDef& j) { j.axes = {Vec3::UnitX(), Vec3(2, 0, 0)}; },
       JointType::Universal},
      {"antiparallel universal axes",
       [&](JointDef& j) { j.axes = {Vec3::UnitY(), Vec3(0, -1, 0)}; }, JointType::Universal},
      {"limits lower > upper", [&](JointDef& j) { j.limits = JointLimits{0.5, -0.5}; },
       JointType::Hinge},
      {"non-finite anchor", [&](JointDef& j) { j.anchor.x() = NAN; }, JointType::Ball},
      {"drive max_force <= 0",
       [&](JointDef& j) { j.drive = JointDrive{DriveMode::Position, 0.0, 1.0, 0.0, 0.0}; },
       JointType::Hinge},
      {"cone swing outside (0, pi)",
       [&](JointDef& j) { j.cone = ConeLimits{0.0, std::nullopt, std::nullopt}; },
       JointType::Ball},
  };
  for (const Case& cs : cases) {
    JointDef j = base(cs.type);
    cs.edit(j);
    try {
      w.add_joint(j);
      ADD_FAILURE() << cs.what << ": accepted";
    } catch (const InvalidArgument& e) {
      std::printf("  %-28s -> InvalidArgument: %s\n", cs.what, e.what());
    } catch (const std::exception& e) {
      ADD_FAILURE() << cs.what << ": threw something other than InvalidArgument: " << e.what();
    }
  }
  EXPECT_EQ(w.joint_count(), 0u) << "rejected joints must not be added";
  // A valid joint is still accepted afterwards.
  EXPECT_NO_THROW(w.add_joint(base(JointType::Ball)));
  EXPECT_EQ(w.joint_count(), 1u);
}

/// Builds a redundant scene, steps it and reports: it either runs with a finite state or
/// throws mabd::Error (at add_joint or step), never produces NaN silently.
void check_redundant(const char* what, const std::function<void(World&)>& build) {
  World w(settings(1e-2, true));
  std::string outcome;
  double max_res = 0;
  bool finite = true;
  try {
    build(w);
    for (int i = 0; i < 200; ++i) {
      w.step();
      max_res = std::max(max_res, w.last_step().joint_residual);
      if (!std::isfinite(w.last_step().joint_residual)) finite = false;
    }
    for (std::uint32_t i = 0; i < w.body_count(); ++i)
      if (!w.coordinates(BodyId{i}).allFinite()) finite = false;
    char buf[160];
    std::snprintf(buf, sizeof buf, "ran 200 steps, finite state: %s, max joint residual %.2e",
                  finite ? "yes" : "NO", max_res);
    outcome = buf;
  } catch (const Error& e) {
    outcome = std::string("threw mabd::Error: ") + e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": threw a non-mabd exception: " << e.what();
    return;
  }
  std::printf("  %-44s -> %s\n", what, outcome.c_str());
  EXPECT_TRUE(finite) << what;
}

BodyId add_box(World& w, const char* name, const Vec3& centre) {
  BodyDef d;
  d.name = name;
  d.shape.type = ShapeType::Box;
  d.shape.size = Vec3(0.3, 0.1, 0.1);
  d.material = {1000.0, 1e9, 0.3};
  d.position = centre;
  return w.add_body(d);
}

TEST(JointValidation, RedundantLoopsDoNotProduceNaN) {
  auto double_hinge = [](double compliance) {
    return [compliance](World& w) {
      const BodyId a = add_box(w, "a", Vec3(0.15, 0, 0)), b = add_box(w, "b", Vec3(0.45, 0, 0));
      JointDef j;
      j.type = JointType::Hinge;
      j.body_b = a;
      j.anchor = Vec3::Zero();
      j.axis = Vec3::UnitY();
      w.add_joint(j);
      j.body_a = a;
      j.body_b = b;
      j.anchor = Vec3(0.3, 0, 0);
      j.compliance = compliance;
      j.name = "h1";
      w.add_joint(j);
      j.name = "h2";
      w.add_joint(j);  // identical: 5 redundant rows
    };
  };
  check_redundant("two identical hinges between a pair", double_hinge(0.0));
  check_redundant("the same with compliance 1e-9", double_hinge(1e-9));
  check_redundant("triangle of fixed joints hung from a ball", [](World& w) {
    const BodyId a = add_box(w, "a", Vec3(0.15, 0, 0)), b = add_box(w, "b", Vec3(0.45, 0, 0)),
                 c = add_box(w, "c", Vec3(0.3, 0.2, 0));
    JointDef j;
    j.type = JointType::Ball;
    j.body_b = a;
    j.anchor = Vec3::Zero();
    w.add_joint(j);
    j.type = JointType::Fixed;
    j.body_a = a, j.body_b = b, j.anchor = Vec3(0.3, 0, 0);
    w.add_joint(j);
    j.body_a = b, j.body_b = c, j.anchor = Vec3(0.4, 0.1, 0);
    w.add_joint(j);
    j.body_a = c, j.body_b = a, j.anchor = Vec3(0.2, 0.1, 0);
    w.add_joint(j);
  });
  check_redundant("parallelogram loop of hinges (redundant rows)", [](World& w) {
    // Ground - crank - coupler - rocker - ground, all hinges about y, in the vertical xz
    // plane: the two horizontal links fall together under gravity. The planar loop has
    // redundant out-of-plane rows.
    const BodyId crank = add_box(w, "crank", Vec3(0.15, 0, 0));
    BodyDef d;
    d.shape.type = ShapeType::Box;
    d.shape.size = Vec3(0.3, 0.1, 0.1);
    d.material = {1000.0, 1e9, 0.3};
    d.name = "coupler";
    d.position = Vec3(0.3, 0, -0.15);
    d.orientation = Quat(Eigen::AngleAxisd(kPi / 2, Vec3::UnitY()));
    const BodyId coupler = w.add_body(d);
    const BodyId rocker = add_box(w, "rocker", Vec3(0.15, 0, -0.3));
    JointDef j;
    j.type = JointType::Hinge;
    j.axis = Vec3::UnitY();
    j.body_b = crank, j.anchor = Vec3::Zero();
    w.add_joint(j);
    j.body_a = crank, j.body_b = coupler, j.anchor = Vec3(0.3, 0, 0);
    w.add_joint(j);
    j.body_a = coupler, j.body_b = rocker, j.anchor = Vec3(0.3, 0, -0.3);
    w.add_joint(j);
    j.body_a = rocker, j.body_b = BodyId{}, j.anchor = Vec3(0, 0, -0.3);
    w.add_joint(j);
  });
}

}  // namespace
}  // namespace mabd
