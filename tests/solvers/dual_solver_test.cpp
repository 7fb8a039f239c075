// The dual solvers of src/solvers on row sets built directly (no world): every solver against
// a dense solve of (S + diag(alpha)) lambda = G y + C, with H^{-1} = D(R) Hb^{-1} D(R)^T of
// randomly rotated bodies supplied through BodyOperators.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include <Eigen/Dense>

#include "body/affine.h"
#include "body/body_hessian.h"
#include "solvers/ball_chain_dual.h"
#include "solvers/cg_dual.h"
#include "solvers/chain_dual.h"
#include "solvers/cholesky_dual.h"
#include "solvers/row_set.h"
#include "solvers/tree_dual.h"
#include "solvers/triplet_scatter.h"
#include "test_bodies.h"

namespace mabd::detail {
namespace {

/// The same bodies outside the body frame: solvers then read H^{-1} G^T (RowSet::wa, wb).
class WorldFrameBodies : public TestBodies {
 public:
  using TestBodies::TestBodies;
  bool body_frame() const override { return false; }
};

/// A problem: bodies, point links (ball joints) between them, and the row set of their
/// point rows x_a(pa) - x_b(pb) = 0 at the bodies' q.
struct Problem {
  std::vector<PointLink> links;
  DualTopology topology;
  std::vector<Vec12> y;  ///< H^{-1} f per body
  RowSet rows;
  std::vector<std::vector<Row>> item_rows;  ///< the rows of each general item (else empty)
};

/// Items listed in `general` get 1 + k % 6 random equality rows instead (k the item, every
/// other row compliant), kept in p.item_rows.
/// The same random bodies (from one seed) as body-frame operators (frame 0) and as
/// world-frame ones (frame 1); rng continues the body frame's draw.
struct FrameBodies {
  FrameBodies(int n, unsigned seed)
      : rng(seed), world_rng(seed), body_ops(n, rng), world_ops(n, world_rng) {}
  const TestBodies& of(int frame) const {
    return frame == 0 ? body_ops : static_cast<const TestBodies&>(world_ops);
  }
  std::mt19937 rng, world_rng;
  TestBodies body_ops;
  WorldFrameBodies world_ops;
};

void build(Problem& p, const TestBodies& ops, const std::vector<Edge>& edges, std::mt19937& rng,
           const std::vector<int>& general = {}) {
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  const int n = static_cast<int>(ops.body_count());
  p.topology.movable.assign(n, 1);
  p.topology.items = edges;
  for (int i = 0; i < n; ++i) p.y.push_back(Vec12::NullaryExpr([&] { return 1e-3 * u(rng); }));
  const Vec12 world_q = make_q(Mat3::Identity(), Vec3::Zero());
  p.rows.begin(ops, p.y);
  p.item_rows.assign(edges.size(), {});
  for (const Edge& e : edges) {
    const int k = static_cast<int>(p.links.size());
    p.rows.begin_item(e.a, e.b);
    if (std::find(general.begin(), general.end(), k) != general.end()) {
      const int m = 1 + k % 6;
      for (int r = 0; r < m; ++r) {
        Row row;
        row.ga = Vec12::NullaryExpr([&] { return u(rng); });
        row.gb = Vec12::NullaryExpr([&] { return u(rng); });
        row.c = 1e-3 * u(rng);
        row.compliance = r % 2 == 0 ? 1e-7 : 0.0;
        p.item_rows[k].push_back(row);
        p.rows.rows.push_back(row);
      }
      p.links.push_back({e.a, e.b, Vec3::Zero(), Vec3::Zero(), 0.0, m});
      p.rows.end_item();
      continue;
    }
    PointLink l{e.a, e.b, Vec3(u(rng), u(rng), u(rng)), Vec3(u(rng), u(rng), u(rng)),
                k % 3 == 0 ? 1e-7 : 0.0};
    p.links.push_back(l);
    const std::size_t first = p.rows.rows.size();
    add_point_rows(e.a >= 0 ? ops.q()[e.a] : world_q, e.b >= 0 ? ops.q()[e.b] : world_q, l.pa,
                   l.pb, p.rows.rows);
    for (std::size_t r = first; r < p.rows.rows.size(); ++r) {
      p.rows.rows[r].compliance = l.compliance;
    }
    p.rows.end_item();
  }
  p.rows.finish();
}

/// Dense reference: (G H^{-1} G^T + diag(alpha)) lambda = rhs, every row active.
Eigen::VectorXd dense_solve(const RowSet& rows, const BodyOperators& ops) {
  const int m = rows.size();
  const int nb = static_cast<int>(ops.body_count());
  Eigen::MatrixXd G = Eigen::MatrixXd::Zero(m, 12 * nb);
  Eigen::MatrixXd Hinv = Eigen::MatrixXd::Zero(12 * nb, 12 * nb);
  for (int r = 0; r < m; ++r) {
    if (rows.row_a[r] >= 0) G.block<1, 12>(r, 12 * rows.row_a[r]) += rows.rows[r].ga.transpose();
    if (rows.row_b[r] >= 0) G.block<1, 12>(r, 12 * rows.row_b[r]) += rows.rows[r].gb.transpose();
  }
  for (int i = 0; i < nb; ++i) {
    for (int c = 0; c < 12; ++c) {
      Hinv.block<12, 1>(12 * i, 12 * i + c) = ops.solve_body(i, Vec12::Unit(c));
    }
  }
  Eigen::MatrixXd S = G * Hinv * G.transpose();
  for (int r = 0; r < m; ++r) S(r, r) += rows.rows[r].compliance;
  const Eigen::VectorXd b = Eigen::Map<const Eigen::VectorXd>(rows.rhs.data(), m);
  return S.ldlt().solve(b);
}

double relative_difference(const Eigen::VectorXd& x, const Eigen::VectorXd& ref) {
  return (x - ref).lpNorm<Eigen::Infinity>() / ref.lpNorm<Eigen::Infinity>();
}

/// Dense reference on the active rows (index[r] >= 0) alone.
Eigen::VectorXd dense_active_solve(const RowSet& rows, const std::vector<int>& index,
                                   const BodyOperators& ops) {
  RowSet active = rows;
  active.rows.clear();
  active.row_a.clear();
  active.row_b.clear();
  active.rhs.clear();
  for (int r = 0; r < rows.size(); ++r) {
    if (index[r] < 0) continue;
    active.rows.push_back(rows.rows[r]);
    active.row_a.push_back(rows.row_a[r]);
    active.row_b.push_back(rows.row_b[r]);
    active.rhs.push_back(rows.rhs[r]);
  }
  return dense_solve(active, ops);
}

/// Solves with `solver` (prepared for p's topology), every row active.
Eigen::VectorXd solve_with(DualSolver& solver, Problem& p, const BodyOperators& ops) {
  EXPECT_TRUE(solver.prepare(p.topology)) << solver.name();
  if (solver.needs_w(ops)) p.rows.compute_w(ops);
  const int m = p.rows.size();
  std::vector<int> index(m);
  for (int r = 0; r < m; ++r) index[r] = r;
  const Eigen::VectorXd rhs = Eigen::Map<const Eigen::VectorXd>(p.rows.rhs.data(), m);
  Eigen::VectorXd sol;
  EXPECT_TRUE(solver.solve(p.rows, ops, index, m, 1, rhs, sol)) << solver.name();
  return sol;
}

std::vector<Edge> chain_edges(int n) {  // body 0 hangs from the world, k from k - 1
  std::vector<Edge> e{{-1, 0}};
  for (int k = 1; k < n; ++k) e.push_back({k - 1, k});
  return e;
}

std::vector<Edge> tree_edges(int n, int loops) {  // binary tree from the world, plus loops
  std::vector<Edge> e{{-1, 0}};
  for (int k = 1; k < n; ++k) e.push_back({(k - 1) / 2, k});
  for (int l = 0; l < loops; ++l) e.push_back({n - 1 - 2 * l, n - 2 - 2 * l});
  return e;
}

TEST(RowSet, RightHandSidesAndIncidence) {
  std::mt19937 rng(3);
  TestBodies ops(6, rng);
  Problem p;
  build(p, ops, chain_edges(6), rng);
  ASSERT_EQ(p.rows.items(), 6u);
  ASSERT_EQ(p.rows.size(), 18);
  for (int r = 0; r < p.rows.size(); ++r) {
    const Row& row = p.rows.rows[r];
    double expect = row.c;
    if (p.rows.row_a[r] >= 0) expect += row.ga.dot(p.y[p.rows.row_a[r]]);
    if (p.rows.row_b[r] >= 0) expect += row.gb.dot(p.y[p.rows.row_b[r]]);
    EXPECT_NEAR(p.rows.rhs[r], expect, 1e-15 * (1 + std::abs(expect)));
    EXPECT_EQ(p.rows.row_item[r], static_cast<std::uint32_t>(r / 3));
  }
  // Body k carries the rows of items k and k + 1 (the last body only its own).
  for (int k = 0; k < 6; ++k) EXPECT_EQ(p.rows.rows_of[k].size(), k < 5 ? 6u : 3u);
  EXPECT_FALSE(p.rows.inequalities);
}

TEST(DualSolvers, ChainMatchesDense) {
  std::mt19937 rng(5);
  WorldFrameBodies ops(40, rng);
  Problem p;
  build(p, ops, chain_edges(40), rng);
  const Eigen::VectorXd ref = dense_solve(p.rows, ops);
  ChainDual chain;
  EXPECT_LT(relative_difference(solve_with(chain, p, ops), ref), 1e-9);
  CholeskyDual sparse;
  EXPECT_LT(relative_difference(solve_with(sparse, p, ops), ref), 1e-9);
  EXPECT_STREQ(chain.name(), "chain");
}

TEST(DualSolvers, ChainWithInactiveRowsMatchesDenseInBothFrames) {
  // Blocks of 3, 2, 1 and 0 active rows along the chain (item 7 has none: the chain falls
  // apart there) against the dense system of the active rows; body-frame operators take the
  // blocks from each body's clique, world-frame ones from W.
  for (int frame = 0; frame < 2; ++frame) {
    FrameBodies bodies(20, 15);
    const TestBodies& ops = bodies.of(frame);
    Problem p;
    build(p, ops, chain_edges(20), bodies.rng);
    ChainDual chain;
    ASSERT_TRUE(chain.prepare(p.topology));
    EXPECT_EQ(chain.needs_w(ops), frame == 1);
    if (chain.needs_w(ops)) p.rows.compute_w(ops);
    const int n = p.rows.size();
    std::vector<int> index(n);
    int m = 0;
    for (int r = 0; r < n; ++r) {
      const int item = r / 3;
      const bool off = item == 7 || (item % 2 == 1 && r % 3 == 2) || (item % 4 == 2 && r % 3 != 0);
      index[r] = off ? -1 : m++;
    }
    Eigen::VectorXd rhs(m);
    for (int r = 0; r < n; ++r) {
      if (index[r] >= 0) rhs[index[r]] = p.rows.rhs[r];
    }
    const Eigen::VectorXd ref = dense_active_solve(p.rows, index, ops);
    Eigen::VectorXd sol;
    ASSERT_TRUE(chain.solve(p.rows, ops, index, m, 2, rhs, sol));
    EXPECT_LT(relative_difference(sol, ref), 1e-9) << "frame " << frame;
  }
}

TEST(DualSolvers, ChainRefusesATree) {
  std::mt19937 rng(6);
  TestBodies ops(7, rng);
  Problem p;
  build(p, ops, tree_edges(7, 0), rng);
  ChainDual chain;
  EXPECT_FALSE(chain.prepare(p.topology));
  EXPECT_TRUE(chain.chains().empty());
}

TEST(DualSolvers, TreeWithLoopsMatchesDenseInBothFrames) {
  for (int frame = 0; frame < 2; ++frame) {
    FrameBodies bodies(31, 7);
    const TestBodies& ops = bodies.of(frame);
    Problem p;
    build(p, ops, tree_edges(31, 2), bodies.rng);
    const Eigen::VectorXd ref = dense_solve(p.rows, ops);
    TreeDual tree;
    EXPECT_EQ(tree.needs_w(ops), frame == 1);
    EXPECT_LT(relative_difference(solve_with(tree, p, ops), ref), 1e-9) << "frame " << frame;
    ASSERT_EQ(tree.plan().components.size(), 1u);
    EXPECT_EQ(tree.plan().components[0].loop_joints.size(), 2u);
  }
}

TEST(DualSolvers, TreeWithSparseComponentsMatchesDense) {
  std::mt19937 rng(8);
  WorldFrameBodies ops(30, rng);
  // Two components: a chain of bodies 0-14 and a tree with loops on bodies 15-29.
  std::vector<Edge> edges = chain_edges(15);
  for (const Edge& e : tree_edges(15, 3)) edges.push_back({e.a < 0 ? -1 : e.a + 15, e.b + 15});
  Problem p;
  build(p, ops, edges, rng);
  const Eigen::VectorXd ref = dense_solve(p.rows, ops);
  TreeDual tree;
  ASSERT_TRUE(tree.prepare(p.topology));
  ASSERT_EQ(tree.plan().components.size(), 2u);
  std::vector<char> sparse(2, 0);
  for (std::size_t c = 0; c < 2; ++c) sparse[c] = !tree.plan().components[c].loop_joints.empty();
  p.rows.compute_w(ops);
  const int m = p.rows.size();
  std::vector<int> index(m);
  for (int r = 0; r < m; ++r) index[r] = r;
  const Eigen::VectorXd rhs = Eigen::Map<const Eigen::VectorXd>(p.rows.rhs.data(), m);
  tree.set_sparse_components(sparse);
  EXPECT_TRUE(tree.mixed());
  EXPECT_STREQ(tree.name(), "tree+sparse");
  Eigen::VectorXd sol;
  ASSERT_TRUE(tree.solve(p.rows, ops, index, m, 1, rhs, sol));
  EXPECT_LT(relative_difference(sol, ref), 1e-9);
}

TEST(DualSolvers, InactiveRowsAreLeftOut) {
  // Every third row inactive: the solvers solve the system of the others.
  std::mt19937 rng(9);
  WorldFrameBodies ops(15, rng);
  Problem p;
  build(p, ops, tree_edges(15, 1), rng);
  p.rows.compute_w(ops);
  const int n = p.rows.size();
  std::vector<int> index(n);
  int m = 0;
  for (int r = 0; r < n; ++r) index[r] = r % 3 == 2 ? -1 : m++;
  Eigen::VectorXd rhs(m);
  for (int r = 0; r < n; ++r) {
    if (index[r] >= 0) rhs[index[r]] = p.rows.rhs[r];
  }
  // Reference: the dense system of the active rows.
  const Eigen::VectorXd ref = dense_active_solve(p.rows, index, ops);
  TreeDual tree;
  CholeskyDual sparse;
  CgDual cg;
  cg.set_limits(1e-12, 500);
  for (DualSolver* solver : std::vector<DualSolver*>{&tree, &sparse, &cg}) {
    ASSERT_TRUE(solver->prepare(p.topology));
    Eigen::VectorXd sol;
    ASSERT_TRUE(solver->solve(p.rows, ops, index, m, 2, rhs, sol)) << solver->name();
    EXPECT_LT(relative_difference(sol, ref), 1e-8) << solver->name();
  }
}

/// World-frame bodies whose operators can change: H^{-1} of body i scaled by scale[i] (a
/// contact pass's Woodbury update changes a few bodies' operators the same way).
class ScaledBodies : public WorldFrameBodies {
 public:
  using WorldFrameBodies::WorldFrameBodies;
  Vec12 solve_body(std::size_t i, const Vec12& v) const override {
    return scale.empty() ? WorldFrameBodies::solve_body(i, v)
                         : Vec12(scale[i] * WorldFrameBodies::solve_body(i, v));
  }
  std::vector<double> scale;
};

TEST(DualSolvers, AssembleIntoAddsTheTripletsWhereTheSlotsSay) {
  // assemble_dual_into computes the triplets of assemble_dual and adds each where its slot
  // says: here the upper triangle of a dense matrix (the lower dropped), the same sums to the
  // bit as adding the stored triplets. Values from the body-frame cliques (no W) match those
  // from W. A coordinate or a count that differs is refused.
  std::mt19937 rng(14);
  WorldFrameBodies ops(30, rng);
  Problem p;
  build(p, ops, tree_edges(30, 2), rng, {5});
  p.rows.compute_w(ops);
  const int n = p.rows.size();
  std::vector<int> index(n);
  int m = 0;
  for (int r = 0; r < n; ++r) index[r] = r % 7 == 2 ? -1 : m++;
  std::vector<Eigen::Triplet<double>> trip;
  assemble_dual(p.rows, index, trip);
  std::vector<std::uint64_t> coords;
  std::vector<int> slots;
  Eigen::MatrixXd expected = Eigen::MatrixXd::Zero(m, m);
  for (const auto& t : trip) {
    coords.push_back(pack_coordinate(t.row(), t.col()));
    slots.push_back(t.col() >= t.row() ? t.row() + m * t.col() : -1);
    if (t.col() >= t.row()) expected(t.row(), t.col()) += t.value();
  }
  Eigen::MatrixXd into = Eigen::MatrixXd::Zero(m, m);
  ASSERT_TRUE(assemble_dual_into(p.rows, index, coords, slots, into.data()));
  for (int c = 0; c < m; ++c)
    for (int r = 0; r < m; ++r) ASSERT_EQ(into(r, c), expected(r, c)) << r << ", " << c;
  // From the bodies' body-frame cliques instead of W: the same entries in the same order,
  // the values to round-off; and into the slots, the clique triplets' sums to the bit.
  TestBodies frame_ops(30, rng);
  Problem q;
  build(q, frame_ops, tree_edges(30, 2), rng, {5});
  q.rows.compute_w(frame_ops);
  std::vector<Eigen::Triplet<double>> by_w, by_clique;
  assemble_dual(q.rows, index, by_w);
  assemble_dual(q.rows, index, by_clique, nullptr, &frame_ops);
  ASSERT_EQ(by_w.size(), by_clique.size());
  double largest = 0;
  for (const auto& t : by_w) largest = std::max(largest, std::abs(t.value()));
  Eigen::MatrixXd clique_sums = Eigen::MatrixXd::Zero(m, m);
  std::vector<std::uint64_t> q_coords;
  for (std::size_t k = 0; k < by_w.size(); ++k) {
    ASSERT_EQ(by_w[k].row(), by_clique[k].row());
    ASSERT_EQ(by_w[k].col(), by_clique[k].col());
    EXPECT_NEAR(by_w[k].value(), by_clique[k].value(), 1e-13 * largest) << "triplet " << k;
    q_coords.push_back(pack_coordinate(by_clique[k].row(), by_clique[k].col()));
    if (slots[k] >= 0) clique_sums(by_clique[k].row(), by_clique[k].col()) += by_clique[k].value();
  }
  into.setZero();
  ASSERT_TRUE(assemble_dual_into(q.rows, index, q_coords, slots, into.data(), &frame_ops));
  for (int c = 0; c < m; ++c)
    for (int r = 0; r < m; ++r) ASSERT_EQ(into(r, c), clique_sums(r, c)) << r << ", " << c;

  std::vector<std::uint64_t> moved = coords;
  std::swap(moved[3], moved[4]);
  into.setZero();
  EXPECT_FALSE(assemble_dual_into(p.rows, index, moved, slots, into.data()));
  std::vector<std::uint64_t> longer = coords;
  longer.push_back(coords.back());
  std::vector<int> longer_slots = slots;
  longer_slots.push_back(-1);
  into.setZero();
  EXPECT_FALSE(assemble_dual_into(p.rows, index, longer, longer_slots, into.data()));
}

TEST(DualSolvers, SparsePatchesTheRowsOfChangedBodies) {
  // A contact pass changes a few bodies' operators: RowSet::update_w recomputes their rows'
  // W, patch_dual their triplets, and the sparse solver updates its factor. Each must equal
  // the full path: W and triplets exactly, the multipliers the dense solve's.
  std::mt19937 rng(12);
  ScaledBodies ops(40, rng);
  ops.scale.assign(40, 1.0);
  Problem p;
  build(p, ops, tree_edges(40, 3), rng, {4, 9});
  p.rows.compute_w(ops);
  const int n = p.rows.size();
  for (const bool some_inactive : {false, true}) {
    std::vector<int> index(n);
    int m = 0;
    for (int r = 0; r < n; ++r) index[r] = some_inactive && r % 5 == 3 ? -1 : m++;
    std::vector<Eigen::Triplet<double>> trip;
    std::vector<std::size_t> begin;
    assemble_dual(p.rows, index, trip, &begin);
    CholeskyDual sparse;
    ASSERT_TRUE(sparse.prepare(p.topology));
    for (int pass = 0; pass < 4; ++pass) {
      const std::vector<std::uint32_t> changed{std::uint32_t(3 + 7 * pass),
                                               std::uint32_t(11 + pass), 20};
      if (pass > 0) {
        for (const std::uint32_t i : changed) ops.scale[i] *= 0.5 + 0.2 * pass;
        p.rows.update_w(ops, changed);
        ASSERT_TRUE(p.rows.w_partial);
        patch_dual(p.rows, index, changed, begin, trip);
      }
      RowSet full = p.rows;
      full.compute_w(ops);
      ASSERT_EQ(full.wa, p.rows.wa);
      ASSERT_EQ(full.wb, p.rows.wb);
      std::vector<Eigen::Triplet<double>> trip_full;
      assemble_dual(full, index, trip_full);
      ASSERT_EQ(trip.size(), trip_full.size());
      for (std::size_t k = 0; k < trip.size(); ++k) {
        ASSERT_EQ(trip[k].row(), trip_full[k].row());
        ASSERT_EQ(trip[k].col(), trip_full[k].col());
        ASSERT_EQ(trip[k].value(), trip_full[k].value()) << "pass " << pass << " triplet " << k;
      }
      // The solver patches its own triplets: the multipliers of the active rows' dense system.
      Eigen::VectorXd rhs(m), sol;
      for (int r = 0; r < n; ++r) {
        if (index[r] >= 0) rhs[index[r]] = p.rows.rhs[r];
      }
      ASSERT_TRUE(sparse.solve(p.rows, ops, index, m, some_inactive ? 2 : 1, rhs, sol));
      Eigen::MatrixXd S = Eigen::MatrixXd::Zero(m, m);
      for (const auto& t : trip_full) S(t.row(), t.col()) += t.value();
      const Eigen::VectorXd ref = S.ldlt().solve(rhs);
      EXPECT_LT(relative_difference(sol, ref), 1e-9) << "pass " << pass;
    }
  }
}

TEST(DualSolvers, IterativeMatchesDenseAndReportsIterations) {
  std::mt19937 rng(10);
  WorldFrameBodies ops(31, rng);
  Problem p;
  build(p, ops, tree_edges(31, 4), rng);
  const Eigen::VectorXd ref = dense_solve(p.rows, ops);
  CgDual cg;
  cg.set_limits(1e-12, 1000);
  EXPECT_LT(relative_difference(solve_with(cg, p, ops), ref), 1e-8);
  EXPECT_TRUE(cg.result().converged);
  EXPECT_GT(cg.result().iterations, 0);
  // Warm-started from the solution, it has nothing left to do.
  cg.warm_start(std::vector<double>(ref.data(), ref.data() + ref.size()));
  EXPECT_LT(relative_difference(solve_with(cg, p, ops), ref), 1e-8);
  EXPECT_EQ(cg.result().iterations, 0);
}

/// The increments y match dq = y - H^{-1} G^T lambda of the dense multipliers, body by body.
void expect_increments(const Problem& p, const BodyOperators& ops, const Eigen::VectorXd& ref,
                       const std::vector<Vec12>& y) {
  for (std::size_t i = 0; i < y.size(); ++i) {
    Vec12 f = Vec12::Zero();
    for (int r : p.rows.rows_of[i]) f += p.rows.g_of(r, i) * ref[r];
    const Vec12 expect = p.y[i] - ops.solve_body(i, f);
    EXPECT_LT((y[i] - expect).lpNorm<Eigen::Infinity>(),
              1e-9 * expect.lpNorm<Eigen::Infinity>() + 1e-15) << "body " << i;
  }
}

TEST(BallChainDual, MatchesDenseMultipliersAndIncrement) {
  std::mt19937 rng(11);
  TestBodies ops(25, rng);
  Problem p;
  build(p, ops, chain_edges(25), rng);
  const Eigen::VectorXd ref = dense_solve(p.rows, ops);
  ChainDual chain;
  ASSERT_TRUE(chain.prepare(p.topology));
  BallChainDual ball;
  ball.prepare(chain.chains(), p.links, ops);
  ASSERT_TRUE(ball.ready());
  std::vector<Vec12> y = p.y;
  std::vector<double> lambda;
  ASSERT_TRUE(ball.solve(ops, ops.q(), y, lambda));
  const Eigen::VectorXd got = Eigen::Map<const Eigen::VectorXd>(lambda.data(), lambda.size());
  EXPECT_LT(relative_difference(got, ref), 1e-9);
  expect_increments(p, ops, ref, y);
}

// Chains that mix point links with general items (1 to 6 random equality rows, some
// compliant): the general items at chain ends, next to the world, next to each other and
// alone between point links. The variable-size blocks give the dense multipliers (item order,
// BallChainDual::offset) and increments.
TEST(BallChainDual, GeneralItemsMatchDense) {
  std::mt19937 rng(17);
  const int n = 30;
  TestBodies ops(n, rng);
  // Three chains: bodies 0-9 hang from the world, 10-19 are free, 20-29 hang from the world
  // at both ends.
  std::vector<Edge> edges{{-1, 0}};
  for (int k = 1; k < 10; ++k) edges.push_back({k - 1, k});
  for (int k = 11; k < 20; ++k) edges.push_back({k, k - 1});  // sides in the other order
  edges.push_back({-1, 20});
  for (int k = 21; k < 30; ++k) edges.push_back({k - 1, k});
  edges.push_back({29, -1});
  const std::vector<int> general{0, 1, 5, 9, 10, 11, 12, 18, 19, 28};  // by item
  Problem p;
  build(p, ops, edges, rng, general);
  const Eigen::VectorXd ref = dense_solve(p.rows, ops);
  ChainDual chain;
  ASSERT_TRUE(chain.prepare(p.topology));
  ASSERT_EQ(chain.chains().size(), 3u);
  BallChainDual mixed;
  mixed.prepare(chain.chains(), p.links, ops);
  ASSERT_TRUE(mixed.ready());
  EXPECT_EQ(mixed.general_items(), general.size());
  const ItemRows rows_of = [&](std::uint32_t k, std::vector<Row>& out) {
    out.insert(out.end(), p.item_rows[k].begin(), p.item_rows[k].end());
  };
  {
    std::vector<Vec12> y = p.y;
    std::vector<double> lambda;
    ASSERT_TRUE(mixed.solve(ops, ops.q(), y, lambda, rows_of));
    ASSERT_EQ(lambda.size(), static_cast<std::size_t>(ref.size()));
    const Eigen::VectorXd got = Eigen::Map<const Eigen::VectorXd>(lambda.data(), lambda.size());
    EXPECT_LT(relative_difference(got, ref), 1e-9);
    for (std::size_t k = 0; k < edges.size(); ++k) {
      EXPECT_EQ(mixed.offset(static_cast<std::uint32_t>(k)), p.rows.item_begin[k]) << k;
      EXPECT_EQ(mixed.general_rows(static_cast<std::uint32_t>(k)) != nullptr,
                !p.item_rows[k].empty()) << k;
    }
    expect_increments(p, ops, ref, y);
  }
  // Without its rows a general item cannot be solved: the caller falls back.
  std::vector<Vec12> y = p.y;
  std::vector<double> lambda;
  EXPECT_FALSE(mixed.solve(ops, ops.q(), y, lambda));
  EXPECT_EQ(y, p.y);
}

}  // namespace
}  // namespace mabd::detail
