// The tree solver (leaf-to-root elimination of the dual system, Schur complement on loop
// joints) returns the same step as the general sparse solver and the chain solver, to
// round-off, on randomised trees, forests and trees with loops (all joint types, limits,
// springs, drives, compliance, joints to the world, static and kinematic bodies), and Auto
// picks the expected solver for each topology and each component.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mabd/mabd.h"

namespace mabd {
namespace {

struct Built {
  World world;
  std::vector<BodyId> bodies;  ///< every body, dynamic or not
  std::vector<JointId> joints;
  int loop_joints = 0;         ///< joints added between non-adjacent bodies of one tree
  int exact_loops = 0;         ///< of which ball joints without compliance
  int max_children = 0;        ///< largest number of child bodies of one body
};

class Rand {
 public:
  explicit Rand(unsigned seed) : rng_(seed) {}
  double u() { return u_(rng_); }                                      ///< [0, 1)
  double in(double lo, double hi) { return lo + (hi - lo) * u(); }
  int pick(int n) { return std::min(n - 1, static_cast<int>(u() * n)); }  ///< [0, n)
  Vec3 vec() { return Vec3(u() - 0.5, u() - 0.5, u() - 0.5); }
  Vec3 dir() {
    Vec3 v;
    do v = vec();
    while (v.norm() < 1e-2);
    return v.normalized();
  }

 private:
  std::mt19937 rng_;
  std::uniform_real_distribution<double> u_{0, 1};
};

BodyDef random_body(Rand& r, const std::string& name, const Vec3& position) {
  BodyDef d;
  d.name = name;
  switch (r.pick(4)) {
    case 0:
      d.shape.type = ShapeType::Box;
      d.shape.size = Vec3(r.in(0.05, 0.25), r.in(0.02, 0.1), r.in(0.02, 0.1));
      break;
    case 1:
      d.shape.type = ShapeType::Sphere;
      d.shape.radius = r.in(0.02, 0.08);
      break;
    case 2:
      d.shape.type = ShapeType::Capsule;
      d.shape.radius = r.in(0.015, 0.04);
      d.shape.length = r.in(0.05, 0.2);
      break;
    default:
      d.shape.type = ShapeType::Cylinder;
      d.shape.radius = r.in(0.015, 0.05);
      d.shape.length = r.in(0.05, 0.2);
      break;
  }
  d.material = {r.in(500, 3500), 1e8 * r.in(1, 10), r.in(0.2, 0.4)};
  if (r.u() < 0.3) d.mass = r.in(0.05, 5);
  d.position = position;
  d.orientation = Quat::FromTwoVectors(Vec3::UnitX(), r.dir());
  d.angular_velocity = r.vec();
  d.linear_velocity = 0.5 * r.vec();
  return d;
}

const JointType kTypes[] = {JointType::Ball, JointType::Hinge, JointType::Universal,
                            JointType::Prismatic, JointType::Fixed};

/// A random joint of `type` at `anchor`; `extras` allows limits, springs, drives, cones and
/// compliance.
JointDef random_joint(Rand& r, JointType type, BodyId a, BodyId b, const Vec3& anchor, bool extras) {
  JointDef j;
  j.type = type;
  j.body_a = a;
  j.body_b = b;
  j.anchor = anchor;
  j.axis = r.dir();
  j.axes[0] = r.dir();
  do j.axes[1] = r.dir();
  while (std::abs(j.axes[0].dot(j.axes[1])) > 0.9);
  if (!extras) return j;
  const bool coordinate = type == JointType::Hinge || type == JointType::Prismatic;
  const double x = r.u();
  if (coordinate && x < 0.3) {
    // Narrow ranges: the random initial twists drive them against a limit within a few steps.
    const double w = type == JointType::Hinge ? 0.01 : 0.001;
    j.limits = JointLimits{-w * r.u(), w * r.u()};
  } else if (coordinate && x < 0.45) {
    j.spring = JointSpring{r.in(1, 200), r.in(0, 2), r.in(-0.05, 0.05)};
  } else if (coordinate && x < 0.6) {
    // Targets near the initial coordinate (rad or m): a rigid drive reaches its target in
    // one step, so a far one would be an impulse no step size resolves.
    const double scale = type == JointType::Hinge ? 1.0 : 0.1;
    JointDrive d;
    if (r.u() < 0.5) {
      d.mode = DriveMode::Position;
      d.stiffness = r.u() < 0.3 ? 0 : r.in(1, 300);
      d.damping = r.u() < 0.5 ? 0 : r.in(0, 3);
      d.target = scale * (d.stiffness == 0 && d.damping == 0 ? 0.005 : 0.05) * r.in(-1, 1);
    } else {
      d.mode = DriveMode::Velocity;
      d.target = scale * r.in(-2, 2);
      d.damping = r.u() < 0.5 ? 0 : r.in(0.1, 3);
    }
    // Small force limits saturate (held at the bound), large ones do not.
    if (r.u() < 0.6) d.max_force = r.u() < 0.5 ? r.in(0.01, 0.5) : r.in(10, 100);
    j.drive = d;
  } else if (type == JointType::Ball && x < 0.15) {
    j.spring = JointSpring{r.in(0.1, 50), r.in(0, 1), 0};
  } else if (type == JointType::Ball && x < 0.25) {
    j.cone = ConeLimits{r.in(0.02, 0.3), std::nullopt, std::nullopt};
  }
  if (r.u() < 0.2) j.compliance = std::pow(10.0, r.in(-8, -5));
  return j;
}

struct ForestOptions {
  int trees = 1;
  int min_bodies = 2, max_bodies = 40;  ///< per tree
  int min_loops = 0, max_loops = 0;     ///< extra joints between non-adjacent bodies, per tree
  bool extras = true;                   ///< limits, springs, drives, compliance
  bool ball_springs = false;            ///< every tree joint a ball joint with an angular spring
};

/// Random trees: each new body attached to a random earlier one (with "hub" bodies collecting
/// 3-5 children), every tree free, pinned to the world by one or more joints, or attached to a
/// static or kinematic body; optionally extra loop joints inside each tree.
Built random_forest(unsigned seed, DualSolverKind solver, const ForestOptions& opt) {
  Rand r(seed);
  WorldSettings s;
  s.dt = 1e-2;
  s.solver = solver;
  Built b{World(s), {}, {}};
  auto add_body = [&](const BodyDef& d) {
    b.bodies.push_back(b.world.add_body(d));
    return b.bodies.back();
  };
  auto add_joint = [&](const JointDef& j) { b.joints.push_back(b.world.add_joint(j)); };
  for (int t = 0; t < opt.trees; ++t) {
    const std::string tag = "t" + std::to_string(t) + "_";
    const int n = opt.min_bodies + r.pick(opt.max_bodies - opt.min_bodies + 1);
    std::vector<BodyId> ids;
    std::vector<Vec3> at;
    std::vector<int> parent(n, -1), children(n, 0);
    std::vector<JointType> up(n, JointType::Fixed);  // type of the joint to the parent
    int hub = 0, hub_left = 3 + r.pick(3);
    for (int i = 0; i < n; ++i) {
      Vec3 p = Vec3(3.0 * t, 0, 0);
      if (i > 0) {
        int par;
        if (r.u() < 0.45) {
          par = hub;
          if (--hub_left == 0) {
            hub = r.pick(i + 1);  // a random body so far becomes the next hub
            hub_left = 3 + r.pick(3);
          }
        } else {
          par = r.pick(i);
        }
        parent[i] = par;
        ++children[par];
        p = at[par] + r.in(0.1, 0.3) * r.dir();
      }
      at.push_back(p);
      ids.push_back(add_body(random_body(r, tag + "b" + std::to_string(i), p)));
      if (i > 0) {
        const Vec3 anchor = 0.5 * (at[parent[i]] + p) + 0.02 * r.vec();
        const bool child_first = r.u() < 0.3;  // either side may be the first body
        up[i] = opt.ball_springs ? JointType::Ball : kTypes[r.pick(5)];
        JointDef j = random_joint(r, up[i], child_first ? ids[i] : ids[parent[i]],
                                  child_first ? ids[parent[i]] : ids[i], anchor, opt.extras);
        if (opt.ball_springs) j.spring = JointSpring{r.in(0.5, 50), r.in(0, 1), 0};
        add_joint(j);
      }
    }
    for (int c : children) b.max_children = std::max(b.max_children, c);
    // How the tree is held. The first joint to the ground is of any type, further ones are
    // ball joints at other bodies: a second rotation lock through the ground would repeat rows
    // of the first (a singular S, which the sparse solver only regularises).
    const double mode = r.u();
    int grounded = 0;
    std::vector<char> pinned(n, 0);
    const auto ground_joint = [&](BodyId ground, int body) {
      if (pinned[body]) return;
      pinned[body] = 1;
      const Vec3 anchor = at[body] + 0.05 * r.dir();
      const bool ground_first = r.u() < 0.5;
      const JointType type = grounded++ == 0 ? kTypes[r.pick(5)] : JointType::Ball;
      add_joint(random_joint(r, type, ground_first ? ground : ids[body],
                             ground_first ? ids[body] : ground, anchor, opt.extras));
    };
    if (mode < 0.25) {
      // free-floating
    } else if (mode < 0.5) {
      ground_joint(BodyId{}, 0);
    } else if (mode < 0.7) {
      const int pins = 2 + r.pick(3);
      for (int k = 0; k < pins; ++k) ground_joint(BodyId{}, r.pick(n));
    } else if (mode < 0.85) {
      BodyDef d = random_body(r, tag + "static", at[0] + Vec3(0, 0, 0.2));
      d.kind = BodyKind::Static;
      ground_joint(add_body(d), r.pick(n));
    } else {
      BodyDef d = random_body(r, tag + "kinematic", at[0] + Vec3(0, 0, 0.2));
      d.kind = BodyKind::Kinematic;
      ground_joint(add_body(d), 0);
    }
    // Some bodies also hang from a static body of their own.
    if (r.u() < 0.3) {
      const int body = r.pick(n);
      BodyDef d = random_body(r, tag + "post", at[body] + Vec3(0, 0.15, 0));
      d.kind = BodyKind::Static;
      ground_joint(add_body(d), body);
    }
    // Loop joints between non-adjacent bodies. The anchor is a world point between the two
    // bodies; both reference it in their current poses, so the joint starts satisfied.
    const int loops = opt.min_loops + r.pick(opt.max_loops - opt.min_loops + 1);
    std::set<std::pair<int, int>> used;
    for (int k = 0, tries = 0; k < loops && n >= 3 && tries < 1000; ++tries) {
      int i = r.pick(n), l = r.pick(n);
      if (i == l || parent[i] == l || parent[l] == i) continue;
      if (!used.insert({std::min(i, l), std::max(i, l)}).second) continue;
      const Vec3 anchor = 0.5 * (at[i] + at[l]) + 0.02 * r.vec();
      // Translational freedom at the loop anchor from the joints on the tree path between the
      // two bodies (rigid bodies, generic geometry): 2 per ball or universal joint (rotations
      // about a point), 1 per hinge or prismatic joint.
      int freedom = 0;
      {
        std::vector<int> up_i{i}, up_l{l};
        while (parent[up_i.back()] >= 0) up_i.push_back(parent[up_i.back()]);
        while (parent[up_l.back()] >= 0) up_l.push_back(parent[up_l.back()]);
        // Drop the common part above the lowest common ancestor (kept as the last entry).
        while (up_i.size() > 1 && up_l.size() > 1 &&
               up_i[up_i.size() - 2] == up_l[up_l.size() - 2]) {
          up_i.pop_back();
          up_l.pop_back();
        }
        for (const auto* path : {&up_i, &up_l}) {
          for (std::size_t e = 0; e + 1 < path->size(); ++e) {
            const JointType t = up[(*path)[e]];
            freedom += t == JointType::Ball || t == JointType::Universal ? 2
                       : t == JointType::Fixed                             ? 0
                                                                           : 1;
          }
        }
      }
      JointDef j;
      if (freedom >= 4 && r.u() < 0.7) {
        // A ball joint without compliance closing a path that leaves its anchor free to move
        // (3 rows, freedom 4 > 3): consistent even for rigid bodies, so S is well conditioned.
        // Closing a rigid path it would be held only by the bodies' elasticity: S nearly
        // singular.
        j = random_joint(r, JointType::Ball, ids[i], ids[l], anchor, false);
        ++b.exact_loops;
      } else {
        // Other types may repeat rotation rows of the tree path: compliant.
        j = random_joint(r, kTypes[r.pick(5)], ids[i], ids[l], anchor, opt.extras);
        j.compliance = std::pow(10.0, r.in(-7, -5));
      }
      add_joint(j);
      ++b.loop_joints;
      ++k;
    }
  }
  return b;
}

/// Largest differences between two worlds built alike.
struct Worst {
  double q = 0, force = 0, torque = 0;
  unsigned q_seed = 0, force_seed = 0, torque_seed = 0;
  void print(const char* what) const {
    std::printf("  %s: largest relative difference after 5 steps: q %.3e (seed %u), "
                "joint force %.3e (seed %u), joint torque %.3e (seed %u)\n",
                what, q, q_seed, force, force_seed, torque, torque_seed);
  }
};

/// Steps both worlds 5 times, checking the solver each used, and records the largest
/// relative differences of q and of the joint wrenches.
void compare(Built& x, const char* x_solver, Built& y, const char* y_solver, unsigned seed,
             Worst& worst, double tol = 1e-9) {
  for (int step = 0; step < 5; ++step) {
    x.world.step();
    y.world.step();
    ASSERT_STREQ(x.world.last_step().solver, x_solver) << "seed " << seed << " step " << step + 1;
    ASSERT_STREQ(y.world.last_step().solver, y_solver) << "seed " << seed << " step " << step + 1;
  }
  ASSERT_EQ(x.bodies.size(), y.bodies.size());
  ASSERT_EQ(x.joints.size(), y.joints.size());
  double dq = 0, df = 0, dt = 0;
  std::size_t worst_body = 0, worst_force = 0, worst_torque = 0;
  for (std::size_t i = 0; i < x.bodies.size(); ++i) {
    const Vec12 a = x.world.coordinates(x.bodies[i]);
    const Vec12 b = y.world.coordinates(y.bodies[i]);
    const double d = (a - b).norm() / std::max(1.0, b.norm());
    if (d > dq) dq = d, worst_body = i;
  }
  for (std::size_t k = 0; k < x.joints.size(); ++k) {
    const JointWrench a = x.world.joint_wrench(x.joints[k]);
    const JointWrench b = y.world.joint_wrench(y.joints[k]);
    const double f = (a.force - b.force).norm() / std::max(1.0, b.force.norm());
    const double m = (a.torque - b.torque).norm() / std::max(1.0, b.torque.norm());
    if (f > df) df = f, worst_force = k;
    if (m > dt) dt = m, worst_torque = k;
  }
  EXPECT_LE(dq, tol) << "seed " << seed << ": q of body " << worst_body;
  EXPECT_LE(df, tol) << "seed " << seed << ": force of joint " << worst_force;
  EXPECT_LE(dt, tol) << "seed " << seed << ": torque of joint " << worst_torque;
  if (dq > worst.q) worst.q = dq, worst.q_seed = seed;
  if (df > worst.force) worst.force = df, worst.force_seed = seed;
  if (dt > worst.torque) worst.torque = dt, worst.torque_seed = seed;
}

TEST(TreeSolver, RandomTreesMatchTheSparseSolver) {
  Worst worst;
  int branchy = 0;
  for (unsigned seed = 1; seed <= 60; ++seed) {
    ForestOptions opt;
    Built tree = random_forest(seed, DualSolverKind::Tree, opt);
    Built sparse = random_forest(seed, DualSolverKind::Sparse, opt);
    if (tree.max_children >= 3) ++branchy;
    compare(tree, "tree", sparse, "sparse", seed, worst);
  }
  worst.print("trees, tree vs sparse");
  EXPECT_GE(branchy, 30);  // the generator does branch
}

TEST(TreeSolver, SeveralSeparateTreesMatchTheSparseSolver) {
  Worst worst;
  for (unsigned seed = 101; seed <= 120; ++seed) {
    ForestOptions opt;
    opt.trees = 2 + static_cast<int>(seed % 4);
    opt.max_bodies = 15;
    Built tree = random_forest(seed, DualSolverKind::Tree, opt);
    Built sparse = random_forest(seed, DualSolverKind::Sparse, opt);
    ASSERT_GE(tree.world.topology().size(), 2u) << "seed " << seed;
    compare(tree, "tree", sparse, "sparse", seed, worst);
  }
  worst.print("forests, tree vs sparse");
}

TEST(TreeSolver, TreesWithLoopsMatchTheSparseSolver) {
  Worst worst;
  int loops = 0, exact = 0;
  for (unsigned seed = 201; seed <= 250; ++seed) {
    ForestOptions opt;
    opt.trees = seed % 5 == 0 ? 2 : 1;
    opt.min_bodies = 4;
    opt.min_loops = 1;
    opt.max_loops = 6;
    Built tree = random_forest(seed, DualSolverKind::Tree, opt);
    Built sparse = random_forest(seed, DualSolverKind::Sparse, opt);
    ASSERT_GE(tree.loop_joints, 1) << "seed " << seed;
    loops += tree.loop_joints;
    exact += tree.exact_loops;
    compare(tree, "tree", sparse, "sparse", seed, worst);
  }
  worst.print("trees with loops, tree vs sparse");
  std::printf("  %d loop joints in all, %d of them ball joints without compliance\n", loops, exact);
  EXPECT_GE(exact, 20);
}

// Trees of ball joints with angular springs (3 point rows and 3 compliant rotation-lock
// rows per joint, as in the tree scenes), hanging under gravity: the tree solver assembles
// its cliques in the body frame, with the geometric-stiffness term of the bodies under
// tension; the same steps as the sparse solver.
TEST(TreeSolver, BallSpringTreesMatchTheSparseSolver) {
  Worst worst;
  for (unsigned seed = 301; seed <= 330; ++seed) {
    ForestOptions opt;
    opt.extras = false;
    opt.ball_springs = true;
    opt.min_bodies = 10;
    opt.max_loops = seed % 3 == 0 ? 3 : 0;
    opt.min_loops = opt.max_loops > 0 ? 1 : 0;
    Built tree = random_forest(seed, DualSolverKind::Tree, opt);
    Built sparse = random_forest(seed, DualSolverKind::Sparse, opt);
    compare(tree, "tree", sparse, "sparse", seed, worst);
  }
  worst.print("ball-spring trees, tree vs sparse");
}

/// Random chain as in chain_solver_test, with springs, drives and compliance as well.
Built random_chain(unsigned seed, DualSolverKind solver) {
  Rand r(seed);
  WorldSettings s;
  s.dt = 1e-2;
  s.solver = solver;
  Built b{World(s), {}, {}};
  const int n = 2 + r.pick(30);
  const bool pinned = r.u() < 0.7;
  Vec3 at = Vec3::Zero();
  for (int i = 0; i < n; ++i) {
    const double len = r.in(0.05, 0.25);
    const Vec3 dir = Vec3(1, 0.3 * (r.u() - 0.5), 0.3 * (r.u() - 0.5)).normalized();
    BodyDef d = random_body(r, "l" + std::to_string(i), at + 0.5 * len * dir);
    b.bodies.push_back(b.world.add_body(d));
    if (i > 0 || pinned) {
      b.joints.push_back(b.world.add_joint(random_joint(
          r, kTypes[r.pick(5)], i > 0 ? b.bodies[i - 1] : BodyId{}, b.bodies[i], at, true)));
    }
    at += len * dir;
  }
  return b;
}

TEST(TreeSolver, ChainsMatchTheChainSolver) {
  Worst worst;
  for (unsigned seed = 301; seed <= 340; ++seed) {
    Built tree = random_chain(seed, DualSolverKind::Tree);
    Built chain = random_chain(seed, DualSolverKind::Chain);
    compare(tree, "tree", chain, "chain", seed, worst);
  }
  worst.print("chains, tree vs chain");
}

/// A flat net of rows x cols boxes, ball joints between neighbours, corners pinned.
/// Adds a rows x cols net of plates joined by ball joints, its corners pinned to the world,
/// at `origin` (m) to b.
void add_net(Built& b, int rows, int cols, unsigned seed, const Vec3& origin) {
  Rand r(seed);
  const double h = 0.3;
  const std::size_t first = b.bodies.size();
  auto id = [&](int i, int k) { return b.bodies[first + i * cols + k]; };
  for (int i = 0; i < rows; ++i) {
    for (int k = 0; k < cols; ++k) {
      BodyDef d;
      d.name = "n" + std::to_string(i) + "_" + std::to_string(k);
      d.shape.size = Vec3(0.2, 0.2, 0.04);
      d.material.density = r.in(500, 3000);
      d.position = origin + Vec3(h * k, h * i, 0.01 * r.u());
      d.linear_velocity = 0.2 * r.vec();
      b.bodies.push_back(b.world.add_body(d));
    }
  }
  JointDef j;
  for (int i = 0; i < rows; ++i) {
    for (int k = 0; k < cols; ++k) {
      const Vec3 p = b.world.pose(id(i, k)).position;
      if (k + 1 < cols) {
        j.body_a = id(i, k);
        j.body_b = id(i, k + 1);
        j.anchor = 0.5 * (p + b.world.pose(id(i, k + 1)).position);
        b.joints.push_back(b.world.add_joint(j));
      }
      if (i + 1 < rows) {
        j.body_a = id(i, k);
        j.body_b = id(i + 1, k);
        j.anchor = 0.5 * (p + b.world.pose(id(i + 1, k)).position);
        b.joints.push_back(b.world.add_joint(j));
      }
    }
  }
  for (auto [i, k] : {std::pair{0, 0}, std::pair{0, cols - 1}, std::pair{rows - 1, 0},
                      std::pair{rows - 1, cols - 1}}) {
    j.body_a = BodyId{};
    j.body_b = id(i, k);
    j.anchor = b.world.pose(id(i, k)).position;
    b.joints.push_back(b.world.add_joint(j));
  }
}

Built net(int rows, int cols, DualSolverKind solver, unsigned seed = 1) {
  WorldSettings s;
  s.dt = 1e-2;
  s.solver = solver;
  Built b{World(s), {}, {}};
  add_net(b, rows, cols, seed, Vec3::Zero());
  return b;
}

TEST(TreeSolver, AutoPicksTheSolverFromTheTopology) {
  auto solver_of = [](Built& b) {
    b.world.step();
    return std::string(b.world.last_step().solver);
  };
  for (unsigned seed = 401; seed <= 410; ++seed) {
    Built chain = random_chain(seed, DualSolverKind::Auto);
    EXPECT_EQ(solver_of(chain), "chain") << "seed " << seed;
    ForestOptions opt;
    opt.min_bodies = 6;
    opt.trees = 1 + static_cast<int>(seed % 3);
    Built tree = random_forest(seed, DualSolverKind::Auto, opt);
    ASSERT_GE(tree.max_children, 3) << "seed " << seed;
    EXPECT_EQ(solver_of(tree), "tree") << "seed " << seed;
    // Up to 8 loop joints in a component: still the tree solver.
    opt.trees = 1;
    opt.min_bodies = 12;
    opt.min_loops = 1;
    opt.max_loops = 8;
    opt.extras = false;
    Built loops = random_forest(seed, DualSolverKind::Auto, opt);
    ASSERT_GE(loops.loop_joints, 1) << "seed " << seed;
    ASSERT_LE(loops.loop_joints, 8) << "seed " << seed;
    EXPECT_EQ(solver_of(loops), "tree") << "seed " << seed << ", " << loops.loop_joints << " loops";
  }
  // Exactly 8 loop joints: tree; 9: sparse.
  {
    ForestOptions opt;
    opt.min_bodies = opt.max_bodies = 20;
    opt.min_loops = opt.max_loops = 8;
    opt.extras = false;
    Built eight = random_forest(7, DualSolverKind::Auto, opt);
    ASSERT_EQ(eight.loop_joints, 8);
    EXPECT_EQ(solver_of(eight), "tree");
    opt.min_loops = opt.max_loops = 9;
    Built nine = random_forest(7, DualSolverKind::Auto, opt);
    ASSERT_EQ(nine.loop_joints, 9);
    EXPECT_EQ(solver_of(nine), "sparse");
  }
  Built graph = net(6, 6, DualSolverKind::Auto);
  const auto topo = graph.world.topology();
  ASSERT_EQ(topo.size(), 1u);
  EXPECT_EQ(topo[0].kind, "graph");
  EXPECT_EQ(solver_of(graph), "sparse");
}

// A world holding trees (with limits, drives, springs, a few loops) and a net (20 loop
// joints): Auto eliminates the trees and hands the net to the sparse solver, one system each;
// the same steps as the sparse solver on the whole world.
TEST(TreeSolver, AutoSolvesTreesAndGraphsSideBySide) {
  Worst worst;
  for (unsigned seed = 601; seed <= 615; ++seed) {
    ForestOptions opt;
    opt.trees = 1 + static_cast<int>(seed % 3);
    opt.min_bodies = 5;
    opt.max_bodies = 25;
    opt.max_loops = seed % 2 == 0 ? 3 : 0;
    opt.min_loops = opt.max_loops > 0 ? 1 : 0;
    Built mixed = random_forest(seed, DualSolverKind::Auto, opt);
    Built sparse = random_forest(seed, DualSolverKind::Sparse, opt);
    add_net(mixed, 5, 6, seed, Vec3(0, 0, -20));
    add_net(sparse, 5, 6, seed, Vec3(0, 0, -20));
    std::size_t graphs = 0, trees = 0;
    for (const auto& c : mixed.world.topology()) {
      if (c.joints == 0) continue;
      const bool graph = c.kind == "graph";
      graphs += graph;
      trees += !graph;
      EXPECT_EQ(c.solver, graph ? "sparse" : "tree") << "seed " << seed << ": " << c.kind;
    }
    ASSERT_EQ(graphs, 1u) << "seed " << seed;
    ASSERT_GE(trees, 1u) << "seed " << seed;
    compare(mixed, "tree+sparse", sparse, "sparse", seed, worst);
  }
  worst.print("trees beside a net, tree+sparse vs sparse");
  // Forced, every component takes the forced solver.
  Built forced = net(5, 6, DualSolverKind::Tree);
  for (const auto& c : forced.world.topology()) EXPECT_EQ(c.solver, "tree");
}

TEST(TreeSolver, ForcedOnAGraphWithManyLoopsItIsStillExact) {
  Worst worst;
  unsigned seed = 0;
  for (auto [rows, cols] : {std::pair{6, 6}, std::pair{4, 7}, std::pair{5, 5}}) {
    ++seed;
    Built tree = net(rows, cols, DualSolverKind::Tree, seed);
    Built sparse = net(rows, cols, DualSolverKind::Sparse, seed);
    compare(tree, "tree", sparse, "sparse", seed, worst);
  }
  worst.print("nets, tree vs sparse");
}

}  // namespace
}  // namespace mabd
