// Closed-form contacts against a plane collider, checked against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "collision_test_util.h"

namespace mabd::test {
namespace {

constexpr double kPi = std::numbers::pi;

/// Scene with a static ground plane z <= 0 (body 0).
Scene ground_scene() {
  Scene s;
  s.add(geometry(BodyKind::Static, plane_shape()), Pose());
  return s;
}

TEST(PlanePairs, SphereAboveTiltedPlane) {
  Scene s;
  // Plane primitive placed in its body frame, body tilted: the plane normal is the body's
  // rotation of the primitive's +z.
  const Quat prim_q = axis_angle(0.3, Vec3(1, 0, 0));
  const Quat body_q = axis_angle(-0.5, Vec3(0, 1, 1));
  const Vec3 body_p(0.5, -1, 2);
  const Vec3 prim_p(0.1, 0.2, 0.3);
  s.add(geometry(BodyKind::Kinematic, plane_shape(), pose_at(prim_p, prim_q)),
        pose_at(body_p, body_q));
  const Vec3 n = body_q * (prim_q * Vec3::UnitZ());
  const Vec3 origin = body_q * prim_p + body_p;
  const Vec3 tangent = n.unitOrthogonal();
  const double r = 0.4, h = 0.43;
  const Vec3 center = origin + 1.5 * tangent + h * n;
  const Quat sphere_q = axis_angle(1.0, Vec3(1, 2, 3));
  s.add(geometry(BodyKind::Dynamic, sphere_shape(r)), pose_at(center, sphere_q));

  const auto& c = s.detect(0.05);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].body, 1u);
  EXPECT_EQ(c[0].collider, 0u);
  EXPECT_EQ(c[0].feature, 0u);
  EXPECT_NEAR(c[0].gap, h - r, 1e-12);
  expect_vec_near(c[0].normal, n);
  // On the sphere: r along -n, in the sphere's frame.
  expect_vec_near(c[0].p_body, sphere_q.conjugate() * (-r * n));
  // On the plane: the foot of the centre, in the plane body's frame.
  expect_vec_near(c[0].p_collider, body_q.conjugate() * (origin + 1.5 * tangent - body_p));
  expect_consistent(c[0], s.poses);
}

TEST(PlanePairs, MarginFiltersPoints) {
  Scene s = ground_scene();
  s.add(geometry(BodyKind::Dynamic, sphere_shape(0.5)), pose_at(Vec3(0, 0, 0.55)));
  EXPECT_TRUE(s.detect(0.04).empty());
  EXPECT_EQ(s.detect(0.06).size(), 1u);
  // Penetrating: negative gap, reported with any margin.
  s.poses[1].position.z() = 0.45;
  ASSERT_EQ(s.detect(0).size(), 1u);
  EXPECT_NEAR(s.contacts[0].gap, -0.05, 1e-12);
}

TEST(PlanePairs, BoxRestingGivesItsFourBottomCorners) {
  Scene s = ground_scene();
  const Vec3 size(2, 1, 0.5);
  s.add(geometry(BodyKind::Dynamic, box_shape(size)), pose_at(Vec3(3, 4, 0.25)));
  const auto& c = s.detect(0.01);
  ASSERT_EQ(c.size(), 4u);
  for (std::uint32_t k = 0; k < 4; ++k) {
    EXPECT_EQ(c[k].feature, k);  // bottom corners: z bit clear
    EXPECT_NEAR(c[k].gap, 0, 1e-12);
    const Vec3 corner((k & 1) ? 1 : -1, (k & 2) ? 0.5 : -0.5, -0.25);
    expect_vec_near(c[k].p_body, corner);
    expect_vec_near(c[k].p_collider, Vec3(3 + corner.x(), 4 + corner.y(), 0));
    expect_vec_near(c[k].normal, Vec3::UnitZ());
  }
}

TEST(PlanePairs, TiltedBoxCornersByHand) {
  Scene s = ground_scene();
  const double hx = 1, hy = 0.5, hz = 0.25, theta = 0.1, cz = 0.34;
  s.add(geometry(BodyKind::Dynamic, box_shape(Vec3(2 * hx, 2 * hy, 2 * hz))),
        pose_at(Vec3(0, 0, cz), axis_angle(theta, Vec3::UnitY())));
  // Rotation about y: corner height z = cz - x sin(theta) + z cos(theta).
  auto height = [&](double x, double z) { return cz - x * std::sin(theta) + z * std::cos(theta); };
  const double deep = height(hx, -hz);     // corners 1 and 3 (about -0.0086)
  const double second = height(-hx, -hz);  // corners 0 and 2 (about 0.191)
  const double top = height(hx, hz);       // corners 5 and 7 (about 0.489)

  auto features = [](const std::vector<ContactPoint>& c) {
    std::vector<std::uint32_t> f;
    for (const auto& p : c) f.push_back(p.feature);
    return f;
  };
  const auto& c2 = s.detect(0.05);
  EXPECT_EQ(features(c2), (std::vector<std::uint32_t>{1, 3}));
  for (const auto& p : c2) EXPECT_NEAR(p.gap, deep, 1e-12);

  const auto& c4 = s.detect(0.2);
  ASSERT_EQ(features(c4), (std::vector<std::uint32_t>{0, 1, 2, 3}));
  EXPECT_NEAR(c4[0].gap, second, 1e-12);
  EXPECT_NEAR(c4[1].gap, deep, 1e-12);

  // Six corners within the margin: the reduction keeps the deepest and a spread set, here
  // the bottom face.
  ASSERT_LT(top, 0.5);
  const auto& c6 = s.detect(0.5);
  EXPECT_EQ(features(c6), (std::vector<std::uint32_t>{0, 1, 2, 3}));
  for (const auto& p : c6) expect_consistent(p, s.poses);
}

TEST(PlanePairs, CapsuleLyingAndStanding) {
  Scene s = ground_scene();
  const double r = 0.2, len = 1.0;
  // Lying along world x (axis z rotated onto x), resting: both ends touch.
  s.add(geometry(BodyKind::Dynamic, capsule_shape(r, len)),
        pose_at(Vec3(0, 0, r), axis_angle(kPi / 2, Vec3::UnitY())));
  const auto& lying = s.detect(0.01);
  ASSERT_EQ(lying.size(), 2u);
  for (std::uint32_t end = 0; end < 2; ++end) {
    EXPECT_EQ(lying[end].feature, end);
    EXPECT_NEAR(lying[end].gap, 0, 1e-12);
    const double z = end == 0 ? -len / 2 : len / 2;
    // World -z is the body's +x after a +90 degree turn about y.
    expect_vec_near(lying[end].p_body, Vec3(r, 0, z), 1e-12);
    expect_consistent(lying[end], s.poses);
  }
  // Standing on end 0, 1 cm above the ground.
  s.poses[1] = pose_at(Vec3(0, 0, len / 2 + r + 0.01));
  const auto& standing = s.detect(0.02);
  ASSERT_EQ(standing.size(), 1u);
  EXPECT_EQ(standing[0].feature, 0u);
  EXPECT_NEAR(standing[0].gap, 0.01, 1e-12);
  expect_vec_near(standing[0].p_body, Vec3(0, 0, -len / 2 - r));
}

TEST(PlanePairs, CylinderStandingLyingTilted) {
  Scene s = ground_scene();
  const double r = 0.3, len = 0.8, h = len / 2;
  s.add(geometry(BodyKind::Dynamic, cylinder_shape(r, len)), pose_at(Vec3(1, 1, h)));
  // Standing on cap 0: four rim points at the frame's +x, +y, -x, -y.
  const auto& standing = s.detect(0.01);
  ASSERT_EQ(standing.size(), 4u);
  const Vec3 rim[4] = {Vec3(r, 0, -h), Vec3(0, r, -h), Vec3(-r, 0, -h), Vec3(0, -r, -h)};
  for (std::uint32_t k = 0; k < 4; ++k) {
    EXPECT_EQ(standing[k].feature, k);
    EXPECT_NEAR(standing[k].gap, 0, 1e-12);
    expect_vec_near(standing[k].p_body, rim[k]);
  }

  // Lying on its side (axis along world y): the line contact as the deepest rim point of
  // each cap.
  s.poses[1] = pose_at(Vec3(0, 0, r - 0.002), axis_angle(kPi / 2, Vec3::UnitX()));
  const auto& lying = s.detect(0.01);
  ASSERT_EQ(lying.size(), 2u);
  EXPECT_EQ(lying[0].feature, 0u);
  EXPECT_EQ(lying[1].feature, 4u);
  for (const auto& p : lying) {
    EXPECT_NEAR(p.gap, -0.002, 1e-12);
    expect_consistent(p, s.poses);
  }
  // Rotation about x by +90 degrees takes body +y to world +z: the lowest rim point is at -y.
  expect_vec_near(lying[0].p_body, Vec3(0, -r, -h), 1e-12);
  expect_vec_near(lying[1].p_body, Vec3(0, -r, h), 1e-12);

  // Tilted by 0.3 rad about x, resting on the lowest rim point of cap 0: height of the
  // lowest point cz - h cos(t) - r sin(t) = 0.
  const double t = 0.3;
  const double cz = h * std::cos(t) + r * std::sin(t);
  s.poses[1] = pose_at(Vec3(0, 0, cz), axis_angle(t, Vec3::UnitX()));
  const auto& tilted = s.detect(0.01);
  ASSERT_EQ(tilted.size(), 1u);
  EXPECT_EQ(tilted[0].feature, 0u);
  EXPECT_NEAR(tilted[0].gap, 0, 1e-12);
  // Tilting about +x lifts +y: the deepest rim point is towards -y.
  expect_vec_near(tilted[0].p_body, Vec3(0, -r, -h), 1e-12);
  // A larger margin adds the +-90 degree rim points of cap 0 (height r sin(t) each).
  const auto& wide = s.detect(r * std::sin(t) + 0.01);
  ASSERT_EQ(wide.size(), 3u);
  EXPECT_EQ(wide[1].feature, 1u);
  EXPECT_EQ(wide[2].feature, 3u);
  EXPECT_NEAR(wide[1].gap, r * std::sin(t), 1e-12);
}

TEST(PlanePairs, ConvexMeshUsesItsVertices) {
  Scene s = ground_scene();
  s.add(geometry(BodyKind::Dynamic, mesh_shape(cube_mesh(0.5))), pose_at(Vec3(0, 0, 0.49)));
  const auto& c = s.detect(0.01);
  ASSERT_EQ(c.size(), 4u);
  for (std::uint32_t k = 0; k < 4; ++k) {
    EXPECT_EQ(c[k].feature, k);  // vertex index
    EXPECT_NEAR(c[k].gap, -0.01, 1e-12);
  }
}

TEST(PlanePairs, CompoundBodyFeaturesAreUniquePerPrimitive) {
  Scene s = ground_scene();
  CollisionGeometry g;
  g.kind = BodyKind::Dynamic;
  g.primitives.push_back({sphere_shape(0.1), pose_at(Vec3(-1, 0, 0))});
  g.primitives.push_back({sphere_shape(0.1), pose_at(Vec3(1, 0, 0))});
  s.add(g, pose_at(Vec3(0, 0, 0.1)));
  const auto& c = s.detect(0.01);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_NE(c[0].feature, c[1].feature);
  expect_vec_near(c[0].p_body, Vec3(-1, 0, -0.1));
  expect_vec_near(c[1].p_body, Vec3(1, 0, -0.1));
}

TEST(PlanePairs, KinematicPlaneMovedBetweenDetects) {
  Scene s;
  s.add(geometry(BodyKind::Kinematic, plane_shape()), Pose());
  s.add(geometry(BodyKind::Dynamic, sphere_shape(0.5)), pose_at(Vec3(0, 0, 0.5)));
  ASSERT_EQ(s.detect(0.01).size(), 1u);
  EXPECT_NEAR(s.contacts[0].gap, 0, 1e-12);
  s.poses[0].position.z() = 0.1;
  ASSERT_EQ(s.detect(0.01).size(), 1u);
  EXPECT_NEAR(s.contacts[0].gap, -0.1, 1e-12);
  s.poses[0].position.z() = -1;
  EXPECT_TRUE(s.detect(0.01).empty());
}

}  // namespace
}  // namespace mabd::test
