// settings.threads: the per-body phases on several threads give the same bits as on one.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "mabd/mabd.h"

namespace mabd {
namespace {

Scene scene_file(const std::string& name) {
  return load_scene(std::string(MABD_SOURCE_DIR) + "/scenes/" + name);
}

// Steps the scene with 1 and with `threads` threads, a wrench on every 7th body (the loads
// gathered per range) and compares every coordinate and velocity to the bit.
void expect_same_bits(Scene scene, int steps, int threads) {
  scene.settings.threads = 1;
  World one = build_world(scene);
  scene.settings.threads = threads;
  World many = build_world(scene);
  ASSERT_GE(one.body_count(), 4096u) << "below the size at which phases run in parallel";
  for (int s = 0; s < steps; ++s) {
    for (std::uint32_t i = 0; i < one.body_count(); i += 7) {
      const Vec3 f(0.01 * std::sin(i + s), 0.02, 0), t(0, 0, 1e-5 * std::cos(i));
      one.apply_wrench(BodyId{i}, f, t);
      many.apply_wrench(BodyId{i}, f, t);
    }
    one.step();
    many.step();
    ASSERT_EQ(one.last_step().residual, many.last_step().residual) << "step " << s + 1;
    ASSERT_EQ(one.last_step().joint_residual, many.last_step().joint_residual);
  }
  for (std::uint32_t i = 0; i < one.body_count(); ++i) {
    const Vec12 qa = one.coordinates(BodyId{i}), qb = many.coordinates(BodyId{i});
    const Vec12 va = one.velocities(BodyId{i}), vb = many.velocities(BodyId{i});
    for (int k = 0; k < 12; ++k) {
      ASSERT_EQ(qa[k], qb[k]) << "body " << i << " q[" << k << "]";
      ASSERT_EQ(va[k], vb[k]) << "body " << i << " qdot[" << k << "]";
    }
  }
}

TEST(Threads, ChainIsBitIdenticalOnTwoAndThreeThreads) {
  const Scene scene = scene_file("chain_1e4.json");  // generalized-alpha, geometric terms
  expect_same_bits(scene, 20, 2);
  expect_same_bits(scene, 5, 3);  // uneven ranges
}

TEST(Threads, ImplicitEulerTreeIsBitIdentical) {
  Scene scene = scene_file("tree_willow.json");
  scene.settings.time_integration = TimeIntegration::ImplicitEuler;  // the exact twist term
  expect_same_bits(scene, 10, 2);
}

TEST(Threads, TreeWithSpringsIsBitIdenticalOnThreeThreads) {
  Scene scene = scene_file("tree_pear.json");  // generalized-alpha, spring rows at every joint
  scene.settings.threads = 1;
  World probe = build_world(scene);
  probe.step();
  EXPECT_STREQ(probe.last_step().solver, "tree");
  expect_same_bits(scene, 5, 3);  // uneven ranges of subtrees
}

TEST(Threads, IterativeNetIsBitIdenticalOnTwoAndThreeThreads) {
  // The iterative solver's assembly (bodies' entries on the threads, added in order), line
  // factors and line solves (ranges of lines) on a net above its parallel size.
  const Scene scene = scene_file("net_50.json");
  expect_same_bits(scene, 6, 2);
  expect_same_bits(scene, 3, 3);  // uneven ranges
}

TEST(Threads, ContactSceneIsBitIdentical) {
  expect_same_bits(scene_file("net_100_cylinder.json"), 4, 2);
}

// 500 separate pendulum chains of 10 boxes (5000 bodies, ball joints, the first pinned to
// the world), released at an angle: independent components, solved by range of whole chains.
// With `welded`, every other chain ends in a link welded to the one before (a fixed joint, a
// point link with dot rows in the closed form).
World many_chains(int threads, bool welded = false) {
  WorldSettings s;
  s.dt = 1e-2;
  s.threads = threads;
  World w(s);
  for (int c = 0; c < 500; ++c) {
    const Vec3 origin(0.3 * (c % 25), 0.3 * (c / 25), 0);
    const Vec3 dir = Vec3(1, 0, -1 - 0.01 * c).normalized();
    BodyId prev;
    for (int k = 0; k < 10; ++k) {
      BodyDef b;
      b.shape.type = ShapeType::Box;
      b.shape.size = Vec3(0.1, 0.01, 0.01);
      b.position = origin + (0.1 * k + 0.05) * dir;
      b.orientation = Quat::FromTwoVectors(Vec3::UnitX(), dir);
      const BodyId id = w.add_body(b);
      JointDef j;
      j.type = welded && c % 2 == 1 && k == 9 ? JointType::Fixed : JointType::Ball;
      j.body_a = prev;
      j.body_b = id;
      j.anchor = origin + 0.1 * k * dir;
      w.add_joint(j);
      prev = id;
    }
  }
  return w;
}

TEST(Threads, IndependentChainsAreBitIdentical) {
  World one = many_chains(1), two = many_chains(2);
  for (int s = 0; s < 30; ++s) {
    one.step();
    two.step();
  }
  EXPECT_STREQ(one.last_step().solver, "chain");
  EXPECT_LT(one.last_step().joint_residual, 1e-9);
  for (std::uint32_t i = 0; i < one.body_count(); ++i) {
    const Vec12 qa = one.coordinates(BodyId{i}), qb = two.coordinates(BodyId{i});
    for (int k = 0; k < 12; ++k) ASSERT_EQ(qa[k], qb[k]) << "body " << i << " q[" << k << "]";
  }
}

// 401 separate trees of 13 boxes (5,213 bodies, so that the threads' ranges of nodes cut a
// tree): a trunk of 5 pinned to the world, then two branches of 4, ball joints. With `loops`, every 20th tree closes a loop between its two
// branch tips (a loop joint of the tree solver's Schur complement).
World many_trees(int threads, bool loops) {
  WorldSettings s;
  s.dt = 1e-2;
  s.threads = threads;
  World w(s);
  auto link = [&](const Vec3& from, const Vec3& dir, BodyId prev) {
    BodyDef b;
    b.shape.type = ShapeType::Box;
    b.shape.size = Vec3(0.1, 0.01, 0.01);
    b.position = from + 0.05 * dir;
    b.orientation = Quat::FromTwoVectors(Vec3::UnitX(), dir);
    const BodyId id = w.add_body(b);
    JointDef j;
    j.body_a = prev;
    j.body_b = id;
    j.anchor = from;
    w.add_joint(j);
    return id;
  };
  for (int t = 0; t < 401; ++t) {
    Vec3 at(0.5 * (t % 20), 0.5 * (t / 20), 0);
    const Vec3 down = Vec3(0.05 * std::sin(t), 0.05, -1).normalized();
    BodyId prev;
    for (int k = 0; k < 5; ++k, at += 0.1 * down) prev = link(at, down, prev);
    BodyId tips[2];
    for (int side = 0; side < 2; ++side) {
      const Vec3 dir = Vec3(side == 0 ? 1 : -1, 0.1 * side, -1).normalized();
      Vec3 p = at;
      BodyId b = prev;
      for (int k = 0; k < 4; ++k, p += 0.1 * dir) b = link(p, dir, b);
      tips[side] = b;
    }
    if (loops && t % 20 == 0) {  // the tips' centres, joined where they are now
      JointDef j;
      j.body_a = tips[0];
      j.body_b = tips[1];
      j.anchor = 0.5 * (w.coordinates(tips[0]).tail<3>() + w.coordinates(tips[1]).tail<3>());
      w.add_joint(j);
    }
  }
  return w;
}

TEST(Threads, IndependentTreesAreBitIdentical) {
  for (bool loops : {false, true}) {
    World one = many_trees(1, loops), two = many_trees(2, loops);
    for (int s = 0; s < 20; ++s) {
      one.step();
      two.step();
    }
    EXPECT_STREQ(one.last_step().solver, "tree") << loops;
    EXPECT_LT(one.last_step().joint_residual, 1e-6) << loops;
    for (std::uint32_t i = 0; i < one.body_count(); ++i) {
      const Vec12 qa = one.coordinates(BodyId{i}), qb = two.coordinates(BodyId{i});
      for (int k = 0; k < 12; ++k) {
        ASSERT_EQ(qa[k], qb[k]) << "loops " << loops << " body " << i << " q[" << k << "]";
      }
    }
  }
}

TEST(Threads, IndependentWeldedChainsAreBitIdentical) {
  World one = many_chains(1, true), two = many_chains(2, true);
  for (int s = 0; s < 30; ++s) {
    one.step();
    two.step();
  }
  EXPECT_STREQ(one.last_step().solver, "chain");
  EXPECT_EQ(one.last_step().rows_ms, 0.0);  // the closed form, with dot rows
  EXPECT_LT(one.last_step().joint_residual, 1e-9);
  for (std::uint32_t i = 0; i < one.body_count(); ++i) {
    const Vec12 qa = one.coordinates(BodyId{i}), qb = two.coordinates(BodyId{i});
    for (int k = 0; k < 12; ++k) ASSERT_EQ(qa[k], qb[k]) << "body " << i << " q[" << k << "]";
  }
}

TEST(Threads, DivergenceNamesTheSameBody) {
  // 6000 free boxes; two of them, in different ranges, are thrown apart by absurd spins.
  std::string message[2];
  for (int threads : {1, 2}) {
    WorldSettings s;
    s.dt = 1e-2;
    s.threads = threads;
    World w(s);
    for (int i = 0; i < 6000; ++i) {
      BodyDef b;
      b.name = "box" + std::to_string(i);
      b.shape.type = ShapeType::Box;
      b.shape.size = Vec3(0.1, 0.1, 0.1);
      b.position = Vec3(0.2 * i, 0, 0);
      if (i == 2500 || i == 5000) b.angular_velocity = Vec3(0, 0, 1e6);
      w.add_body(b);
    }
    try {
      for (int k = 0; k < 3; ++k) w.step();
    } catch (const SimulationError& e) {
      message[threads - 1] = e.what();
    }
  }
  EXPECT_NE(message[0].find("'box2500'"), std::string::npos) << message[0];
  EXPECT_EQ(message[0], message[1]);
}

TEST(Threads, OutOfRangeIsRejected) {
  WorldSettings s;
  s.threads = 0;
  EXPECT_THROW(World{s}, InvalidArgument);
  s.threads = 257;
  EXPECT_THROW(World{s}, InvalidArgument);
}

}  // namespace
}  // namespace mabd
