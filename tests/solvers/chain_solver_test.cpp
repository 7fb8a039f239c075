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

Built random_chain(unsigned seed, DualSolverKind solver) {
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
    b.bodies.push_back(b.world.add_body(d));
    if (i > 0 || pinned) {
      JointDef j;
      j.type = types[static_cast<int>(u(rng) * 5) % 5];
      if (i > 0) j.body_a = b.bodies[i - 1];
      j.body_b = b.bodies[i];
      j.anchor = at;
      j.axis = Vec3(u(rng) - 0.5, u(rng) - 0.5, u(rng) - 0.5).normalized();
      j.axes = {dir, dir.unitOrthogonal()};
      if (j.type == JointType::Hinge && u(rng) < 0.5) j.limits = JointLimits{-0.01, 0.01};
      b.joints.push_back(b.world.add_joint(j));
    }
    at += len * dir;
  }
  return b;
}

TEST(ChainSolver, MatchesSparseSolverToRoundOff) {
  double worst = 0;
  for (unsigned seed = 1; seed <= 40; ++seed) {
    Built chain = random_chain(seed, DualSolverKind::Chain);
    Built sparse = random_chain(seed, DualSolverKind::Sparse);
    for (int step = 0; step < 5; ++step) {
      chain.world.step();
      sparse.world.step();
      ASSERT_STREQ(chain.world.last_step().solver, "chain") << "seed " << seed;
      ASSERT_STREQ(sparse.world.last_step().solver, "sparse") << "seed " << seed;
    }
    for (std::size_t i = 0; i < chain.bodies.size(); ++i) {
      const Vec12 a = chain.world.coordinates(chain.bodies[i]);
      const Vec12 b = sparse.world.coordinates(sparse.bodies[i]);
      const double scale = std::max(1.0, b.norm());
      worst = std::max(worst, (a - b).norm() / scale);
    }
    for (std::size_t k = 0; k < chain.joints.size(); ++k) {
      const Vec3 fa = chain.world.joint_wrench(chain.joints[k]).force;
      const Vec3 fb = sparse.world.joint_wrench(sparse.joints[k]).force;
      EXPECT_LE((fa - fb).norm(), 1e-9 * std::max(1.0, fb.norm())) << "seed " << seed;
    }
  }
  std::printf("  largest relative difference of q after 5 steps: %.3e\n", worst);
  EXPECT_LT(worst, 1e-9);
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
