// Physical pendulum on a hinge to the world, released horizontal at rest: the swing angle,
// the period and the pivot force against the closed-form (elliptic) solution, which the test
// evaluates itself and cross-checks with an RK4 integration of the pendulum equation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "mabd/mabd.h"

namespace mabd {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kG = 9.81;
constexpr double kMass = 1.0;
constexpr double kLength = 1.0;
constexpr double kThick = 0.02;
constexpr double kD = 0.5;  // hinge to centre of mass (m)
constexpr double kDuration = 5.0;
constexpr double kE = 1e10;  // Young's modulus of the rod (Pa)

/// Moment of inertia of the rod about the hinge axis (y through the rod's end).
double hinge_inertia() {
  return kMass * (kLength * kLength + kThick * kThick) / 12.0 + kMass * kD * kD;
}
double omega() { return std::sqrt(kMass * kG * kD / hinge_inertia()); }

// ---- Elliptic functions --------------------------------------------------------------------

/// Complete elliptic integral of the first kind K(k) (modulus k) by the AGM.
double elliptic_k(double k) {
  double a = 1.0, b = std::sqrt(1.0 - k * k);
  for (int i = 0; i < 60 && std::abs(a - b) > 1e-16 * a; ++i) {
    const double an = 0.5 * (a + b);
    b = std::sqrt(a * b);
    a = an;
  }
  return kPi / (2.0 * a);
}

/// Jacobi sn(u, k) by the descending Landen / AGM scheme (Abramowitz & Stegun 16.4).
double jacobi_sn(double u, double k) {
  constexpr int kMax = 16;
  double a[kMax + 1], c[kMax + 1];
  a[0] = 1.0;
  double b = std::sqrt(1.0 - k * k);
  c[0] = k;
  int n = 0;
  while (n < kMax && std::abs(c[n]) > 1e-16) {
    a[n + 1] = 0.5 * (a[n] + b);
    c[n + 1] = 0.5 * (a[n] - b);
    b = std::sqrt(a[n] * b);
    ++n;
  }
  double phi = std::ldexp(1.0, n) * a[n] * u;
  for (int i = n; i > 0; --i) phi = 0.5 * (phi + std::asin(c[i] / a[i] * std::sin(phi)));
  return std::sin(phi);
}

const double kK = elliptic_k(std::sin(kPi / 4));

/// Angle of the rod below the horizontal (paper Eq. elliptic).
double theta_exact(double t) {
  const double k = std::sin(kPi / 4);
  return kPi / 2 - 2.0 * std::asin(k * jacobi_sn(kK - omega() * t, k));
}
double period_exact() { return 4.0 * kK / omega(); }

/// Times at which theta crosses pi/2 (the rod hangs straight down): (2j + 1) T / 4.
double exact_crossing(int j) { return (2 * j + 1) * period_exact() / 4.0; }

/// Pivot force on the rod as a function of theta on the exact trajectory released from the
/// horizontal: theta_dot^2 = 2 w^2 sin(theta), theta_ddot = w^2 cos(theta).
/// COM at d (cos th, 0, -sin th); F = m a_com - m g.
Vec3 pivot_force_exact(double th) {
  const double w2 = omega() * omega();
  const double s = std::sin(th), c = std::cos(th);
  const Vec3 a(-3.0 * kD * w2 * s * c, 0.0, kD * w2 * (2.0 * s * s - c * c));
  return kMass * a - kMass * Vec3(0, 0, -kG);
}

// ---- RK4 of theta'' = w^2 cos(theta) --------------------------------------------------------

/// theta at the sample times `every` * h (h = step), from 0 to T.
std::vector<double> rk4_theta(double h, double T, int every) {
  const double w2 = omega() * omega();
  double th = 0, om = 0;
  std::vector<double> out{th};
  const long n = std::lround(T / h);
  for (long i = 1; i <= n; ++i) {
    const double k1t = om, k1o = w2 * std::cos(th);
    const double k2t = om + 0.5 * h * k1o, k2o = w2 * std::cos(th + 0.5 * h * k1t);
    const double k3t = om + 0.5 * h * k2o, k3o = w2 * std::cos(th + 0.5 * h * k2t);
    const double k4t = om + h * k3o, k4o = w2 * std::cos(th + h * k3t);
    th += h / 6 * (k1t + 2 * k2t + 2 * k3t + k4t);
    om += h / 6 * (k1o + 2 * k2o + 2 * k3o + k4o);
    if (i % every == 0) out.push_back(th);
  }
  return out;
}

// ---- Simulation --------------------------------------------------------------------------------

struct RunResult {
  std::vector<double> crossings;  // times theta passes pi/2
  double theta_end = 0;           // theta at the final time
  double max_joint_residual = 0;  // max over steps of StepStats::joint_residual
  double force_error = 0;         // max |F - F_ref(theta)| / (m g), F_ref at end-of-step theta
  double force_error_mid = 0;     // same with F_ref at the mid-step theta
  double force_error_late = 0;    // force_error over t > 0.05 s
  double max_force = 0;           // max |F| / (m g)
  double period_error = 0;        // relative, from the mean spacing of the crossings
  double phase_drift = 0;         // last crossing time - exact (s)
};

const char* name(TimeIntegration s) {
  return s == TimeIntegration::GeneralizedAlpha ? "gen-alpha" : "implicit euler";
}

RunResult simulate(double h, TimeIntegration scheme) {
  WorldSettings s;
  s.dt = h;
  s.gravity = Vec3(0, 0, -kG);
  s.time_integration = scheme;
  World w(s);
  BodyDef rod;
  rod.name = "rod";
  rod.shape.type = ShapeType::Box;
  rod.shape.size = Vec3(kLength, kThick, kThick);
  rod.material = {1000.0, kE, 0.3};
  rod.mass = kMass;
  rod.position = Vec3(kD, 0, 0);
  const BodyId id = w.add_body(rod);
  JointDef j;
  j.name = "pivot";
  j.type = JointType::Hinge;
  j.body_a = BodyId{};
  j.body_b = id;
  j.anchor = Vec3::Zero();
  j.axis = Vec3(0, 1, 0);
  const JointId jid = w.add_joint(j);

  RunResult r;
  auto theta_of = [&]() {
    const Vec3 c = w.com_position(id);
    const double th = std::atan2(-c.z(), c.x());
    return th < -kPi / 2 ? th + 2 * kPi : th;  // continuous through the far horizontal
  };
  double prev = theta_of();
  const long n = std::lround(kDuration / h);
  for (long i = 0; i < n; ++i) {
    w.step();
    const double th = theta_of();
    const double t = (i + 1) * h;
    r.max_joint_residual = std::max(r.max_joint_residual, w.last_step().joint_residual);
    if ((prev - kPi / 2) * (th - kPi / 2) < 0 || (th == kPi / 2 && prev != th))
      r.crossings.push_back(t - h + h * (kPi / 2 - prev) / (th - prev));
    const Vec3 F = w.joint_wrench(jid).force;
    const double e = (F - pivot_force_exact(th)).norm() / (kMass * kG);
    const double em = (F - pivot_force_exact(0.5 * (th + prev))).norm() / (kMass * kG);
    r.force_error = std::max(r.force_error, e);
    r.force_error_mid = std::max(r.force_error_mid, em);
    if (t > 0.05) r.force_error_late = std::max(r.force_error_late, e);
    r.max_force = std::max(r.max_force, F.norm() / (kMass * kG));
    prev = th;
  }
  r.theta_end = prev;
  if (r.crossings.size() >= 2) {
    const double p = 2.0 * (r.crossings.back() - r.crossings.front()) / (r.crossings.size() - 1);
    r.period_error = std::abs(p - period_exact()) / period_exact();
    r.phase_drift = r.crossings.back() - exact_crossing(static_cast<int>(r.crossings.size()) - 1);
  } else {
    r.period_error = INFINITY;
    r.phase_drift = INFINITY;
  }
  return r;
}

TEST(Pendulum, EllipticReferenceMatchesRk4) {
  // K(1/sqrt 2) = 1.8540746773013719 (tabulated).
  EXPECT_NEAR(kK, 1.8540746773013719, 1e-14);
  EXPECT_NEAR(jacobi_sn(kK, std::sin(kPi / 4)), 1.0, 1e-14);
  EXPECT_NEAR(jacobi_sn(0.3, 0.0), std::sin(0.3), 1e-14);
  const double h = 1e-5;
  const int every = 1000;  // samples every 0.01 s
  const std::vector<double> ref = rk4_theta(h, kDuration, every);
  double err = 0;
  for (std::size_t i = 0; i < ref.size(); ++i)
    err = std::max(err, std::abs(ref[i] - theta_exact(i * h * every)));
  std::printf("  I_hinge = %.9f kg m^2, w = %.9f rad/s, period 4K/w = %.9f s\n",
              hinge_inertia(), omega(), period_exact());
  std::printf("  max |theta_rk4(h=1e-5) - theta_elliptic| over 5 s = %.3e rad\n", err);
  EXPECT_LT(err, 1e-9);
  EXPECT_NEAR(theta_exact(period_exact() / 4), kPi / 2, 1e-12);
  EXPECT_NEAR(theta_exact(period_exact() / 2), kPi, 1e-7);
}

TEST(Pendulum, PeriodPhaseAndPivotForceConverge) {
  std::printf("  exact period %.6f s; crossings of theta = pi/2 at (2j+1) T/4\n",
              period_exact());
  std::printf("  %-15s %-7s %-6s %-12s %-12s %-12s %-10s %-10s %-10s %-10s\n", "scheme", "h",
              "cross", "period err", "drift(s)", "theta(5s)err", "joint res", "F err",
              "F err mid", "F err>.05s");
  for (TimeIntegration scheme : {TimeIntegration::GeneralizedAlpha, TimeIntegration::ImplicitEuler}) {
    double prev_period = INFINITY, prev_drift = INFINITY, prev_angle = INFINITY;
    for (double h : {1e-2, 1e-3, 1e-4}) {
      const RunResult r = simulate(h, scheme);
      const double angle_err = std::abs(r.theta_end - theta_exact(kDuration));
      std::printf("  %-15s %-7g %-6zu %-12.3e %-12.3e %-12.3e %-10.2e %-10.3e %-10.3e %-10.3e\n",
                  name(scheme), h, r.crossings.size(), r.period_error, r.phase_drift,
                  angle_err, r.max_joint_residual, r.force_error, r.force_error_mid,
                  r.force_error_late);
      ASSERT_GE(r.crossings.size(), 4u) << name(scheme) << " h = " << h;
      // Errors fall with h, down to the floor set by the rod's elastic stretch: the peak
      // tension ~2.5 m g over E a lengthens the pendulum by ~1e-6 relative, which the rigid
      // reference does not model.
      const double elastic_floor = 2.5 * kMass * kG / (kE * kThick * kThick);
      EXPECT_TRUE(r.period_error < prev_period || r.period_error < elastic_floor)
          << name(scheme) << " h = " << h;
      EXPECT_TRUE(std::abs(r.phase_drift) < prev_drift || std::abs(r.phase_drift) < 1e-7)
          << name(scheme) << " h = " << h;
      EXPECT_TRUE(angle_err < prev_angle || angle_err < 1e-6) << name(scheme) << " h = " << h;
      EXPECT_LT(r.max_joint_residual, 1e-6) << name(scheme) << " h = " << h;
      if (h == 1e-3 && scheme == TimeIntegration::GeneralizedAlpha) {
        EXPECT_LT(r.period_error, 0.01);
        EXPECT_LT(r.force_error, 0.02) << "max |F - F_ref| / (m g)";
      }
      if (h == 1e-3) std::printf("    (max |F| / (m g) = %.4f)\n", r.max_force);
      prev_period = r.period_error;
      prev_drift = std::abs(r.phase_drift);
      prev_angle = angle_err;
    }
  }
}

}  // namespace
}  // namespace mabd
