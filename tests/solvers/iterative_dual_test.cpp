// The PCG dual solver (block-Jacobi and line preconditioners) on random block-sparse systems
// built like the dual matrix (S = G H^{-1} G^T + compliance, assembled body by body) and on a
// small hanging net (paper "Case IV: Joint graph"): convergence to the requested tolerance and
// to the dense solution, the reported residual, warm starts, pattern reuse, redundant rows,
// and the line partition (every block once, consecutive blocks coupled, straight net lines).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "body/body_hessian.h"
#include "random_dual_system.h"
#include "solvers/coarse_space.h"
#include "solvers/iterative_dual.h"
#include "solvers/line_partition.h"
#include "solvers/triplet_scatter.h"

namespace mabd::detail {
namespace {

using namespace test;  // random_model, assemble, random_vector

constexpr DualPreconditioner kPreconditioners[] = {
    DualPreconditioner::Blocks, DualPreconditioner::Lines, DualPreconditioner::LinesCoarse};

constexpr DualCoarseMode kCoarseModes[] = {DualCoarseMode::Additive, DualCoarseMode::Balancing,
                                           DualCoarseMode::Deflation};

std::string name(DualPreconditioner p) {
  return p == DualPreconditioner::Lines         ? "lines"
         : p == DualPreconditioner::LinesCoarse ? "lines+coarse"
                                                : "blocks";
}

std::string name(DualCoarseMode m) {
  return m == DualCoarseMode::Additive ? "additive" : m == DualCoarseMode::Balancing ? "balancing" : "deflation";
}

/// Selects `pre`; LinesCoarse with small aggregates and every local mode (no threshold), so
/// that the coarse correction is used on any system, not only where the lines are weak.
void use(IterativeDualSolver& solver, DualPreconditioner pre,
         DualCoarseMode mode = DualCoarseMode::Deflation) {
  solver.settings.preconditioner = pre;
  solver.settings.coarse_mode = mode;
  solver.settings.coarse_aggregate_blocks = 6;
  solver.settings.coarse_vectors = 4;
  solver.settings.coarse_threshold = std::numeric_limits<double>::infinity();
}

double true_residual(const System& s, const Eigen::VectorXd& b, const Eigen::VectorXd& x) {
  return (b - s.dense * x).norm() / b.norm();
}

/// A random model with compliance-free joints and one joint duplicated (S singular).
Model redundant_model(std::mt19937& rng) {
  Model model = random_model(rng, 20, 25);
  for (auto& j : model.joints) j.compliance = 0;
  model.joints.push_back(model.joints[rng() % model.joints.size()]);
  return model;
}

/// Solves the model with a consistent right-hand side (in the range of A) to 1e-9 and expects
/// convergence to a finite solution with that true residual.
void expect_consistent_solve(const Model& model, IterativeDualSolver& solver, std::mt19937& rng,
                             unsigned seed) {
  const System s = assemble(model);
  const Eigen::VectorXd b = s.dense * random_vector(rng, s.n);
  solver.settings.tolerance = 1e-9;
  Eigen::VectorXd x;
  const IterativeDualResult r = solver.solve(s.n, s.triplets, s.block_begin, b, 1, x);
  EXPECT_TRUE(r.converged) << "seed " << seed << ": " << r.residual;
  EXPECT_TRUE(x.allFinite());
  EXPECT_LE(true_residual(s, b, x), 1e-9 * (1 + 1e-6)) << "seed " << seed;
}

/// Round-off of a relative residual evaluated in another summation order.
double residual_roundoff(const System& s, const Eigen::VectorXd& b, const Eigen::VectorXd& x) {
  return 1e-14 * s.dense.norm() * x.norm() / b.norm();
}

/// Relative error allowed for a solve to |b - A x| <= tol |b|: the error bound cond(A) tol,
/// at least `floor`.
double error_bound(const System& s, double tol, double floor) {
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(s.dense, Eigen::EigenvaluesOnly);
  const Eigen::VectorXd ev = eig.eigenvalues();
  return std::max(floor, tol * ev.maxCoeff() / ev.minCoeff());
}

/// Jacobian of the world point x(p) = A p + t of an affine body, q = [a1; a2; a3; t].
Eigen::MatrixXd point_jacobian(const Vec3& p) {
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(3, 12);
  for (int k = 0; k < 3; ++k) J.block<3, 3>(0, 3 * k) = p[k] * Eigen::Matrix3d::Identity();
  J.block<3, 3>(0, 9).setIdentity();
  return J;
}

/// An n x n net in the xz plane: sphere nodes, box links along x and z ball-jointed to the
/// nodes at their centres, the first row of nodes pinned to the world (as the net scene, at
/// rest, h = 0.01 s, E = 1e9 Pa). Joints: horizontal links row by row (two joints each), then
/// vertical links, then the pins.
Model net_model(int n) {
  const double rho = 1000, r = 0.01, a = 0.1, w = 0.01, pi = 3.14159265358979323846;
  const double E = 1e9, nu = 0.3, h = 0.01;
  const double mu = E / (2 * (1 + nu)), lambda = E * nu / ((1 + nu) * (1 - 2 * nu));
  const double vn = 4.0 / 3.0 * pi * r * r * r, mn = rho * vn, vl = a * w * w, ml = rho * vl;
  const Eigen::MatrixXd hn =
      BodyHessian::dense(Vec3::Constant(mn * r * r / 5), mn, vn, mu, lambda, h).inverse();
  const Eigen::MatrixXd hh =
      BodyHessian::dense(Vec3(ml * a * a / 12, ml * w * w / 12, ml * w * w / 12), ml, vl, mu,
                         lambda, h).inverse();
  const Eigen::MatrixXd hv =
      BodyHessian::dense(Vec3(ml * w * w / 12, ml * w * w / 12, ml * a * a / 12), ml, vl, mu,
                         lambda, h).inverse();
  Model m;
  for (int k = 0; k < n * n; ++k) m.hinv.push_back(hn);
  const Eigen::MatrixXd centre = point_jacobian(Vec3::Zero());
  auto edge = [&](int n0, int n1, const Eigen::MatrixXd& hinv, const Vec3& half) {
    const int link = static_cast<int>(m.hinv.size());
    m.hinv.push_back(hinv);
    Joint j0, j1;
    j0.a = {n0, centre};
    j0.b = {link, -point_jacobian(-half)};
    j1.a = {n1, centre};
    j1.b = {link, -point_jacobian(half)};
    m.joints.push_back(j0);
    m.joints.push_back(j1);
  };
  for (int i = 0; i < n; ++i)
    for (int j = 0; j + 1 < n; ++j) edge(i * n + j, i * n + j + 1, hh, Vec3(a / 2, 0, 0));
  for (int i = 0; i + 1 < n; ++i)
    for (int j = 0; j < n; ++j) edge(i * n + j, (i + 1) * n + j, hv, Vec3(0, 0, -a / 2));
  for (int j = 0; j < n; ++j) {
    Joint pin;
    pin.a = {j, centre};
    pin.b = {-1, Eigen::MatrixXd::Zero(3, 12)};
    m.joints.push_back(pin);
  }
  return m;
}

/// Checks that `lines` partitions the blocks of `s` into paths whose consecutive blocks are
/// coupled in the dense matrix and whose other block pairs are not.
void expect_valid_partition(const System& s, const LinePartition& lines) {
  const int nb = static_cast<int>(s.block_begin.size()) - 1;
  ASSERT_EQ(static_cast<int>(lines.order.size()), nb);
  ASSERT_GE(lines.line_begin.size(), 1u);
  EXPECT_EQ(lines.line_begin.front(), 0);
  EXPECT_EQ(lines.line_begin.back(), nb);
  std::vector<int> count(static_cast<std::size_t>(nb), 0);
  for (const int k : lines.order) {
    ASSERT_GE(k, 0);
    ASSERT_LT(k, nb);
    ++count[k];
  }
  for (int k = 0; k < nb; ++k) EXPECT_EQ(count[k], 1) << "block " << k;
  auto coupling = [&](int a, int b) {
    const int a0 = s.block_begin[a], b0 = s.block_begin[b];
    return s.dense.block(a0, b0, s.block_begin[a + 1] - a0, s.block_begin[b + 1] - b0).norm();
  };
  for (int l = 0; l < lines.lines(); ++l) {
    const int p0 = lines.line_begin[l], p1 = lines.line_begin[l + 1];
    ASSERT_LT(p0, p1) << "empty line " << l;
    for (int p = p0; p < p1; ++p) {
      for (int q = p + 1; q < p1; ++q) {
        const double c = coupling(lines.order[p], lines.order[q]);
        if (q == p + 1) {
          EXPECT_GT(c, 0) << "line " << l << ": blocks " << lines.order[p] << ", " << lines.order[q];
        } else {
          EXPECT_EQ(c, 0) << "line " << l << ": blocks " << lines.order[p] << ", " << lines.order[q];
        }
      }
    }
  }
}

/// The line partition of the system's matrix, from its CSR form (both triangles).
LinePartition partition_of(const System& s) {
  Eigen::SparseMatrix<double, Eigen::RowMajor> a(s.n, s.n);
  a.setFromTriplets(s.triplets.begin(), s.triplets.end());
  a.makeCompressed();
  const std::vector<int> row_start(a.outerIndexPtr(), a.outerIndexPtr() + s.n + 1);
  const std::vector<int> col(a.innerIndexPtr(), a.innerIndexPtr() + a.nonZeros());
  const std::vector<double> val(a.valuePtr(), a.valuePtr() + a.nonZeros());
  const int nb = static_cast<int>(s.block_begin.size()) - 1;
  return partition_lines(nb, block_couplings(row_start, col, val, s.block_begin));
}

TEST(IterativeDualSolver, ConvergesToTheRequestedTolerance) {
  for (const DualPreconditioner pre : kPreconditioners) {
    SCOPED_TRACE(name(pre));
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
        use(solver, pre);
        Eigen::VectorXd x;  // cold start
        const IterativeDualResult r = solver.solve(s.n, s.triplets, s.block_begin, b, seed, x);
        ASSERT_EQ(x.size(), s.n);
        EXPECT_TRUE(r.converged) << "seed " << seed << " tol " << tol << ": " << r.residual;
        // LinesCoarse may solve a small system in the deflated start (Z spans most of it).
        EXPECT_GE(r.iterations, pre == DualPreconditioner::LinesCoarse ? 0 : 1);
        // The reported residual is the true one, and within the tolerance.
        const double truth = true_residual(s, b, x);
        EXPECT_LE(truth, tol * (1 + 1e-6)) << "seed " << seed << " tol " << tol;
        EXPECT_NEAR(r.residual, truth, 1e-3 * truth + residual_roundoff(s, b, x))
            << "seed " << seed << " tol " << tol;
        if (tol == 1e-10) {
          const Eigen::VectorXd ref = s.dense.ldlt().solve(b);
          EXPECT_LE((x - ref).norm() / ref.norm(), error_bound(s, 1e-10, 1e-8)) << "seed " << seed;
        }
      }
    }
  }
}

TEST(IterativeDualSolver, LinesMatchTheDenseSolution) {
  // Random systems of 1-6 row blocks (odd seeds: ball joints only, 3 rows each), several
  // sizes: the line preconditioned solve agrees with a dense LDL^T solve to 1e-9 (or the
  // conditioning bound of the tolerance).
  for (unsigned seed = 1; seed <= 30; ++seed) {
    std::mt19937 rng(1000 + seed);
    const int bodies = 2 + static_cast<int>(rng() % 60);
    const int joints = 1 + static_cast<int>(rng() % (2 * bodies));
    Model model = random_model(rng, bodies, joints, 1);
    if (seed % 2 == 1) {
      std::uniform_real_distribution<double> u(-1, 1);
      for (Joint& j : model.joints) {
        j.rows = 3;
        j.a.g = Eigen::MatrixXd::NullaryExpr(3, 12, [&] { return u(rng); });
        j.b.g = Eigen::MatrixXd::NullaryExpr(3, 12, [&] { return u(rng); });
      }
    }
    const System s = assemble(model);
    const Eigen::VectorXd b = random_vector(rng, s.n);
    const Eigen::VectorXd ref = s.dense.ldlt().solve(b);
    IterativeDualSolver solver;
    solver.settings.tolerance = 1e-13;
    solver.settings.max_iterations = 20 * s.n;
    Eigen::VectorXd x;
    const IterativeDualResult r = solver.solve(s.n, s.triplets, s.block_begin, b, 1, x);
    EXPECT_TRUE(r.converged) << "seed " << seed << ": " << r.residual;
    EXPECT_LE((x - ref).norm() / ref.norm(), error_bound(s, 1e-13, 1e-9)) << "seed " << seed;
    expect_valid_partition(s, solver.lines());
  }
}

TEST(IterativeDualSolver, LinesOnANet) {
  const int n = 8;
  const System s = assemble(net_model(n));
  std::mt19937 rng(4);
  const Eigen::VectorXd b = random_vector(rng, s.n);
  const Eigen::VectorXd ref = s.dense.ldlt().solve(b);
  int iterations[2] = {0, 0};
  for (const DualPreconditioner pre : {DualPreconditioner::Blocks, DualPreconditioner::Lines}) {
    IterativeDualSolver solver;
    solver.settings.tolerance = 1e-10;
    solver.settings.max_iterations = 20000;
    use(solver, pre);
    Eigen::VectorXd x;
    const IterativeDualResult r = solver.solve(s.n, s.triplets, s.block_begin, b, 1, x);
    EXPECT_TRUE(r.converged) << name(pre) << ": " << r.residual;
    // cond(S) ~ 1e6 would allow 1e-4; both solvers land much closer to the solution.
    EXPECT_LE((x - ref).norm() / ref.norm(), 1e-9) << name(pre);
    iterations[pre == DualPreconditioner::Lines] = r.iterations;
  }
  // The lines remove most of the iterations of the joint blocks.
  EXPECT_LT(3 * iterations[1], iterations[0]) << iterations[1] << " vs " << iterations[0];

  // The lines follow the rows and columns of links: every horizontal link's two joints are in
  // one line with the neighbouring links' joints (the first row's links share their nodes with
  // the pins, which may take the continuation instead), and there are few, long lines.
  const LinePartition lines = partition_of(s);
  expect_valid_partition(s, lines);
  const std::vector<int> position = lines.positions();
  auto line_of = [&](int block) {
    const auto it = std::upper_bound(lines.line_begin.begin(), lines.line_begin.end(),
                                     position[block]);
    return static_cast<int>(it - lines.line_begin.begin()) - 1;
  };
  for (int i = 1; i < n; ++i) {
    const int first = 2 * i * (n - 1);  // row i: blocks first .. first + 2 (n - 1) - 1
    for (int k = first; k + 1 < first + 2 * (n - 1); ++k)
      EXPECT_EQ(line_of(k), line_of(k + 1)) << "row " << i << " block " << k;
  }
  const int vertical = 2 * n * (n - 1);  // column j, link i: blocks vertical + 2 (i n + j) + 0/1
  for (int j = 0; j < n; ++j)
    for (int i = 0; i + 1 < n; ++i) {
      EXPECT_EQ(line_of(vertical + 2 * (i * n + j)), line_of(vertical + 2 * (i * n + j) + 1));
      if (i + 2 < n) {
        EXPECT_EQ(line_of(vertical + 2 * (i * n + j) + 1), line_of(vertical + 2 * ((i + 1) * n + j)))
            << "column " << j << " link " << i;
      }
    }
  EXPECT_LE(lines.lines(), 3 * n);
}

TEST(IterativeDualLinePartition, GreedyOnGivenCouplings) {
  // A weighted 4-cycle (a joint loop) loses its weakest coupling; as the ends of the path
  // 0-1-2-3 are still coupled, the path is cut before its last block.
  LinePartition lines =
      partition_lines(4, {{0, 1, 3.0}, {1, 2, 2.0}, {2, 3, 4.0}, {0, 3, 1.0}});
  EXPECT_EQ(lines.order, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(lines.line_begin, (std::vector<int>{0, 3, 4}));
  // An open chain is one path, whatever the order of its couplings.
  lines = partition_lines(4, {{2, 3, 1.0}, {0, 1, 2.0}, {1, 2, 3.0}});
  ASSERT_EQ(lines.lines(), 1);
  EXPECT_EQ(lines.order, (std::vector<int>{0, 1, 2, 3}));
  // A star: the centre takes its two strongest couplings, the rest stay alone.
  lines = partition_lines(5, {{0, 1, 1.0}, {0, 2, 5.0}, {0, 3, 4.0}, {0, 4, 2.0}});
  ASSERT_EQ(lines.lines(), 3);
  EXPECT_EQ(lines.order, (std::vector<int>{1, 2, 0, 3, 4}));
  EXPECT_EQ(lines.line_begin, (std::vector<int>{0, 1, 4, 5}));
  // Three pairwise coupled blocks (the joints of one body): a pair and a single block.
  lines = partition_lines(3, {{0, 1, 1.0}, {1, 2, 2.0}, {0, 2, 1.5}});
  EXPECT_EQ(lines.order, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(lines.line_begin, (std::vector<int>{0, 1, 3}));
  // A path with a weak long-range coupling is cut: 0-1-2-3-4 with 1 ~ 4 would not be block
  // tridiagonal.
  lines = partition_lines(5, {{0, 1, 5.0}, {1, 2, 5.0}, {2, 3, 5.0}, {3, 4, 5.0}, {1, 4, 0.5}});
  EXPECT_EQ(lines.order, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(lines.line_begin, (std::vector<int>{0, 4, 5}));
  // Zero strengths, self couplings and out-of-range blocks are ignored; no blocks, no lines.
  lines = partition_lines(2, {{0, 1, 0.0}, {1, 1, 1.0}, {1, 7, 1.0}});
  EXPECT_EQ(lines.line_begin, (std::vector<int>{0, 1, 2}));
  lines = partition_lines(0, {});
  EXPECT_EQ(lines.lines(), 0);
  EXPECT_TRUE(lines.order.empty());
}

TEST(IterativeDualLinePartition, CoversRandomSystems) {
  for (unsigned seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(500 + seed);
    const int bodies = 2 + static_cast<int>(rng() % 80);
    const int joints = 1 + static_cast<int>(rng() % (3 * bodies));
    const System s = assemble(random_model(rng, bodies, joints, 1));
    SCOPED_TRACE("seed " + std::to_string(seed));
    expect_valid_partition(s, partition_of(s));
  }
}

TEST(IterativeDualLinePartition, CouplingStrengthsAreScaled) {
  // Two 2-row blocks: D_0 = diag(4, 1), D_1 = diag(1, 9), C = [[2, 0], [0, 3]]:
  // |L_0^{-1} C L_1^{-T}|_F = |[[2 / (2 * 1), 0], [0, 3 / (1 * 3)]]|_F = sqrt(2).
  const std::vector<int> row_start = {0, 2, 4, 6, 8};
  const std::vector<int> col = {0, 2, 1, 3, 0, 2, 1, 3};
  const std::vector<double> val = {4, 2, 1, 3, 2, 1, 3, 9};
  const std::vector<BlockCoupling> c = block_couplings(row_start, col, val, {0, 2, 4});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].a, 0);
  EXPECT_EQ(c[0].b, 1);
  EXPECT_NEAR(c[0].strength, std::sqrt(2.0), 1e-6);
}

TEST(IterativeDualSolver, WarmStartFromTheSolution) {
  for (const DualPreconditioner pre : kPreconditioners) {
    SCOPED_TRACE(name(pre));
    std::mt19937 rng(5);
    const System s = assemble(random_model(rng, 40, 60));
    const Eigen::VectorXd b = random_vector(rng, s.n);
    const Eigen::VectorXd exact = s.dense.ldlt().solve(b);
    IterativeDualSolver solver;
    solver.settings.tolerance = 1e-10;
    use(solver, pre);
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
}

TEST(IterativeDualSolver, StopsAtMaxIterationsWithTheTrueResidual) {
  for (const DualPreconditioner pre : kPreconditioners) {
    SCOPED_TRACE(name(pre));
    std::mt19937 rng(9);
    const System s = assemble(random_model(rng, 30, 50));
    const Eigen::VectorXd b = random_vector(rng, s.n);
    IterativeDualSolver solver;
    solver.settings.tolerance = 1e-12;
    solver.settings.max_iterations = 3;
    use(solver, pre);
    Eigen::VectorXd x;
    const IterativeDualResult r = solver.solve(s.n, s.triplets, s.block_begin, b, 1, x);
    EXPECT_FALSE(r.converged);
    EXPECT_EQ(r.iterations, 3);
    const double truth = true_residual(s, b, x);
    EXPECT_NEAR(r.residual, truth, 1e-9 * truth);
  }
}

/// Upper block triangle of a dense symmetric matrix with the given blocks (blocks with any
/// nonzero entry stored), for the coarse space functions.
struct DenseUpper {
  std::vector<int> block_begin, brow_start, bcol, val_start;
  std::vector<double> val;
  explicit DenseUpper(const System& s) : block_begin(s.block_begin) {
    const int nb = static_cast<int>(block_begin.size()) - 1;
    brow_start.push_back(0);
    val_start.push_back(0);
    for (int a = 0; a < nb; ++a) {
      const int a0 = block_begin[a], sa = block_begin[a + 1] - a0;
      for (int b = a; b < nb; ++b) {
        const int b0 = block_begin[b], sb = block_begin[b + 1] - b0;
        const Eigen::MatrixXd m = s.dense.block(a0, b0, sa, sb);
        if (a != b && m.norm() == 0) continue;
        bcol.push_back(b);
        for (int i = 0; i < sa; ++i)
          for (int j = 0; j < sb; ++j) val.push_back(m(i, j));
        val_start.push_back(static_cast<int>(val.size()));
      }
      brow_start.push_back(static_cast<int>(bcol.size()));
    }
  }
  BlockUpperView view() const { return {block_begin, brow_start, bcol, val_start, val}; }
};

/// Checks that `agg` partitions blocks 0 .. nb - 1.
void expect_valid_aggregates(const Aggregates& agg, int nb) {
  ASSERT_EQ(static_cast<int>(agg.of.size()), nb);
  ASSERT_EQ(static_cast<int>(agg.blocks.size()), nb);
  ASSERT_EQ(agg.begin.back(), nb);
  std::vector<int> seen(static_cast<std::size_t>(nb), 0);
  for (int i = 0; i < agg.count(); ++i) {
    EXPECT_LT(agg.begin[i], agg.begin[i + 1]) << "empty aggregate " << i;
    for (int p = agg.begin[i]; p < agg.begin[i + 1]; ++p) {
      ++seen[agg.blocks[p]];
      EXPECT_EQ(agg.of[agg.blocks[p]], i);
    }
  }
  for (int a = 0; a < nb; ++a) EXPECT_EQ(seen[a], 1) << "block " << a;
}

TEST(IterativeDualCoarse, AggregatesOfAChain) {
  // A chain of 20 blocks (block a coupled to a + 1): aggregates of 5 consecutive blocks.
  System s;
  s.n = 60;
  s.dense = 4 * Eigen::MatrixXd::Identity(60, 60);
  for (int a = 0; a <= 20; ++a) s.block_begin.push_back(3 * a);
  for (int a = 0; a + 1 < 20; ++a) s.dense.block(3 * a, 3 * a + 3, 3, 3) = s.dense.block(3 * a + 3, 3 * a, 3, 3) = -Eigen::Matrix3d::Identity();
  const DenseUpper upper(s);
  for (const int target : {1, 3, 5, 7, 40}) {
    const Aggregates agg = aggregate_blocks(upper.view(), target);
    expect_valid_aggregates(agg, 20);
    for (int i = 0; i < agg.count(); ++i) {
      const int size = agg.begin[i + 1] - agg.begin[i];
      EXPECT_LE(size, std::min(20, target + target / 2)) << "target " << target;
      if (agg.count() > 1) EXPECT_GE(2 * size, target) << "target " << target;
      for (int p = agg.begin[i]; p + 1 < agg.begin[i + 1]; ++p)  // consecutive blocks
        EXPECT_EQ(agg.blocks[p + 1], agg.blocks[p] + 1);
    }
  }
  EXPECT_EQ(aggregate_blocks(upper.view(), 5).count(), 4);
}

TEST(IterativeDualCoarse, GalerkinMatrixAndProducts) {
  // Z has orthonormal columns supported on one aggregate each, E = Z^T A Z (plus its tiny
  // shift), W = A Z; on random systems (blocks of 1-6 rows) and a net.
  std::vector<System> systems;
  for (unsigned seed = 1; seed <= 6; ++seed) {
    std::mt19937 rng(500 + seed);
    const int bodies = 5 + static_cast<int>(rng() % 30);
    systems.push_back(assemble(random_model(rng, bodies, 2 * bodies, 1)));
  }
  systems.push_back(assemble(net_model(5)));
  for (std::size_t k = 0; k < systems.size(); ++k) {
    const System& s = systems[k];
    SCOPED_TRACE("system " + std::to_string(k));
    IterativeDualSolver solver;
    use(solver, DualPreconditioner::LinesCoarse, DualCoarseMode::Balancing);
    Eigen::VectorXd x;
    const Eigen::VectorXd b = Eigen::VectorXd::Ones(s.n);
    EXPECT_TRUE(solver.solve(s.n, s.triplets, s.block_begin, b, 1, x).converged);
    const CoarseSpace& c = solver.coarse();
    ASSERT_GT(c.size(), 0);
    expect_valid_aggregates(c.aggregates(), static_cast<int>(s.block_begin.size()) - 1);
    const Eigen::MatrixXd Z = c.basis_dense();
    ASSERT_EQ(Z.cols(), c.size());
    EXPECT_LE((Z.transpose() * Z - Eigen::MatrixXd::Identity(Z.cols(), Z.cols())).norm(), 1e-10);
    const Eigen::MatrixXd E = Z.transpose() * s.dense * Z;
    EXPECT_LE((c.coarse_dense() - E).norm(), 1e-10 * E.norm());
    const Eigen::MatrixXd W = s.dense * Z;
    EXPECT_LE((c.w_dense() - W).norm(), 1e-12 * s.dense.norm() * Z.norm());
  }
}

TEST(IterativeDualCoarse, AllModesMatchTheDenseSolution) {
  for (const DualCoarseMode mode : kCoarseModes) {
    SCOPED_TRACE(name(mode));
    for (unsigned seed = 1; seed <= 15; ++seed) {
      std::mt19937 rng(700 + seed);
      const int bodies = 2 + static_cast<int>(rng() % 50);
      const int joints = 1 + static_cast<int>(rng() % (2 * bodies));
      const System s = assemble(random_model(rng, bodies, joints, seed % 2 == 1 ? 3 : 1));
      const Eigen::VectorXd b = random_vector(rng, s.n);
      const Eigen::VectorXd ref = s.dense.ldlt().solve(b);
      IterativeDualSolver solver;
      use(solver, DualPreconditioner::LinesCoarse, mode);
      solver.settings.tolerance = 1e-10;
      solver.settings.max_iterations = 20 * s.n;
      Eigen::VectorXd x = random_vector(rng, s.n);  // a warm start of the wrong solution
      const IterativeDualResult r = solver.solve(s.n, s.triplets, s.block_begin, b, 1, x);
      EXPECT_TRUE(r.converged) << "seed " << seed << ": " << r.residual;
      const double truth = true_residual(s, b, x);
      EXPECT_LE(truth, 1e-10 * (1 + 1e-6)) << "seed " << seed;
      EXPECT_NEAR(r.residual, truth, 1e-3 * truth + residual_roundoff(s, b, x)) << "seed " << seed;
      EXPECT_LE((x - ref).norm() / ref.norm(), error_bound(s, 1e-10, 1e-9)) << "seed " << seed;
    }
  }
}

TEST(IterativeDualCoarse, FewerIterationsOnANet) {
  // The default settings (local modes of the line-preconditioned matrix below 0.1): the
  // coarse space holds few vectors, and removes more than a third of the Lines iterations.
  const System s = assemble(net_model(8));
  std::mt19937 rng(4);
  const Eigen::VectorXd b = random_vector(rng, s.n);
  const Eigen::VectorXd ref = s.dense.ldlt().solve(b);
  int lines = 0;
  for (const DualPreconditioner pre : {DualPreconditioner::Lines, DualPreconditioner::LinesCoarse}) {
    for (const DualCoarseMode mode : kCoarseModes) {
      IterativeDualSolver solver;
      solver.settings.tolerance = 1e-10;
      solver.settings.max_iterations = 20000;
      solver.settings.preconditioner = pre;
      solver.settings.coarse_mode = mode;
      Eigen::VectorXd x;
      const IterativeDualResult r = solver.solve(s.n, s.triplets, s.block_begin, b, 1, x);
      EXPECT_TRUE(r.converged) << name(pre) << " " << name(mode) << ": " << r.residual;
      EXPECT_LE((x - ref).norm() / ref.norm(), 1e-9) << name(pre) << " " << name(mode);
      if (pre == DualPreconditioner::Lines) {
        lines = r.iterations;
        break;
      }
      EXPECT_GT(solver.coarse().size(), 0);
      EXPECT_LT(solver.coarse().size(), s.n / 20);
      EXPECT_LT(3 * r.iterations, 2 * lines) << name(mode) << ": " << r.iterations << " vs " << lines;
    }
  }
}

TEST(IterativeDualCoarse, DeflationAndBalancingIteratesAgree) {
  // From the projected start, A-DEF2 and the balancing preconditioner give the same iterates
  // in exact arithmetic (Tang, Nabben, Vuik, Erlangga 2009); the additive one does not.
  const System s = assemble(net_model(6));
  std::mt19937 rng(6);
  const Eigen::VectorXd b = random_vector(rng, s.n);
  Eigen::VectorXd x[3];
  for (const DualCoarseMode mode : kCoarseModes) {
    IterativeDualSolver solver;
    use(solver, DualPreconditioner::LinesCoarse, mode);
    solver.settings.max_iterations = 6;
    const IterativeDualResult r = solver.solve(s.n, s.triplets, s.block_begin, b, 1, x[static_cast<int>(mode)]);
    EXPECT_EQ(r.iterations, 6) << name(mode);
    EXPECT_FALSE(r.converged) << name(mode);
  }
  const Eigen::VectorXd& add = x[0];
  const Eigen::VectorXd& bnn = x[1];
  const Eigen::VectorXd& def = x[2];
  // The net's S has cond ~ 1e8 (no compliance): rounding separates them by ~1e-8.
  EXPECT_LE((bnn - def).norm(), 1e-6 * def.norm());
  EXPECT_GT((add - def).norm(), 1e-2 * def.norm());
}

TEST(IterativeDualCoarse, BasisKeptWhilePatternHolds) {
  std::mt19937 rng(41);
  Model model = random_model(rng, 25, 40, 1);
  IterativeDualSolver solver;
  use(solver, DualPreconditioner::LinesCoarse);
  Eigen::MatrixXd first;
  for (int call = 0; call < 3; ++call) {
    for (auto& h : model.hinv) h *= 1.0 + 0.5 * std::abs(random_vector(rng, 1)[0]);
    const System s = assemble(model);
    const Eigen::VectorXd b = random_vector(rng, s.n);
    Eigen::VectorXd x;
    const IterativeDualResult r = solver.solve(s.n, s.triplets, s.block_begin, b, 3, x);
    EXPECT_TRUE(r.converged) << "call " << call;
    EXPECT_LE(true_residual(s, b, x), 1e-10 * (1 + 1e-6));
    // The basis is the first call's; E follows the values.
    if (call == 0) first = solver.coarse().basis_dense();
    EXPECT_EQ((solver.coarse().basis_dense() - first).norm(), 0) << "call " << call;
    const Eigen::MatrixXd E = first.transpose() * s.dense * first;
    EXPECT_LE((solver.coarse().coarse_dense() - E).norm(), 1e-10 * E.norm()) << "call " << call;
  }
  EXPECT_EQ(solver.coarse().builds(), 1);
  // Other coarse settings on the same pattern: a new basis, the same structure.
  solver.settings.coarse_vectors = 2;
  System s = assemble(model);
  Eigen::VectorXd b = random_vector(rng, s.n), x;
  EXPECT_TRUE(solver.solve(s.n, s.triplets, s.block_begin, b, 3, x).converged);
  EXPECT_EQ(solver.coarse().builds(), 2);
  EXPECT_EQ(solver.rebuilds(), 1);
  // A new pattern: new lines and a new basis.
  s = assemble(random_model(rng, 25, 30));
  b = random_vector(rng, s.n);
  x.resize(0);
  const IterativeDualResult r = solver.solve(s.n, s.triplets, s.block_begin, b, 4, x);
  EXPECT_TRUE(r.converged);
  EXPECT_LE(true_residual(s, b, x), 1e-10 * (1 + 1e-6));
  EXPECT_EQ(solver.coarse().builds(), 3);
  EXPECT_EQ(solver.rebuilds(), 2);
  expect_valid_aggregates(solver.coarse().aggregates(), static_cast<int>(s.block_begin.size()) - 1);
}

TEST(IterativeDualCoarse, RedundantRowsInEveryMode) {
  // A duplicated joint (S singular, consistent b) and a block with repeated rows: the
  // coarse basis drops the null vectors, E stays factorable, every mode converges.
  for (const DualCoarseMode mode : kCoarseModes) {
    SCOPED_TRACE(name(mode));
    for (unsigned seed = 1; seed <= 4; ++seed) {
      std::mt19937 rng(900 + seed);
      Model model = redundant_model(rng);
      Joint& j = model.joints[0];
      j.rows = 6;
      for (Side* side : {&j.a, &j.b}) {
        side->g.conservativeResize(6, 12);
        side->g.bottomRows(3) = side->g.topRows(3);
      }
      IterativeDualSolver solver;
      use(solver, DualPreconditioner::LinesCoarse, mode);
      expect_consistent_solve(model, solver, rng, seed);
    }
  }
}

TEST(IterativeDualSolver, ReusesThePatternAndDetectsChanges) {
  for (const DualPreconditioner pre : kPreconditioners) {
    SCOPED_TRACE(name(pre));
    std::mt19937 rng(21);
    Model model = random_model(rng, 25, 40, 1);  // blocks of 1-6 rows
    IterativeDualSolver solver;
    use(solver, pre);
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
    if (pre != DualPreconditioner::Blocks) expect_valid_partition(s, solver.lines());
  }
}

/// Adds `s`'s triplets where a direct fill says (what assemble_dual_into does with the rows).
bool scatter_direct(const System& s, const IterativeDualSolver::DirectFill& fill) {
  if (s.triplets.size() != fill.coords->size()) return false;
  for (std::size_t k = 0; k < s.triplets.size(); ++k) {
    const auto& t = s.triplets[k];
    if ((*fill.coords)[k] != pack_coordinate(t.row(), t.col())) return false;
    if ((*fill.slots)[k] >= 0) fill.values[(*fill.slots)[k]] += t.value();
  }
  return true;
}

TEST(IterativeDualSolver, DirectFillSolvesAsTheTripletsDoToTheBit) {
  // A net's joint blocks (3 rows, lines of 3-row blocks): after a first solve, the next
  // matrix of the same structure filled straight into the block rows gives the iterates of a
  // solve from its triplets, bit for bit, in both line modes; the fill is refused where the
  // row-wise values are needed or the structure differs.
  for (const DualPreconditioner pre :
       {DualPreconditioner::Lines, DualPreconditioner::LinesCoarse}) {
    SCOPED_TRACE(name(pre));
    Model model = net_model(6);
    const System first = assemble(model);
    for (auto& h : model.hinv) h *= 1.3;
    model.hinv[5] *= 2.0;
    const System next = assemble(model);
    std::mt19937 rng(9);
    const Eigen::VectorXd b1 = random_vector(rng, first.n), b2 = random_vector(rng, first.n);
    IterativeDualSolver by_triplets, direct;
    for (IterativeDualSolver* solver : {&by_triplets, &direct}) {
      use(*solver, pre);
      solver->settings.tolerance = 1e-10;
      solver->settings.max_iterations = 5000;
    }
    EXPECT_FALSE(direct.direct_fill(first.n, first.block_begin, 5)) << "before any solve";
    Eigen::VectorXd x1, x2;
    ASSERT_TRUE(by_triplets.solve(first.n, first.triplets, first.block_begin, b1, 5, x1).converged);
    ASSERT_TRUE(direct.solve(first.n, first.triplets, first.block_begin, b1, 5, x2).converged);
    EXPECT_FALSE(direct.direct_fill(first.n, first.block_begin, 6)) << "another pattern";
    const IterativeDualResult r1 =
        by_triplets.solve(next.n, next.triplets, next.block_begin, b2, 5, x1);
    auto fill = direct.direct_fill(next.n, next.block_begin, 5);
    ASSERT_TRUE(fill);
    ASSERT_TRUE(scatter_direct(next, *fill));
    const IterativeDualResult r2 = direct.solve_filled(b2, x2);
    EXPECT_TRUE(r2.converged);
    EXPECT_EQ(r1.iterations, r2.iterations);
    EXPECT_EQ(r1.residual, r2.residual);
    ASSERT_EQ(x1.size(), x2.size());
    for (Eigen::Index i = 0; i < x1.size(); ++i) ASSERT_EQ(x1[i], x2[i]) << "row " << i;
    EXPECT_LE((x2 - next.dense.ldlt().solve(b2)).norm() / x2.norm(), 1e-7);
    EXPECT_EQ(direct.rebuilds(), 1);
    // A refused scatter (triplets in another order) leaves the triplet path to solve.
    System shuffled = next;
    std::shuffle(shuffled.triplets.begin(), shuffled.triplets.end(), rng);
    fill = direct.direct_fill(next.n, next.block_begin, 5);
    ASSERT_TRUE(fill);
    EXPECT_FALSE(scatter_direct(shuffled, *fill));
    ASSERT_TRUE(
        direct.solve(shuffled.n, shuffled.triplets, shuffled.block_begin, b2, 5, x2).converged);
    EXPECT_LE(true_residual(next, b2, x2), 1e-10 * (1 + 1e-6));
    // The block preconditioner reads the row-wise values: no direct fill.
    use(direct, DualPreconditioner::Blocks);
    EXPECT_FALSE(direct.direct_fill(next.n, next.block_begin, 5));
  }
  // Blocks of other sizes than 3 (lines factored from the row-wise values): no direct fill.
  std::mt19937 rng(3);
  const System mixed = assemble(random_model(rng, 20, 30, 1));
  IterativeDualSolver solver;
  use(solver, DualPreconditioner::Lines);
  Eigen::VectorXd x;
  ASSERT_TRUE(
      solver.solve(mixed.n, mixed.triplets, mixed.block_begin, random_vector(rng, mixed.n), 2, x)
          .converged);
  EXPECT_FALSE(solver.direct_fill(mixed.n, mixed.block_begin, 2));
}

TEST(IterativeDualSolver, ResolvesWithTheLastMatrixAndPreconditioner) {
  // resolve() runs the iteration again on the last solve's matrix and preconditioner for a
  // new b (no structure rebuilt): the tolerance and the dense solution, warm or cold; nothing
  // to resolve with before a solve or for a wrong size.
  for (const DualPreconditioner pre : kPreconditioners) {
    SCOPED_TRACE(name(pre));
    for (unsigned seed = 1; seed <= 8; ++seed) {
      std::mt19937 rng(seed);
      const System s = assemble(random_model(rng, 10 + static_cast<int>(rng() % 30), 30));
      IterativeDualSolver solver;
      solver.settings.tolerance = 1e-10;
      solver.settings.max_iterations = 10 * s.n;
      use(solver, pre);
      Eigen::VectorXd x;
      EXPECT_EQ(solver.resolve(random_vector(rng, s.n), x).iterations, -1);
      ASSERT_TRUE(solver.solve(s.n, s.triplets, s.block_begin, random_vector(rng, s.n), 7, x)
                      .converged);
      for (int k = 0; k < 3; ++k) {
        const Eigen::VectorXd b = random_vector(rng, s.n);
        const Eigen::VectorXd ref = s.dense.ldlt().solve(b);
        if (k == 2) x = ref + 1e-3 * random_vector(rng, s.n);  // a warm start near it
        const IterativeDualResult r = solver.resolve(b, x);
        EXPECT_TRUE(r.converged) << "seed " << seed << " call " << k;
        EXPECT_LE(true_residual(s, b, x), 1e-10 * (1 + 1e-6)) << "seed " << seed;
        EXPECT_NEAR(r.residual, true_residual(s, b, x), 1e-3 * r.residual + residual_roundoff(s, b, x));
        EXPECT_LE((x - ref).norm() / ref.norm(), error_bound(s, 1e-10, 1e-8)) << "seed " << seed;
      }
      EXPECT_EQ(solver.rebuilds(), 1);
      EXPECT_EQ(solver.resolve(random_vector(rng, s.n + 1), x).iterations, -1);
    }
  }
}

TEST(IterativeDualSolver, SwitchesPreconditionerOnTheSamePattern) {
  std::mt19937 rng(33);
  const System s = assemble(random_model(rng, 30, 45));
  const Eigen::VectorXd b = random_vector(rng, s.n);
  IterativeDualSolver solver;
  for (const DualPreconditioner pre :
       {DualPreconditioner::Blocks, DualPreconditioner::Lines, DualPreconditioner::Blocks}) {
    use(solver, pre);
    Eigen::VectorXd x;
    const IterativeDualResult r = solver.solve(s.n, s.triplets, s.block_begin, b, 1, x);
    EXPECT_TRUE(r.converged) << name(pre);
    EXPECT_LE(true_residual(s, b, x), 1e-10 * (1 + 1e-6)) << name(pre);
  }
  EXPECT_EQ(solver.rebuilds(), 1);
}

TEST(IterativeDualSolver, RedundantConsistentSystemConverges) {
  for (const DualPreconditioner pre : kPreconditioners) {
    SCOPED_TRACE(name(pre));
    for (unsigned seed = 1; seed <= 5; ++seed) {
      std::mt19937 rng(300 + seed);
      const Model model = redundant_model(rng);
      IterativeDualSolver solver;
      use(solver, pre);
      expect_consistent_solve(model, solver, rng, seed);
    }
  }
}

TEST(IterativeDualSolver, InconsistentSystemDoesNotConverge) {
  for (const DualPreconditioner pre : kPreconditioners) {
    SCOPED_TRACE(name(pre));
    std::mt19937 rng(77);
    Model model = random_model(rng, 15, 20);
    for (auto& j : model.joints) j.compliance = 0;
    model.joints.push_back(model.joints[3]);  // duplicated joint: S singular
    const System s = assemble(model);
    // A right-hand side with a component in the null space (the two copies' difference).
    Eigen::VectorXd b = s.dense * random_vector(rng, s.n);
    const int a0 = s.block_begin[3], d0 = s.block_begin[s.block_begin.size() - 2];
    b.segment(a0, 3) += Eigen::Vector3d(1, 2, 3);
    b.segment(d0, 3) -= Eigen::Vector3d(1, 2, 3);
    IterativeDualSolver solver;
    solver.settings.tolerance = 1e-9;
    solver.settings.max_iterations = 200;
    use(solver, pre);
    Eigen::VectorXd x;
    const IterativeDualResult r = solver.solve(s.n, s.triplets, s.block_begin, b, 1, x);
    EXPECT_FALSE(r.converged);
    EXPECT_GT(r.residual, 1e-9);
  }
}

TEST(IterativeDualSolver, BlockWithRedundantRows) {
  for (const DualPreconditioner pre : kPreconditioners) {
    SCOPED_TRACE(name(pre));
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
    use(solver, pre);
    Eigen::VectorXd x;
    const IterativeDualResult r = solver.solve(s.n, s.triplets, s.block_begin, b, 1, x);
    EXPECT_TRUE(r.converged) << r.residual;
    EXPECT_TRUE(x.allFinite());
    EXPECT_LE(true_residual(s, b, x), 1e-9 * (1 + 1e-6));
  }
}

TEST(IterativeDualSolver, RejectsInvalidInput) {
  for (const DualPreconditioner pre : kPreconditioners) {
    SCOPED_TRACE(name(pre));
    IterativeDualSolver solver;
    use(solver, pre);
    const Triplets t = {{0, 0, 2.0}, {1, 1, 2.0}};
    Eigen::VectorXd x;
    EXPECT_EQ(solver.solve(2, t, {0, 1}, Eigen::Vector2d(1, 1), 1, x).iterations, -1);
    EXPECT_EQ(solver.solve(2, t, {0, 2, 2}, Eigen::Vector2d(1, 1), 1, x).iterations, -1);
    EXPECT_EQ(solver.solve(2, {{0, 3, 1.0}}, {0, 2}, Eigen::Vector2d(1, 1), 1, x).iterations, -1);
    EXPECT_EQ(solver.solve(2, t, {0, 2}, Eigen::Vector3d(1, 1, 1), 1, x).iterations, -1);
    const IterativeDualResult r = solver.solve(2, t, {0, 1, 2}, Eigen::Vector2d(1, 1), 1, x);
    EXPECT_TRUE(r.converged);
    // LinesCoarse: solved by the deflated start through E (shifted by 1e-12 relative).
    EXPECT_NEAR((x - Eigen::Vector2d(0.5, 0.5)).norm(), 0,
                pre == DualPreconditioner::LinesCoarse ? 1e-11 : 1e-15);
  }
}

TEST(IterativeDualSolver, EmptyAndSingleBlockSystems) {
  for (const DualPreconditioner pre : kPreconditioners) {
    SCOPED_TRACE(name(pre));
    IterativeDualSolver solver;
    use(solver, pre);
    Eigen::VectorXd x = Eigen::VectorXd::Ones(3);
    IterativeDualResult r = solver.solve(0, {}, {0}, Eigen::VectorXd(), 1, x);
    EXPECT_TRUE(r.converged);
    EXPECT_EQ(r.iterations, 0);
    EXPECT_EQ(x.size(), 0);
    // One 3-row block: solved exactly by either preconditioner (one iteration).
    Eigen::Matrix3d a;
    a << 4, 1, 0.5, 1, 3, 0.2, 0.5, 0.2, 2;
    Triplets t;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) t.emplace_back(i, j, a(i, j));
    const Eigen::Vector3d b(1, -2, 3);
    x.resize(0);
    r = solver.solve(3, t, {0, 3}, b, 1, x);
    EXPECT_TRUE(r.converged);
    // LinesCoarse: Z spans the block, the deflated start x = Q b is already the solution.
    EXPECT_EQ(r.iterations, pre == DualPreconditioner::LinesCoarse ? 0 : 1);
    EXPECT_LE((x - a.ldlt().solve(b)).norm(), 1e-12 * b.norm());
  }
}

TEST(IterativeDualSolver, BlocksLargerThanTheLineLimitFallBackToBlocks) {
  // One block larger than kMaxLineBlock: the line setting still solves the system.
  const int n = kMaxLineBlock + 2;
  std::mt19937 rng(8);
  const Eigen::MatrixXd q = Eigen::MatrixXd::NullaryExpr(n, n, [&] { return random_vector(rng, 1)[0]; });
  const Eigen::MatrixXd a = q * q.transpose() + n * Eigen::MatrixXd::Identity(n, n);
  Triplets t;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) t.emplace_back(i, j, a(i, j));
  const Eigen::VectorXd b = random_vector(rng, n);
  IterativeDualSolver solver;
  solver.settings.preconditioner = DualPreconditioner::Lines;
  Eigen::VectorXd x;
  const IterativeDualResult r = solver.solve(n, t, {0, n}, b, 1, x);
  EXPECT_TRUE(r.converged);
  EXPECT_LE((x - a.ldlt().solve(b)).norm() / b.norm(), 1e-9);
}

}  // namespace
}  // namespace mabd::detail
