// Contacts against box, sphere, capsule and cylinder colliders, checked against values
// computed by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "collision_test_util.h"

namespace mabd::test {
namespace {

constexpr double kPi = std::numbers::pi;

/// Scene with one static collider (body 0) and one dynamic body (body 1).
Scene pair_scene(const ShapeDef& collider, const Pose& collider_pose, const ShapeDef& body,
                 const Pose& body_pose) {
  Scene s;
  s.add(geometry(BodyKind::Static, collider), collider_pose);
  s.add(geometry(BodyKind::Dynamic, body), body_pose);
  return s;
}

/// World position of a contact's body point.
Vec3 body_point(const Scene& s, const ContactPoint& c) {
  return s.poses[c.body].orientation * c.p_body + s.poses[c.body].position;
}

void expect_all_consistent(const Scene& s) {
  for (const auto& c : s.contacts) expect_consistent(c, s.poses, 1e-9);
}

TEST(ConvexPairs, SphereOnBoxFaceEdgeAndInside) {
  // Box 2 x 2 x 1 centred at the origin, turned about z (the answer must not care).
  const Quat q = axis_angle(0.4, Vec3::UnitZ());
  Scene s = pair_scene(box_shape(Vec3(2, 2, 1)), pose_at(Vec3::Zero(), q), sphere_shape(0.3),
                       pose_at(q * Vec3(0.2, -0.1, 0.5 + 0.3 + 0.02)));
  ASSERT_EQ(s.detect(0.05).size(), 1u);
  EXPECT_NEAR(s.contacts[0].gap, 0.02, 1e-12);
  expect_vec_near(s.contacts[0].normal, Vec3::UnitZ());
  expect_vec_near(s.contacts[0].p_collider, Vec3(0.2, -0.1, 0.5));  // box frame

  // Beyond the +x top edge: the closest point is on the edge, the normal diagonal.
  const Vec3 edge(1, 0.3, 0.5);
  const Vec3 dir = Vec3(1, 0, 1).normalized();
  s.poses[1].position = q * (edge + (0.3 + 0.01) * dir);
  ASSERT_EQ(s.detect(0.05).size(), 1u);
  EXPECT_NEAR(s.contacts[0].gap, 0.01, 1e-12);
  expect_vec_near(s.contacts[0].normal, q * dir);
  expect_vec_near(s.contacts[0].p_collider, edge);
  expect_all_consistent(s);

  // Centre inside, nearest the +y face: penetration through that face.
  s.poses[1].position = q * Vec3(0.1, 0.9, 0);
  ASSERT_EQ(s.detect(0).size(), 1u);
  EXPECT_NEAR(s.contacts[0].gap, -0.1 - 0.3, 1e-12);
  expect_vec_near(s.contacts[0].normal, q * Vec3::UnitY());
  expect_all_consistent(s);
}

TEST(ConvexPairs, SphereOnSphereCapsuleCylinder) {
  const Vec3 dir = Vec3(1, -2, 2).normalized();
  Scene s = pair_scene(sphere_shape(0.5), pose_at(Vec3(1, 1, 1)), sphere_shape(0.25),
                       pose_at(Vec3(1, 1, 1) + 0.76 * dir));
  ASSERT_EQ(s.detect(0.02).size(), 1u);
  EXPECT_NEAR(s.contacts[0].gap, 0.01, 1e-12);
  expect_vec_near(s.contacts[0].normal, dir);
  expect_vec_near(s.contacts[0].p_collider, 0.5 * dir);
  expect_all_consistent(s);

  // Capsule collider lying along x: beside its cylindrical part and beyond its end.
  Scene c =
      pair_scene(capsule_shape(0.2, 2), pose_at(Vec3::Zero(), axis_angle(kPi / 2, Vec3::UnitY())),
                 sphere_shape(0.1), pose_at(Vec3(0.5, 0, 0.31)));
  ASSERT_EQ(c.detect(0.02).size(), 1u);
  EXPECT_NEAR(c.contacts[0].gap, 0.01, 1e-12);
  expect_vec_near(c.contacts[0].normal, Vec3::UnitZ());
  c.poses[1].position = Vec3(1 + 0.31, 0, 0);
  ASSERT_EQ(c.detect(0.02).size(), 1u);
  EXPECT_NEAR(c.contacts[0].gap, 0.01, 1e-12);
  expect_vec_near(c.contacts[0].normal, Vec3::UnitX());

  // Standing cylinder (radius 0.5, height 1): on the cap, beside the side, off the rim.
  Scene y = pair_scene(cylinder_shape(0.5, 1), Pose(), sphere_shape(0.1),
                       pose_at(Vec3(0.2, 0.1, 0.5 + 0.1 + 0.003)));
  ASSERT_EQ(y.detect(0.01).size(), 1u);
  EXPECT_NEAR(y.contacts[0].gap, 0.003, 1e-12);
  expect_vec_near(y.contacts[0].normal, Vec3::UnitZ());
  const Vec3 radial = Vec3(3, 4, 0) / 5;
  y.poses[1].position = (0.5 + 0.1 + 0.004) * radial + Vec3(0, 0, 0.2);
  ASSERT_EQ(y.detect(0.01).size(), 1u);
  EXPECT_NEAR(y.contacts[0].gap, 0.004, 1e-12);
  expect_vec_near(y.contacts[0].normal, radial);
  const Vec3 rim = 0.5 * radial + Vec3(0, 0, 0.5);
  const Vec3 out_dir = (radial + Vec3::UnitZ()).normalized();
  y.poses[1].position = rim + 0.105 * out_dir;
  ASSERT_EQ(y.detect(0.01).size(), 1u);
  EXPECT_NEAR(y.contacts[0].gap, 0.005, 1e-12);
  expect_vec_near(y.contacts[0].normal, out_dir);
  expect_vec_near(y.contacts[0].p_collider, rim);
}

TEST(ConvexPairs, CapsuleOverSphereTouchesAtItsMiddle) {
  Scene s = pair_scene(sphere_shape(0.5), Pose(), capsule_shape(0.1, 2),
                       pose_at(Vec3(0.3, 0, 0.62), axis_angle(kPi / 2, Vec3::UnitY())));
  ASSERT_EQ(s.detect(0.05).size(), 1u);
  EXPECT_EQ(s.contacts[0].feature, 4u);  // the nearest axis point
  EXPECT_NEAR(s.contacts[0].gap, 0.02, 1e-12);
  expect_vec_near(s.contacts[0].normal, Vec3::UnitZ());
  expect_vec_near(body_point(s, s.contacts[0]), Vec3(0, 0, 0.52));
  expect_all_consistent(s);
}

TEST(ConvexPairs, CapsuleCapsuleCrossingAndParallel) {
  // Collider capsule along x; body capsule along y, 1 cm above: one point at the crossing.
  const Quat along_x = axis_angle(kPi / 2, Vec3::UnitY());
  const Quat along_y = axis_angle(-kPi / 2, Vec3::UnitX());
  Scene s = pair_scene(capsule_shape(0.2, 2), pose_at(Vec3::Zero(), along_x), capsule_shape(0.1, 1),
                       pose_at(Vec3(0.3, 0.2, 0.31), along_y));
  ASSERT_EQ(s.detect(0.05).size(), 1u);
  EXPECT_EQ(s.contacts[0].feature, 4u);
  EXPECT_NEAR(s.contacts[0].gap, 0.01, 1e-12);
  expect_vec_near(s.contacts[0].normal, Vec3::UnitZ());
  expect_vec_near(body_point(s, s.contacts[0]), Vec3(0.3, 0, 0.21));

  // Parallel, overlapping over x in [0.5, 1]: the two ends of the overlap.
  s.poses[1] = pose_at(Vec3(1.2, 0, 0.305), along_x);  // body axis x in [0.7, 1.7]
  ASSERT_EQ(s.detect(0.05).size(), 2u);
  std::vector<double> xs;
  for (const auto& c : s.contacts) {
    EXPECT_NEAR(c.gap, 0.005, 1e-12);
    expect_vec_near(c.normal, Vec3::UnitZ(), 1e-12);
    xs.push_back(body_point(s, c).x());
  }
  std::sort(xs.begin(), xs.end());
  EXPECT_NEAR(xs[0], 0.7, 1e-12);  // the body's end 0
  EXPECT_NEAR(xs[1], 1.0, 1e-12);  // the collider's axis end
  expect_all_consistent(s);
}

TEST(ConvexPairs, CapsuleLyingOnBoxKeepsItsLineContact) {
  // Capsule (axis length 3) across a 1 x 1 box top face, overhanging both sides: the line
  // contact is the axis clipped to the face, x = -0.5 and 0.5.
  Scene s =
      pair_scene(box_shape(Vec3(1, 1, 1)), Pose(), capsule_shape(0.1, 3),
                 pose_at(Vec3(0, 0.2, 0.5 + 0.1 - 0.002), axis_angle(kPi / 2, Vec3::UnitY())));
  ASSERT_EQ(s.detect(0.01).size(), 2u);
  std::vector<double> xs;
  for (const auto& c : s.contacts) {
    EXPECT_NEAR(c.gap, -0.002, 1e-12);
    expect_vec_near(c.normal, Vec3::UnitZ(), 1e-12);
    xs.push_back(body_point(s, c).x());
  }
  std::sort(xs.begin(), xs.end());
  EXPECT_NEAR(xs[0], -0.5, 1e-12);
  EXPECT_NEAR(xs[1], 0.5, 1e-12);

  // Shorter than the face: its two ends (features 0 and 1).
  s = pair_scene(box_shape(Vec3(4, 4, 1)), Pose(), capsule_shape(0.1, 3),
                 pose_at(Vec3(0, 0, 0.6), axis_angle(kPi / 2, Vec3::UnitY())));
  ASSERT_EQ(s.detect(0.01).size(), 2u);
  EXPECT_EQ(s.contacts[0].feature, 0u);
  EXPECT_EQ(s.contacts[1].feature, 1u);
  expect_all_consistent(s);
}

TEST(ConvexPairs, CapsuleOnCylinderCapAndSide) {
  // Lying across the cap of a standing cylinder of radius 0.5: clipped to the disc.
  Scene s = pair_scene(cylinder_shape(0.5, 1), Pose(), capsule_shape(0.1, 3),
                       pose_at(Vec3(0, 0.3, 0.6), axis_angle(kPi / 2, Vec3::UnitY())));
  ASSERT_EQ(s.detect(0.01).size(), 2u);
  std::vector<double> xs;
  for (const auto& c : s.contacts) {
    EXPECT_NEAR(c.gap, 0, 1e-12);
    xs.push_back(body_point(s, c).x());
  }
  std::sort(xs.begin(), xs.end());
  EXPECT_NEAR(xs[0], -0.4, 1e-12);  // sqrt(0.5^2 - 0.3^2)
  EXPECT_NEAR(xs[1], 0.4, 1e-12);

  // Alongside a lying cylinder (axis x, length 1), parallel, overhanging: x = -0.5 and 0.5.
  const Quat along_x = axis_angle(kPi / 2, Vec3::UnitY());
  s = pair_scene(cylinder_shape(0.5, 1), pose_at(Vec3::Zero(), along_x), capsule_shape(0.1, 3),
                 pose_at(Vec3(0.2, 0, 0.61), along_x));
  ASSERT_EQ(s.detect(0.02).size(), 2u);
  xs.clear();
  for (const auto& c : s.contacts) {
    EXPECT_NEAR(c.gap, 0.01, 1e-12);
    expect_vec_near(c.normal, Vec3::UnitZ(), 1e-12);
    xs.push_back(body_point(s, c).x());
  }
  std::sort(xs.begin(), xs.end());
  EXPECT_NEAR(xs[0], -0.5, 1e-12);
  EXPECT_NEAR(xs[1], 0.5, 1e-12);
  expect_all_consistent(s);
}

TEST(ConvexPairs, BoxOnBoxes) {
  // A 1 m cube resting on a large box: its four bottom corners.
  Scene s = pair_scene(box_shape(Vec3(10, 10, 1)), Pose(), box_shape(Vec3(1, 1, 1)),
                       pose_at(Vec3(1, 2, 0.5 + 0.5 - 0.001)));
  ASSERT_EQ(s.detect(0.01).size(), 4u);
  for (std::uint32_t k = 0; k < 4; ++k) {
    EXPECT_EQ(s.contacts[k].feature, k);
    EXPECT_NEAR(s.contacts[k].gap, -0.001, 1e-9);
    expect_vec_near(s.contacts[k].normal, Vec3::UnitZ(), 1e-9);
  }
  expect_all_consistent(s);

  // A 2 m plate on a 0.5 m pedestal: the pedestal's top corners touch the plate.
  s = pair_scene(box_shape(Vec3(0.5, 0.5, 0.5)), Pose(), box_shape(Vec3(2, 2, 0.2)),
                 pose_at(Vec3(0.1, 0, 0.25 + 0.1 + 0.002)));
  ASSERT_EQ(s.detect(0.01).size(), 4u);
  for (const auto& c : s.contacts) {
    EXPECT_NEAR(c.gap, 0.002, 1e-9);
    expect_vec_near(c.normal, Vec3::UnitZ(), 1e-9);
    const Pose& pc = s.poses[c.collider];
    const Vec3 corner = pc.orientation * c.p_collider + pc.position;
    EXPECT_NEAR(std::abs(corner.x()), 0.25, 1e-9);
    EXPECT_NEAR(std::abs(corner.y()), 0.25, 1e-9);
    EXPECT_NEAR(corner.z(), 0.25, 1e-9);
  }
  expect_all_consistent(s);

  // Edge on edge: a box turned 45 degrees about x lying across a box turned about y.
  s = pair_scene(box_shape(Vec3(1, 1, 1)),
                 pose_at(Vec3::Zero(), axis_angle(kPi / 4, Vec3::UnitY())),
                 box_shape(Vec3(1, 1, 1)),
                 pose_at(Vec3(0, 0, std::sqrt(2.0) + 0.003), axis_angle(kPi / 4, Vec3::UnitX())));
  ASSERT_GE(s.detect(0.01).size(), 1u);
  const auto deepest = std::min_element(s.contacts.begin(), s.contacts.end(),
                                        [](const auto& x, const auto& y) { return x.gap < y.gap; });
  EXPECT_NEAR(deepest->gap, 0.003, 1e-6);
  expect_vec_near(deepest->normal, Vec3::UnitZ(), 1e-6);
  expect_all_consistent(s);
}

TEST(ConvexPairs, CylinderAndHullOnBoxAndBoxOnSphere) {
  // Cylinder standing on a box: four rim points.
  Scene s = pair_scene(box_shape(Vec3(4, 4, 1)), Pose(), cylinder_shape(0.3, 1),
                       pose_at(Vec3(0.5, 0.5, 0.5 + 0.5)));
  ASSERT_EQ(s.detect(0.01).size(), 4u);
  for (const auto& c : s.contacts) {
    EXPECT_NEAR(c.gap, 0, 1e-9);
    EXPECT_NEAR(c.p_body.z(), -0.5, 1e-12);
    EXPECT_NEAR(std::hypot(c.p_body.x(), c.p_body.y()), 0.3, 1e-12);
  }
  expect_all_consistent(s);

  // Cube mesh (its hull) on a box: its four bottom vertices.
  s = pair_scene(box_shape(Vec3(4, 4, 1)), Pose(), mesh_shape(cube_mesh(0.5)),
                 pose_at(Vec3(0, 0, 1.005)));
  ASSERT_EQ(s.detect(0.01).size(), 4u);
  for (const auto& c : s.contacts) EXPECT_NEAR(c.gap, 0.005, 1e-9);
  expect_all_consistent(s);

  // A box resting on a static ball: one point under the box's centre.
  s = pair_scene(sphere_shape(1), Pose(), box_shape(Vec3(1, 1, 0.4)), pose_at(Vec3(0, 0, 1.19)));
  ASSERT_EQ(s.detect(0.01).size(), 1u);
  EXPECT_NEAR(s.contacts[0].gap, -0.01, 1e-12);
  expect_vec_near(s.contacts[0].normal, Vec3::UnitZ());
  expect_vec_near(s.contacts[0].p_body, Vec3(0, 0, -0.2));
  expect_all_consistent(s);
}

TEST(ConvexPairs, KinematicBoxMovedBetweenDetects) {
  Scene s;
  s.add(geometry(BodyKind::Kinematic, box_shape(Vec3(1, 1, 1))), Pose());
  s.add(geometry(BodyKind::Dynamic, sphere_shape(0.25)), pose_at(Vec3(5, 0, 0.75)));
  EXPECT_TRUE(s.detect(0.01).empty());
  s.poses[0].position = Vec3(5, 0, 0.01);  // under the sphere, pressing into it
  ASSERT_EQ(s.detect(0.01).size(), 1u);
  EXPECT_NEAR(s.contacts[0].gap, -0.01, 1e-12);
  s.poses[0].position = Vec3(5, 0, -0.005);
  ASSERT_EQ(s.detect(0.01).size(), 1u);
  EXPECT_NEAR(s.contacts[0].gap, 0.005, 1e-12);
  s.poses[0].position = Vec3(-5, 0, 0);
  EXPECT_TRUE(s.detect(0.01).empty());
}

}  // namespace
}  // namespace mabd::test
