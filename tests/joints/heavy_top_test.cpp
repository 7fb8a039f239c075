// Heavy symmetric top on a ball joint to the world: a disk spinning about its tilted
// symmetry axis precesses and nutates under gravity. Precession rate and nutation amplitude
// are compared with an RK4 integration of the rigid top about its fixed pivot (Euler's
// equations with the gravity torque) that the test computes itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "mabd/mabd.h"

namespace mabd {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kG = 9.81;
constexpr double kRadius = 0.1;    // disk radius (m)
constexpr double kThick = 0.02;    // disk thickness (m); the pivot is the bottom face centre
constexpr double kDensity = 1000;  // kg/m^3
constexpr double kSpin = 10.0;     // rad/s about the symmetry axis
constexpr double kTilt = 5.0 * kPi / 180.0;
constexpr double kDuration = 3.0;
constexpr double kRefStep = 1e-4;

ShapeDef disk() {
  ShapeDef s;
  s.type = ShapeType::Cylinder;
  s.radius = kRadius;
  s.length = kThick;
  return s;
}

/// Mass properties: mass, distance pivot-COM, inertia about the pivot (I1, I1, I3) in the
/// body frame (symmetry axis = z).
struct TopProperties {
  double m = 0, l = 0;
  Vec3 I = Vec3::Zero();
};

TopProperties properties() {
  const MassProperties mp = compute_mass_properties(disk(), kDensity);
  const Mat3 Ic = mp.second_moment.trace() * Mat3::Identity() - mp.second_moment;
  TopProperties p;
  p.m = mp.mass;
  p.l = kThick / 2;
  p.I = Vec3(Ic(0, 0) + p.m * p.l * p.l, Ic(1, 1) + p.m * p.l * p.l, Ic(2, 2));
  return p;
}

const Quat kOrientation0(Eigen::AngleAxisd(kTilt, Vec3::UnitX()));

/// Samples of the symmetry axis direction (azimuth unwrapped, tilt from vertical).
struct Trace {
  std::vector<double> t, azimuth, tilt;
  void add(double time, const Vec3& axis) {
    double phi = std::atan2(axis.y(), axis.x());
    if (!azimuth.empty()) {
      while (phi - azimuth.back() > kPi) phi -= 2 * kPi;
      while (phi - azimuth.back() < -kPi) phi += 2 * kPi;
    }
    t.push_back(time);
    azimuth.push_back(phi);
    tilt.push_back(std::acos(std::clamp(axis.z() / axis.norm(), -1.0, 1.0)));
  }
  /// Least-squares slope of the azimuth over the whole run (rad/s).
  double precession_rate() const {
    const double n = static_cast<double>(t.size());
    double mt = 0, mp = 0;
    for (std::size_t i = 0; i < t.size(); ++i) mt += t[i] / n, mp += azimuth[i] / n;
    double sxy = 0, sxx = 0;
    for (std::size_t i = 0; i < t.size(); ++i) {
      sxy += (t[i] - mt) * (azimuth[i] - mp);
      sxx += (t[i] - mt) * (t[i] - mt);
    }
    return sxy / sxx;
  }
  /// Half the range of the tilt (rad).
  double nutation_amplitude() const {
    const auto [lo, hi] = std::minmax_element(tilt.begin(), tilt.end());
    return 0.5 * (*hi - *lo);
  }
  double max_tilt() const { return *std::max_element(tilt.begin(), tilt.end()); }
  /// Mean time between successive tilt maxima (s).
  double nutation_period() const {
    std::vector<double> peaks;
    for (std::size_t i = 1; i + 1 < tilt.size(); ++i)
      if (tilt[i] > tilt[i - 1] && tilt[i] >= tilt[i + 1]) peaks.push_back(t[i]);
    if (peaks.size() < 2) return NAN;
    return (peaks.back() - peaks.front()) / (peaks.size() - 1);
  }
};

/// Rigid top about the fixed pivot: body angular velocity W, orientation quaternion q,
/// I W' = (I W) x W + (l e3) x (R^T m g), q' = q (0, W) / 2. Sampled every `every` steps.
Trace reference(double h, double T, int every) {
  const TopProperties p = properties();
  const Vec3 gravity(0, 0, -kG);
  struct State {
    Eigen::Vector4d q;  // w, x, y, z
    Vec3 W;
  };
  auto rhs = [&](const State& s) {
    const Quat q(s.q[0], s.q[1], s.q[2], s.q[3]);
    const Mat3 R = q.normalized().toRotationMatrix();
    const Vec3 tau = Vec3(0, 0, p.l).cross(R.transpose() * (p.m * gravity));
    State d;
    d.W = (p.I.cwiseProduct(s.W).cross(s.W) + tau).cwiseQuotient(p.I);
    const Quat qd = q * Quat(0, s.W.x(), s.W.y(), s.W.z());
    d.q = 0.5 * Eigen::Vector4d(qd.w(), qd.x(), qd.y(), qd.z());
    return d;
  };
  auto axpy = [](const State& s, double a, const State& d) {
    return State{s.q + a * d.q, s.W + a * d.W};
  };
  State s{Eigen::Vector4d(kOrientation0.w(), kOrientation0.x(), kOrientation0.y(),
                          kOrientation0.z()),
          Vec3(0, 0, kSpin)};
  Trace tr;
  const long n = std::lround(T / h);
  for (long i = 0; i <= n; ++i) {
    if (i % every == 0) {
      const Quat q(s.q[0], s.q[1], s.q[2], s.q[3]);
      tr.add(i * h, q.normalized().toRotationMatrix().col(2));
    }
    const State k1 = rhs(s), k2 = rhs(axpy(s, h / 2, k1)), k3 = rhs(axpy(s, h / 2, k2)),
                k4 = rhs(axpy(s, h, k3));
    s.q += h / 6 * (k1.q + 2 * k2.q + 2 * k3.q + k4.q);
    s.W += h / 6 * (k1.W + 2 * k2.W + 2 * k3.W + k4.W);
    s.q.normalize();
  }
  return tr;
}

struct SimResult {
  Trace trace;
  std::string error;  // what() of a mabd::Error thrown by step(), empty if none
  double max_joint_residual = 0;
  double energy_drift = 0;  // max |E(t) - E(0)| / E(0)
};

SimResult simulate(double h, double T, TimeIntegration scheme) {
  WorldSettings s;
  s.dt = h;
  s.gravity = Vec3(0, 0, -kG);
  s.time_integration = scheme;
  World w(s);
  const TopProperties p = properties();
  const Vec3 axis0 = kOrientation0 * Vec3::UnitZ();
  BodyDef d;
  d.name = "top";
  d.shape = disk();
  d.material = {kDensity, 1e9, 0.3};
  d.position = p.l * axis0;  // pivot at the origin, COM l above it on the axis
  d.orientation = kOrientation0;
  d.angular_velocity = kSpin * axis0;
  d.linear_velocity = d.angular_velocity.cross(d.position);  // zero: spin about the axis
  const BodyId id = w.add_body(d);
  JointDef j;
  j.name = "pivot";
  j.type = JointType::Ball;
  j.body_a = BodyId{};
  j.body_b = id;
  j.anchor = Vec3::Zero();
  w.add_joint(j);
  SimResult r;
  const double E0 = w.kinetic_energy() + w.potential_energy();
  r.trace.add(0.0, w.com_position(id));
  const long n = std::lround(T / h);
  for (long i = 0; i < n; ++i) {
    try {
      w.step();
    } catch (const Error& e) {
      r.error = e.what();
      break;
    }
    r.trace.add((i + 1) * h, w.com_position(id));  // COM - pivot lies on the symmetry axis
    r.max_joint_residual = std::max(r.max_joint_residual, w.last_step().joint_residual);
    r.energy_drift =
        std::max(r.energy_drift, std::abs(w.kinetic_energy() + w.potential_energy() - E0) / E0);
  }
  return r;
}

TEST(HeavyTop, PrecessionAndNutationMatchRigidReference) {
  const TopProperties p = properties();
  const Trace ref = reference(kRefStep, kDuration, 1);
  const Trace ref_coarse = reference(10 * kRefStep, kDuration, 1);
  const double fast = p.m * kG * p.l / (p.I.z() * kSpin);
  std::printf("  disk r = %.3f m, thickness %.3f m, m = %.5f kg, l = %.4f m\n", kRadius,
              kThick, p.m, p.l);
  std::printf("  I about pivot = (%.6e, %.6e, %.6e) kg m^2; stability (I3 w)^2/(4 I1 m g l) = "
              "%.2f\n",
              p.I.x(), p.I.y(), p.I.z(),
              std::pow(p.I.z() * kSpin, 2) / (4 * p.I.x() * p.m * kG * p.l));
  std::printf("  fast-top estimate m g l / (I3 w3) = %.5f rad/s\n", fast);
  std::printf("  RK4 h=1e-4: precession %.6f rad/s, nutation amplitude %.5f deg, period %.4f s, "
              "max tilt %.4f deg\n",
              ref.precession_rate(), ref.nutation_amplitude() * 180 / kPi,
              ref.nutation_period(), ref.max_tilt() * 180 / kPi);
  // The reference is converged: h and 10 h agree far below the tolerances used below.
  const double self = std::abs(ref_coarse.precession_rate() - ref.precession_rate()) /
                      std::abs(ref.precession_rate());
  std::printf("  RK4 h=1e-3 vs 1e-4: precession differs by %.2e (relative)\n", self);
  EXPECT_LT(self, 1e-6);
  // Energy conservation of the reference: the tilt only grows from its initial value.
  EXPECT_GT(*std::min_element(ref.tilt.begin(), ref.tilt.end()), kTilt - 1e-9);

  std::printf("  %-15s %-6s %-12s %-10s %-12s %-10s %-10s %-10s %-10s\n", "scheme", "h",
              "precession", "err", "nut.amp deg", "err", "nut.T s", "joint res", "dE/E");
  for (TimeIntegration scheme : {TimeIntegration::GeneralizedAlpha, TimeIntegration::ImplicitEuler}) {
    for (double h : {1e-2, 1e-3}) {
      const SimResult r = simulate(h, kDuration, scheme);
      const char* sname = scheme == TimeIntegration::GeneralizedAlpha ? "gen-alpha" : "implicit euler";
      if (!r.error.empty()) {
        std::printf("  %-15s %-6g FAILED after %.3f s: %s\n", sname, h, r.trace.t.back(),
                    r.error.c_str());
        if (scheme == TimeIntegration::GeneralizedAlpha) ADD_FAILURE() << "h = " << h << ": " << r.error;
        continue;
      }
      const double prec = r.trace.precession_rate();
      const double prec_err = std::abs(prec - ref.precession_rate()) /
                              std::abs(ref.precession_rate());
      const double nut = r.trace.nutation_amplitude();
      const double nut_err = std::abs(nut - ref.nutation_amplitude()) / ref.nutation_amplitude();
      std::printf("  %-15s %-6g %-12.6f %-10.3e %-12.5f %-10.3e %-10.4f %-10.2e %-10.2e\n",
                  sname, h, prec,
                  prec_err, nut * 180 / kPi, nut_err, r.trace.nutation_period(),
                  r.max_joint_residual, r.energy_drift);
      if (scheme == TimeIntegration::GeneralizedAlpha) {
        EXPECT_LT(prec_err, h == 1e-3 ? 0.02 : 0.05) << "h = " << h;
        EXPECT_LT(r.max_joint_residual, 1e-6) << "h = " << h;
      }
    }
  }
}

}  // namespace
}  // namespace mabd
