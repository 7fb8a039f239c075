// Broad phase at scale: many far-apart dynamic bodies, one ground plane and a few box
// colliders; the contacts must be exactly the expected ones. Prints the detect time (no
// timing assertion: the machine may be shared).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "collision_test_util.h"

namespace mabd::test {
namespace {

TEST(BroadPhase, HundredThousandBodiesOnePlaneFewBoxes) {
  Scene s;
  s.add(geometry(BodyKind::Static, plane_shape()), Pose());
  // Four static boxes and a kinematic one, 0.6 m cubes on the ground between grid points,
  // each with a sphere resting on it (those are added last).
  const Vec3 box_centers[] = {Vec3(10.5, 10.5, 0.3), Vec3(100.5, 50.5, 0.3),
                              Vec3(200.5, 200.5, 0.3), Vec3(300.5, 100.5, 0.3),
                              Vec3(50.5, 150.5, 0.3)};
  for (int k = 0; k < 5; ++k) {
    s.add(geometry(k == 4 ? BodyKind::Kinematic : BodyKind::Static, box_shape(Vec3(0.6, 0.6, 0.6))),
          pose_at(box_centers[k]));
  }
  const double r = 0.1;
  const int nx = 400, ny = 250;  // 1e5 spheres on a 1 m grid
  std::size_t expected = 0;
  for (int i = 0; i < nx * ny; ++i) {
    const double x = i % nx, y = i / nx;
    // Every 7th sphere touches the ground (gap -1 mm); the others float 0.5 to 2.5 m up.
    const bool touching = i % 7 == 0;
    const double z = touching ? r - 0.001 : 0.5 + i % 3;
    expected += touching;
    s.add(geometry(BodyKind::Dynamic, sphere_shape(r)), pose_at(Vec3(x, y, z)));
  }
  const auto first_on_box = std::uint32_t(s.poses.size());
  for (const Vec3& c : box_centers) {
    s.add(geometry(BodyKind::Dynamic, sphere_shape(r)), pose_at(c + Vec3(0, 0, 0.3 + r - 0.001)));
    ++expected;
  }
  double best_ms = 1e30;
  for (int run = 0; run < 5; ++run) {
    s.poses[5].position.x() = box_centers[4].x() + 0.01 * run;  // the kinematic box moves
    const auto t0 = std::chrono::steady_clock::now();
    s.detect(0.01);
    const auto t1 = std::chrono::steady_clock::now();
    best_ms = std::min(best_ms, std::chrono::duration<double, std::milli>(t1 - t0).count());
    ASSERT_EQ(s.contacts.size(), expected);
  }
  std::printf("detect over %d dynamic bodies, 1 plane, 5 boxes: %.2f ms (best of 5)\n", nx * ny,
              best_ms);
  // The broad phase kept exactly the touching pairs: the bounding spheres of the floating
  // spheres reach neither the ground nor a box.
  EXPECT_EQ(s.world.stats().bodies_tested, std::size_t(nx * ny + 5));
  EXPECT_EQ(s.world.stats().broad_hits, expected);
  EXPECT_EQ(s.world.stats().primitive_pairs, expected);
  EXPECT_EQ(s.world.stats().points, expected);
  for (const auto& c : s.contacts) {
    if (c.body < first_on_box) {
      ASSERT_EQ(c.collider, 0u);
      ASSERT_EQ((c.body - 6) % 7, 0u);
    } else {
      ASSERT_EQ(c.collider, c.body - first_on_box + 1);  // its box
    }
    ASSERT_NEAR(c.gap, -0.001, 1e-9);
  }
  for (std::size_t k = 1; k < s.contacts.size(); ++k) {
    ASSERT_LT(s.contacts[k - 1].body, s.contacts[k].body);  // sorted by body
  }

  // Far-apart bodies with no collider in reach: nothing found, and cheap.
  for (std::size_t b = 6; b < s.poses.size(); ++b) s.poses[b].position.z() += 5;
  s.detect(0.01);  // the kinematic box is placed again
  const auto t0 = std::chrono::steady_clock::now();
  s.detect(0.01);
  const auto t1 = std::chrono::steady_clock::now();
  EXPECT_TRUE(s.contacts.empty());
  EXPECT_EQ(s.world.stats().broad_hits, 0u);
  std::printf("detect with no contact: %.2f ms\n",
              std::chrono::duration<double, std::milli>(t1 - t0).count());
}

}  // namespace
}  // namespace mabd::test
