// Backward Euler dynamics of a free block (no gravity, no pins).
// Energy: with x^{n+1} the minimiser of the incremental potential, M (v^{n+1} - v^n) =
// h f(x^{n+1}), and for an elastic energy convex along the step,
//   (KE + Psi)^{n+1} - (KE + Psi)^n <= -1/2 |v^{n+1} - v^n|_M^2 <= 0:
// backward Euler only dissipates.
// Linear momentum: the elastic forces sum to zero, so sum_i (M v)_i is exactly conserved.
// Angular momentum: backward Euler does NOT conserve it. Rotation invariance gives
// sum_i x^{n+1}_i x f_i(x^{n+1}) = 0, and with x^{n+1} = x^n + h v^{n+1}:
//   L^{n+1} - L^n = h sum_ij M_ij v^{n+1}_i x v^n_j,
// an O(h^2) loss per step (O(h) over a fixed time) whenever velocities turn, e.g. a spinning
// block. The tests check this identity to round-off and the first-order convergence of L.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>

#include "fem/fem_solid.h"

namespace mabd::fem {
namespace {

/// Free 0.1 m cube, 3 x 3 x 3 cells, soft (E = 1e5 Pa, nu = 0.3, rho = 1000 kg/m^3).
FemModel block(MassType mass) {
  return FemModel(make_box_mesh(Vec3::Zero(), Vec3::Constant(0.1), 3, 3, 3),
                  {1000, 1e5, 0.3}, mass);
}

/// Initial state: a general (non-symmetric) 10% deformation about the centre, a drift
/// velocity and a spin omega (rad/s) about the centre.
FemState initial_state(const FemModel& m, double omega) {
  Mat3 F;
  F << 1.10, 0.04, 0.02,
      -0.03, 0.95, 0.05,
       0.01, -0.02, 1.06;
  const Vec3 c = Vec3::Constant(0.05), w = omega * Vec3(0.3, -0.5, 0.8).normalized();
  FemState s = rest_state(m);
  for (int i = 0; i < m.num_nodes(); ++i) {
    const Vec3 r = F * (m.mesh().rest[i] - c);
    s.x.segment<3>(3 * i) = c + r;
    s.v.segment<3>(3 * i) = Vec3(0.2, -0.1, 0.05) + w.cross(r);
  }
  return s;
}

/// h sum_ij M_ij v1_i x v0_j, the angular momentum change of one backward Euler step.
Vec3 predicted_L_change(const FemModel& m, const Eigen::VectorXd& v1, const Eigen::VectorXd& v0,
                        double h) {
  const Eigen::VectorXd Mv0 = m.mass_times(v0);
  Vec3 s = Vec3::Zero();
  for (int i = 0; i < m.num_nodes(); ++i)
    s += Vec3(v1.segment<3>(3 * i)).cross(Vec3(Mv0.segment<3>(3 * i)));
  return h * s;
}

void run_block(MassType mass, double omega, HessianProjection projection) {
  const FemModel model = block(mass);
  FemSolid solid(model);
  solid.settings().newton_tol = 1e-12;
  solid.settings().projection = projection;
  solid.set_state(initial_state(model, omega));
  const double h = 1e-3;
  const int steps = 500;
  const Vec3 p0 = solid.linear_momentum(), L_start = solid.angular_momentum();
  double max_L_drift = 0;
  const double E0 = solid.kinetic_energy() + solid.elastic_energy();
  // max_rise: the largest (E_{n+1} - E_n)/E0 over all steps (negative: always decreasing).
  double E_prev = E0, max_rise = -1, max_p = 0, max_L_identity = 0;
  int iters = 0, max_iters = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int n = 0; n < steps; ++n) {
    const Eigen::VectorXd v0 = solid.state().v;
    const Vec3 L0 = solid.angular_momentum();
    const NewtonReport r = solid.step(h, Vec3::Zero());
    ASSERT_TRUE(r.converged) << "step " << n << ": " << r.iterations << " iterations, increment "
                             << r.last_increment << " m, " << r.line_search_halvings
                             << " halvings, |g| " << r.gradient_norm << " N";
    iters += r.iterations;
    max_iters = std::max(max_iters, r.iterations);
    const double En = solid.kinetic_energy() + solid.elastic_energy();
    max_rise = std::max(max_rise, (En - E_prev) / E0);
    E_prev = En;
    max_p = std::max(max_p, (solid.linear_momentum() - p0).norm() / p0.norm());
    const Vec3 dL = solid.angular_momentum() - L0;
    const Vec3 dL_pred = predicted_L_change(model, solid.state().v, v0, h);
    max_L_identity = std::max(max_L_identity, (dL - dL_pred).norm() / L0.norm());
    max_L_drift =
        std::max(max_L_drift, (solid.angular_momentum() - L_start).norm() / L_start.norm());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "%s mass, projection %s, spin %.0f rad/s, %d steps of %.0e s: energy %.4e -> %.4e J (%.1f%% "
      "dissipated), max (E_n+1 - E_n)/E0 %.1e; |dp|/|p| max %.1e; |L - L0|/|L0| max "
      "%.1e; L identity error max %.1e of |L|; Newton %.2f iterations/step (max %d); "
      "%.2f s\n",
      mass == MassType::lumped ? "lumped" : "consistent",
      projection == HessianProjection::always ? "always" : "when indefinite", omega, steps, h, E0,
      E_prev, 100 * (1 - E_prev / E0), max_rise, max_p, max_L_drift, max_L_identity,
      double(iters) / steps, max_iters, seconds);
  EXPECT_LE(max_rise, 1e-12);           // never increases beyond round-off
  EXPECT_LT(E_prev, E0);
  EXPECT_LT(max_p, 1e-12);
  EXPECT_LT(max_L_identity, 1e-9);
}

TEST(FemDynamics, FreeBlockLumpedMassDissipatesAndConservesLinearMomentum) {
  run_block(MassType::lumped, 0.0, HessianProjection::when_indefinite);
}
TEST(FemDynamics, FreeBlockConsistentMassDissipatesAndConservesLinearMomentum) {
  run_block(MassType::consistent, 0.0, HessianProjection::always);
}
TEST(FemDynamics, SpinningBlockDissipatesAndFollowsTheAngularMomentumIdentity) {
  run_block(MassType::lumped, 20.0, HessianProjection::when_indefinite);
  run_block(MassType::lumped, 20.0, HessianProjection::always);
}

// The angular momentum lost by a spinning block over a fixed time falls like h (backward
// Euler is first order): halving h halves the loss.
TEST(FemDynamics, AngularMomentumLossIsFirstOrderInTheTimeStep) {
  const FemModel model = block(MassType::lumped);
  const double T = 0.1;
  std::vector<double> loss;
  for (const double h : {2e-3, 1e-3, 5e-4}) {
    FemSolid solid(model);
    solid.settings().newton_tol = 1e-12;
    solid.set_state(initial_state(model, 20.0));
    const Vec3 L0 = solid.angular_momentum();
    const int steps = static_cast<int>(std::lround(T / h));
    for (int n = 0; n < steps; ++n) ASSERT_TRUE(solid.step(h, Vec3::Zero()).converged);
    loss.push_back((solid.angular_momentum() - L0).norm() / L0.norm());
    std::printf("h %.0e s: |L(%.1f s) - L0| / |L0| = %.3e\n", h, T, loss.back());
  }
  for (size_t k = 1; k < loss.size(); ++k) {
    const double ratio = loss[k - 1] / loss[k];
    std::printf("  ratio %.2f (first order: 2)\n", ratio);
    EXPECT_GT(ratio, 1.7);
    EXPECT_LT(ratio, 2.3);
  }
}

// Free fall: with no elastic force the backward Euler recursion is v_n = v_0 + n h g,
// x_n = x_0 + n h v_0 + n (n + 1)/2 h^2 g exactly.
TEST(FemDynamics, FreeFallFollowsTheBackwardEulerRecursion) {
  const FemModel model = block(MassType::consistent);
  FemSolid solid(model);
  const Vec3 g(0, 0, -9.81), v0(0.5, 0, 1);
  FemState s = rest_state(model);
  for (int i = 0; i < model.num_nodes(); ++i) s.v.segment<3>(3 * i) = v0;
  solid.set_state(s);
  const double h = 1e-2;
  const int steps = 50;
  for (int n = 0; n < steps; ++n) solid.step(h, g);
  const double k = steps;
  double err = 0;
  for (int i = 0; i < model.num_nodes(); ++i) {
    const Vec3 x = model.mesh().rest[i] + k * h * v0 + k * (k + 1) / 2 * h * h * g;
    err = std::max(err, (solid.position(i) - x).norm());
    err = std::max(err, (Vec3(solid.state().v.segment<3>(3 * i)) - (v0 + k * h * g)).norm() * h);
  }
  EXPECT_LT(err, 1e-12);
  const double m = model.total_mass();
  EXPECT_NEAR(solid.gravitational_energy(g),
              -m * g.dot(solid.position(0) - model.mesh().rest[0] + Vec3::Constant(0.05)), 1e-12);
  EXPECT_NEAR(solid.elastic_energy(), 0, 1e-12);
  EXPECT_NEAR(solid.kinetic_energy(), 0.5 * m * (v0 + k * h * g).squaredNorm(), 1e-10);
}

}  // namespace
}  // namespace mabd::fem
