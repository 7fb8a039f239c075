// The heavy-end-mass chain: 100 box links on ball joints, hung from the world at one end with
// an end mass of ten links, released straight and horizontal under gravity. One Newton
// iteration per step: the joints must hold after every step and the state stay finite while
// the chain swings down, straightens and rings.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "mabd/mabd.h"

namespace mabd {
namespace {

constexpr int kLinks = 100;
constexpr double kLinkLength = 0.1;
constexpr double kSection = 0.01;
constexpr double kLinkMass = 0.01;  // density 1000 kg/m^3
constexpr double kEndRadius = 0.02;
constexpr double kEndMass = 10 * kLinkMass;
constexpr double kTotalLength = kLinks * kLinkLength + kEndRadius;  // pivot to end-mass centre

struct ChainResult {
  bool threw = false;
  std::string error;
  bool finite = true;
  long steps = 0;
  double max_residual = 0;
  std::vector<double> t, end_z, end_x, end_dist;
  double min_z = 0, max_z = -INFINITY;
  double max_dist = 0;       // max |end - pivot| (m)
  double energy_drift = 0;   // max |E - E0| / (M g L)
  double ms_per_step = 0;
};

/// hanging = false: released straight along +x; true: hanging straight down (-z) at rest.
ChainResult run_chain(double h, double T, double E, bool hanging) {
  const Vec3 dir = hanging ? Vec3(0, 0, -1) : Vec3(1, 0, 0);
  WorldSettings s;
  s.dt = h;
  s.gravity = Vec3(0, 0, -9.81);
  s.newton_iterations = 1;
  World w(s);
  std::vector<BodyId> links;
  BodyDef d;
  d.shape.type = ShapeType::Box;
  d.shape.size = Vec3(kLinkLength, kSection, kSection);
  d.material = {kLinkMass / (kLinkLength * kSection * kSection), E, 0.3};
  for (int i = 0; i < kLinks; ++i) {
    d.name = "link" + std::to_string(i);
    d.position = (i + 0.5) * kLinkLength * dir;
    d.orientation = Quat::FromTwoVectors(Vec3::UnitX(), dir);
    links.push_back(w.add_body(d));
  }
  BodyDef end;
  end.name = "end";
  end.shape.type = ShapeType::Sphere;
  end.shape.radius = kEndRadius;
  end.mass = kEndMass;
  end.material = {1000.0, E, 0.3};
  end.position = (kLinks * kLinkLength + kEndRadius) * dir;
  const BodyId end_id = w.add_body(end);

  JointDef j;
  j.type = JointType::Ball;
  for (int i = 0; i <= kLinks; ++i) {
    j.name = "j" + std::to_string(i);
    j.body_a = i == 0 ? BodyId{} : links[i - 1];
    j.body_b = i == kLinks ? end_id : links[i];
    j.anchor = i * kLinkLength * dir;
    w.add_joint(j);
  }

  ChainResult r;
  const double E0 = w.kinetic_energy() + w.potential_energy();
  const double scale = (kLinks * kLinkMass + kEndMass) * 9.81 * kTotalLength;
  const long n = std::lround(T / h);
  const long every = std::max(1L, std::lround(0.1 / h));
  const auto t0 = std::chrono::steady_clock::now();
  try {
    for (long i = 0; i < n; ++i) {
      w.step();
      ++r.steps;
      r.max_residual = std::max(r.max_residual, w.last_step().joint_residual);
      const Vec3 c = w.com_position(end_id);
      if (!c.allFinite() || !std::isfinite(w.last_step().joint_residual)) {
        r.finite = false;
        break;
      }
      r.min_z = std::min(r.min_z, c.z());
      r.max_z = std::max(r.max_z, c.z());
      r.max_dist = std::max(r.max_dist, c.norm());
      r.energy_drift = std::max(
          r.energy_drift, std::abs(w.kinetic_energy() + w.potential_energy() - E0) / scale);
      if ((i + 1) % every == 0) {
        r.t.push_back((i + 1) * h);
        r.end_z.push_back(c.z());
        r.end_x.push_back(c.x());
        r.end_dist.push_back(c.norm());
      }
    }
  } catch (const std::exception& e) {
    r.threw = true;
    r.error = e.what();
  }
  for (BodyId id : links)
    if (!w.coordinates(id).allFinite()) r.finite = false;
  r.ms_per_step = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                      .count() /
                  std::max(1L, r.steps);
  return r;
}

TEST(HeavyEndChain, HoldsItsJointsWhileSwingingDown) {
  const double E = 1e8;
  std::printf("  %d links %.2f x %.2f x %.2f m, %.3f kg each, end mass %.2f kg, E = %.0e Pa; "
              "total length %.3f m\n",
              kLinks, kLinkLength, kSection, kSection, kLinkMass, kEndMass, E, kTotalLength);
  for (double h : {1e-2, 1e-3}) {
    const double T = 3.0;
    const ChainResult r = run_chain(h, T, E, false);
    std::printf("  h = %g: %ld steps, %.3f ms/step, max joint residual %.3e, min end z %.4f m, "
                "max |end - pivot| %.4f m, max |E - E0| / (M g L) %.2e%s\n",
                h, r.steps, r.ms_per_step, r.max_residual, r.min_z, r.max_dist, r.energy_drift,
                r.threw ? (" THREW: " + r.error).c_str() : "");
    std::printf("    t(s)   end x (m)  end z (m)  |end - pivot| (m)\n");
    for (std::size_t i = 0; i < r.t.size(); ++i)
      std::printf("    %.2f  %9.4f  %9.4f  %9.4f\n", r.t[i], r.end_x[i], r.end_z[i],
                  r.end_dist[i]);
    EXPECT_FALSE(r.threw) << r.error;
    EXPECT_TRUE(r.finite) << "h = " << h;
    EXPECT_LE(r.max_residual, 1e-6) << "h = " << h;
    // The undamped chain swings down like a pendulum (reaching the bottom at ~1.5 s) and on
    // up the other side; it straightens at the bottom of the swing: the end mass reaches
    // about the full length below the pivot and is never stretched beyond it.
    EXPECT_LT(r.min_z, -0.9 * kTotalLength) << "h = " << h;
    EXPECT_LT(r.max_dist, 1.1 * kTotalLength) << "h = " << h;
  }
}

TEST(HeavyEndChain, HangingChainRingsElastically) {
  // Released hanging straight down, unstretched: gravity stretches the links and the end mass
  // oscillates vertically about the static stretch, sum of T_k l / (E a) over the links.
  const double E = 1e8, a = kSection * kSection;
  double stretch = 0;
  for (int k = 0; k < kLinks; ++k)
    stretch += 9.81 * (kEndMass + (kLinks - k - 0.5) * kLinkMass) * kLinkLength / (E * a);
  for (double h : {1e-2, 1e-3}) {
    const ChainResult r = run_chain(h, 3.0, E, true);
    std::printf("  h = %g: end z in [%.5f, %.5f] m (rest length %.3f, static stretch %.5f m), "
                "max joint residual %.2e, max |E - E0| / (M g L) %.2e%s\n",
                h, r.min_z, r.max_z, -kTotalLength, stretch, r.max_residual, r.energy_drift,
                r.threw ? (" THREW: " + r.error).c_str() : "");
    std::printf("    t(s):end z(m)");
    for (std::size_t i = 0; i < r.t.size(); i += 2) std::printf(" %.1f:%.5f", r.t[i], r.end_z[i]);
    std::printf("\n");
    EXPECT_FALSE(r.threw) << r.error;
    EXPECT_TRUE(r.finite) << "h = " << h;
    EXPECT_LE(r.max_residual, 1e-6) << "h = " << h;
    ASSERT_FALSE(r.t.empty());
    // Hangs straight down at the end.
    EXPECT_NEAR(r.end_z.back(), -kTotalLength, 0.1 * kTotalLength) << "h = " << h;
    // The elastic ringing: at most twice the static stretch below the rest length.
    EXPECT_GT(r.min_z, -kTotalLength - 2.5 * stretch) << "h = " << h;
  }
}

}  // namespace
}  // namespace mabd
