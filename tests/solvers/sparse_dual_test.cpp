// The CHOLMOD dual solver against a dense LDL^T on random block-sparse systems built like
// the dual matrix (S = G H^{-1} G^T + compliance, assembled body by body), the reuse of the
// analysis across calls, and the regularisation of redundant rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <Eigen/Dense>

#include "random_dual_system.h"
#include "solvers/sparse_dual.h"

namespace mabd::detail {
namespace {

using namespace test;  // random_model, assemble, random_vector

double relative_error(const Eigen::VectorXd& x, const Eigen::VectorXd& ref) {
  return (x - ref).norm() / ref.norm();
}

/// Every test runs with both back ends: CHOLMOD (threshold 0) and Eigen (never CHOLMOD).
class SparseDualBackend : public ::testing::TestWithParam<bool> {
 protected:
  SparseDualSolver make_solver() const {
    SparseDualSolver solver;
    solver.cholmod_min_rows = GetParam() ? 0 : std::numeric_limits<int>::max();
    return solver;
  }
};

TEST_P(SparseDualBackend, MatchesDenseLDLT) {
  double worst = 0;
  for (unsigned seed = 1; seed <= 30; ++seed) {
    std::mt19937 rng(seed);
    const int bodies = 2 + static_cast<int>(rng() % 40);
    const int joints = 1 + static_cast<int>(rng() % bodies);
    const System s = assemble(random_model(rng, bodies, joints));
    const Eigen::VectorXd b = random_vector(rng, s.n);
    const Eigen::VectorXd ref = s.dense.ldlt().solve(b);
    SparseDualSolver solver = make_solver();
    Eigen::VectorXd x;
    ASSERT_TRUE(solver.solve(s.n, s.triplets, b, seed, x)) << "seed " << seed;
    ASSERT_EQ(x.size(), s.n);
    EXPECT_FALSE(solver.regularised()) << "seed " << seed;
    const double err = relative_error(x, ref);
    EXPECT_LE(err, 1e-10) << "seed " << seed << ", " << s.n << " rows";
    worst = std::max(worst, err);
  }
  std::printf("  worst relative difference to the dense LDL^T: %.2e\n", worst);
}

TEST_P(SparseDualBackend, ResolvesNewRightHandSidesWithTheLastFactor) {
  // resolve() repeats the last solve's factor for another b: the dense solution of the same
  // matrix; nothing to resolve with before a solve, after a failed one, or for a wrong size.
  for (unsigned seed = 1; seed <= 10; ++seed) {
    std::mt19937 rng(seed);
    const System s = assemble(random_model(rng, 5 + static_cast<int>(rng() % 30), 20));
    SparseDualSolver solver = make_solver();
    Eigen::VectorXd x;
    EXPECT_FALSE(solver.resolve(random_vector(rng, s.n), x));
    ASSERT_TRUE(solver.solve(s.n, s.triplets, random_vector(rng, s.n), seed, x));
    for (int k = 0; k < 3; ++k) {
      const Eigen::VectorXd b = random_vector(rng, s.n);
      ASSERT_TRUE(solver.resolve(b, x)) << "seed " << seed;
      EXPECT_LE(relative_error(x, s.dense.ldlt().solve(b)), 1e-10) << "seed " << seed;
    }
    EXPECT_FALSE(solver.resolve(random_vector(rng, s.n + 1), x));
    std::vector<Eigen::Triplet<double>> bad = s.triplets;
    for (auto& t : bad) t = Eigen::Triplet<double>(t.row(), t.col(), std::nan(""));
    EXPECT_FALSE(solver.solve(s.n, bad, random_vector(rng, s.n), seed, x));
    EXPECT_FALSE(solver.resolve(random_vector(rng, s.n), x));
  }
}

TEST_P(SparseDualBackend, ReusesTheAnalysisWhileThePatternIsUnchanged) {
  std::mt19937 rng(11);
  Model model = random_model(rng, 30, 45);
  SparseDualSolver solver = make_solver();
  Eigen::VectorXd x;
  for (int call = 0; call < 4; ++call) {
    // Same joints, new values: scaled bodies and new compliances.
    for (auto& h : model.hinv) h *= 1.0 + 0.5 * std::abs(random_vector(rng, 1)[0]);
    for (auto& j : model.joints) j.compliance = j.compliance > 0 ? 1e-3 * std::abs(random_vector(rng, 1)[0]) : 0.0;
    const System s = assemble(model);
    const Eigen::VectorXd b = random_vector(rng, s.n);
    ASSERT_TRUE(solver.solve(s.n, s.triplets, b, 42, x));
    EXPECT_LE(relative_error(x, s.dense.ldlt().solve(b)), 1e-10) << "call " << call;
  }
  EXPECT_EQ(solver.analyses(), 1);

  // The same pattern with the triplets in another order: still right, same structure.
  System s = assemble(model);
  std::shuffle(s.triplets.begin(), s.triplets.end(), rng);
  Eigen::VectorXd b = random_vector(rng, s.n);
  ASSERT_TRUE(solver.solve(s.n, s.triplets, b, 42, x));
  EXPECT_LE(relative_error(x, s.dense.ldlt().solve(b)), 1e-10);
  EXPECT_EQ(solver.analyses(), 1);

  // A new pattern: another joint graph of the same size and one of another size.
  for (int joints : {45, 60}) {
    const Model other = random_model(rng, 30, joints);
    s = assemble(other);
    b = random_vector(rng, s.n);
    ASSERT_TRUE(solver.solve(s.n, s.triplets, b, 1000 + joints, x));
    EXPECT_LE(relative_error(x, s.dense.ldlt().solve(b)), 1e-10) << joints << " joints";
  }
  EXPECT_EQ(solver.analyses(), 3);

  // A moved solver keeps working.
  SparseDualSolver moved = std::move(solver);
  ASSERT_TRUE(moved.solve(s.n, s.triplets, b, 1060, x));
  EXPECT_LE(relative_error(x, s.dense.ldlt().solve(b)), 1e-10);
  EXPECT_EQ(moved.analyses(), 3);
}

TEST_P(SparseDualBackend, RegularisesRedundantRows) {
  for (unsigned seed = 1; seed <= 10; ++seed) {
    std::mt19937 rng(100 + seed);
    Model model = random_model(rng, 20, 25);
    for (auto& j : model.joints) j.compliance = 0;
    // A duplicated joint (identical rows, no compliance): S is singular.
    const std::size_t k = rng() % model.joints.size();
    model.joints.push_back(model.joints[k]);
    const System s = assemble(model);
    const Eigen::VectorXd b = s.dense * random_vector(rng, s.n);  // consistent
    SparseDualSolver solver = make_solver();
    Eigen::VectorXd x;
    ASSERT_TRUE(solver.solve(s.n, s.triplets, b, 7, x)) << "seed " << seed;
    EXPECT_TRUE(solver.regularised()) << "seed " << seed;
    ASSERT_TRUE(x.allFinite());
    const double residual = (b - s.dense * x).norm() / b.norm();
    EXPECT_LE(residual, 1e-6) << "seed " << seed;
    // The duplicated rows share the load.
    const int ra = s.block_begin[k], rb = s.block_begin[model.joints.size() - 1];
    const int rows = model.joints[k].rows;
    EXPECT_LE((x.segment(ra, rows) - x.segment(rb, rows)).norm(), 1e-6 * x.norm()) << "seed " << seed;

    // A regular system afterwards is solved without regularisation.
    model.joints.pop_back();
    const System t = assemble(model);
    const Eigen::VectorXd c = random_vector(rng, t.n);
    ASSERT_TRUE(solver.solve(t.n, t.triplets, c, 8, x));
    EXPECT_FALSE(solver.regularised());
    EXPECT_LE(relative_error(x, t.dense.ldlt().solve(c)), 1e-10);
  }
}

TEST_P(SparseDualBackend, EdgeCases) {
  SparseDualSolver solver = make_solver();
  Eigen::VectorXd x = Eigen::VectorXd::Ones(3);
  EXPECT_TRUE(solver.solve(0, {}, Eigen::VectorXd(), 0, x));
  EXPECT_EQ(x.size(), 0);

  // A 1 x 1 system and a diagonal one.
  ASSERT_TRUE(solver.solve(1, {{0, 0, 4.0}}, Eigen::VectorXd::Constant(1, 2.0), 1, x));
  EXPECT_DOUBLE_EQ(x[0], 0.5);
  Triplets diag = {{0, 0, 1.0}, {1, 1, 2.0}, {1, 1, 2.0}, {2, 2, 8.0}};
  ASSERT_TRUE(solver.solve(3, diag, Eigen::Vector3d(1, 1, 1), 2, x));
  EXPECT_NEAR((x - Eigen::Vector3d(1, 0.25, 0.125)).norm(), 0, 1e-15);

  // Non-finite values and indices out of range are failures, not NaN solutions.
  Triplets bad = {{0, 0, std::numeric_limits<double>::quiet_NaN()}, {1, 1, 1.0}};
  EXPECT_FALSE(solver.solve(2, bad, Eigen::Vector2d(1, 1), 3, x));
  Triplets outside = {{0, 0, 1.0}, {2, 2, 1.0}};
  EXPECT_FALSE(solver.solve(2, outside, Eigen::Vector2d(1, 1), 4, x));
  // The solver recovers afterwards.
  ASSERT_TRUE(solver.solve(3, diag, Eigen::Vector3d(1, 1, 1), 2, x));
  EXPECT_NEAR((x - Eigen::Vector3d(1, 0.25, 0.125)).norm(), 0, 1e-15);
}

INSTANTIATE_TEST_SUITE_P(Backends, SparseDualBackend, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Cholmod" : "Eigen";
                         });

TEST(SparseDualSolver, SwitchesBackEndWithTheThreshold) {
  std::mt19937 rng(77);
  const System s = assemble(random_model(rng, 30, 40));
  const Eigen::VectorXd b = random_vector(rng, s.n);
  const Eigen::VectorXd ref = s.dense.ldlt().solve(b);
  SparseDualSolver solver;
  Eigen::VectorXd x;
  std::uint64_t pattern = 10;
  for (int threshold : {0, s.n + 1, s.n, 1 << 30}) {
    solver.cholmod_min_rows = threshold;  // applies from the next new pattern
    ASSERT_TRUE(solver.solve(s.n, s.triplets, b, ++pattern, x)) << threshold;
    EXPECT_LE(relative_error(x, ref), 1e-10) << threshold;
  }
  EXPECT_EQ(solver.analyses(), 4);  // each switch needs a new analysis
  solver.cholmod_min_rows = 0;
  ASSERT_TRUE(solver.solve(s.n, s.triplets, b, pattern, x));  // same pattern: no switch yet
  EXPECT_EQ(solver.analyses(), 4);
}

/// A contact-like change of one body's inverse: the Woodbury downdate of a stiff row g,
/// H^{-1} - H^{-1} g (g^T H^{-1} g + alpha)^{-1} g^T H^{-1} (it stays SPD).
void add_stiff_row(std::mt19937& rng, Eigen::MatrixXd& hinv) {
  const Eigen::VectorXd g = random_vector(rng, 12);
  const Eigen::VectorXd w = hinv * g;
  hinv -= w * w.transpose() / (g.dot(w) * (1 + 1e-3));
}

TEST(SparseDualSolver, UpdatesTheFactorForAFewChangedBodies) {
  // Contact passes change the operators of a few bodies: the factor is updated (no new
  // factorisation) and the solution is the dense one's. A change of every body factors again.
  for (unsigned seed = 1; seed <= 3; ++seed) {
    std::mt19937 rng(seed);
    Model model = random_model(rng, 200, 260);
    SparseDualSolver solver;
    solver.cholmod_min_rows = 0;
    solver.reuse_iterations = 4;
    Eigen::VectorXd x;
    System s = assemble(model);
    ASSERT_TRUE(solver.solve(s.n, s.triplets, random_vector(rng, s.n), 1, x));
    EXPECT_EQ(solver.factorizations(), 1);
    std::vector<Eigen::MatrixXd> original = model.hinv;
    for (int pass = 0; pass < 4; ++pass) {
      // rows added on three bodies, and (after the first pass) one body's rows released
      for (int k = 0; k < 3; ++k) add_stiff_row(rng, model.hinv[rng() % model.hinv.size()]);
      if (pass > 0) {
        const std::size_t b = rng() % model.hinv.size();
        model.hinv[b] = original[b];
      }
      s = assemble(model);
      const Eigen::VectorXd b = random_vector(rng, s.n);
      const auto ref = s.dense.ldlt();
      ASSERT_TRUE(solver.solve(s.n, s.triplets, b, 1, x)) << "seed " << seed;
      EXPECT_LE(relative_error(x, ref.solve(b)), 1e-10) << "seed " << seed;
      EXPECT_EQ(solver.factorizations(), 1) << "seed " << seed << " pass " << pass;
      EXPECT_GE(solver.reuse_last_iterations(), 1);
      EXPECT_LE(solver.reuse_last_iterations(), 2);
      const Eigen::VectorXd b2 = random_vector(rng, s.n);  // a new right-hand side
      ASSERT_TRUE(solver.resolve(b2, x));
      EXPECT_LE(relative_error(x, ref.solve(b2)), 1e-10) << "seed " << seed;
    }
    for (auto& h : model.hinv) h *= 1.1;
    s = assemble(model);
    const Eigen::VectorXd b = random_vector(rng, s.n);
    ASSERT_TRUE(solver.solve(s.n, s.triplets, b, 1, x));
    EXPECT_LE(relative_error(x, s.dense.ldlt().solve(b)), 1e-10) << "seed " << seed;
    EXPECT_EQ(solver.factorizations(), 2) << "seed " << seed;
    // and updates again from the new factor
    add_stiff_row(rng, model.hinv[0]);
    s = assemble(model);
    ASSERT_TRUE(solver.solve(s.n, s.triplets, b, 1, x));
    EXPECT_LE(relative_error(x, s.dense.ldlt().solve(b)), 1e-10) << "seed " << seed;
    EXPECT_EQ(solver.factorizations(), 2) << "seed " << seed;
  }
}

TEST(SparseDualSolver, FactorUpdatesAreOffByDefault) {
  std::mt19937 rng(3);
  Model model = random_model(rng, 100, 150);
  SparseDualSolver solver;
  solver.cholmod_min_rows = 0;
  Eigen::VectorXd x;
  System s = assemble(model);
  ASSERT_TRUE(solver.solve(s.n, s.triplets, random_vector(rng, s.n), 1, x));
  add_stiff_row(rng, model.hinv[5]);
  s = assemble(model);
  const Eigen::VectorXd b = random_vector(rng, s.n);
  ASSERT_TRUE(solver.solve(s.n, s.triplets, b, 1, x));
  EXPECT_LE(relative_error(x, s.dense.ldlt().solve(b)), 1e-10);
  EXPECT_EQ(solver.factorizations(), 2);
  EXPECT_EQ(solver.reuse_last_iterations(), 0);
}

}  // namespace
}  // namespace mabd::detail
