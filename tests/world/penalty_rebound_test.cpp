// Penalty contact and the time integration: a sphere dropped on the ground must not come back
// with more energy than it brought. Implicit Euler, any time constant: it stays down.
// Generalized-alpha: its velocity update returns part of a contact spring's impulse (a
// rebound that grows as the spring stiffens, and exceeds the impact at tau below about
// 0.7 dt), so the settings reject tau < dt there; at tau = dt the rebound stays well under
// the impact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "mabd/mabd.h"

namespace mabd {
namespace {

struct Drop {
  double impact = 0;   ///< energy at release above the sphere touching the ground (J)
  double rebound = 0;  ///< highest energy after the first landing, on the same scale (J)
  double speed = 0;    ///< speed at the end (m/s)
};

/// A 0.1 m sphere (density 1000) released at rest with its centre at height z (m) above a
/// static ground plane, h = 10 ms, 3 s. Energies are kinetic + gravitational, measured from
/// the sphere at rest touching the ground (the contact springs' own is zero once it is off).
Drop drop(TimeIntegration integration, double spectral_radius, double tau, double z) {
  WorldSettings s;
  s.dt = 0.01;
  s.gravity = Vec3(0, 0, -9.81);
  s.time_integration = integration;
  s.spectral_radius = spectral_radius;
  s.contact.model = ContactModel::Penalty;
  s.contact.time_constant = tau;
  World w(s);
  BodyDef g;
  g.kind = BodyKind::Static;
  g.shape.type = ShapeType::Plane;
  w.add_body(g);
  BodyDef b;
  b.shape.type = ShapeType::Sphere;
  b.shape.radius = 0.1;
  b.position = Vec3(0, 0, z);
  const BodyId ball = w.add_body(b);
  const double e0 = w.kinetic_energy() + w.potential_energy();  // at release (J)
  std::vector<double> E;
  int landed = -1;
  for (int i = 0; i < 300; ++i) {
    w.step();
    E.push_back(w.kinetic_energy() + w.potential_energy());
    if (landed < 0 && !w.contacts().empty()) landed = i;
  }
  EXPECT_GE(landed, 0);
  // The lowest energy of the landing (the sphere at its deepest and slowest), then the highest
  // energy after it: the rebound's apex.
  const auto lowest = std::min_element(E.begin() + landed,
                                       E.begin() + std::min<int>(landed + 40, E.size()));
  const double touching = e0 * 0.1 / z;  // gravitational energy is m g z
  Drop d;
  d.impact = e0 - touching;
  d.rebound = *std::max_element(lowest, E.end()) - touching;
  d.speed = w.twist(ball).linear.norm();
  return d;
}

const std::vector<double> kHeights = {0.3, 0.45, 0.6, 0.8, 1.0, 1.3, 1.7, 2.2, 2.9, 3.7};

TEST(PenaltyRebound, ImplicitEulerStaysDownAtAnyTimeConstant) {
  for (double tau : {0.02, 0.01, 0.0025, 0.0}) {  // 0: the default, dt / 4
    for (double z : kHeights) {
      const Drop d = drop(TimeIntegration::ImplicitEuler, 0.8, tau, z);
      EXPECT_LT(d.rebound, 1e-3 * d.impact) << "tau " << tau << " z " << z;
      EXPECT_LT(d.speed, 1e-3) << "tau " << tau << " z " << z;
    }
  }
}

TEST(PenaltyRebound, GeneralizedAlphaAtTheSmallestTimeConstantItTakes) {
  for (double rho : {0.0, 0.8, 1.0}) {
    double worst = 0;
    for (double z : kHeights) {
      const Drop d = drop(TimeIntegration::GeneralizedAlpha, rho, 0.01, z);
      worst = std::max(worst, d.rebound / d.impact);  // still bouncing after 3 s at some z
    }
    std::printf("generalized-alpha, rho %.1f, tau = dt: worst rebound %.3f of the impact\n", rho,
                worst);
    EXPECT_LT(worst, 0.6) << "rho " << rho;
  }
}

TEST(PenaltyRebound, GeneralizedAlphaRejectsAStifferSpring) {
  WorldSettings s;
  s.dt = 0.01;
  s.contact.model = ContactModel::Penalty;
  s.contact.time_constant = 0.007;
  try {
    World w(s);
    FAIL() << "accepted tau = 0.7 dt under generalized-alpha";
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("settings.contact.time_constant: 0.007 s is below dt = 0.01 s"),
              std::string::npos)
        << what;
  }
  s.contact.time_constant = 0.01;  // tau = dt, and the default 2 dt, are taken
  EXPECT_NO_THROW(World{s});
  s.contact.time_constant = 0;
  EXPECT_NO_THROW(World{s});
  s.contact.time_constant = 0.002;
  s.time_integration = TimeIntegration::ImplicitEuler;
  EXPECT_NO_THROW(World{s});
}

}  // namespace
}  // namespace mabd
