// CollisionWorld bookkeeping: filtering, exclusions, invalid input, output order and the
// broad phase at scale.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "collision_test_util.h"
#include "mabd/error.h"

namespace mabd::test {
namespace {

TEST(CollisionWorld, PlaneOnDynamicBodyThrows) {
  CollisionWorld w;
  try {
    w.add_body(0, geometry(BodyKind::Dynamic, plane_shape()));
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("plane"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("body 0 primitive 0"), std::string::npos) << e.what();
  }
}

TEST(CollisionWorld, InvalidShapesAndCallsThrow) {
  CollisionWorld w;
  EXPECT_THROW(w.add_body(1, geometry(BodyKind::Dynamic, sphere_shape(1))), InvalidArgument);
  EXPECT_THROW(w.add_body(0, geometry(BodyKind::Dynamic, sphere_shape(-1))), InvalidArgument);
  TriangleMesh open;
  open.vertices = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0)};
  open.triangles = {{0, 1, 2}};
  // An open mesh is a collider shape only.
  EXPECT_THROW(w.add_body(0, geometry(BodyKind::Dynamic, mesh_shape(open))), InvalidArgument);
  w.add_body(0, geometry(BodyKind::Static, mesh_shape(open)));
  std::vector<ContactPoint> out;
  EXPECT_THROW(w.detect({}, 0.01, out), InvalidArgument);
  EXPECT_THROW(w.detect({Pose()}, -1, out), InvalidArgument);
}

TEST(CollisionWorld, GroupMaskAndExcludedPairs) {
  Scene s;
  CollisionGeometry ground = geometry(BodyKind::Static, plane_shape());
  ground.group = 0b01;
  ground.mask = 0b11;
  s.add(ground, Pose());
  CollisionGeometry a = geometry(BodyKind::Dynamic, sphere_shape(0.5));
  a.group = 0b10;  // accepted by the ground's mask; its mask rejects the ground's group
  a.mask = 0b10;
  s.add(a, pose_at(Vec3(0, 0, 0.5)));
  CollisionGeometry b = geometry(BodyKind::Dynamic, sphere_shape(0.5));
  b.group = 0b10;
  b.mask = 0b01;
  s.add(b, pose_at(Vec3(2, 0, 0.5)));
  CollisionGeometry none = geometry(BodyKind::Dynamic, sphere_shape(0.5));
  none.primitives.clear();  // does not collide at all
  s.add(none, pose_at(Vec3(4, 0, 0.5)));
  s.add(geometry(BodyKind::Dynamic, sphere_shape(0.5)), pose_at(Vec3(6, 0, 0.5)));
  EXPECT_EQ(s.world.colliding_bodies(), 4u);

  const auto& c = s.detect(0.01);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].body, 2u);
  EXPECT_EQ(c[1].body, 4u);

  s.world.exclude_pair(0, 4);
  ASSERT_EQ(s.detect(0.01).size(), 1u);
  EXPECT_EQ(s.contacts[0].body, 2u);
}

TEST(CollisionWorld, NothingToDoWithoutColliders) {
  Scene s;
  for (int i = 0; i < 10; ++i) {
    s.add(geometry(BodyKind::Dynamic, sphere_shape(0.5)), pose_at(Vec3(0, 0, 0)));
  }
  EXPECT_TRUE(s.detect(1.0).empty());
  EXPECT_EQ(s.world.stats().bodies_tested, 0u);  // no collider: nothing looked at

  // A collider whose filter accepts none of them: still nothing to look at.
  CollisionGeometry ground = geometry(BodyKind::Static, plane_shape());
  ground.mask = 0b10;
  s.add(ground, Pose());
  EXPECT_TRUE(s.detect(1.0).empty());
  EXPECT_EQ(s.world.stats().bodies_tested, 0u);
}

}  // namespace
}  // namespace mabd::test
