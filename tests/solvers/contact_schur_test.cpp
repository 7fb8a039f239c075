// Contact rows on their Schur complement over the structured joint solve (contact_schur.h)
// against a dense KKT reference on random small systems (a chain, a tree and a free body with
// contacts between and within them), and the complementarity solver (contact_lcp.h) against
// enumeration of the active sets and its own optimality conditions; joint limits and
// force-limited drives solved with the contacts against enumeration of the dense problem.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include <Eigen/Dense>

#include "joints/row.h"
#include "solvers/contact_lcp.h"
#include "solvers/contact_schur.h"
#include "solvers/row_set.h"
#include "solvers/tree_dual.h"
#include "test_bodies.h"

namespace mabd::detail {
namespace {

/// Joints (point rows) of a 4-body chain and a 4-body tree hanging from the world, and a free
/// ninth body; the row set at the bodies' q, every row active.
struct Joints {
  DualTopology topology;
  RowSet rows;
  std::vector<std::uint32_t> articulation;
  std::vector<char> jointed;
};

void build_joints(Joints& j, const TestBodies& ops, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  const int n = static_cast<int>(ops.body_count());
  const std::vector<Edge> edges = {{-1, 0}, {0, 1}, {1, 2}, {2, 3},   // chain 0-3
                                   {-1, 4}, {4, 5}, {4, 6}, {5, 7}};  // tree 4-7
  j.topology.movable.assign(n, 1);
  j.topology.items = edges;
  const std::vector<Vec12> zero(n, Vec12::Zero());
  const Vec12 world_q = make_q(Mat3::Identity(), Vec3::Zero());
  j.rows.begin(ops, zero);
  for (const Edge& e : edges) {
    j.rows.begin_item(e.a, e.b);
    add_point_rows(e.a >= 0 ? ops.q()[e.a] : world_q, ops.q()[e.b], Vec3(u(rng), u(rng), u(rng)),
                   Vec3(u(rng), u(rng), u(rng)), j.rows.rows);
    j.rows.end_item();
  }
  j.rows.finish();
  j.articulation = {0, 0, 0, 0, 4, 4, 4, 4, 8};
  j.jointed = {1, 1, 1, 1, 1, 1, 1, 1, 0};
}

/// Contact points between random pairs of distinct bodies (within and across articulations),
/// with random normals and tangents, values and compliances.
ContactRows random_contacts(std::mt19937& rng, int points, int bodies, double mu) {
  std::uniform_real_distribution<double> u(-0.5, 0.5), pos(0, 1);
  std::uniform_int_distribution<int> body(0, bodies - 1);
  ContactRows c;
  for (int k = 0; k < points; ++k) {
    const int a = body(rng);
    int b = body(rng);
    while (b == a) b = body(rng);
    const Vec3 pa(u(rng), u(rng), u(rng)), pb(u(rng), u(rng), u(rng));
    const Vec3 n = Vec3(u(rng), u(rng), u(rng)).normalized();
    const Vec3 t1 = n.unitOrthogonal(), t2 = n.cross(t1);
    c.mu.push_back(mu);
    for (const Vec3& d : {n, t1, t2}) {
      c.ga.push_back(grad_point(pa, d));
      c.gb.push_back(-grad_point(pb, d));
      c.a.push_back(a);
      c.b.push_back(b);
      c.alpha.push_back(1e-7 * (0.1 + pos(rng)));
      c.value.push_back(2e-3 * u(rng) - 5e-4);  // mostly penetrating
    }
  }
  return c;
}

/// The structured joint response: z <- z - H^{-1} G^T lambda, (S + alpha) lambda = G z.
struct TreeResponse {
  TreeDual tree;
  Joints* joints = nullptr;
  const TestBodies* ops = nullptr;
  void operator()(std::vector<Vec12>& z, std::vector<std::uint32_t>& touched) {
    RowSet& rs = joints->rows;
    const int m = rs.size();
    std::vector<int> index(m);
    Eigen::VectorXd rhs(m), sol;
    for (int r = 0; r < m; ++r) {
      index[r] = r;
      double v = 0;
      if (rs.row_a[r] >= 0) v += rs.rows[r].ga.dot(z[rs.row_a[r]]);
      if (rs.row_b[r] >= 0) v += rs.rows[r].gb.dot(z[rs.row_b[r]]);
      rhs[r] = v;
    }
    ASSERT_TRUE(tree.solve(rs, *ops, index, m, 7, rhs, sol));
    for (std::size_t i = 0; i < z.size(); ++i) {
      Vec12 f = Vec12::Zero();
      for (int r : rs.rows_of[i]) f += rs.g_of(r, i) * sol[r];
      if (rs.rows_of[i].empty()) continue;
      z[i] -= ops->solve_body(i, f);
      touched.push_back(static_cast<std::uint32_t>(i));
    }
  }
};

/// ContactSchur::solve with the joints' responses through the tree solver.
LcpResult solve_over_tree(ContactSchur& schur, const ContactRows& contacts, const TestBodies& ops,
                          Joints& joints, const std::vector<Vec12>& y, Eigen::VectorXd& lambda,
                          std::vector<Vec12>& dy, const LcpOptions& options = {}) {
  TreeResponse response;
  response.joints = &joints;
  response.ops = &ops;
  EXPECT_TRUE(response.tree.prepare(joints.topology));
  return schur.solve(contacts, ops, joints.articulation, joints.jointed,
                     [&](std::vector<Vec12>& z, std::vector<std::uint32_t>& touched) {
                       response(z, touched);
                     },
                     y, lambda, dy, nullptr, options);
}

/// Dense reference: M_J^{-1} (12 N square) from the full KKT matrix [H G_J^T; G_J -A_J].
Eigen::MatrixXd dense_joint_inverse(const Joints& j, const BodyOperators& ops) {
  const int nb = static_cast<int>(ops.body_count());
  const int m = j.rows.size();
  Eigen::MatrixXd Hinv = Eigen::MatrixXd::Zero(12 * nb, 12 * nb);
  for (int i = 0; i < nb; ++i) {
    for (int c = 0; c < 12; ++c) Hinv.block<12, 1>(12 * i, 12 * i + c) = ops.solve_body(i, Vec12::Unit(c));
  }
  Eigen::MatrixXd K = Eigen::MatrixXd::Zero(12 * nb + m, 12 * nb + m);
  K.topLeftCorner(12 * nb, 12 * nb) = Hinv.inverse();
  for (int r = 0; r < m; ++r) {
    for (int side = 0; side < 2; ++side) {
      const int body = side == 0 ? j.rows.row_a[r] : j.rows.row_b[r];
      if (body < 0) continue;
      const Vec12& g = side == 0 ? j.rows.rows[r].ga : j.rows.rows[r].gb;
      K.block<1, 12>(12 * nb + r, 12 * body) += g.transpose();
      K.block<12, 1>(12 * body, 12 * nb + r) += g;
    }
    K(12 * nb + r, 12 * nb + r) = -j.rows.rows[r].compliance;
  }
  const Eigen::MatrixXd Kinv = K.inverse();
  return Kinv.topLeftCorner(12 * nb, 12 * nb);
}

Eigen::MatrixXd dense_contact_gradients(const ContactRows& c, int bodies) {
  Eigen::MatrixXd G = Eigen::MatrixXd::Zero(c.size(), 12 * bodies);
  for (int r = 0; r < c.size(); ++r) {
    G.block<1, 12>(r, 12 * c.a[r]) += c.ga[r].transpose();
    if (c.b[r] >= 0) G.block<1, 12>(r, 12 * c.b[r]) += c.gb[r].transpose();  // -1: the world
  }
  return G;
}

/// Frictionless reference: the normal rows' complementarity problem solved by enumerating
/// the active sets (K = D + alpha positive definite: exactly one set is consistent).
Eigen::VectorXd enumerate_normals(const Eigen::MatrixXd& K, const Eigen::VectorXd& b) {
  const int points = static_cast<int>(b.size() / 3);
  for (int mask = 0; mask < (1 << points); ++mask) {
    std::vector<int> act;
    for (int k = 0; k < points; ++k) {
      if (mask & (1 << k)) act.push_back(3 * k);
    }
    Eigen::VectorXd lambda = Eigen::VectorXd::Zero(b.size());
    if (!act.empty()) {
      Eigen::MatrixXd Ks(act.size(), act.size());
      Eigen::VectorXd bs(act.size());
      for (std::size_t i = 0; i < act.size(); ++i) {
        bs[i] = b[act[i]];
        for (std::size_t l = 0; l < act.size(); ++l) Ks(i, l) = K(act[i], act[l]);
      }
      const Eigen::VectorXd x = Ks.ldlt().solve(bs);
      for (std::size_t i = 0; i < act.size(); ++i) lambda[act[i]] = x[i];
    }
    const Eigen::VectorXd w = b - K * lambda;
    bool ok = true;
    for (int k = 0; k < points && ok; ++k) {
      ok = (mask & (1 << k)) ? lambda[3 * k] <= 1e-12 : w[3 * k] >= -1e-15;
    }
    if (ok) return lambda;
  }
  ADD_FAILURE() << "no consistent active set";
  return Eigen::VectorXd::Zero(b.size());
}

double rel(const Eigen::VectorXd& x, const Eigen::VectorXd& ref) {
  return (x - ref).lpNorm<Eigen::Infinity>() / std::max(ref.lpNorm<Eigen::Infinity>(), 1e-300);
}

class ContactSchurTest : public ::testing::TestWithParam<double> {};

TEST_P(ContactSchurTest, MatchesDenseKktReference) {
  const double mu = GetParam();
  for (int seed = 1; seed <= 6; ++seed) {
    std::mt19937 rng(seed);
    TestBodies ops(9, rng);
    Joints joints;
    build_joints(joints, ops, rng);
    const ContactRows contacts = random_contacts(rng, 5, 9, mu);
    std::uniform_real_distribution<double> u(-1e-3, 1e-3);
    std::vector<Vec12> y(9);
    for (auto& v : y) v = Vec12::NullaryExpr([&] { return u(rng); });

    ContactSchur schur;
    Eigen::VectorXd lambda;
    std::vector<Vec12> dy;
    const LcpResult result = solve_over_tree(schur, contacts, ops, joints, y, lambda, dy);
    EXPECT_TRUE(result.exact) << "seed " << seed;

    // Dense: D = G_c M_J^{-1} G_c^T, b = C + G_c y.
    const Eigen::MatrixXd MJ = dense_joint_inverse(joints, ops);
    const Eigen::MatrixXd G = dense_contact_gradients(contacts, 9);
    const Eigen::MatrixXd D = G * MJ * G.transpose();
    Eigen::VectorXd yv(12 * 9);
    for (int i = 0; i < 9; ++i) yv.segment<12>(12 * i) = y[i];
    const Eigen::VectorXd b =
        Eigen::Map<const Eigen::VectorXd>(contacts.value.data(), contacts.size()) + G * yv;
    const Eigen::MatrixXd Ds = Eigen::MatrixXd(schur.problem().D);
    EXPECT_LT((Ds - D).lpNorm<Eigen::Infinity>() / D.lpNorm<Eigen::Infinity>(), 1e-10)
        << "seed " << seed;
    EXPECT_LT(rel(schur.problem().b, b), 1e-12) << "seed " << seed;

    // The multipliers: enumeration without friction, else the same problem built densely.
    Eigen::MatrixXd K = D;
    for (int r = 0; r < contacts.size(); ++r) K(r, r) += contacts.alpha[r];
    Eigen::VectorXd ref;
    if (mu == 0) {
      ref = enumerate_normals(K, b);
    } else {
      ContactLcp dense;
      dense.D = K.sparseView();
      dense.D -= Eigen::VectorXd(Eigen::Map<const Eigen::VectorXd>(contacts.alpha.data(),
                                                                   contacts.size()))
                     .asDiagonal();
      dense.alpha = Eigen::Map<const Eigen::VectorXd>(contacts.alpha.data(), contacts.size());
      dense.b = b;
      dense.mu = contacts.mu;
      ref = Eigen::VectorXd::Zero(contacts.size());
      solve_contact_lcp(dense, ref);
    }
    EXPECT_LT(rel(lambda, ref), 1e-8) << "seed " << seed;
    // The increment: dy = M_J^{-1} G_c^T lambda.
    const Eigen::VectorXd dy_ref = MJ * G.transpose() * ref;
    Eigen::VectorXd dyv(12 * 9);
    for (int i = 0; i < 9; ++i) dyv.segment<12>(12 * i) = dy[i];
    EXPECT_LT(rel(dyv, dy_ref), 1e-8) << "seed " << seed;
    // Some rows push, some do not (the test exercises the complementarity).
    int pushing = 0;
    for (int k = 0; k < 5; ++k) pushing += lambda[3 * k] < 0;
    EXPECT_GT(pushing, 0) << "seed " << seed;
  }
}

/// Candidate points mostly apart (a speculative margin), one in four touching, on the bodies
/// of build_joints with a random increment y.
struct ScreeningCase {
  ScreeningCase(std::mt19937& rng, int points, double mu)
      : ops(9, rng), contacts(), y(9) {
    build_joints(joints, ops, rng);
    contacts = random_contacts(rng, points, 9, mu);
    std::uniform_real_distribution<double> gap(1e-4, 4e-3), u(-1e-3, 1e-3);
    for (int k = 0; k < points; ++k) {
      if (k % 4 != 0) contacts.value[3 * k] = gap(rng);  // apart at the start
    }
    for (auto& v : y) v = Vec12::NullaryExpr([&] { return 0.3 * u(rng); });
  }
  TestBodies ops;
  Joints joints;
  ContactRows contacts;
  std::vector<Vec12> y;
};

// Screening (set_screening): the working sets give the whole problem's multipliers and
// increment, while assembling D on fewer points; points pushed through by the first set's
// increment join a second one. Candidates mostly apart (a speculative margin), a few touching.
TEST_P(ContactSchurTest, ScreeningSolvesTheWholeProblem) {
  const double mu = GetParam();
  constexpr int kPoints = 24;
  int left_out = 0, second_sets = 0;
  for (int seed = 1; seed <= 12; ++seed) {
    std::mt19937 rng(100 + seed);
    ScreeningCase c(rng, kPoints, mu);
    const TestBodies& ops = c.ops;
    Joints& joints = c.joints;
    const ContactRows& contacts = c.contacts;
    const std::vector<Vec12>& y = c.y;

    ContactSchur whole;
    Eigen::VectorXd ref;
    std::vector<Vec12> dy_ref;
    LcpOptions converged;  // friction rounds to their fixed point: one answer to compare
    converged.max_rounds = 200;
    converged.bound_tolerance = 1e-12;
    const LcpResult rw = solve_over_tree(whole, contacts, ops, joints, y, ref, dy_ref, converged);
    ASSERT_EQ(rw.bound_change, 0.0) << "seed " << seed;
    int pushing = 0;
    for (int k = 0; k < kPoints; ++k) pushing += ref[3 * k] < 0;
    ASSERT_GT(pushing, 0) << "seed " << seed;

    // From no warm start (the points touching at y), then warm-started from half of the
    // pushing points only (the others must join through the check).
    for (int warm = 0; warm < 2; ++warm) {
      ContactSchur screened;
      screened.set_screening(true);
      Eigen::VectorXd lambda;
      if (warm == 1) {
        lambda = Eigen::VectorXd::Zero(contacts.size());
        int kept = 0;
        for (int k = 0; k < kPoints; ++k) {
          if (ref[3 * k] < 0 && kept++ % 2 == 0) lambda.segment<3>(3 * k) = ref.segment<3>(3 * k);
        }
      }
      std::vector<Vec12> dy;
      const LcpResult rs = solve_over_tree(screened, contacts, ops, joints, y, lambda, dy, converged);
      EXPECT_TRUE(rs.exact && rs.bound_change == 0) << "seed " << seed << " warm " << warm;
      EXPECT_LT(rel(lambda, ref), 1e-6) << "seed " << seed << " warm " << warm;
      double worst = 0;
      for (int i = 0; i < 9; ++i) worst = std::max(worst, (dy[i] - dy_ref[i]).lpNorm<Eigen::Infinity>());
      double scale = 0;
      for (int i = 0; i < 9; ++i) scale = std::max(scale, dy_ref[i].lpNorm<Eigen::Infinity>());
      EXPECT_LT(worst, 1e-6 * scale) << "seed " << seed << " warm " << warm;
      left_out += screened.points_solved() < kPoints;
      second_sets += screened.working_sets() > 1;
    }
  }
  // The path is exercised: sets smaller than the problem, and points joining after a solve.
  EXPECT_GT(left_out, 12);
  EXPECT_GT(second_sets, 0);
}

/// The largest move of a row's value (m) that one projected Gauss-Seidel update from lambda
/// would make on problem p (the friction bounds from lambda's own normal forces): 0 at the
/// solution, and what the sweeps' gap tolerance bounds.
double sweep_gap(const ContactLcp& p, const Eigen::VectorXd& lambda) {
  const Eigen::VectorXd w = p.b - p.D * lambda - p.alpha.cwiseProduct(lambda);
  double worst = 0;
  for (int r = 0; r < p.size(); ++r) {
    const int k = r / 3;
    const double bound = p.mu[k] * std::max(-lambda[3 * k], 0.0);
    const double lo = r % 3 == 0 ? -1e300 : -bound, hi = r % 3 == 0 ? 0.0 : bound;
    const double K = p.D.coeff(r, r) + p.alpha[r];
    const double moved = std::clamp(lambda[r] + w[r] / K, lo, hi) - lambda[r];
    worst = std::max(worst, std::abs(moved) * K);
  }
  return worst;
}

// Screening of a large group that keeps to the sweeps (a pile of boxes): sets after the first
// start from the last set's multipliers and sweep only until no row moves by more than twice
// what the first set's last sweep moved, instead of their whole budget again from the warm
// start. The result is as near a fixed point of the sweeps on the whole problem as its last
// sweep reports.
TEST_P(ContactSchurTest, LaterSetsOfSweptGroupsCarryTheLastSetsMultipliers) {
  const double mu = GetParam();
  constexpr int kPoints = 24;
  constexpr int kBudget = 20;
  LcpOptions swept;
  swept.large_group_rows = 3;  // every group of two points or more: large
  swept.pivot_large_groups = false;
  swept.tolerance = 0;  // only the budget and the gap end the sweeps
  swept.max_sweeps = kBudget;
  swept.follow_sweeps = kBudget;
  int carried = 0, sweeps = 0, budgets = 0;
  for (int seed = 1; seed <= 12; ++seed) {
    std::mt19937 rng(100 + seed);
    ScreeningCase c(rng, kPoints, mu);
    ContactSchur whole;
    Eigen::VectorXd unscreened;  // the solve gives whole.problem(): all points
    std::vector<Vec12> dy;
    solve_over_tree(whole, c.contacts, c.ops, c.joints, c.y, unscreened, dy, swept);
    ContactSchur screened;
    screened.set_screening(true);
    Eigen::VectorXd lambda;
    const LcpResult r =
        solve_over_tree(screened, c.contacts, c.ops, c.joints, c.y, lambda, dy, swept);
    if (screened.working_sets() < 2 || r.sweep_gap == 0) continue;
    ++carried;
    sweeps += r.sweeps;
    budgets += screened.working_sets() * kBudget;
    // One more sweep on the whole problem (the points left out included) moves no row much
    // more than the last sweep did (1e-15 m: round-off).
    EXPECT_LT(sweep_gap(whole.problem(), lambda), 3 * r.sweep_gap + 1e-15) << "seed " << seed;
  }
  EXPECT_GT(carried, 0);  // the path is exercised
  EXPECT_LT(sweeps, budgets);
}

INSTANTIATE_TEST_SUITE_P(Friction, ContactSchurTest, ::testing::Values(0.0, 0.5),
                         [](const ::testing::TestParamInfo<double>& info) {
                           return info.param == 0 ? std::string("frictionless")
                                                  : std::string("mu_0_5");
                         });

/// The joints' share of D on one articulation, densely: C = P^T S^{-1} P over the
/// articulation's joint rows, S = G_J H^{-1} G_J^T + A, P[l, j] = g_l . H^{-1} g_j.
void dense_joint_block(const Joints& j, const TestBodies& ops, std::uint32_t art,
                       const std::vector<ContactSchur::BlockColumn>& columns, Eigen::MatrixXd& C) {
  const RowSet& rs = j.rows;
  auto in_art = [&](std::int32_t b) { return b >= 0 && j.articulation[b] == art; };
  std::vector<int> rows;
  for (int r = 0; r < rs.size(); ++r) {
    if (in_art(rs.row_a[r]) || in_art(rs.row_b[r])) rows.push_back(r);
  }
  const int m = static_cast<int>(rows.size()), n = static_cast<int>(columns.size());
  Eigen::MatrixXd S = Eigen::MatrixXd::Zero(m, m), P = Eigen::MatrixXd::Zero(m, n);
  for (int l = 0; l < m; ++l) {
    S(l, l) += rs.rows[rows[l]].compliance;
    for (int k = 0; k < m; ++k) {
      for (std::int32_t b : {rs.row_a[rows[l]], rs.row_b[rows[l]]}) {
        if (b < 0 || (rs.row_a[rows[k]] != b && rs.row_b[rows[k]] != b)) continue;
        S(l, k) += rs.g_of(rows[l], b).dot(ops.solve_body(b, rs.g_of(rows[k], b)));
      }
    }
    for (int c = 0; c < n; ++c) {
      for (int side = 0; side < 2; ++side) {
        const std::int32_t b = columns[c].body[side];
        if (b >= 0 && (rs.row_a[rows[l]] == b || rs.row_b[rows[l]] == b)) {
          P(l, c) += rs.g_of(rows[l], b).dot(columns[c].w[side]);
        }
      }
    }
  }
  C = P.transpose() * S.ldlt().solve(P);
}

/// The joint responses through the tree solver and the dense articulation blocks, as the
/// callbacks ContactSchur takes; `blocks` counts the block calls.
struct Callbacks {
  TreeResponse tree;
  int blocks = 0;
  ContactSchur::JointResponse respond;
  ContactSchur::JointBlock block;
  Callbacks(Joints& joints, const TestBodies& ops) {
    tree.joints = &joints;
    tree.ops = &ops;
    EXPECT_TRUE(tree.tree.prepare(joints.topology));
    respond = [this](std::vector<Vec12>& z, std::vector<std::uint32_t>& touched) {
      tree(z, touched);
    };
    block = [this, &joints, &ops](std::uint32_t art,
                                  const std::vector<ContactSchur::BlockColumn>& c,
                                  Eigen::MatrixXd& C) {
      ++blocks;
      dense_joint_block(joints, ops, art, c, C);
    };
  }
  Callbacks(const Callbacks&) = delete;
  Callbacks& operator=(const Callbacks&) = delete;
};

// D by articulation blocks (the batched form the World uses) against one response per group
// of rows and against the dense KKT reference.
TEST(ContactSchur, ArticulationBlocksMatchTheResponsesAndTheDenseReference) {
  for (int seed = 1; seed <= 6; ++seed) {
    std::mt19937 rng(200 + seed);
    TestBodies ops(9, rng);
    Joints joints;
    build_joints(joints, ops, rng);
    const ContactRows contacts = random_contacts(rng, 6, 9, 0.5);
    std::vector<Vec12> y(9, Vec12::Zero());
    Callbacks call(joints, ops);
    ContactSchur by_response, by_block;
    const Eigen::MatrixXd Dr(by_response.assemble(contacts, ops, joints.articulation,
                                                  joints.jointed, call.respond, y).D);
    const Eigen::MatrixXd Db(by_block
                                 .assemble(contacts, ops, joints.articulation, joints.jointed,
                                           call.respond, y, &call.block)
                                 .D);
    const Eigen::MatrixXd MJ = dense_joint_inverse(joints, ops);
    const Eigen::MatrixXd G = dense_contact_gradients(contacts, 9);
    const Eigen::MatrixXd D = G * MJ * G.transpose();
    EXPECT_LT((Db - D).lpNorm<Eigen::Infinity>() / D.lpNorm<Eigen::Infinity>(), 1e-10)
        << "seed " << seed;
    EXPECT_LT((Db - Dr).lpNorm<Eigen::Infinity>() / D.lpNorm<Eigen::Infinity>(), 1e-10)
        << "seed " << seed;
    EXPECT_GE(call.blocks, 1);
    EXPECT_LE(call.blocks, 2);  // the chain's and the tree's (the free body has no joints)
  }
}

// Rows in several clusters (articulations no row joins: within the chain, within the tree,
// the free body against the world) are solved one cluster after the other when D comes by
// articulation blocks. The multipliers and the increment match the dense KKT + LCP reference
// and the solve of the whole problem at once (by responses), with screening on and off.
TEST(ContactSchur, ClustersSolvedApartMatchTheDenseReference) {
  for (int seed = 1; seed <= 6; ++seed) {
    std::mt19937 rng(300 + seed);
    TestBodies ops(9, rng);
    Joints joints;
    build_joints(joints, ops, rng);
    // Points 0, 3, 6: chain bodies; 1, 4, 7: tree bodies; 2, 5, 8: the free body and the world.
    ContactRows contacts = random_contacts(rng, 9, 4, 0.5);
    for (int k = 0; k < 9; ++k) {
      for (int t = 0; t < 3; ++t) {
        const int r = 3 * k + t;
        if (k % 3 == 1) {
          contacts.a[r] += 4;
          contacts.b[r] += 4;
        } else if (k % 3 == 2) {
          contacts.a[r] = 8;
          contacts.b[r] = -1;
          contacts.gb[r].setZero();
        }
      }
    }
    std::uniform_real_distribution<double> u(-1e-3, 1e-3);
    std::vector<Vec12> y(9);
    for (auto& v : y) v = Vec12::NullaryExpr([&] { return u(rng); });
    Callbacks call(joints, ops);
    // Dense reference: K = D + alpha, b = C + G_c y, the same friction model.
    const Eigen::MatrixXd MJ = dense_joint_inverse(joints, ops);
    const Eigen::MatrixXd G = dense_contact_gradients(contacts, 9);
    Eigen::VectorXd yv(12 * 9);
    for (int i = 0; i < 9; ++i) yv.segment<12>(12 * i) = y[i];
    ContactLcp dense;
    dense.D = (G * MJ * G.transpose()).sparseView();
    dense.alpha = Eigen::Map<const Eigen::VectorXd>(contacts.alpha.data(), contacts.size());
    dense.b = Eigen::Map<const Eigen::VectorXd>(contacts.value.data(), contacts.size()) + G * yv;
    dense.mu = contacts.mu;
    LcpOptions converged;  // friction rounds to their fixed point: one answer to compare
    converged.max_rounds = 200;
    converged.bound_tolerance = 1e-12;
    Eigen::VectorXd ref = Eigen::VectorXd::Zero(contacts.size());
    solve_contact_lcp(dense, ref, converged);
    const Eigen::VectorXd dy_ref = MJ * G.transpose() * ref;
    int pushing = 0;
    for (int k = 0; k < 9; ++k) pushing += ref[3 * k] < 0;
    ASSERT_GT(pushing, 1) << "seed " << seed;

    ContactSchur whole;
    Eigen::VectorXd whole_lambda;
    std::vector<Vec12> whole_dy;
    whole.solve(contacts, ops, joints.articulation, joints.jointed, call.respond, y,
                whole_lambda, whole_dy, nullptr, converged);
    for (bool screening : {false, true}) {
      ContactSchur schur;
      schur.set_screening(screening);
      Eigen::VectorXd lambda;
      std::vector<Vec12> dy;
      const LcpResult result =
          schur.solve(contacts, ops, joints.articulation, joints.jointed, call.respond, y, lambda,
                      dy, nullptr, converged, &call.block);
      EXPECT_GE(call.blocks, 2) << "seed " << seed;  // the chain's cluster and the tree's
      EXPECT_TRUE(result.exact) << "seed " << seed;
      if (!screening) {  // the last cluster's 3 points (a working set may hold fewer)
        EXPECT_EQ(schur.problem().size(), 9) << "seed " << seed;
      }
      Eigen::VectorXd dyv(12 * 9), whole_dyv(12 * 9);
      for (int i = 0; i < 9; ++i) {
        dyv.segment<12>(12 * i) = dy[i];
        whole_dyv.segment<12>(12 * i) = whole_dy[i];
      }
      EXPECT_LT(rel(lambda, ref), 1e-8) << "seed " << seed << " screening " << screening;
      EXPECT_LT(rel(dyv, dy_ref), 1e-8) << "seed " << seed << " screening " << screening;
      EXPECT_LT(rel(lambda, whole_lambda), 1e-8) << "seed " << seed;
      EXPECT_LT(rel(dyv, whole_dyv), 1e-8) << "seed " << seed;
    }
  }
}

/// Enumeration of the box-constrained QP min 1/2 l^T K l - b^T l, lo <= l <= hi (K positive
/// definite): each row free or at one of its finite bounds; the consistent choice is the
/// solution (rows with lo == hi: fixed).
Eigen::VectorXd enumerate_boxes(const Eigen::MatrixXd& K, const Eigen::VectorXd& b,
                                const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) {
  const int n = static_cast<int>(b.size());
  std::vector<int> choice(n, 0);  // 0 free, 1 at lo, 2 at hi
  auto options = [&](int r) {
    return lo[r] == hi[r] ? 1 : 1 + std::isfinite(lo[r]) + std::isfinite(hi[r]);
  };
  while (true) {
    Eigen::VectorXd l = Eigen::VectorXd::Zero(n);
    std::vector<int> free;
    for (int r = 0; r < n; ++r) {
      const int c = lo[r] == hi[r] ? 1
                    : choice[r] == 0 ? 0
                                     : (choice[r] == 1 && std::isfinite(lo[r]) ? 1 : 2);
      if (c == 0) free.push_back(r);
      if (c == 1) l[r] = lo[r];
      if (c == 2) l[r] = hi[r];
    }
    if (!free.empty()) {
      Eigen::MatrixXd Kf(free.size(), free.size());
      Eigen::VectorXd bf(free.size());
      for (std::size_t i = 0; i < free.size(); ++i) {
        bf[i] = b[free[i]] - K.row(free[i]).dot(l);
        for (std::size_t k = 0; k < free.size(); ++k) Kf(i, k) = K(free[i], free[k]);
      }
      const Eigen::VectorXd x = Kf.ldlt().solve(bf);
      for (std::size_t i = 0; i < free.size(); ++i) l[free[i]] = x[i];
    }
    const Eigen::VectorXd w = b - K * l;
    bool ok = true;
    for (int r = 0; r < n && ok; ++r) {
      const double tol = 1e-9 * (1 + std::abs(l[r]));
      if (l[r] < lo[r] - tol || l[r] > hi[r] + tol) ok = false;
      const double scale = 1e-12 * (1 + std::abs(b[r]));
      if (std::abs(l[r] - lo[r]) <= tol && l[r] < hi[r] - tol && w[r] > scale) ok = false;
      if (std::abs(l[r] - hi[r]) <= tol && l[r] > lo[r] + tol && w[r] < -scale) ok = false;
      if (l[r] > lo[r] + tol && l[r] < hi[r] - tol && std::abs(w[r]) > 1e-9 * (1 + std::abs(b[r]))) {
        ok = false;
      }
    }
    if (ok) return l;
    int r = 0;
    while (r < n && ++choice[r] == options(r)) choice[r++] = 0;
    if (r == n) break;
  }
  ADD_FAILURE() << "no consistent set";
  return Eigen::VectorXd::Zero(n);
}

// Joint limits and force-limited drives solved with the contacts (pair_contact.cpp): extra
// rows with fixed bounds after the points, the response on the joints' equality rows, and
// the increment y already carrying the extra rows' multipliers of the joint solve ("applied").
// The same as the dense complementarity problem over every row with y free of them.
TEST(ContactSchur, BoundedJointRowsWithTheContactsMatchTheDenseReference) {
  for (int seed = 1; seed <= 6; ++seed) {
    std::mt19937 rng(100 + seed);
    TestBodies ops(9, rng);
    Joints joints;
    build_joints(joints, ops, rng);
    ContactRows rows = random_contacts(rng, 4, 9, 0.0);
    const int nc = rows.size();
    // Two limits (push only) and two drives (|lambda| <= F) on jointed bodies, some on the
    // world side.
    std::uniform_real_distribution<double> u(-0.5, 0.5), pos(0, 1);
    const std::vector<std::pair<int, int>> sides = {{1, 2}, {5, -1}, {0, 3}, {6, 7}};
    for (int e = 0; e < 4; ++e) {
      const auto [a, b] = sides[e];
      const Vec3 d = Vec3(u(rng), u(rng), u(rng)).normalized();
      rows.ga.push_back(grad_point(Vec3(u(rng), u(rng), u(rng)), d));
      rows.gb.push_back(b >= 0 ? Vec12(-grad_point(Vec3(u(rng), u(rng), u(rng)), d))
                               : Vec12(Vec12::Zero()));
      rows.a.push_back(a);
      rows.b.push_back(b);
      rows.alpha.push_back(1e-7 * (0.1 + pos(rng)));
      rows.value.push_back(2e-3 * u(rng));
      const bool limit = e < 2;
      rows.extra_lo.push_back(limit ? -std::numeric_limits<double>::infinity() : -5.0);
      rows.extra_hi.push_back(limit ? 0.0 : 5.0);
    }
    const int n = rows.size();
    // y0: the increment without the extra rows; y: with their joint-solve multipliers.
    std::uniform_real_distribution<double> uy(-1e-3, 1e-3);
    std::vector<Vec12> y0(9);
    for (auto& v : y0) v = Vec12::NullaryExpr([&] { return uy(rng); });
    const Eigen::MatrixXd MJ = dense_joint_inverse(joints, ops);
    const Eigen::MatrixXd G = dense_contact_gradients(rows, 9);
    Eigen::VectorXd applied = Eigen::VectorXd::Zero(n);
    for (int e = 0; e < n - nc; ++e) applied[nc + e] = e < 2 ? -5 * pos(rng) : 8 * u(rng);
    Eigen::VectorXd y0v(12 * 9);
    for (int i = 0; i < 9; ++i) y0v.segment<12>(12 * i) = y0[i];
    const Eigen::VectorXd yv = y0v - MJ * G.transpose() * applied;
    std::vector<Vec12> y(9);
    for (int i = 0; i < 9; ++i) y[i] = yv.segment<12>(12 * i);

    TreeResponse response;
    response.joints = &joints;
    response.ops = &ops;
    ASSERT_TRUE(response.tree.prepare(joints.topology));
    ContactSchur schur;
    Eigen::VectorXd lambda = applied;
    std::vector<Vec12> dy;
    const LcpResult result = schur.solve(
        rows, ops, joints.articulation, joints.jointed,
        [&](std::vector<Vec12>& z, std::vector<std::uint32_t>& touched) { response(z, touched); },
        y, lambda, dy, &applied);
    EXPECT_TRUE(result.exact) << "seed " << seed;

    // Dense: every row, b from y0.
    Eigen::MatrixXd K = G * MJ * G.transpose();
    for (int r = 0; r < n; ++r) K(r, r) += rows.alpha[r];
    const Eigen::VectorXd b = Eigen::Map<const Eigen::VectorXd>(rows.value.data(), n) + G * y0v;
    Eigen::VectorXd lo(n), hi(n);
    for (int r = 0; r < nc; ++r) {
      const bool normal = r % 3 == 0;  // frictionless: tangents fixed at 0
      lo[r] = normal ? -std::numeric_limits<double>::infinity() : 0.0;
      hi[r] = 0.0;
    }
    for (int e = 0; e < n - nc; ++e) {
      lo[nc + e] = rows.extra_lo[e];
      hi[nc + e] = rows.extra_hi[e];
    }
    const Eigen::VectorXd ref = enumerate_boxes(K, b, lo, hi);
    EXPECT_LT(rel(lambda, ref), 1e-8) << "seed " << seed;
    const Eigen::VectorXd dy_ref = MJ * G.transpose() * (ref - applied);
    Eigen::VectorXd dyv(12 * 9);
    for (int i = 0; i < 9; ++i) dyv.segment<12>(12 * i) = dy[i];
    EXPECT_LT(rel(dyv, dy_ref), 1e-8) << "seed " << seed;
    // The extra rows take each of their states somewhere over the seeds (printed).
    std::printf("seed %d: limits %.3g %.3g, drives %.3g %.3g (bound 5)\n", seed, ref[nc],
                ref[nc + 1], ref[nc + 2], ref[nc + 3]);
  }
}

TEST(ContactSchur, RowsOnDisjointArticulationsShareAResponse) {
  std::mt19937 rng(11);
  TestBodies ops(9, rng);
  Joints joints;
  build_joints(joints, ops, rng);
  // Two points: one within the chain, one between the tree and the free body.
  ContactRows c;
  for (const auto& [a, b] : {std::pair{0, 2}, std::pair{5, 8}}) {
    c.mu.push_back(0);
    for (int t = 0; t < 3; ++t) {
      const Vec3 d = Vec3::Unit(t);
      c.ga.push_back(grad_point(Vec3(0.1, 0, 0), d));
      c.gb.push_back(-grad_point(Vec3(-0.1, 0, 0), d));
      c.a.push_back(a);
      c.b.push_back(b);
      c.alpha.push_back(1e-6);
      c.value.push_back(-1e-3);
    }
  }
  ContactSchur schur;
  Eigen::VectorXd lambda;
  std::vector<Vec12> dy;
  const std::vector<Vec12> y(9, Vec12::Zero());
  solve_over_tree(schur, c, ops, joints, y, lambda, dy);
  // Six rows, three groups of two (one row of each point), and one response for dy.
  EXPECT_EQ(schur.responses(), 4);
}

// ---- The complementarity solver on its own -------------------------------------------------

/// D = J J^T of rank below n = 3 points (coplanar contacts make it singular; by default n - 4),
/// plus compliance.
ContactLcp random_lcp(std::mt19937& rng, int points, double mu, int rank = 0) {
  std::uniform_real_distribution<double> u(-1, 1), pos(0, 1);
  const int n = 3 * points;
  const int cols = rank > 0 ? rank : std::max(3, n - 4);
  const Eigen::MatrixXd J = Eigen::MatrixXd::NullaryExpr(n, cols, [&] { return u(rng); });
  ContactLcp p;
  p.D = (J * J.transpose()).sparseView();
  p.alpha = Eigen::VectorXd::NullaryExpr(n, [&] { return 1e-3 * (0.1 + pos(rng)); });
  p.b = Eigen::VectorXd::NullaryExpr(n, [&] { return u(rng); });
  p.mu.assign(points, mu);
  return p;
}

/// The reference of the active-set loops: the problem solved by sweeps alone, run long to a
/// tight tolerance (each round's QP has one solution, which they approach).
Eigen::VectorXd long_sweeps(const ContactLcp& p, LcpOptions options) {
  options.max_sweeps = 200000;
  options.tolerance = 1e-14;
  options.max_pivots = 0;
  Eigen::VectorXd ref;
  solve_contact_lcp(p, ref, options);
  return ref;
}

TEST(ContactLcp, FrictionlessMatchesEnumeration) {
  for (int seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    const ContactLcp p = random_lcp(rng, 6, 0.0);
    Eigen::MatrixXd K = Eigen::MatrixXd(p.D);
    K.diagonal() += p.alpha;
    const Eigen::VectorXd ref = enumerate_normals(K, p.b);
    Eigen::VectorXd lambda;
    const LcpResult r = solve_contact_lcp(p, lambda);
    EXPECT_TRUE(r.exact) << "seed " << seed;
    EXPECT_LT(rel(lambda, ref), 1e-9) << "seed " << seed;
  }
}

/// The friction problem's conditions at lambda (friction coefficient mu at every point),
/// to a relative tolerance of 1e-9 of the largest force.
void expect_friction_conditions(const ContactLcp& p, const Eigen::VectorXd& lambda, double mu,
                                int seed) {
  Eigen::MatrixXd K = Eigen::MatrixXd(p.D);
  K.diagonal() += p.alpha;
  const Eigen::VectorXd w = p.b - K * lambda;
  const double scale = lambda.lpNorm<Eigen::Infinity>();
  for (int k = 0; k < p.points(); ++k) {
    const double ln = lambda[3 * k], wn = w[3 * k];
    EXPECT_LE(ln, 1e-12 * scale) << "seed " << seed;
    EXPECT_GE(wn * K(3 * k, 3 * k), -1e-9 * scale) << "seed " << seed;  // no penetration
    EXPECT_LE(std::abs(ln * wn) * K(3 * k, 3 * k), 1e-9 * scale * scale)  // complementary
        << "seed " << seed;
    for (int t = 1; t <= 2; ++t) {
      const double lt = lambda[3 * k + t], wt = w[3 * k + t], B = mu * -ln;
      EXPECT_LE(std::abs(lt), B * (1 + 1e-5) + 1e-12 * scale)  // inside the pyramid
          << "seed " << seed;
      // (The bounds follow the normal forces to LcpOptions::bound_tolerance, 1e-6.)
      if (std::abs(lt) < B * (1 - 1e-5)) {
        EXPECT_LE(std::abs(wt) * K(3 * k + t, 3 * k + t), 1e-9 * scale)  // sticks
            << "seed " << seed;
      } else if (B > 0) {
        EXPECT_GE(lt * wt, -1e-9 * scale * scale) << "seed " << seed;  // opposes the slip
      }
    }
  }
}

TEST(ContactLcp, FrictionSolutionMeetsItsConditions) {
  for (int seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    const ContactLcp p = random_lcp(rng, 6, 0.4);
    Eigen::VectorXd lambda;
    LcpOptions options;
    options.max_rounds = 40;  // to the fixed point of the bounds (a step stops sooner)
    const LcpResult r = solve_contact_lcp(p, lambda, options);
    EXPECT_TRUE(r.exact) << "seed " << seed;
    EXPECT_EQ(r.bound_change, 0) << "seed " << seed;  // bounds follow the final normals
    expect_friction_conditions(p, lambda, 0.4, seed);
  }
}

// A large group without pivots sweeps once with each point's friction bounds following its
// normal force inside the sweeps (no rounds): run long, the sweeps end on the friction
// problem's solution, its conditions met as the exact rounds meet them.
TEST(ContactLcp, LargeGroupSweepsFollowTheNormalForcesToTheFrictionSolution) {
  for (int seed = 1; seed <= 10; ++seed) {
    std::mt19937 rng(seed);
    const ContactLcp p = random_lcp(rng, 12, 0.4);
    LcpOptions options;
    options.large_group_rows = 30;  // 36 rows: large
    options.pivot_large_groups = false;
    options.follow_sweeps = 200000;
    options.tolerance = 1e-15;
    Eigen::VectorXd lambda;
    const LcpResult r = solve_contact_lcp(p, lambda, options);
    EXPECT_EQ(r.pivots, 0) << "seed " << seed;
    EXPECT_EQ(r.rounds, 1) << "seed " << seed;
    EXPECT_EQ(r.bound_change, 0) << "seed " << seed;
    EXPECT_LT(r.residual, 1e-9 * lambda.lpNorm<Eigen::Infinity>()) << "seed " << seed;
    expect_friction_conditions(p, lambda, 0.4, seed);
  }
}

// The active-set loop alone (no sweeps), from a cold start, on stiff problems of 40 points
// (compliance 1e-6 m/N against D ~ 1): it ends at the exact solution, which a long run of
// sweeps approaches (frictionless: the QP's solution is unique, K being positive definite).
TEST(ContactLcp, ActiveSetLoopEndsWithoutSweeps) {
  for (int seed = 1; seed <= 10; ++seed) {
    std::mt19937 rng(seed);
    ContactLcp p = random_lcp(rng, 40, 0.0);
    p.alpha *= 1e-3;
    LcpOptions pivots_only;
    pivots_only.max_sweeps = 0;
    pivots_only.max_pivots = 400;
    Eigen::VectorXd lambda;
    const LcpResult r = solve_contact_lcp(p, lambda, pivots_only);
    EXPECT_TRUE(r.exact) << "seed " << seed << ", " << r.pivots << " pivots";
    EXPECT_LT(r.residual, 1e-9 * lambda.lpNorm<Eigen::Infinity>()) << "seed " << seed;
    EXPECT_LT(rel(lambda, long_sweeps(p, LcpOptions())), 1e-6) << "seed " << seed;
  }
}

// The sweeps stop once the sets hold still and a few pivots from those sets end the solve: on
// stiff problems of 40 points, far fewer sweeps than the budget, and the exact solution.
TEST(ContactLcp, SweepsEndOnceTheSetsHoldStill) {
  int sweeps = 0;
  for (int seed = 1; seed <= 10; ++seed) {
    std::mt19937 rng(seed);
    ContactLcp p = random_lcp(rng, 40, 0.0);
    p.alpha *= 1e-3;
    const LcpOptions options;
    Eigen::VectorXd lambda;
    const LcpResult r = solve_contact_lcp(p, lambda, options);
    EXPECT_TRUE(r.exact) << "seed " << seed;
    EXPECT_LT(r.residual, 1e-9 * lambda.lpNorm<Eigen::Infinity>()) << "seed " << seed;
    sweeps += r.sweeps;
    LcpOptions pivots_only;
    pivots_only.max_sweeps = 0;
    pivots_only.max_pivots = 400;
    Eigen::VectorXd ref;
    solve_contact_lcp(p, ref, pivots_only);
    EXPECT_LT(rel(lambda, ref), 1e-9) << "seed " << seed;
  }
  std::printf("sweeps over the 10 problems: %d\n", sweeps);
  EXPECT_LT(sweeps, 10 * LcpOptions().max_sweeps / 2);
}

// The friction rounds after the first start from the last round's sets (the rows on a
// friction bound stay on it as it moves) and its factor: stiff problems of 20 points with
// friction take their sweeps in the first round only, and end where rounds of long sweeps
// alone end (each round's QP has one solution, so the rounds follow the same bounds).
TEST(ContactLcp, LaterFrictionRoundsStartFromTheLastSets) {
  int later_sweeps = 0, later_rounds = 0;
  for (int seed = 1; seed <= 10; ++seed) {
    std::mt19937 rng(seed);
    ContactLcp p = random_lcp(rng, 20, 0.5);
    p.alpha *= 1e-2;
    LcpOptions options;
    options.max_rounds = 40;
    LcpOptions first = options;
    first.max_rounds = 1;
    Eigen::VectorXd lambda, lambda1;
    const LcpResult r = solve_contact_lcp(p, lambda, options);
    const LcpResult r1 = solve_contact_lcp(p, lambda1, first);
    EXPECT_TRUE(r.exact) << "seed " << seed;
    EXPECT_EQ(r.bound_change, 0) << "seed " << seed;
    later_sweeps += r.sweeps - r1.sweeps;
    later_rounds += r.rounds - 1;
    EXPECT_LT(rel(lambda, long_sweeps(p, options)), 1e-6) << "seed " << seed;
  }
  std::printf("sweeps in %d rounds after the first: %d\n", later_rounds, later_sweeps);
  EXPECT_GT(later_rounds, 20);
  EXPECT_LT(later_sweeps, later_rounds * LcpOptions().max_sweeps / 10);
}

// Two uncoupled problems with their points interleaved in one: solved as two groups, each as
// it is alone (the same forces, the counts adding up, the rounds the most of either).
TEST(ContactLcp, UncoupledGroupsSolveAsAlone) {
  for (int seed = 1; seed <= 5; ++seed) {
    std::mt19937 rng(seed);
    const ContactLcp a = random_lcp(rng, 5, 0.4), b = random_lcp(rng, 7, 0.6);
    // Point k of the whole: a's points at even places up to 2 * 5, b's at the rest.
    std::vector<std::pair<int, int>> from;  // (problem, point)
    for (int k = 0, ka = 0, kb = 0; k < 12; ++k) {
      from.emplace_back((k % 2 == 0 && ka < 5) || kb == 7 ? 0 : 1, 0);
      from.back().second = from.back().first == 0 ? ka++ : kb++;
    }
    ContactLcp whole;
    whole.alpha.resize(36);
    whole.b.resize(36);
    std::vector<Eigen::Triplet<double>> t;
    for (int k = 0; k < 12; ++k) {
      const ContactLcp& q = from[k].first == 0 ? a : b;
      whole.mu.push_back(q.mu[from[k].second]);
      for (int l = 0; l < 12; ++l) {
        if (from[l].first != from[k].first) continue;
        for (int i = 0; i < 3; ++i) {
          for (int j = 0; j < 3; ++j) {
            t.emplace_back(3 * k + i, 3 * l + j,
                           q.D.coeff(3 * from[k].second + i, 3 * from[l].second + j));
          }
        }
      }
      for (int i = 0; i < 3; ++i) {
        whole.alpha[3 * k + i] = q.alpha[3 * from[k].second + i];
        whole.b[3 * k + i] = q.b[3 * from[k].second + i];
      }
    }
    whole.D.resize(36, 36);
    whole.D.setFromTriplets(t.begin(), t.end());
    Eigen::VectorXd la, lb, lw;
    const LcpResult ra = solve_contact_lcp(a, la), rb = solve_contact_lcp(b, lb);
    const LcpResult rw = solve_contact_lcp(whole, lw);
    for (int k = 0; k < 12; ++k) {
      const Eigen::VectorXd& alone = from[k].first == 0 ? la : lb;
      for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(lw[3 * k + i], alone[3 * from[k].second + i]) << "seed " << seed;
      }
    }
    EXPECT_EQ(rw.sweeps, ra.sweeps + rb.sweeps);
    EXPECT_EQ(rw.pivots, ra.pivots + rb.pivots);
    EXPECT_EQ(rw.rounds, std::max(ra.rounds, rb.rounds));
    EXPECT_EQ(rw.exact, ra.exact && rb.exact);
  }
}

// One friction round (the bounds from given normal forces) on 40 points of D's rank 30 (40
// points on five bodies: the redundant contacts of a stack of boxes), from a cold start without
// sweeps. Block pivoting alone cycled on 19 of these 20 boxes and returned its start (no
// sweeps here), 0.2 N from the box QP's conditions; the primal active-set loop behind it ends
// at the box QP's unique solution, which a long run of sweeps approaches.
TEST(ContactLcp, FrictionBoxEndsExactWhereBlockPivotingCycles) {
  for (int seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    const ContactLcp p = random_lcp(rng, 40, 0.5, 30);
    Eigen::VectorXd normals;  // the frictionless solution's normal forces give the bounds
    {
      ContactLcp frictionless = p;
      std::fill(frictionless.mu.begin(), frictionless.mu.end(), 0.0);
      solve_contact_lcp(frictionless, normals);
    }
    LcpOptions pivots_only;
    pivots_only.max_sweeps = 0;
    pivots_only.max_rounds = 1;
    Eigen::VectorXd lambda = normals;
    const LcpResult r = solve_contact_lcp(p, lambda, pivots_only);
    EXPECT_TRUE(r.exact) << "seed " << seed << ", " << r.pivots << " pivots";
    EXPECT_LT(r.residual, 1e-9 * lambda.lpNorm<Eigen::Infinity>()) << "seed " << seed;
    LcpOptions sweeps_only = pivots_only;
    sweeps_only.max_sweeps = 200000;
    sweeps_only.tolerance = 1e-14;
    sweeps_only.max_pivots = 0;
    Eigen::VectorXd ref = normals;
    solve_contact_lcp(p, ref, sweeps_only);
    EXPECT_LT(rel(lambda, ref), 1e-6) << "seed " << seed;
  }
}

// A large group (here of more than 600 rows: 210 redundant points, D of rank 150, all coupled)
// on which block pivoting fails: the loop runs in one friction round only (the rest keep to
// the sweeps), and a solve told that such a group failed earlier in its step
// (pivot_large_groups off) takes no pivot and ends on the sweeps' multipliers to the bit.
// Under the default size (2,000 rows) the same group tries the loop in every round.
TEST(ContactLcp, LargeGroupsThatFailTheirActiveSetLoopKeepToTheSweeps) {
  int failed = 0;
  for (int seed = 1; seed <= 3; ++seed) {
    std::mt19937 rng(seed);
    const ContactLcp p = random_lcp(rng, 210, 1.0, 150);
    LcpOptions options;
    options.large_group_rows = 600;  // 630 rows: large (the default keeps them to pivoting)
    Eigen::VectorXd tried;
    const LcpResult with_loop = solve_contact_lcp(p, tried, options);
    if (!with_loop.large_failed) continue;
    ++failed;
    EXPECT_FALSE(with_loop.exact) << "seed " << seed;
    // The round whose loop failed (after a frictionless first round where nothing pushed
    // yet), then one run of sweeps whose bounds follow the normal forces.
    EXPECT_LE(with_loop.rounds, 3) << "seed " << seed;
    EXPECT_LE(with_loop.pivots, LcpOptions{}.max_pivots) << "seed " << seed;
    Eigen::VectorXd every_round;
    const LcpResult by_default = solve_contact_lcp(p, every_round);
    EXPECT_FALSE(by_default.large_failed) << "seed " << seed;
    EXPECT_GT(by_default.pivots, LcpOptions{}.max_pivots) << "seed " << seed;
    LcpOptions skip = options;
    skip.pivot_large_groups = false;
    Eigen::VectorXd kept;
    const LcpResult without = solve_contact_lcp(p, kept, skip);
    EXPECT_EQ(without.pivots, 0) << "seed " << seed;
    EXPECT_FALSE(without.large_failed) << "seed " << seed;
    LcpOptions sweeps = skip;
    sweeps.max_pivots = 0;
    Eigen::VectorXd swept;
    solve_contact_lcp(p, swept, sweeps);
    EXPECT_EQ((kept - swept).lpNorm<Eigen::Infinity>(), 0.0) << "seed " << seed;
    // Both push only.
    for (int k = 0; k < p.points(); ++k) {
      EXPECT_LE(tried[3 * k], 0.0);
      EXPECT_LE(kept[3 * k], 0.0);
    }
  }
  EXPECT_GT(failed, 0) << "no seed made block pivoting fail: the test checks nothing";
}

}  // namespace
}  // namespace mabd::detail
