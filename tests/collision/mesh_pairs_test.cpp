// Contacts against triangle mesh colliders: a flat square must give the plane's answer, a
// bowl its faces (two in a crease), seams no duplicate points, open meshes one side only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "collision_test_util.h"

namespace mabd::test {
namespace {

constexpr double kPi = std::numbers::pi;

/// Open square [-s, s]^2 at z = 0 in two counter-clockwise triangles (normal +z), split
/// along the diagonal from (s, -s) to (-s, s).
TriangleMesh square(double s) {
  TriangleMesh m;
  m.vertices = {Vec3(s, -s, 0), Vec3(s, s, 0), Vec3(-s, s, 0), Vec3(-s, -s, 0)};
  m.triangles = {{0, 1, 2}, {0, 2, 3}};
  return m;
}

/// Open bowl: flat floor [-1, 1]^2 at z = 0 and four walls up to the rim [-2, 2]^2 at z = 1
/// (wall planes like x - z = 1, normal (-1, 0, 1) / sqrt 2).
TriangleMesh bowl() {
  TriangleMesh m;
  const double cx[4] = {1, 1, -1, -1}, cy[4] = {-1, 1, 1, -1};           // counter-clockwise
  for (int k = 0; k < 4; ++k) m.vertices.emplace_back(cx[k], cy[k], 0);  // inner 0-3
  for (int k = 0; k < 4; ++k) m.vertices.emplace_back(2 * cx[k], 2 * cy[k], 1);  // rim 4-7
  m.triangles = {{0, 1, 2}, {0, 2, 3}};
  for (int k = 0; k < 4; ++k) {
    const int i0 = k, i1 = (k + 1) % 4, o0 = 4 + k, o1 = 4 + (k + 1) % 4;
    m.triangles.push_back({i0, o0, o1});
    m.triangles.push_back({i0, o1, i1});
  }
  return m;
}

void expect_no_duplicates(const std::vector<ContactPoint>& c) {
  for (std::size_t i = 0; i < c.size(); ++i) {
    for (std::size_t j = i + 1; j < c.size(); ++j) {
      EXPECT_NE(c[i].feature, c[j].feature);
      const bool same_place =
          (c[i].p_body - c[j].p_body).norm() < 1e-6 && c[i].normal.dot(c[j].normal) > 1 - 1e-6;
      EXPECT_FALSE(same_place) << "points " << i << " and " << j << " coincide";
    }
  }
}

/// The same dynamic body against a plane and against a flat mesh at the same pose must give
/// the same points (features aside).
void expect_mesh_matches_plane(const ShapeDef& body, const Pose& body_pose, double margin) {
  const Pose ground = pose_at(Vec3(0.3, -0.2, 0.1), axis_angle(0.2, Vec3(1, 1, 0)));
  Scene plane;
  plane.add(geometry(BodyKind::Static, plane_shape()), ground);
  plane.add(geometry(BodyKind::Dynamic, body), body_pose);
  Scene mesh;
  mesh.add(geometry(BodyKind::Static, mesh_shape(square(5))), ground);
  mesh.add(geometry(BodyKind::Dynamic, body), body_pose);
  const auto& expected = plane.detect(margin);
  const auto& got = mesh.detect(margin);
  ASSERT_EQ(got.size(), expected.size());
  ASSERT_FALSE(got.empty());
  for (const auto& e : expected) {
    // Same body point (order may differ: features differ).
    const auto it = std::find_if(got.begin(), got.end(), [&](const ContactPoint& g) {
      return (g.p_body - e.p_body).norm() < 1e-9;
    });
    ASSERT_NE(it, got.end()) << "missing point " << e.p_body.transpose();
    EXPECT_NEAR(it->gap, e.gap, 1e-9);
    expect_vec_near(it->normal, e.normal, 1e-9);
    expect_vec_near(it->p_collider, e.p_collider, 1e-9);
    expect_consistent(*it, mesh.poses, 1e-9);
  }
  expect_no_duplicates(got);
}

TEST(MeshPairs, FlatSquareMatchesThePlane) {
  const Pose ground = pose_at(Vec3(0.3, -0.2, 0.1), axis_angle(0.2, Vec3(1, 1, 0)));
  const Vec3 n = ground.orientation * Vec3::UnitZ();
  auto on_ground = [&](const Vec3& local, double h) {
    return Vec3(ground.orientation * local + ground.position + h * n);
  };
  // Sphere over a triangle, over the diagonal seam and over a shared corner vertex.
  for (const Vec3& at : {Vec3(1, 0.5, 0), Vec3(0.7, -0.7, 0), Vec3(5, -5, 0)}) {
    SCOPED_TRACE(at.transpose());
    expect_mesh_matches_plane(sphere_shape(0.4), pose_at(on_ground(at, 0.41)), 0.02);
  }
  // Box resting tilted, capsule lying across the seam, cylinder standing and lying.
  expect_mesh_matches_plane(box_shape(Vec3(1, 0.6, 0.4)),
                            pose_at(on_ground(Vec3(0.2, 0.1, 0), 0.3),
                                    ground.orientation * axis_angle(0.1, Vec3::UnitY())),
                            0.2);
  expect_mesh_matches_plane(capsule_shape(0.2, 2),
                            pose_at(on_ground(Vec3(0, 0, 0), 0.199),
                                    ground.orientation * axis_angle(kPi / 2, Vec3::UnitY())),
                            0.01);
  expect_mesh_matches_plane(cylinder_shape(0.3, 0.8),
                            pose_at(on_ground(Vec3(-1, 1, 0), 0.4), ground.orientation), 0.01);
  expect_mesh_matches_plane(cylinder_shape(0.3, 0.8),
                            pose_at(on_ground(Vec3(-1, 1, 0), 0.3),
                                    ground.orientation * axis_angle(kPi / 2, Vec3::UnitX())),
                            0.01);
  expect_mesh_matches_plane(mesh_shape(cube_mesh(0.5)),
                            pose_at(on_ground(Vec3(2, 2, 0), 0.495), ground.orientation), 0.01);
}

TEST(MeshPairs, SphereInABowl) {
  Scene s;
  s.add(geometry(BodyKind::Static, mesh_shape(bowl())), Pose());
  const double r = 0.25;
  // On the floor: the plane result.
  s.add(geometry(BodyKind::Dynamic, sphere_shape(r)), pose_at(Vec3(0.3, 0.2, r + 0.005)));
  ASSERT_EQ(s.detect(0.01).size(), 1u);
  EXPECT_NEAR(s.contacts[0].gap, 0.005, 1e-12);
  expect_vec_near(s.contacts[0].normal, Vec3::UnitZ());
  expect_vec_near(s.contacts[0].p_collider, Vec3(0.3, 0.2, 0));

  // Against the +x wall only.
  const Vec3 wall_n = Vec3(-1, 0, 1).normalized();
  s.poses[1].position = Vec3(1.5, 0.2, 0.5) + (r - 0.003) * wall_n;
  ASSERT_EQ(s.detect(0.01).size(), 1u);
  EXPECT_NEAR(s.contacts[0].gap, -0.003, 1e-12);
  expect_vec_near(s.contacts[0].normal, wall_n);
  expect_vec_near(s.contacts[0].p_collider, Vec3(1.5, 0.2, 0.5));

  // In the crease: touching the floor and the wall, one point each (no edge points).
  s.poses[1].position = Vec3(1 + r - r * std::sqrt(2.0), 0, r);
  ASSERT_EQ(s.detect(0.01).size(), 2u);
  for (const auto& c : s.contacts) {
    EXPECT_NEAR(c.gap, 0, 1e-12);
    EXPECT_TRUE((c.normal - Vec3::UnitZ()).norm() < 1e-12 || (c.normal - wall_n).norm() < 1e-12)
        << c.normal.transpose();
    expect_consistent(c, s.poses);
  }
  EXPECT_GT((s.contacts[0].normal - s.contacts[1].normal).norm(), 0.1);
}

TEST(MeshPairs, CapsuleAcrossEdgesGivesNoDuplicates) {
  // Across the diagonal seam of a flat square: its two ends only.
  Scene s;
  s.add(geometry(BodyKind::Static, mesh_shape(square(2))), Pose());
  s.add(geometry(BodyKind::Dynamic, capsule_shape(0.1, 1.5)),
        pose_at(Vec3(0, 0, 0.1),
                axis_angle(kPi / 4, Vec3::UnitZ()) * axis_angle(kPi / 2, Vec3::UnitY())));
  ASSERT_EQ(s.detect(0.01).size(), 2u);
  expect_no_duplicates(s.contacts);
  for (const auto& c : s.contacts) {
    EXPECT_NEAR(c.gap, 0, 1e-12);
    expect_vec_near(c.normal, Vec3::UnitZ(), 1e-12);
  }

  // Across a roof ridge (two faces meeting along the y axis at 30 degrees): one point on
  // the ridge, found through both faces but reported once.
  TriangleMesh roof;
  const double t = std::tan(kPi / 6);
  roof.vertices = {Vec3(-1, -1, -t), Vec3(0, -1, 0),  Vec3(0, 1, 0),
                   Vec3(-1, 1, -t),  Vec3(1, -1, -t), Vec3(1, 1, -t)};
  roof.triangles = {{0, 1, 2}, {0, 2, 3}, {1, 4, 5}, {1, 5, 2}};
  Scene r;
  r.add(geometry(BodyKind::Static, mesh_shape(roof)), Pose());
  r.add(geometry(BodyKind::Dynamic, capsule_shape(0.1, 1.2)),
        pose_at(Vec3(0, 0.3, 0.105), axis_angle(kPi / 2, Vec3::UnitY())));
  ASSERT_EQ(r.detect(0.01).size(), 1u);
  EXPECT_NEAR(r.contacts[0].gap, 0.005, 1e-12);
  expect_vec_near(r.contacts[0].normal, Vec3::UnitZ(), 1e-12);
  expect_vec_near(r.contacts[0].p_collider, Vec3(0, 0.3, 0), 1e-12);
}

TEST(MeshPairs, CapsuleOverhangingAnOpenStrip) {
  // A 0.4 m wide strip; a capsule lying across it: the line contact clipped at its edges.
  TriangleMesh strip;
  strip.vertices = {Vec3(-0.2, -2, 0), Vec3(0.2, -2, 0), Vec3(0.2, 2, 0), Vec3(-0.2, 2, 0)};
  strip.triangles = {{0, 1, 2}, {0, 2, 3}};
  Scene s;
  s.add(geometry(BodyKind::Static, mesh_shape(strip)), Pose());
  s.add(geometry(BodyKind::Dynamic, capsule_shape(0.1, 2)),
        pose_at(Vec3(0.1, 0.5, 0.098), axis_angle(kPi / 2, Vec3::UnitY())));
  ASSERT_EQ(s.detect(0.01).size(), 2u);
  std::vector<double> xs;
  for (const auto& c : s.contacts) {
    EXPECT_NEAR(c.gap, -0.002, 1e-12);
    expect_vec_near(c.normal, Vec3::UnitZ(), 1e-12);
    xs.push_back(c.p_collider.x());
  }
  std::sort(xs.begin(), xs.end());
  EXPECT_NEAR(xs[0], -0.2, 1e-12);
  EXPECT_NEAR(xs[1], 0.2, 1e-12);
  expect_no_duplicates(s.contacts);
}

TEST(MeshPairs, OpenMeshCollidesOnItsFrontSideOnly) {
  Scene s;
  s.add(geometry(BodyKind::Static, mesh_shape(square(2))), Pose());
  s.add(geometry(BodyKind::Dynamic, sphere_shape(0.3)), pose_at(Vec3(0.5, 0.5, -0.29)));
  EXPECT_TRUE(s.detect(0.05).empty());  // under the square: its back side
  s.poses[1].position.z() = 0.29;
  ASSERT_EQ(s.detect(0.05).size(), 1u);
  EXPECT_NEAR(s.contacts[0].gap, -0.01, 1e-12);
  s.add(geometry(BodyKind::Dynamic, box_shape(Vec3(0.4, 0.4, 0.4))), pose_at(Vec3(0, 0, -0.21)));
  ASSERT_EQ(s.detect(0.05).size(), 1u);  // the box is behind the square too
}

TEST(MeshPairs, BoxAndHullOnABowlFloorAndEdgeOnRidge) {
  Scene s;
  s.add(geometry(BodyKind::Static, mesh_shape(bowl())), Pose());
  s.add(geometry(BodyKind::Dynamic, box_shape(Vec3(0.5, 0.5, 0.5))),
        pose_at(Vec3(0.2, 0.1, 0.25 + 0.001), axis_angle(0.3, Vec3::UnitZ())));
  s.add(geometry(BodyKind::Dynamic, mesh_shape(cube_mesh(0.2))), pose_at(Vec3(-0.5, -0.5, 0.2)));
  const auto& c = s.detect(0.01);
  ASSERT_EQ(c.size(), 8u);
  for (const auto& p : c) {
    EXPECT_NEAR(p.gap, p.body == 1 ? 0.001 : 0.0, 1e-9);
    expect_vec_near(p.normal, Vec3::UnitZ(), 1e-9);
    expect_consistent(p, s.poses, 1e-9);
  }

  // A box edge (along x) across the roof ridge (along y): edge against edge, from GJK.
  TriangleMesh roof;
  const double t = std::tan(kPi / 6);
  roof.vertices = {Vec3(-1, -1, -t), Vec3(0, -1, 0),  Vec3(0, 1, 0),
                   Vec3(-1, 1, -t),  Vec3(1, -1, -t), Vec3(1, 1, -t)};
  roof.triangles = {{0, 1, 2}, {0, 2, 3}, {1, 4, 5}, {1, 5, 2}};
  Scene r;
  r.add(geometry(BodyKind::Static, mesh_shape(roof)), Pose());
  r.add(geometry(BodyKind::Dynamic, box_shape(Vec3(1, 1, 1))),
        pose_at(Vec3(0, 0.2, std::sqrt(0.5) + 0.004), axis_angle(kPi / 4, Vec3::UnitX())));
  ASSERT_GE(r.detect(0.01).size(), 1u);
  const auto deepest = std::min_element(r.contacts.begin(), r.contacts.end(),
                                        [](const auto& x, const auto& y) { return x.gap < y.gap; });
  EXPECT_NEAR(deepest->gap, 0.004, 1e-6);
  expect_vec_near(deepest->normal, Vec3::UnitZ(), 1e-6);
  expect_no_duplicates(r.contacts);
}

// A box on a floor next to a vertical wall: its four floor points are deeper (1 mm) than its
// four speculative points against the wall (5 mm). Both faces keep their points, so that a
// box moving towards the wall within the step meets a row for it.
TEST(MeshPairs, BoxInACreaseKeepsPointsOnBothFaces) {
  TriangleMesh crease = square(1);                               // the floor, z = 0
  crease.vertices.insert(crease.vertices.end(), {Vec3(1, -1, 1), Vec3(1, 1, 1)});
  crease.triangles.insert(crease.triangles.end(), {{0, 5, 1}, {0, 4, 5}});  // x = 1, normal -x
  const double half = 0.25, floor_gap = 0.001, wall_gap = 0.005;
  Scene s;
  s.add(geometry(BodyKind::Static, mesh_shape(crease)), Pose());
  s.add(geometry(BodyKind::Dynamic, box_shape(Vec3::Constant(2 * half))),
        pose_at(Vec3(1 - wall_gap - half, 0, half + floor_gap)));
  const auto& c = s.detect(0.01);
  int on_floor = 0, on_wall = 0;
  for (const auto& p : c) {
    expect_consistent(p, s.poses, 1e-9);
    if (p.normal.dot(Vec3::UnitZ()) > 1 - 1e-9) {
      ++on_floor;
      EXPECT_NEAR(p.gap, floor_gap, 1e-9);
    } else if (p.normal.dot(-Vec3::UnitX()) > 1 - 1e-9) {
      ++on_wall;
      EXPECT_NEAR(p.gap, wall_gap, 1e-9);
    }
  }
  EXPECT_EQ(on_floor, 4);
  EXPECT_EQ(on_wall, 4);
  EXPECT_EQ(int(c.size()), on_floor + on_wall);
  expect_no_duplicates(c);
}

}  // namespace
}  // namespace mabd::test
