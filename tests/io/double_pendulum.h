// The double pendulum of models/double_pendulum.{urdf,xml}, built by hand through the C++ API,
// and an independent reference: RK4 on its Lagrangian equations of motion.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include <Eigen/Geometry>

#include "mabd/world.h"

namespace mabd::test {

/// A square rod hanging from a hinge with axis y: side x side x length (m), mass (kg), its
/// frame tilted by `tilt` (rad, about +y) from the one above it.
struct Rod {
  double mass = 1, side = 0.05, length = 1, tilt = 0;
};

/// Two rods on hinges (axis y): the first at (0, 0, pivot_z), the second at the end of the
/// first. Joints "shoulder" (world - upper) and "elbow" (upper - lower); elbow limits if given.
inline World build_double_pendulum(const WorldSettings& settings, double pivot_z, const Rod& r1,
                                   const Rod& r2, const std::optional<JointLimits>& elbow = {}) {
  World world(settings);
  const Vec3 pivot(0, 0, pivot_z);
  const Quat q1(Eigen::AngleAxisd(r1.tilt, Vec3::UnitY()));
  const Quat q2(Eigen::AngleAxisd(r1.tilt + r2.tilt, Vec3::UnitY()));
  const Vec3 elbow_point = pivot + q1 * Vec3(0, 0, -r1.length);
  BodyId ids[2];
  const Rod* rods[2] = {&r1, &r2};
  const Vec3 tops[2] = {pivot, elbow_point};
  const Quat rotations[2] = {q1, q2};
  const char* names[2] = {"upper", "lower"};
  for (int i = 0; i < 2; ++i) {
    BodyDef def;
    def.name = names[i];
    def.shape.type = ShapeType::Box;
    def.shape.size = Vec3(rods[i]->side, rods[i]->side, rods[i]->length);
    def.mass = rods[i]->mass;
    def.orientation = rotations[i];
    def.position = tops[i] + rotations[i] * Vec3(0, 0, -0.5 * rods[i]->length);
    ids[i] = world.add_body(def);
  }
  JointDef shoulder;
  shoulder.name = "shoulder";
  shoulder.type = JointType::Hinge;
  shoulder.body_b = ids[0];
  shoulder.anchor = pivot;
  shoulder.axis = Vec3::UnitY();
  world.add_joint(shoulder);
  JointDef joint = shoulder;
  joint.name = "elbow";
  joint.body_a = ids[0];
  joint.body_b = ids[1];
  joint.anchor = elbow_point;
  joint.limits = elbow;
  world.add_joint(joint);
  return world;
}

/// Steps both worlds `steps` times; returns the largest difference of the bodies "upper" and
/// "lower" between them: centre of mass (m) or orientation (rad).
inline double max_pendulum_difference(World& a, World& b, int steps) {
  double max_diff = 0;
  for (int n = 0; n < steps; ++n) {
    a.step();
    b.step();
    for (const char* name : {"upper", "lower"}) {
      const BodyId ia = *a.find_body(name), ib = *b.find_body(name);
      max_diff = std::max(max_diff, (a.com_position(ia) - b.com_position(ib)).norm());
      max_diff = std::max(max_diff, a.pose(ia).orientation.angularDistance(b.pose(ib).orientation));
    }
  }
  return max_diff;
}

/// Absolute angles (rad, about +y from hanging straight down) and rates of the two rods.
using PendulumState = std::array<double, 4>;  // phi1, phi2, phi1', phi2'

/// Lagrangian equations of the planar compound double pendulum (rods of uniform density,
/// centre of mass at mid-length, moment about the centre m (side^2 + length^2) / 12), gravity
/// g (m/s^2) along -z.
inline PendulumState pendulum_rates(const PendulumState& s, const Rod& r1, const Rod& r2,
                                    double g) {
  const double m1 = r1.mass, m2 = r2.mass, l1 = r1.length;
  const double c1 = 0.5 * r1.length, c2 = 0.5 * r2.length;
  const double I1 = m1 * (r1.side * r1.side + r1.length * r1.length) / 12;
  const double I2 = m2 * (r2.side * r2.side + r2.length * r2.length) / 12;
  const double d = s[0] - s[1];
  const double a11 = I1 + m1 * c1 * c1 + m2 * l1 * l1, a12 = m2 * l1 * c2 * std::cos(d);
  const double a22 = I2 + m2 * c2 * c2;
  const double b1 =
      -m2 * l1 * c2 * std::sin(d) * s[3] * s[3] - (m1 * c1 + m2 * l1) * g * std::sin(s[0]);
  const double b2 = m2 * l1 * c2 * std::sin(d) * s[2] * s[2] - m2 * c2 * g * std::sin(s[1]);
  const double det = a11 * a22 - a12 * a12;
  return {s[2], s[3], (a22 * b1 - a12 * b2) / det, (a11 * b2 - a12 * b1) / det};
}

/// Classical RK4 from `s` over `duration` (s) in `steps` steps.
inline PendulumState integrate_pendulum(PendulumState s, const Rod& r1, const Rod& r2, double g,
                                        double duration, int steps) {
  const double h = duration / steps;
  auto axpy = [](const PendulumState& x, double a, const PendulumState& y) {
    PendulumState out;
    for (int i = 0; i < 4; ++i) out[i] = x[i] + a * y[i];
    return out;
  };
  for (int n = 0; n < steps; ++n) {
    const PendulumState k1 = pendulum_rates(s, r1, r2, g);
    const PendulumState k2 = pendulum_rates(axpy(s, h / 2, k1), r1, r2, g);
    const PendulumState k3 = pendulum_rates(axpy(s, h / 2, k2), r1, r2, g);
    const PendulumState k4 = pendulum_rates(axpy(s, h, k3), r1, r2, g);
    for (int i = 0; i < 4; ++i) s[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
  }
  return s;
}

}  // namespace mabd::test
