// The block-Jacobi PCG dual solver on random block-sparse systems built like the dual matrix
// (S = G H^{-1} G^T + compliance, assembled body by body): convergence to the requested
// tolerance, the reported residual, warm starts, pattern reuse and redundant rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <Eigen/Dense>

#include "random_dual_system.h"
#include "solvers/iterative_dual.h"

namespace mabd::detail {
namespace {

using namespace test;  // random_model, assemble, random_vector

double true_residual(const System& s, const Eigen::VectorXd& b, const Eigen::VectorXd& x) {
  return (b - s.dense * x).norm() / b.norm();
}

/// Round-off of a relative residual evaluated in another summation order.
double residual_roundoff(const System& s, const Eigen::VectorXd& b, const Eigen::VectorXd& x) {
  return 1e-14 * s.dense.norm() * x.norm() / b.norm();
}

TEST(IterativeDualSolver, ConvergesToTheRequestedTolerance) {
  for (double tol : {1e-4, 1e-8, 1e-10}) {
    for (unsigned seed = 1; seed <= 20; ++seed) {
      std::mt19937 rng(seed);
      const int bodies = 2 + static_cast<int>(rng() % 40);
      const int joints = 1 + static_cast<int>(rng() % bodies);
      const System s = assemble(random_model(rng, bodies, joints));
      const Eigen::VectorXd b = random_vector(rng, s.n);
      IterativeDualSolver solver;
      solver.settings.tolerance = tol;
      solver.settings.max_iterations = 10 * s.n;
      Eigen::VectorXd x;  // cold start
      const IterativeDualResult r = solver.solve(s.n, s.triplets, s.block_begin, b, seed, x);
      ASSERT_EQ(x.size(), s.n);
      EXPECT_TRUE(r.converged) << "seed " << seed << " tol " << tol << ": " << r.residual;
      EXPECT_GT(r.iterations, 0);
      // The reported residual is the true one, and within the tolerance.
      const double truth = true_residual(s, b, x);
      EXPECT_LE(truth, tol * (1 + 1e-6)) << "seed " << seed << " tol " << tol;
      EXPECT_NEAR(r.residual, truth, 1e-3 * truth + residual_roundoff(s, b, x))
          << "seed " << seed << " tol " << tol;
      if (tol == 1e-10) {
        const Eigen::VectorXd ref = s.dense.ldlt().solve(b);
        const double cond_bound = 1e-10 * s.dense.norm() * s.dense.inverse().norm();
        EXPECT_LE((x - ref).norm() / ref.norm(), std::max(1e-8, cond_bound)) << "seed " << seed;
      }
    }
  }
}

TEST(IterativeDualSolver, WarmStartFromTheSolution) {
  std::mt19937 rng(5);
  const System s = assemble(random_model(rng, 40, 60));
  const Eigen::VectorXd b = random_vector(rng, s.n);
  const Eigen::VectorXd exact = s.dense.ldlt().solve(b);
  IterativeDualSolver solver;
  solver.settings.tolerance = 1e-10;
  Eigen::VectorXd x = exact;
  IterativeDualResult r = solver.solve(s.n, s.triplets, s.block_begin, b, 1, x);
  EXPECT_TRUE(r.converged);
  EXPECT_LE(r.iterations, 1);
  EXPECT_NEAR(r.residual, true_residual(s, b, x), residual_roundoff(s, b, x));

  // A warm start near the solution takes fewer iterations than a cold one.
  Eigen::VectorXd cold;
  const IterativeDualResult rc = solver.solve(s.n, s.triplets, s.block_begin, b, 1, cold);
  x = exact + 1e-3 * exact.cwiseProduct(random_vector(rng, s.n));
  r = solver.solve(s.n, s.triplets, s.block_begin, b, 1, x);
  EXPECT_TRUE(rc.converged);
  EXPECT_TRUE(r.converged);
  EXPECT_LT(r.iterations, rc.iterations);
  EXPECT_EQ(solver.rebuilds(), 1);

  // A zero right-hand side gives zero.
  x = exact;
  r = solver.solve(s.n, s.triplets, s.block_begin, Eigen::VectorXd::Zero(s.n), 1, x);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.iterations, 0);
  EXPECT_EQ(x.norm(), 0.0);
}

TEST(IterativeDualSolver, StopsAtMaxIterationsWithTheTrueResidual) {
  std::mt19937 rng(9);
  const System s = assemble(random_model(rng, 30, 50));
  const Eigen::VectorXd b = random_vector(rng, s.n);
  IterativeDualSolver solver;
  solver.settings.tolerance = 1e-12;
  solver.settings.max_iterations = 3;
  Eigen::VectorXd x;
  const IterativeDualResult r = solver.solve(s.n, s.triplets, s.block_begin, b, 1, x);
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.iterations, 3);
  const double truth = true_residual(s, b, x);
  EXPECT_NEAR(r.residual, truth, 1e-9 * truth);
}

TEST(IterativeDualSolver, ReusesThePatternAndDetectsChanges) {
  std::mt19937 rng(21);
  Model model = random_model(rng, 25, 40, 1);  // blocks of 1-6 rows
  IterativeDualSolver solver;
  for (int call = 0; call < 3; ++call) {
    for (auto& h : model.hinv) h *= 1.0 + 0.5 * std::abs(random_vector(rng, 1)[0]);
    const System s = assemble(model);
    const Eigen::VectorXd b = random_vector(rng, s.n);
    Eigen::VectorXd x;
    const IterativeDualResult r = solver.solve(s.n, s.triplets, s.block_begin, b, 3, x);
    EXPECT_TRUE(r.converged) << "call " << call;
    EXPECT_LE(true_residual(s, b, x), 1e-10 * (1 + 1e-6));
  }
  EXPECT_EQ(solver.rebuilds(), 1);
  // Same pattern value, triplets in another order: detected, still right.
  System s = assemble(model);
  std::shuffle(s.triplets.begin(), s.triplets.end(), rng);
  Eigen::VectorXd b = random_vector(rng, s.n), x;
  IterativeDualResult r = solver.solve(s.n, s.triplets, s.block_begin, b, 3, x);
  EXPECT_TRUE(r.converged);
  EXPECT_LE(true_residual(s, b, x), 1e-10 * (1 + 1e-6));
  EXPECT_EQ(solver.rebuilds(), 2);
  // A new pattern.
  s = assemble(random_model(rng, 25, 30));
  b = random_vector(rng, s.n);
  x.resize(0);
  r = solver.solve(s.n, s.triplets, s.block_begin, b, 4, x);
  EXPECT_TRUE(r.converged);
  EXPECT_LE(true_residual(s, b, x), 1e-10 * (1 + 1e-6));
  EXPECT_EQ(solver.rebuilds(), 3);
}

TEST(IterativeDualSolver, RedundantConsistentSystemConverges) {
  for (unsigned seed = 1; seed <= 5; ++seed) {
    std::mt19937 rng(300 + seed);
    Model model = random_model(rng, 20, 25);
    for (auto& j : model.joints) j.compliance = 0;
    model.joints.push_back(model.joints[rng() % model.joints.size()]);  // duplicated joint
    const System s = assemble(model);
    const Eigen::VectorXd b = s.dense * random_vector(rng, s.n);
    IterativeDualSolver solver;
    solver.settings.tolerance = 1e-9;
    Eigen::VectorXd x;
    const IterativeDualResult r = solver.solve(s.n, s.triplets, s.block_begin, b, 1, x);
    EXPECT_TRUE(r.converged) << "seed " << seed << ": " << r.residual;
    EXPECT_TRUE(x.allFinite());
    EXPECT_LE(true_residual(s, b, x), 1e-9 * (1 + 1e-6)) << "seed " << seed;
  }
}

TEST(IterativeDualSolver, BlockWithRedundantRows) {
  std::mt19937 rng(17);
  Model model = random_model(rng, 15, 15);
  for (auto& j : model.joints) j.compliance = 0;
  // A joint whose last three rows repeat its first three: its diagonal block is singular.
  Joint& j = model.joints[0];
  j.rows = 6;
  for (Side* side : {&j.a, &j.b}) {
    side->g.conservativeResize(6, 12);
    side->g.bottomRows(3) = side->g.topRows(3);
  }
  const System s = assemble(model);
  const Eigen::VectorXd b = s.dense * random_vector(rng, s.n);
  IterativeDualSolver solver;
  solver.settings.tolerance = 1e-9;
  Eigen::VectorXd x;
  const IterativeDualResult r = solver.solve(s.n, s.triplets, s.block_begin, b, 1, x);
  EXPECT_TRUE(r.converged) << r.residual;
  EXPECT_TRUE(x.allFinite());
  EXPECT_LE(true_residual(s, b, x), 1e-9 * (1 + 1e-6));
}

TEST(IterativeDualSolver, RejectsInvalidInput) {
  IterativeDualSolver solver;
  const Triplets t = {{0, 0, 2.0}, {1, 1, 2.0}};
  Eigen::VectorXd x;
  EXPECT_EQ(solver.solve(2, t, {0, 1}, Eigen::Vector2d(1, 1), 1, x).iterations, -1);
  EXPECT_EQ(solver.solve(2, t, {0, 2, 2}, Eigen::Vector2d(1, 1), 1, x).iterations, -1);
  EXPECT_EQ(solver.solve(2, {{0, 3, 1.0}}, {0, 2}, Eigen::Vector2d(1, 1), 1, x).iterations, -1);
  EXPECT_EQ(solver.solve(2, t, {0, 2}, Eigen::Vector3d(1, 1, 1), 1, x).iterations, -1);
  const IterativeDualResult r = solver.solve(2, t, {0, 1, 2}, Eigen::Vector2d(1, 1), 1, x);
  EXPECT_TRUE(r.converged);
  EXPECT_NEAR((x - Eigen::Vector2d(0.5, 0.5)).norm(), 0, 1e-15);
}

}  // namespace
}  // namespace mabd::detail
