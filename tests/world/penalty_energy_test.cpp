// The energy the penalty contacts' springs store (World::contact_energy): the normal rows'
// 1/2 k d^2 and the friction rows' 1/2 k s^2 on their anchors. Implicit Euler minimises the
// step's incremental potential with those springs in it, so the total with them never rises,
// and the step's energy check, which counts them, takes no extra iteration when they give
// their energy back. Each spring keeps the stiffness of its first step: one that followed the
// body's pitch (k = m_eff(q) / tau^2) changed the energy of a loaded spring without work, and
// the total rose by up to 1.6e-4 J a step here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "mabd/mabd.h"

namespace mabd {
namespace {

/// A 0.2 m cube of 8 kg on a static ground (friction 1 for both), penalty contact without
/// dampers, time constant tau (s), implicit Euler, h = 10 ms; the cube starts at rest on its
/// normal springs (sunk by m g / (4 k), k = 2 kg / tau^2 at each corner, see spring_shares)
/// with the horizontal velocity v0 (m/s).
World sliding_box(double tau, double v0, BodyId* box) {
  WorldSettings s;
  s.dt = 0.01;
  s.gravity = Vec3(0, 0, -9.81);
  s.time_integration = TimeIntegration::ImplicitEuler;
  s.contact.model = ContactModel::Penalty;
  s.contact.time_constant = tau;
  s.contact.damping_ratio = 0;
  World w(s);
  BodyDef g;
  g.kind = BodyKind::Static;
  g.shape.type = ShapeType::Plane;
  g.material.friction = 1;
  w.add_body(g);
  BodyDef b;
  b.shape.type = ShapeType::Box;
  b.shape.size = Vec3(0.2, 0.2, 0.2);
  b.material.density = 1000;
  b.material.friction = 1;
  b.position = Vec3(0, 0, 0.1 - 8 * 9.81 / (4 * 2 / (tau * tau)));
  b.linear_velocity = Vec3(v0, 0, 0);
  *box = w.add_body(b);
  return w;
}

/// The springs' energy from the reported contacts alone (J): each corner of the cube has the
/// rigid effective mass m_eff = 1 / (1/m + |p x d|^2 / I) = 2 kg along the normal and the
/// tangents (m = 8 kg, I = m (0.2^2 + 0.2^2) / 12, |p x d|^2 = 0.02 m^2 at a corner p), so
/// k = 2 / tau^2 on every row; undamped, a friction row's force is k times its stretch.
void spring_shares(const World& w, double tau, double* normal, double* friction) {
  const double k = 2.0 / (tau * tau);
  *normal = *friction = 0;
  for (const ContactInfo& c : w.contacts()) {
    const Vec3 ft = c.force - c.normal * c.normal.dot(c.force);
    *normal += 0.5 * k * c.depth * c.depth;
    *friction += ft.squaredNorm() / (2 * k);
  }
}

// Below the speed at which a new contact starts sliding (mu g h = 0.098 m/s), the cube's
// corners stick and their friction springs stop it, then push it back. Counted, the total
// never rises; without the friction springs' share (kinetic + gravity + normal springs) it
// rises as they give their energy back.
TEST(PenaltyEnergy, FrictionSpringsCountInTheTotal) {
  const double tau = 0.05;
  BodyId box;
  World w = sliding_box(tau, 0.09, &box);
  const double ke0 = w.kinetic_energy();
  w.step();  // contact_energy() holds the last step's contacts: none before the first
  double e = w.kinetic_energy() + w.potential_energy(), worst = -1e300;
  double e_uncounted = e, uncounted_rise = 0, most_friction = 0, mismatch = 0;
  int most_iterations = 0;
  for (int i = 0; i < 200; ++i) {
    w.step();
    const double next = w.kinetic_energy() + w.potential_energy();
    worst = std::max(worst, next - e);
    e = next;
    double normal, friction;
    spring_shares(w, tau, &normal, &friction);
    mismatch = std::max(mismatch, std::abs(w.contact_energy() - normal - friction));
    most_friction = std::max(most_friction, friction);
    uncounted_rise = std::max(uncounted_rise, next - friction - e_uncounted);
    e_uncounted = next - friction;
    most_iterations = std::max(most_iterations, w.last_step().newton_iterations);
  }
  std::printf("sticking box: worst step %.3g J with the springs, %.3g J without the friction "
              "springs; they hold up to %.3g J of %.3g J kinetic; contact_energy against the "
              "reported forces %.3g J; up to %d Newton iterations\n",
              worst, uncounted_rise, most_friction, ke0, mismatch, most_iterations);
  EXPECT_LT(worst, 1e-9 * std::abs(e) + 1e-12);
  // Implicit Euler damps the spring (omega h = 0.2 with k = 800 N/m on each of 4 corners),
  // and the cube pitches: the springs hold about 0.3 of the kinetic energy at their fullest.
  EXPECT_GT(most_friction, 0.2 * ke0);
  EXPECT_GT(uncounted_rise, 0.01 * ke0);
  EXPECT_LT(mismatch, 1e-3 * most_friction);
  EXPECT_EQ(most_iterations, 1);
}

}  // namespace
}  // namespace mabd
