// Helpers shared by the collision tests: geometry builders and a small scene wrapper.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "collision/collision_world.h"

namespace mabd::test {

using detail::CollisionGeometry;
using detail::CollisionWorld;
using detail::ContactPoint;

inline ShapeDef box_shape(const Vec3& size) {
  ShapeDef s;
  s.type = ShapeType::Box;
  s.size = size;
  return s;
}
inline ShapeDef sphere_shape(double r) {
  ShapeDef s;
  s.type = ShapeType::Sphere;
  s.radius = r;
  return s;
}
inline ShapeDef capsule_shape(double r, double length) {
  ShapeDef s;
  s.type = ShapeType::Capsule;
  s.radius = r;
  s.length = length;
  return s;
}
inline ShapeDef cylinder_shape(double r, double length) {
  ShapeDef s;
  s.type = ShapeType::Cylinder;
  s.radius = r;
  s.length = length;
  return s;
}
inline ShapeDef plane_shape() {
  ShapeDef s;
  s.type = ShapeType::Plane;
  return s;
}
inline ShapeDef mesh_shape(TriangleMesh mesh) {
  ShapeDef s;
  s.type = ShapeType::Mesh;
  s.mesh = std::move(mesh);
  return s;
}

/// Closed cube mesh of half-size h centred at the origin (12 ccw triangles).
inline TriangleMesh cube_mesh(double h) {
  TriangleMesh m;
  for (int k = 0; k < 8; ++k) {
    m.vertices.emplace_back((k & 1) ? h : -h, (k & 2) ? h : -h, (k & 4) ? h : -h);
  }
  m.triangles = {{0, 2, 3}, {0, 3, 1}, {4, 5, 7}, {4, 7, 6}, {0, 1, 5}, {0, 5, 4},
                 {2, 6, 7}, {2, 7, 3}, {0, 4, 6}, {0, 6, 2}, {1, 3, 7}, {1, 7, 5}};
  return m;
}

inline CollisionGeometry geometry(BodyKind kind, const ShapeDef& shape, const Pose& pose = Pose()) {
  CollisionGeometry g;
  g.kind = kind;
  g.primitives.push_back(CollisionPrimitive{shape, pose});
  return g;
}

inline Pose pose_at(const Vec3& p, const Quat& q = Quat::Identity()) {
  Pose pose;
  pose.position = p;
  pose.orientation = q;
  return pose;
}

inline Quat axis_angle(double angle, const Vec3& axis) {
  return Quat(Eigen::AngleAxisd(angle, axis.normalized()));
}

/// A collision world plus the poses of its bodies.
struct Scene {
  CollisionWorld world;
  std::vector<Pose> poses;
  std::vector<ContactPoint> contacts;

  std::uint32_t add(const CollisionGeometry& g, const Pose& pose) {
    const auto id = std::uint32_t(poses.size());
    world.add_body(id, g);
    poses.push_back(pose);
    return id;
  }
  const std::vector<ContactPoint>& detect(double margin) {
    world.detect(poses, margin, contacts);
    return contacts;
  }
};

inline void expect_vec_near(const Vec3& a, const Vec3& b, double tol = 1e-12) {
  EXPECT_LE((a - b).norm(), tol) << "got " << a.transpose() << ", expected " << b.transpose();
}

/// Checks the invariants every contact must satisfy: unit normal, gap = n . (xb - xc) with
/// the points taken to world through the poses.
inline void expect_consistent(const ContactPoint& c, const std::vector<Pose>& poses,
                              double tol = 1e-12) {
  EXPECT_NEAR(c.normal.norm(), 1.0, 1e-12);
  const Pose& pb = poses[c.body];
  const Pose& pc = poses[c.collider];
  const Vec3 xb = pb.orientation * c.p_body + pb.position;
  const Vec3 xc = pc.orientation * c.p_collider + pc.position;
  EXPECT_NEAR(c.normal.dot(xb - xc), c.gap, tol);
}

}  // namespace mabd::test
