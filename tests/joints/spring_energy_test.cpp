// Energy stored in joints (World::joint_energy): a body on a sprung hinge, ball or prismatic
// joint, or hanging from a compliant joint, is an undamped oscillator. Its stored energy
// peaks at the initial kinetic energy (closed form). Kinetic + potential energy, with the
// joints' share, never rises above its start with generalized-alpha, and never rises from
// one step to the next with implicit Euler (which damps, at about h W^2 per second).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "mabd/mabd.h"

namespace mabd {
namespace {

constexpr double kRadius = 0.1, kDensity = 1000;
const double kMass = kDensity * 4.0 / 3.0 * M_PI * kRadius * kRadius * kRadius;
const double kInertia = 0.4 * kMass * kRadius * kRadius;

struct Trace {
  double e0 = 0;           ///< kinetic + potential energy before the first step (J)
  double peak_joint = 0;   ///< largest joint_energy() over the run (J)
  double worst_rise = 0;   ///< largest step-to-step increase of the total energy (J)
  double highest = 0;      ///< largest total energy after a step (J)
  double final_total = 0;  ///< total energy at the end (J)
};

Trace run(World& w, double duration) {
  Trace t;
  t.e0 = w.kinetic_energy() + w.potential_energy();
  double prev = t.e0;
  t.highest = -INFINITY;
  const int steps = static_cast<int>(duration / w.settings().dt);
  for (int i = 0; i < steps; ++i) {
    w.step();
    const double e = w.kinetic_energy() + w.potential_energy();
    t.worst_rise = std::max(t.worst_rise, e - prev);
    t.highest = std::max(t.highest, e);
    t.peak_joint = std::max(t.peak_joint, w.joint_energy());
    prev = e;
  }
  t.final_total = prev;
  return t;
}

BodyId add_ball(World& w, const Vec3& angular_velocity, const Vec3& velocity) {
  BodyDef d;
  d.shape.type = ShapeType::Sphere;
  d.shape.radius = kRadius;
  d.material = {kDensity, 1e9, 0.3};
  d.angular_velocity = angular_velocity;
  d.linear_velocity = velocity;
  return w.add_body(d);
}

WorldSettings weightless(TimeIntegration integration) {
  WorldSettings s;
  s.dt = 1e-3;
  s.gravity = Vec3::Zero();
  s.time_integration = integration;
  return s;
}

constexpr TimeIntegration kBoth[] = {TimeIntegration::GeneralizedAlpha,
                                     TimeIntegration::ImplicitEuler};

/// Generalized-alpha: the total wanders by round-off-sized amounts from step to step (its
/// energy is not monotone step by step) but never rises above its start by more than 1e-6
/// of it; without the springs' share it would swing by the whole kinetic energy. Implicit
/// Euler: it falls at every step.
void expect_oscillator(const Trace& t, double kinetic0, const std::string& what,
                       TimeIntegration integration) {
  const bool ga = integration == TimeIntegration::GeneralizedAlpha;
  std::printf("  %s (%s): E0 %.6e J, peak joint energy %.6e J, max E - E0 %+.2e J, worst "
              "rise %.2e J, final %.6e J\n",
              what.c_str(), ga ? "GA" : "IE", t.e0, t.peak_joint, t.highest - t.e0, t.worst_rise,
              t.final_total);
  EXPECT_NEAR(t.e0, kinetic0, 1e-9 * kinetic0) << what;
  // At the turning points the motion stops and the spring holds all the energy.
  EXPECT_NEAR(t.peak_joint, kinetic0, (ga ? 5e-3 : 2e-2) * kinetic0) << what;
  if (ga) {
    EXPECT_LE(t.highest - t.e0, 1e-6 * kinetic0) << what;
    EXPECT_GT(t.final_total, 0.95 * kinetic0) << what;
  } else {
    EXPECT_LE(t.worst_rise, 0.0) << what;
    EXPECT_GT(t.final_total, 0.5 * kinetic0) << what;
  }
}

TEST(SpringEnergy, HingeSpringHoldsTheKineticEnergy) {
  for (const TimeIntegration integration : kBoth) {
    World w(weightless(integration));
    const double w0 = 0.5, k = 0.5;
    const BodyId b = add_ball(w, Vec3(0, 0, w0), Vec3::Zero());
    JointDef j;
    j.type = JointType::Hinge;
    j.body_b = b;
    j.axis = Vec3::UnitZ();
    j.spring = JointSpring{k, 0, 0};
    w.add_joint(j);
    EXPECT_EQ(w.joint_energy(), 0.0);
    expect_oscillator(run(w, 3 * 2 * M_PI * std::sqrt(kInertia / k)), 0.5 * kInertia * w0 * w0,
                      "hinge", integration);
  }
}

TEST(SpringEnergy, HingeSpringAwayFromRestStoresHalfKDeltaSquared) {
  World w(weightless(TimeIntegration::GeneralizedAlpha));
  const BodyId b = add_ball(w, Vec3::Zero(), Vec3::Zero());
  JointDef j;
  j.type = JointType::Hinge;
  j.body_b = b;
  j.axis = Vec3::UnitZ();
  j.spring = JointSpring{2.0, 0, 0.3};  // at rest 0.3 rad from where it starts
  w.add_joint(j);
  EXPECT_NEAR(w.joint_energy(), 0.5 * 2.0 * 0.3 * 0.3, 1e-12);
}

TEST(SpringEnergy, BallSpringHoldsTheKineticEnergy) {
  for (const TimeIntegration integration : kBoth) {
    World w(weightless(integration));
    const double k = 0.5;
    const Vec3 w0 = 0.2 * Vec3(1, 1, 0).normalized();
    const BodyId b = add_ball(w, w0, Vec3::Zero());
    JointDef j;
    j.type = JointType::Ball;
    j.body_b = b;
    j.spring = JointSpring{k, 0, 0};
    w.add_joint(j);
    // 1/2 k |bend|^2 is small-angle: at 0.14 rad it differs from 1/2 k theta^2 by 0.3%.
    expect_oscillator(run(w, 3 * 2 * M_PI * std::sqrt(kInertia / k)),
                      0.5 * kInertia * w0.squaredNorm(), "ball", integration);
  }
}

TEST(SpringEnergy, PrismaticSpringHoldsTheKineticEnergy) {
  for (const TimeIntegration integration : kBoth) {
    World w(weightless(integration));
    const double v0 = 0.3, k = 40;
    const BodyId b = add_ball(w, Vec3::Zero(), Vec3(v0, 0, 0));
    JointDef j;
    j.type = JointType::Prismatic;
    j.body_b = b;
    j.axis = Vec3::UnitX();
    j.spring = JointSpring{k, 0, 0};
    w.add_joint(j);
    expect_oscillator(run(w, 3 * 2 * M_PI * std::sqrt(kMass / k)), 0.5 * kMass * v0 * v0,
                      "prismatic", integration);
  }
}

TEST(SpringEnergy, CompliantJointStoresHalfCSquaredOverCompliance) {
  // A ball joint at the sphere's centre with compliance c is a linear spring of stiffness
  // 1/c: released unstretched under gravity, the sphere bobs down to 2 m g c, where the
  // joint holds 1/2 (2 m g)^2 c, all the gravity energy it has given up.
  for (const TimeIntegration integration : kBoth) {
    WorldSettings s;
    s.dt = 1e-3;
    s.time_integration = integration;
    World w(s);
    const double c = 1e-3, g = s.gravity.norm();
    const BodyId b = add_ball(w, Vec3::Zero(), Vec3::Zero());
    JointDef j;
    j.type = JointType::Ball;
    j.body_b = b;
    j.compliance = c;
    w.add_joint(j);
    const double drop = 2 * kMass * g * c, stored = 0.5 * drop * drop / c;
    const Trace t = run(w, 3 * 2 * M_PI * std::sqrt(kMass * c));
    const bool ga = integration == TimeIntegration::GeneralizedAlpha;
    std::printf("  compliant (%s): peak joint energy %.6e J (exact %.6e), max E - E0 %+.2e J, "
                "worst rise %.2e J\n",
                ga ? "GA" : "IE", t.peak_joint, stored, t.highest - t.e0, t.worst_rise);
    EXPECT_NEAR(t.peak_joint, stored, (ga ? 1e-2 : 5e-2) * stored);
    if (ga) {
      EXPECT_LE(t.highest - t.e0, 1e-6 * stored);
    } else {
      EXPECT_LE(t.worst_rise, 0.0);
    }
    EXPECT_LT(w.com_position(b).z(), 0.0);
  }
}

// The step's energy check (implicit Euler with contact: an iterate that has gained energy is
// not converged) counts what the joints store. A sphere pinned at its centre by a sprung ball
// joint, resting on a frictionless ground and swinging on its spring, trades kinetic energy
// with the spring: when the spring gives it back the motion speeds up, which is no gain, and
// one Newton iteration a step suffices. When the check did not count ball springs, it read
// that as a gain and took another iteration on about half the steps (299 in 200 steps).
TEST(SpringEnergy, TheContactEnergyCheckCountsBallSprings) {
  WorldSettings s;
  s.dt = 1e-2;
  s.time_integration = TimeIntegration::ImplicitEuler;
  s.contact.model = ContactModel::Exact;
  s.newton_iterations = 1;  // the default: more only while the check finds a gain
  World w(s);
  BodyDef ground;
  ground.kind = BodyKind::Static;
  ground.shape.type = ShapeType::Plane;
  ground.material.friction = 0;
  w.add_body(ground);
  BodyDef d;
  d.shape.type = ShapeType::Sphere;
  d.shape.radius = kRadius;
  d.material = {kDensity, 1e9, 0.3};
  d.material.friction = 0;
  d.position = Vec3(0, 0, kRadius);
  d.angular_velocity = Vec3(1.0, 0, 0);
  const BodyId b = w.add_body(d);
  JointDef j;
  j.type = JointType::Ball;
  j.body_b = b;
  j.anchor = d.position;
  j.spring = JointSpring{0.05, 0, 0};
  w.add_joint(j);
  double e = w.kinetic_energy() + w.potential_energy(), worst_rise = 0;
  int iterations = 0, steps = 0, contact_steps = 0;
  for (; steps < 200; ++steps) {
    w.step();
    iterations += w.last_step().newton_iterations;
    contact_steps += w.last_step().contacts > 0;
    const double e_next = w.kinetic_energy() + w.potential_energy();
    worst_rise = std::max(worst_rise, e_next - e);
    e = e_next;
  }
  std::printf("  %d Newton iterations in %d steps (%d in contact), worst rise %.2e J\n",
              iterations, steps, contact_steps, worst_rise);
  EXPECT_TRUE(w.warnings().empty());
  EXPECT_GE(contact_steps, steps / 2);
  EXPECT_LE(iterations, steps + steps / 10);
  EXPECT_LE(worst_rise, 0.0);
}

}  // namespace
}  // namespace mabd
