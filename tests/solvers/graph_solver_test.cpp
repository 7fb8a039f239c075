// The iterative dual solver (block-Jacobi PCG) on joint graphs with many loops: run to a tight
// tolerance it returns the step of the sparse Cholesky solver; when it cannot converge the step
// falls back to the sparse solver with one warning; warm starts pay off on a steady scene.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "mabd/mabd.h"

namespace mabd {
namespace {

struct Built {
  World world;
  std::vector<BodyId> bodies;
  std::vector<JointId> joints;
  int rows = 0, cols = 0, pins = 0;
};

class Rand {
 public:
  explicit Rand(unsigned seed) : rng_(seed) {}
  double u() { return u_(rng_); }
  double in(double lo, double hi) { return lo + (hi - lo) * u(); }
  int pick(int n) { return std::min(n - 1, static_cast<int>(u() * n)); }
  Vec3 vec() { return Vec3(u() - 0.5, u() - 0.5, u() - 0.5); }

 private:
  std::mt19937 rng_;
  std::uniform_real_distribution<double> u_{0, 1};
};

/// A rows x cols net of boxes (3..6 each way) in the x-y plane, ball joints between
/// neighbours, random masses, a few bodies pinned to the world (or none).
Built random_net(unsigned seed, const WorldSettings& settings) {
  Rand r(seed);
  Built b{World(settings), {}, {}};
  b.rows = 3 + r.pick(4);
  b.cols = 3 + r.pick(4);
  const double h = 0.3;
  auto id = [&](int i, int k) { return b.bodies[i * b.cols + k]; };
  for (int i = 0; i < b.rows; ++i) {
    for (int k = 0; k < b.cols; ++k) {
      BodyDef d;
      d.name = "n" + std::to_string(i) + "_" + std::to_string(k);
      d.shape.size = Vec3(r.in(0.15, 0.25), r.in(0.15, 0.25), r.in(0.03, 0.06));
      d.material = {r.in(300, 3000), 1e8 * r.in(1, 10), 0.3};
      if (r.u() < 0.3) d.mass = r.in(0.2, 5);
      d.position = Vec3(h * k, h * i, 0) + 0.02 * r.vec();
      d.orientation = Quat(Eigen::AngleAxisd(0.1 * r.u(), Vec3(r.vec()).normalized()));
      d.linear_velocity = 0.3 * r.vec();
      d.angular_velocity = 0.5 * r.vec();
      b.bodies.push_back(b.world.add_body(d));
    }
  }
  JointDef j;
  j.type = JointType::Ball;
  auto join = [&](BodyId a, BodyId c) {
    j.body_a = a;
    j.body_b = c;
    j.anchor = 0.5 * (b.world.pose(a).position + b.world.pose(c).position);
    b.joints.push_back(b.world.add_joint(j));
  };
  for (int i = 0; i < b.rows; ++i) {
    for (int k = 0; k < b.cols; ++k) {
      if (k + 1 < b.cols) join(id(i, k), id(i, k + 1));
      if (i + 1 < b.rows) join(id(i, k), id(i + 1, k));
    }
  }
  // Pins at distinct bodies: none (free net) or one to four.
  const int pins = r.u() < 0.2 ? 0 : 1 + r.pick(4);
  std::vector<char> pinned(b.bodies.size(), 0);
  for (int p = 0; p < pins; ++p) {
    const int body = r.pick(static_cast<int>(b.bodies.size()));
    if (pinned[body]) continue;
    pinned[body] = 1;
    j.body_a = BodyId{};
    j.body_b = b.bodies[body];
    j.anchor = b.world.pose(b.bodies[body]).position + 0.05 * r.vec();
    b.joints.push_back(b.world.add_joint(j));
    ++b.pins;
  }
  return b;
}

WorldSettings settings_for(DualSolverKind solver) {
  WorldSettings s;
  s.dt = 1e-2;
  s.solver = solver;
  return s;
}

TEST(GraphSolver, IterativeMatchesTheSparseSolverOnRandomNets) {
  double worst_q = 0, worst_f = 0, worst_res = 0;
  unsigned worst_q_seed = 0;
  int fewest = INT32_MAX, most = 0;
  for (unsigned seed = 1; seed <= 30; ++seed) {
    WorldSettings it = settings_for(DualSolverKind::Iterative);
    it.dual_tolerance = 1e-13;
    it.dual_max_iterations = 20000;
    Built iter = random_net(seed, it);
    Built sparse = random_net(seed, settings_for(DualSolverKind::Sparse));
    // One component whose independent cycles are the cells of the net (plus the extra pins).
    const auto topo = iter.world.topology();
    ASSERT_EQ(topo.size(), 1u) << "seed " << seed;
    EXPECT_EQ(topo[0].loops, static_cast<std::size_t>((iter.rows - 1) * (iter.cols - 1) +
                                                      std::max(0, iter.pins - 1)))
        << "seed " << seed;
    for (int step = 0; step < 5; ++step) {
      iter.world.step();
      sparse.world.step();
      const StepStats& st = iter.world.last_step();
      ASSERT_STREQ(st.solver, "iterative") << "seed " << seed << " step " << step + 1;
      ASSERT_STREQ(sparse.world.last_step().solver, "sparse") << "seed " << seed;
      EXPECT_GT(st.dual_iterations, 0) << "seed " << seed << " step " << step + 1;
      EXPECT_LE(st.dual_residual, 1e-13) << "seed " << seed << " step " << step + 1;
      worst_res = std::max(worst_res, st.dual_residual);
      fewest = std::min(fewest, st.dual_iterations);
      most = std::max(most, st.dual_iterations);
    }
    EXPECT_TRUE(iter.world.warnings().empty()) << "seed " << seed << ": " << iter.world.warnings()[0];
    double dq = 0, df = 0;
    for (std::size_t i = 0; i < iter.bodies.size(); ++i) {
      const Vec12 a = iter.world.coordinates(iter.bodies[i]);
      const Vec12 b = sparse.world.coordinates(sparse.bodies[i]);
      dq = std::max(dq, (a - b).norm() / std::max(1.0, b.norm()));
    }
    for (std::size_t k = 0; k < iter.joints.size(); ++k) {
      const Vec3 fa = iter.world.joint_wrench(iter.joints[k]).force;
      const Vec3 fb = sparse.world.joint_wrench(sparse.joints[k]).force;
      df = std::max(df, (fa - fb).norm() / std::max(1.0, fb.norm()));
    }
    EXPECT_LE(dq, 1e-9) << "seed " << seed << " (" << iter.rows << "x" << iter.cols << ", "
                        << iter.pins << " pins)";
    if (dq > worst_q) worst_q = dq, worst_q_seed = seed;
    worst_f = std::max(worst_f, df);
  }
  std::printf("  largest relative difference of q after 5 steps: %.3e (seed %u); of the joint "
              "forces: %.3e\n", worst_q, worst_q_seed, worst_f);
  std::printf("  iterative solves: %d to %d iterations, largest residual %.3e\n", fewest, most,
              worst_res);
}

TEST(GraphSolver, WithoutConvergenceTheStepFallsBackToTheSparseSolver) {
  for (unsigned seed : {3u, 8u, 13u}) {
    WorldSettings it = settings_for(DualSolverKind::Iterative);
    it.dual_tolerance = 1e-13;
    it.dual_max_iterations = 1;
    Built iter = random_net(seed, it);
    Built sparse = random_net(seed, settings_for(DualSolverKind::Sparse));
    for (int step = 0; step < 5; ++step) {
      ASSERT_NO_THROW(iter.world.step()) << "seed " << seed;
      sparse.world.step();
      EXPECT_STREQ(iter.world.last_step().solver, "sparse") << "seed " << seed << " step " << step + 1;
      EXPECT_EQ(iter.world.last_step().dual_iterations, 1) << "seed " << seed;
      EXPECT_GT(iter.world.last_step().dual_residual, 1e-13) << "seed " << seed;
    }
    int mentions = 0;
    for (const std::string& w : iter.world.warnings()) {
      if (w.find("iterative") != std::string::npos) {
        ++mentions;
        std::printf("  seed %u warning: %s\n", seed, w.c_str());
      }
    }
    EXPECT_EQ(mentions, 1) << "seed " << seed;
    // The fallback is the sparse solve itself.
    double dq = 0;
    for (std::size_t i = 0; i < iter.bodies.size(); ++i) {
      const Vec12 a = iter.world.coordinates(iter.bodies[i]);
      const Vec12 b = sparse.world.coordinates(sparse.bodies[i]);
      dq = std::max(dq, (a - b).norm() / std::max(1.0, b.norm()));
    }
    std::printf("  seed %u: largest relative difference of q to the sparse solver: %.3e\n", seed, dq);
    EXPECT_LE(dq, 1e-9) << "seed " << seed;
  }
}

TEST(GraphSolver, AutoTakesTheIterativeSolverForLargeGraphsWithoutContact) {
  // Graphs only, at least 24,000 joint rows, no contact: the iterative solver (measured faster
  // than the sparse one on net_50 and net_100); with contact, or a smaller net, the sparse one.
  const auto choice = [](const std::string& name, ContactModel contact) {
    Scene scene = load_scene(std::string(MABD_SOURCE_DIR) + "/scenes/" + name);
    scene.settings.solver = DualSolverKind::Auto;
    scene.settings.contact.model = contact;
    World w = build_world(scene);
    const std::string planned = w.topology().at(0).solver;
    w.step();
    EXPECT_EQ(planned, w.last_step().solver) << name;
    return planned;
  };
  EXPECT_EQ(choice("net_50.json", ContactModel::None), "iterative");
  EXPECT_EQ(choice("net_50.json", ContactModel::Penalty), "sparse");
  EXPECT_EQ(choice("net_20.json", ContactModel::None), "sparse");
}

TEST(GraphSolver, WarmStartsTakeFewerIterationsOnASteadyNet) {
  // A net hanging in the x-z plane from its top row, at rest: the multipliers barely change
  // from step to step. Implicit Euler damps the axial elastic vibration that the sudden load
  // of gravity starts in the undeformed net (about 50 Hz, only weakly damped by
  // generalized-alpha at this step size), so the net is steady within a few steps; it also
  // skips the consistent start, whose trial steps would warm-start step 1.
  WorldSettings s = settings_for(DualSolverKind::Iterative);
  s.time_integration = TimeIntegration::ImplicitEuler;
  s.dual_max_iterations = 20000;
  World w(s);
  const int rows = 5, cols = 5;
  const double h = 0.3;
  std::vector<BodyId> ids;
  for (int i = 0; i < rows; ++i) {
    for (int k = 0; k < cols; ++k) {
      BodyDef d;
      d.name = "n" + std::to_string(i) + "_" + std::to_string(k);
      d.shape.size = Vec3(0.2, 0.04, 0.2);
      d.position = Vec3(h * k, 0, -h * i);
      ids.push_back(w.add_body(d));
    }
  }
  JointDef j;
  auto at = [&](int i, int k) { return ids[i * cols + k]; };
  for (int i = 0; i < rows; ++i) {
    for (int k = 0; k < cols; ++k) {
      const Vec3 p = w.pose(at(i, k)).position;
      if (k + 1 < cols) {
        j.body_a = at(i, k);
        j.body_b = at(i, k + 1);
        j.anchor = p + Vec3(0.5 * h, 0, 0);
        w.add_joint(j);
      }
      if (i + 1 < rows) {
        j.body_a = at(i, k);
        j.body_b = at(i + 1, k);
        j.anchor = p - Vec3(0, 0, 0.5 * h);
        w.add_joint(j);
      }
      if (i == 0) {
        j.body_a = BodyId{};
        j.body_b = at(i, k);
        j.anchor = p + Vec3(0, 0, 0.5 * h);
        w.add_joint(j);
      }
    }
  }
  std::vector<int> iterations;
  for (int step = 0; step < 20; ++step) {
    w.step();
    ASSERT_STREQ(w.last_step().solver, "iterative") << "step " << step + 1;
    ASSERT_LE(w.last_step().dual_residual, s.dual_tolerance) << "step " << step + 1;
    iterations.push_back(w.last_step().dual_iterations);
  }
  std::printf("  iterations per step:");
  for (int n : iterations) std::printf(" %d", n);
  std::printf("\n");
  EXPECT_GT(iterations.front(), 0);
  EXPECT_LT(iterations.back(), iterations.front());
}

}  // namespace
}  // namespace mabd
