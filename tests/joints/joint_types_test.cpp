// Every joint type between two tumbling bodies in free flight: the rows hold after every step
// with one Newton iteration at h = 1e-2, the free degrees of freedom move, the locked ones stay
// locked, and momentum is conserved.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>

#include "mabd/mabd.h"

namespace mabd {
namespace {

constexpr double kPi = 3.14159265358979323846;

const char* type_name(JointType t) {
  switch (t) {
    case JointType::Ball: return "ball";
    case JointType::Hinge: return "hinge";
    case JointType::Universal: return "universal";
    case JointType::Prismatic: return "prismatic";
    case JointType::Fixed: return "fixed";
  }
  return "?";
}

double wrap(double a) {
  a = std::fmod(a + kPi, 2 * kPi);
  if (a < 0) a += 2 * kPi;
  return a - kPi;
}

/// Follows material points and directions of a body from its initial configuration using
/// the affine coordinates: x(t) = A(t) A(0)^-1 (x0 - t(0)) + t(t). Independent of the
/// internal frame the engine uses.
struct MaterialMap {
  Mat3 A0inv;
  Vec3 t0;
  Quat R0;
  static Mat3 A_of(const Vec12& q) {
    Mat3 A;
    A << q.segment<3>(0), q.segment<3>(3), q.segment<3>(6);
    return A;
  }
  MaterialMap(const World& w, BodyId id) {
    const Vec12 q = w.coordinates(id);
    A0inv = A_of(q).inverse();
    t0 = q.segment<3>(9);
    R0 = w.pose(id).orientation;
  }
  Vec3 point(const World& w, BodyId id, const Vec3& x0) const {
    const Vec12 q = w.coordinates(id);
    return A_of(q) * (A0inv * (x0 - t0)) + q.segment<3>(9);
  }
  Vec3 vector(const World& w, BodyId id, const Vec3& v0) const {
    return A_of(w.coordinates(id)) * (A0inv * v0);
  }
  /// Rotation since t = 0 (polar rotations), world frame.
  Quat delta(const World& w, BodyId id) const { return w.pose(id).orientation * R0.inverse(); }
};

struct PairResult {
  double max_residual = 0;      // max over steps of StepStats::joint_residual
  int steps_over = 0;           // steps with joint_residual > 1e-7
  double free_motion = 0;       // max |free coordinate change| (rad or m)
  double locked_error = 0;      // max violation of the locked quantity (see check)
  double coord_mismatch = 0;    // max |joint_position - geometric coordinate| (up to sign)
  double p_drift = 0;           // max |p - p0| / |p0|, per second
  double L_drift = 0;           // max |L - L0| / |L0|, per second
  bool finite = true;
};

constexpr int kSteps = 1000;
constexpr double kH = 1e-2;

PairResult run_pair(JointType type, bool driven) {
  WorldSettings s;
  s.dt = kH;
  s.gravity = Vec3::Zero();
  s.newton_iterations = 1;
  World w(s);

  const Vec3 ca(0, 0, 0), cb(0.3, 0, 0), anchor(0.15, 0, 0);
  const Vec3 pair_com = 0.5 * (ca + cb);
  // The pair tumbles rigidly about its common COM and drifts; the prismatic pair spins mostly
  // about its slide axis so that the centrifugal pull along the free slide stays moderate.
  const Vec3 omega = type == JointType::Prismatic ? Vec3(2.0, 0.1, 0.05) : Vec3(1.0, 2.0, 0.5);
  const Vec3 drift(0.3, -0.2, 0.1);
  Vec3 axis = Vec3::UnitZ();
  std::array<Vec3, 2> uaxes = {Vec3::UnitY(), Vec3::UnitZ()};
  Vec3 rel_omega = Vec3::Zero(), rel_v = Vec3::Zero();
  switch (type) {
    case JointType::Ball: rel_omega = Vec3(0.0, 1.0, 1.5); break;
    case JointType::Hinge: axis = Vec3::UnitZ(); rel_omega = 2.0 * axis; break;
    case JointType::Universal: rel_omega = uaxes[0] + uaxes[1]; break;
    case JointType::Prismatic: axis = Vec3::UnitX(); rel_v = 0.02 * axis; break;
    case JointType::Fixed: break;
  }

  BodyDef d;
  d.shape.type = ShapeType::Box;
  d.shape.size = Vec3(0.3, 0.1, 0.1);
  d.material = {1000.0, 1e9, 0.3};
  d.name = "a";
  d.position = ca;
  d.angular_velocity = omega;
  d.linear_velocity = drift + omega.cross(ca - pair_com);
  const BodyId a = w.add_body(d);
  d.name = "b";
  d.position = cb;
  d.angular_velocity = omega + rel_omega;
  d.linear_velocity = drift + omega.cross(cb - pair_com) + rel_omega.cross(cb - anchor) + rel_v;
  const BodyId b = w.add_body(d);

  JointDef jd;
  jd.name = type_name(type);
  jd.type = type;
  jd.body_a = a;
  jd.body_b = b;
  jd.anchor = anchor;
  jd.axis = axis;
  jd.axes = uaxes;
  const JointId j = w.add_joint(jd);

  const MaterialMap ma(w, a), mb(w, b);
  const Vec3 p0 = w.linear_momentum(), L0 = w.angular_momentum();
  PairResult r;
  const double T = kSteps * kH;
  for (int i = 0; i < kSteps; ++i) {
    if (driven) {
      switch (type) {
        case JointType::Ball: {
          const Vec3 tau = 0.05 * (ma.delta(w, a) * Vec3(0, 1, 1).normalized());
          w.apply_wrench(b, Vec3::Zero(), tau);
          w.apply_wrench(a, Vec3::Zero(), -tau);
          break;
        }
        case JointType::Hinge: {
          const Vec3 tau = 0.05 * ma.vector(w, a, axis).normalized();
          w.apply_wrench(b, Vec3::Zero(), tau);
          w.apply_wrench(a, Vec3::Zero(), -tau);
          break;
        }
        case JointType::Universal: {
          const Vec3 tau = 0.05 * mb.vector(w, b, uaxes[1]).normalized();
          w.apply_wrench(b, Vec3::Zero(), tau);
          w.apply_wrench(a, Vec3::Zero(), -tau);
          break;
        }
        case JointType::Prismatic: {
          const Vec3 f = 0.005 * ma.vector(w, a, axis).normalized();
          w.apply_wrench(b, f, Vec3::Zero());
          w.apply_wrench(a, -f, Vec3::Zero());
          break;
        }
        case JointType::Fixed: {
          const Vec3 tau = 0.05 * Vec3(0, 0, 1), f = 0.05 * Vec3(0, 1, 0);
          w.apply_wrench(b, f, tau);
          w.apply_wrench(a, -f, -tau);
          break;
        }
      }
    }
    w.step();
    const double res = w.last_step().joint_residual;
    r.max_residual = std::max(r.max_residual, res);
    if (!(res <= 1e-7)) ++r.steps_over;
    for (BodyId id : {a, b})
      if (!w.coordinates(id).allFinite()) r.finite = false;
    if (!r.finite) break;

    const Quat rel = ma.delta(w, a).inverse() * mb.delta(w, b);  // rotation of b relative to a
    const Eigen::AngleAxisd rel_aa(rel);
    const Vec3 xa = ma.point(w, a, anchor), xb = mb.point(w, b, anchor);
    switch (type) {
      case JointType::Ball:
      case JointType::Universal: {
        r.free_motion = std::max(r.free_motion, rel_aa.angle());
        double locked = (xa - xb).norm();
        if (type == JointType::Universal) {
          const Vec3 u = ma.vector(w, a, uaxes[0]).normalized();
          const Vec3 v = mb.vector(w, b, uaxes[1]).normalized();
          locked = std::max(locked, std::abs(u.dot(v)));
        }
        r.locked_error = std::max(r.locked_error, locked);
        break;
      }
      case JointType::Hinge: {
        const Vec3 ua = ma.vector(w, a, axis).normalized(), ub = mb.vector(w, b, axis).normalized();
        r.locked_error = std::max({r.locked_error, ua.cross(ub).norm(), (xa - xb).norm()});
        const double jp = w.joint_position(j);
        r.free_motion = std::max(r.free_motion, std::abs(wrap(jp)));
        const double geo = rel_aa.angle() * (rel_aa.axis().dot(axis) >= 0 ? 1 : -1);
        r.coord_mismatch = std::max(r.coord_mismatch, std::min(std::abs(wrap(jp - geo)),
                                                               std::abs(wrap(jp + geo))));
        break;
      }
      case JointType::Prismatic: {
        const Vec3 ua = ma.vector(w, a, axis).normalized();
        const Vec3 off = xb - xa;
        r.locked_error = std::max({r.locked_error, rel_aa.angle(), (off - off.dot(ua) * ua).norm()});
        const double jp = w.joint_position(j), geo = off.dot(ua);
        r.free_motion = std::max(r.free_motion, std::abs(jp));
        r.coord_mismatch =
            std::max(r.coord_mismatch, std::min(std::abs(jp - geo), std::abs(jp + geo)));
        break;
      }
      case JointType::Fixed: {
        // Relative rotation and the position of b's centre as carried by a.
        const Vec3 cb_by_a = ma.point(w, a, cb);
        r.locked_error = std::max({r.locked_error, rel_aa.angle(), (xa - xb).norm(),
                                   (cb_by_a - mb.point(w, b, cb)).norm()});
        break;
      }
    }
    r.p_drift = std::max(r.p_drift, (w.linear_momentum() - p0).norm() / p0.norm() / T);
    r.L_drift = std::max(r.L_drift, (w.angular_momentum() - L0).norm() / L0.norm() / T);
  }
  return r;
}

const JointType kTypes[] = {JointType::Ball, JointType::Hinge, JointType::Universal,
                            JointType::Prismatic, JointType::Fixed};

TEST(JointTypes, DrivenTumblingPairKeepsItsJointExactly) {
  std::printf("  h = 1e-2, 1 Newton iteration, 1000 steps, equal and opposite wrench each step\n");
  std::printf("  %-10s %-11s %-8s %-12s %-12s %-12s\n", "type", "max res", "#>1e-7",
              "free move", "locked err", "coord diff");
  for (JointType type : kTypes) {
    const PairResult r = run_pair(type, true);
    std::printf("  %-10s %-11.2e %-8d %-12.4f %-12.2e %-12.2e\n", type_name(type),
                r.max_residual, r.steps_over, r.free_motion, r.locked_error, r.coord_mismatch);
    EXPECT_TRUE(r.finite) << type_name(type);
    EXPECT_EQ(r.steps_over, 0) << type_name(type) << ": max joint residual " << r.max_residual;
    switch (type) {
      case JointType::Ball:
      case JointType::Universal:
        EXPECT_GT(r.free_motion, 0.5) << type_name(type) << " relative rotation (rad)";
        EXPECT_LT(r.locked_error, 1e-7) << type_name(type);
        break;
      case JointType::Hinge:
        EXPECT_GT(r.free_motion, 0.5) << "hinge angle (rad)";
        EXPECT_LT(r.locked_error, 1e-7) << "hinge axes parallel / anchors";
        EXPECT_LT(r.coord_mismatch, 1e-5) << "joint_position vs geometric hinge angle";
        break;
      case JointType::Prismatic:
        EXPECT_GT(r.free_motion, 0.1) << "prismatic slide (m)";
        EXPECT_LT(r.locked_error, 1e-6) << "prismatic rotation / off-axis offset";
        EXPECT_LT(r.coord_mismatch, 1e-5) << "joint_position vs geometric slide";
        break;
      case JointType::Fixed:
        EXPECT_LT(r.locked_error, 1e-6) << "fixed relative pose";
        break;
    }
  }
}

TEST(JointTypes, FreeTumblingPairConservesMomentum) {
  std::printf("  h = 1e-2, 1 Newton iteration, 10 s, no external wrench\n");
  std::printf("  %-10s %-14s %-14s %-11s\n", "type", "|dp|/|p| /s", "|dL|/|L| /s", "max res");
  for (JointType type : kTypes) {
    const PairResult r = run_pair(type, false);
    std::printf("  %-10s %-14.3e %-14.3e %-11.2e\n", type_name(type), r.p_drift, r.L_drift,
                r.max_residual);
    EXPECT_TRUE(r.finite) << type_name(type);
    EXPECT_LT(r.p_drift, 1e-6) << type_name(type);
  }
}

TEST(JointTypes, HingedWheelKeepsItsAngularMomentum) {
  const Vec3 axis = Vec3(1, 1, 1).normalized();
  const Vec3 centre(0.2, -0.1, 0.3);
  std::printf("  cylinder r = 0.1 m, length 0.05 m, hinged to the world about its own axis, "
              "10 rad/s\n");
  for (TimeIntegration scheme : {TimeIntegration::GeneralizedAlpha, TimeIntegration::ImplicitEuler}) {
    for (double h : {1e-2, 1e-3}) {
      WorldSettings s;
      s.dt = h;
      s.gravity = Vec3::Zero();
      s.time_integration = scheme;
      World w(s);
      BodyDef d;
      d.name = "wheel";
      d.shape.type = ShapeType::Cylinder;
      d.shape.radius = 0.1;
      d.shape.length = 0.05;
      d.material = {1000.0, 1e9, 0.3};
      d.position = centre;
      d.orientation = Quat::FromTwoVectors(Vec3::UnitZ(), axis);
      d.angular_velocity = 10.0 * axis;
      const BodyId id = w.add_body(d);
      JointDef jd;
      jd.type = JointType::Hinge;
      jd.body_b = id;
      jd.anchor = centre;
      jd.axis = axis;
      const JointId j = w.add_joint(jd);
      auto spin = [&] { return Vec3(w.angular_momentum(id) - w.com_position(id).cross(w.linear_momentum(id))); };
      const Vec3 L0 = spin();
      const double T = 2.0;
      const long n = std::lround(T / h);
      double max_res = 0;
      try {
        for (long i = 0; i < n; ++i) {
          w.step();
          max_res = std::max(max_res, w.last_step().joint_residual);
        }
      } catch (const Error& e) {
        std::printf("  %-15s h = %-6g FAILED at t = %.3f s: %s\n",
                    scheme == TimeIntegration::GeneralizedAlpha ? "gen-alpha" : "implicit euler", h,
                    w.time(), e.what());
        if (scheme == TimeIntegration::GeneralizedAlpha) ADD_FAILURE() << "h = " << h << ": " << e.what();
        continue;
      }
      const double loss = (spin() - L0).norm() / L0.norm() / T;
      const double rate = (spin().dot(axis)) / L0.norm() * 10.0;
      std::printf("  %-15s h = %-6g |L(2s) - L0| / |L0| = %.3e per second, spin now %.6f rad/s, "
                  "hinge angle %.4f rad, max res %.2e\n",
                  scheme == TimeIntegration::GeneralizedAlpha ? "gen-alpha" : "implicit euler", h, loss,
                  rate, w.joint_position(j), max_res);
      if (scheme == TimeIntegration::GeneralizedAlpha) {
        EXPECT_LT(loss, 1e-3) << "h = " << h;
      }
    }
  }
}

}  // namespace
}  // namespace mabd
