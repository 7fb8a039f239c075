// The block-Thomas chain solver returns the same step as the general sparse solver, to
// round-off, on randomised chains (joint types, sizes, masses, pinned or free, limits).
#include <gtest/gtest.h>

#include <random>

#include "mabd/mabd.h"

namespace mabd {
namespace {

struct Built {
  World world;
  std::vector<BodyId> bodies;
  std::vector<JointId> joints;
};

/// With `general_every` > 0 only every general_every-th joint is of another type than ball.
Built random_chain(unsigned seed, DualSolverKind solver, bool limits = true,
                   int general_every = 0, double end_mass = 0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  WorldSettings s;
  s.dt = 1e-2;
  s.solver = solver;
  Built b{World(s), {}, {}};
  const int n = 2 + static_cast<int>(u(rng) * 30);
  const bool pinned = u(rng) < 0.7;
  Vec3 at = Vec3::Zero();
  const JointType types[] = {JointType::Ball, JointType::Hinge, JointType::Universal,
                             JointType::Prismatic, JointType::Fixed};
  for (int i = 0; i < n; ++i) {
    const double len = 0.05 + 0.2 * u(rng);
    BodyDef d;
    d.name = "l" + std::to_string(i);
    d.shape.type = ShapeType::Box;
    d.shape.size = Vec3(len, 0.02 + 0.03 * u(rng), 0.02 + 0.03 * u(rng));
    d.material = {500 + 3000 * u(rng), 1e8 * (1 + 9 * u(rng)), 0.3};
    const Vec3 dir = Vec3(1, 0.3 * (u(rng) - 0.5), 0.3 * (u(rng) - 0.5)).normalized();
    d.orientation = Quat::FromTwoVectors(Vec3::UnitX(), dir);
    d.position = at + 0.5 * len * dir;
    d.angular_velocity = Vec3(u(rng) - 0.5, u(rng) - 0.5, u(rng) - 0.5);
    d.linear_velocity = Vec3(u(rng) - 0.5, u(rng) - 0.5, u(rng) - 0.5);
    if (i + 1 == n && end_mass > 0) d.mass = end_mass;
    b.bodies.push_back(b.world.add_body(d));
    if (i > 0 || pinned) {
      JointDef j;
      j.type = types[static_cast<int>(u(rng) * 5) % 5];
      if (general_every > 0) {
        const JointType other = types[1 + static_cast<int>(u(rng) * 4) % 4];
        j.type = i % general_every == general_every - 1 ? other : JointType::Ball;
      }
      if (i > 0) j.body_a = b.bodies[i - 1];
      j.body_b = b.bodies[i];
      j.anchor = at;
      j.axis = Vec3(u(rng) - 0.5, u(rng) - 0.5, u(rng) - 0.5).normalized();
      j.axes = {dir, dir.unitOrthogonal()};
      if (j.type == JointType::Hinge && u(rng) < 0.5 && limits) j.limits = JointLimits{-0.01, 0.01};
      b.joints.push_back(b.world.add_joint(j));
    }
    at += len * dir;
  }
  return b;
}

/// Steps both worlds 5 times (the first with the chain solver, `closed_form`: without a
/// row set) and returns the largest relative difference of their coordinates.
double step_and_compare(Built& chain, Built& sparse, unsigned seed, bool closed_form) {
  for (int step = 0; step < 5; ++step) {
    chain.world.step();
    sparse.world.step();
    EXPECT_STREQ(chain.world.last_step().solver, "chain") << "seed " << seed;
    EXPECT_STREQ(sparse.world.last_step().solver, "sparse") << "seed " << seed;
    if (closed_form) EXPECT_EQ(chain.world.last_step().rows_ms, 0.0) << "seed " << seed;
  }
  double worst = 0;
  for (std::size_t i = 0; i < chain.bodies.size(); ++i) {
    const Vec12 a = chain.world.coordinates(chain.bodies[i]);
    const Vec12 b = sparse.world.coordinates(sparse.bodies[i]);
    worst = std::max(worst, (a - b).norm() / std::max(1.0, b.norm()));
  }
  return worst;
}

TEST(ChainSolver, MatchesSparseSolverToRoundOff) {
  double worst = 0;
  for (unsigned seed = 1; seed <= 40; ++seed) {
    Built chain = random_chain(seed, DualSolverKind::Chain);
    Built sparse = random_chain(seed, DualSolverKind::Sparse);
    worst = std::max(worst, step_and_compare(chain, sparse, seed, false));
    for (std::size_t k = 0; k < chain.joints.size(); ++k) {
      const Vec3 fa = chain.world.joint_wrench(chain.joints[k]).force;
      const Vec3 fb = sparse.world.joint_wrench(sparse.joints[k]).force;
      EXPECT_LE((fa - fb).norm(), 1e-9 * std::max(1.0, fb.norm())) << "seed " << seed;
    }
  }
  std::printf("  largest relative difference of q after 5 steps: %.3e\n", worst);
  EXPECT_LT(worst, 1e-9);
}

// Chains of ball joints with every third joint of another type, without limits, take the
// closed form (ball_chain_dual.h: hinge, universal and fixed joints with dot rows, prismatic
// joints as general items): no row set (rows_ms 0), the same step and joint wrenches, forces
// and torques, as the sparse solver to round-off.
TEST(ChainSolver, MixedChainsTakeTheClosedFormAndMatchSparse) {
  double worst_q = 0, worst_w = 0;
  int general = 0;
  for (unsigned seed = 1; seed <= 40; ++seed) {
    Built chain = random_chain(seed, DualSolverKind::Chain, false, 3);
    Built sparse = random_chain(seed, DualSolverKind::Sparse, false, 3);
    worst_q = std::max(worst_q, step_and_compare(chain, sparse, seed, true));
    for (std::size_t k = 0; k < chain.joints.size(); ++k) {
      const JointWrench wa = chain.world.joint_wrench(chain.joints[k]);
      const JointWrench wb = sparse.world.joint_wrench(sparse.joints[k]);
      const double scale = std::max(1.0, wb.force.norm() + wb.torque.norm());
      const double diff = (wa.force - wb.force).norm() + (wa.torque - wb.torque).norm();
      worst_w = std::max(worst_w, diff / scale);
      general += chain.world.joint_type(chain.joints[k]) != JointType::Ball;
    }
  }
  std::printf("  %d other joints; largest relative difference after 5 steps: q %.3e, "
              "wrench %.3e\n", general, worst_q, worst_w);
  EXPECT_GT(general, 100);
  EXPECT_LT(worst_q, 1e-9);
  EXPECT_LT(worst_w, 1e-9);
}

// Chains of hinge, universal and fixed joints (and some prismatic ones) take the closed form
// with dot rows (ball_chain_dual.h: the ports' constant blocks, no body solve), some with a
// heavy end body whose pull switches on the geometric-stiffness correction: the same step
// and wrenches as the sparse solver to round-off.
TEST(ChainSolver, DotJointChainsTakeTheClosedFormAndMatchSparse) {
  double worst_q = 0, worst_w = 0;
  for (unsigned seed = 1; seed <= 40; ++seed) {
    const double end_mass = seed % 2 == 0 ? 20.0 : 0.0;
    Built chain = random_chain(seed, DualSolverKind::Chain, false, 1, end_mass);
    Built sparse = random_chain(seed, DualSolverKind::Sparse, false, 1, end_mass);
    worst_q = std::max(worst_q, step_and_compare(chain, sparse, seed, true));
    for (std::size_t k = 0; k < chain.joints.size(); ++k) {
      const JointWrench wa = chain.world.joint_wrench(chain.joints[k]);
      const JointWrench wb = sparse.world.joint_wrench(sparse.joints[k]);
      const double scale = std::max(1.0, wb.force.norm() + wb.torque.norm());
      worst_w = std::max(worst_w,
                         ((wa.force - wb.force).norm() + (wa.torque - wb.torque).norm()) / scale);
    }
  }
  std::printf("  largest relative difference after 5 steps: q %.3e, wrench %.3e\n", worst_q,
              worst_w);
  EXPECT_LT(worst_q, 1e-9);
  EXPECT_LT(worst_w, 1e-9);
}

// A hinge and universal chain falling on the ground (its links do not collide with each
// other): the penalty contacts correct its bodies' operators, and the dot rows' blocks on those
// bodies take body solves. Same motion as the sparse solver.
TEST(ChainSolver, HingeChainOnTheGroundMatchesSparse) {
  auto build = [](DualSolverKind solver) {
    WorldSettings s;
    s.dt = 1e-2;
    s.solver = solver;
    s.contact.model = ContactModel::Penalty;  // folded into the bodies' operators
    Built b{World(s), {}, {}};
    BodyDef ground;
    ground.kind = BodyKind::Static;
    ground.shape.type = ShapeType::Plane;
    b.world.add_body(ground);
    BodyDef link;
    link.shape.type = ShapeType::Box;
    link.shape.size = Vec3(0.1, 0.03, 0.03);
    link.material.friction = 0.4;
    link.collision.group = 2;  // the links touch the ground, not each other
    link.collision.mask = 1;
    for (int k = 0; k < 8; ++k) {
      link.position = Vec3(0.1 * k, 0, 0.05 + 0.02 * k);
      link.orientation = Quat(Eigen::AngleAxisd(-0.2, Vec3::UnitY()));
      link.angular_velocity = Vec3(0.3 * k, 0, 0);
      b.bodies.push_back(b.world.add_body(link));
      if (k == 0) continue;
      JointDef j;
      j.type = k % 3 == 0 ? JointType::Universal : JointType::Hinge;
      j.body_a = b.bodies[k - 1];
      j.body_b = b.bodies[k];
      j.anchor = 0.5 * (b.world.com_position(b.bodies[k - 1]) + link.position);
      j.axis = Vec3::UnitY();
      j.axes = {Vec3::UnitY(), Vec3::UnitZ()};
      b.joints.push_back(b.world.add_joint(j));
    }
    return b;
  };
  Built chain = build(DualSolverKind::Chain);
  Built sparse = build(DualSolverKind::Sparse);
  int touching = 0;
  double worst = 0;
  for (int step = 0; step < 40; ++step) {
    chain.world.step();
    sparse.world.step();
    ASSERT_STREQ(chain.world.last_step().solver, "chain");
    EXPECT_EQ(chain.world.last_step().rows_ms, 0.0);  // the closed form
    touching = std::max(touching, chain.world.last_step().contacts);
    for (std::size_t i = 0; i < chain.bodies.size(); ++i) {
      const Vec12 a = chain.world.coordinates(chain.bodies[i]);
      const Vec12 b = sparse.world.coordinates(sparse.bodies[i]);
      worst = std::max(worst, (a - b).norm() / std::max(1.0, b.norm()));
    }
  }
  std::printf("  %d contacts at most; largest relative difference of q: %.3e\n", touching, worst);
  EXPECT_GE(touching, 8);
  EXPECT_LT(worst, 1e-8);
}

// Worlds of several plain ball-joint chains take the closed-form 3x3 blocks of
// ball_chain_dual.cpp: joint sides in either order, pinned at one, both or no ends, some
// compliance, heavy end bodies (their pull switches on the geometric-stiffness correction),
// a kinematic body at one end. Same step as the sparse solver to round-off.
Built random_ball_chains(unsigned seed, DualSolverKind solver) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  WorldSettings s;
  s.dt = 1e-2;
  s.solver = solver;
  Built b{World(s), {}, {}};
  const int chains = 1 + static_cast<int>(u(rng) * 3);
  for (int c = 0; c < chains; ++c) {
    const int n = 1 + static_cast<int>(u(rng) * 25);
    const bool pin_start = u(rng) < 0.7, pin_end = u(rng) < 0.3;
    const bool kinematic_start = !pin_start && u(rng) < 0.3;
    Vec3 at(0, c * 1.0, 0);
    std::vector<BodyId> ids;
    if (kinematic_start) {
      BodyDef k;
      k.kind = BodyKind::Kinematic;
      k.shape.type = ShapeType::Sphere;
      k.shape.radius = 0.05;
      k.position = at;
      k.linear_velocity = Vec3(0.3, 0, 0);
      b.bodies.push_back(b.world.add_body(k));
      ids.push_back(b.bodies.back());
    }
    for (int i = 0; i < n; ++i) {
      const double len = 0.05 + 0.2 * u(rng);
      const bool heavy = i + 1 == n && u(rng) < 0.5;
      BodyDef d;
      d.shape.type = ShapeType::Box;
      d.shape.size = Vec3(len, 0.015 + 0.03 * u(rng), 0.015 + 0.03 * u(rng));
      d.material = {500 + 3000 * u(rng), 1e8 * (1 + 9 * u(rng)), 0.3};
      if (heavy) d.mass = 1 + 4 * u(rng);
      const Vec3 dir = Vec3(1, 0.5 * (u(rng) - 0.5), -u(rng)).normalized();
      d.orientation = Quat::FromTwoVectors(Vec3::UnitX(), dir);
      d.position = at + 0.5 * len * dir;
      // Random velocities are not consistent with the joints: the first step absorbs them as
      // an impulse; kept small (large ones tear light links next to the heavy end body).
      d.angular_velocity = 0.4 * Vec3(u(rng) - 0.5, u(rng) - 0.5, u(rng) - 0.5);
      d.linear_velocity = 0.2 * Vec3(u(rng) - 0.5, u(rng) - 0.5, u(rng) - 0.5);
      if (pin_end) {  // a taut chain between two pins cannot follow them at all
        d.angular_velocity.setZero();
        d.linear_velocity.setZero();
      }
      const BodyId id = b.world.add_body(d);
      b.bodies.push_back(id);
      const bool first = ids.empty();
      if (!first || pin_start) {
        JointDef j;
        BodyId prev = first ? BodyId{} : ids.back();
        BodyId next = id;
        if (!first && u(rng) < 0.5) std::swap(prev, next);  // either side order
        j.body_a = prev;
        j.body_b = next;
        j.anchor = at;
        if (u(rng) < 0.2) j.compliance = 1e-6 * u(rng);
        b.joints.push_back(b.world.add_joint(j));
      }
      ids.push_back(id);
      at += len * dir;
    }
    if (pin_end) {
      JointDef j;
      j.body_a = ids.back();
      j.anchor = at;
      b.joints.push_back(b.world.add_joint(j));
    }
  }
  return b;
}

TEST(ChainSolver, BallChainsMatchSparseSolverToRoundOff) {
  double worst_q = 0, worst_f = 0;
  for (unsigned seed = 1; seed <= 60; ++seed) {
    Built chain = random_ball_chains(seed, DualSolverKind::Auto);
    Built sparse = random_ball_chains(seed, DualSolverKind::Sparse);
    worst_q = std::max(worst_q, step_and_compare(chain, sparse, seed, true));
    for (std::size_t k = 0; k < chain.joints.size(); ++k) {
      const JointWrench wa = chain.world.joint_wrench(chain.joints[k]);
      const JointWrench wb = sparse.world.joint_wrench(sparse.joints[k]);
      worst_f = std::max(worst_f, (wa.force - wb.force).norm() / std::max(1.0, wb.force.norm()));
      EXPECT_LE(wa.torque.norm(), 1e-9 * std::max(1.0, wb.force.norm())) << "seed " << seed;
      EXPECT_LE(wb.torque.norm(), 1e-9 * std::max(1.0, wb.force.norm())) << "seed " << seed;
    }
    EXPECT_NEAR(chain.world.last_step().joint_residual, sparse.world.last_step().joint_residual,
                1e-12) << "seed " << seed;
  }
  std::printf("  largest relative difference after 5 steps: q %.3e, joint force %.3e\n", worst_q,
              worst_f);
  EXPECT_LT(worst_q, 1e-9);
  EXPECT_LT(worst_f, 1e-9);
}

TEST(ChainSolver, ForcingItOnATreeIsAClearError) {
  WorldSettings s;
  s.solver = DualSolverKind::Chain;
  World w(s);
  BodyDef d;
  d.shape.size = Vec3(0.1, 0.1, 0.1);
  std::vector<BodyId> ids;
  for (int i = 0; i < 3; ++i) {
    d.name = "b" + std::to_string(i);
    d.position = Vec3(0.2 * i, 0, 0);
    ids.push_back(w.add_body(d));
  }
  JointDef j;
  j.body_a = ids[0];
  for (int i : {1, 2}) {
    j.body_b = ids[i];
    j.anchor = Vec3(0.1, 0, 0);
    w.add_joint(j);
  }
  j.body_a = BodyId{};
  j.body_b = ids[0];
  j.anchor = Vec3(-0.05, 0, 0);
  w.add_joint(j);
  EXPECT_THROW(w.step(), InvalidArgument);
}

}  // namespace
}  // namespace mabd
