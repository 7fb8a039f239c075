// Angular spring on a ball joint: a sphere held at its centre by a ball joint with a spring is
// a torsional oscillator, theta(t) = (w0 / W) sin(W t), W = sqrt(k / I), about any axis.
#include <gtest/gtest.h>

#include <cmath>

#include "mabd/mabd.h"

namespace mabd {
namespace {

struct Oscillation {
  double amplitude = 0;  ///< largest rotation angle (rad)
  double period = 0;     ///< from the first two upward zero crossings of the angle rate (s)
};

Oscillation run(double k, double damping, const Vec3& axis, double dt, double duration) {
  WorldSettings s;
  s.dt = dt;
  s.gravity = Vec3::Zero();
  World w(s);
  BodyDef d;
  d.name = "ball";
  d.shape.type = ShapeType::Sphere;
  d.shape.radius = 0.1;
  d.material = {1000, 1e9, 0.3};
  d.angular_velocity = 0.2 * axis;
  const BodyId b = w.add_body(d);
  JointDef j;
  j.type = JointType::Ball;
  j.body_b = b;
  j.anchor = Vec3::Zero();
  j.spring = JointSpring{k, damping, 0};
  w.add_joint(j);
  Oscillation out;
  double prev_rate = axis.dot(w.twist(b).angular);
  std::vector<double> crossings;
  for (int i = 0; i < static_cast<int>(duration / dt); ++i) {
    w.step();
    const Eigen::AngleAxisd aa(w.pose(b).orientation);
    out.amplitude = std::max(out.amplitude, std::abs(aa.angle()));
    const double rate = axis.dot(w.twist(b).angular);
    if (prev_rate < 0 && rate >= 0) crossings.push_back(w.time() - dt * rate / (rate - prev_rate));
    prev_rate = rate;
  }
  if (crossings.size() >= 2) out.period = crossings[1] - crossings[0];
  return out;
}

TEST(BallSpring, TorsionalOscillatorMatchesClosedForm) {
  const double r = 0.1, m = 1000 * 4.0 / 3.0 * M_PI * r * r * r, I = 0.4 * m * r * r;
  const double k = 0.5, W = std::sqrt(k / I);
  for (const Vec3& axis : {Vec3(0, 0, 1), Vec3(1, 1, 0).normalized()}) {
    const Oscillation o = run(k, 0, axis, 1e-3, 3 * 2 * M_PI / W);
    std::printf("  axis (%.2f %.2f %.2f): amplitude %.6f (exact %.6f), period %.6f s (exact %.6f)\n",
                axis.x(), axis.y(), axis.z(), o.amplitude, 0.2 / W, o.period, 2 * M_PI / W);
    EXPECT_NEAR(o.amplitude, 0.2 / W, 2e-3 * 0.2 / W);
    EXPECT_NEAR(o.period, 2 * M_PI / W, 2e-3 * 2 * M_PI / W);
  }
}

TEST(BallSpring, DampingRemovesEnergy) {
  const double r = 0.1, m = 1000 * 4.0 / 3.0 * M_PI * r * r * r, I = 0.4 * m * r * r;
  const double k = 0.5, W = std::sqrt(k / I);
  const Oscillation free = run(k, 0, Vec3::UnitZ(), 1e-3, 3 * 2 * M_PI / W);
  const Oscillation damped = run(k, 0.2 * 2 * std::sqrt(k * I), Vec3::UnitZ(), 1e-3, 3 * 2 * M_PI / W);
  EXPECT_LT(damped.amplitude, 0.9 * free.amplitude);
}

TEST(BallSpring, RestMustBeZero) {
  World w(WorldSettings{});
  BodyDef d;
  d.shape.type = ShapeType::Sphere;
  d.shape.radius = 0.1;
  const BodyId b = w.add_body(d);
  JointDef j;
  j.type = JointType::Ball;
  j.body_b = b;
  j.spring = JointSpring{1, 0, 0.3};
  EXPECT_THROW(w.add_joint(j), InvalidArgument);
}

}  // namespace
}  // namespace mabd
