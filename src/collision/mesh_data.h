// Mesh geometry prepared for collision queries (shape frame, m).
//
// A dynamic mesh collides as the convex hull of its vertices (hull vertices, face planes and
// a Bullet hull shape for GJK). A static or kinematic mesh collides with its triangles, on
// the side their counter-clockwise normal points to (adjacency and a triangle tree).
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "collision/aabb_tree.h"
#include "mabd/shape.h"

class btConvexHullShape;

namespace mabd::detail {

struct MeshData {
  std::vector<Vec3> vertices;
  std::vector<std::array<int, 3>> triangles;  ///< counter-clockwise seen from the front side
  Vec3 lower = Vec3::Zero();                  ///< axis-aligned bounds of the vertices
  Vec3 upper = Vec3::Zero();

  // Dynamic meshes: the convex hull.
  std::vector<int> hull_vertices;                  ///< indices into `vertices`
  std::vector<Eigen::Vector4d> hull_planes;        ///< (unit outward normal, offset): n.x = d
  std::vector<std::array<int, 3>> hull_triangles;  ///< hull faces as fans, into `vertices`
  std::shared_ptr<btConvexHullShape> hull_shape;   ///< zero-margin hull for GJK

  // Static and kinematic meshes: the triangles.
  std::vector<Vec3> normals;                  ///< unit ccw normal per triangle (0: degenerate)
  std::vector<std::array<int, 3>> neighbors;  ///< across edge (v0v1, v1v2, v2v0); -1: none
  /// Per edge: a boundary or a convex fold (the neighbour turns away below this triangle's
  /// plane), where an edge of a body can rest; false on flat and concave seams.
  std::vector<std::array<bool, 3>> sharp_edges;
  std::vector<int> vertex_triangle_offsets;  ///< triangles around vertex v:
  std::vector<int> vertex_triangles;         ///<   [offsets[v], offsets[v + 1])
  AabbTree tree;                             ///< triangle boxes, leaf id = triangle index
};

/// Prepares `mesh`; `collider`: the mesh belongs to a static or kinematic body.
std::shared_ptr<const MeshData> make_mesh_data(const TriangleMesh& mesh, bool collider);

}  // namespace mabd::detail
