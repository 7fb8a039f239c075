// Mesh geometry prepared for collision queries (shape frame, m).
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "mabd/shape.h"

namespace mabd::detail {

struct MeshData {
  std::vector<Vec3> vertices;
  std::vector<std::array<int, 3>> triangles;  ///< counter-clockwise seen from the front side
  /// Vertices that can be the deepest point of the convex hull against a half-space: the
  /// candidates a dynamic mesh (treated as the convex hull of its vertices) offers.
  std::vector<int> hull_vertices;
  Vec3 lower = Vec3::Zero();  ///< axis-aligned bounds of the vertices
  Vec3 upper = Vec3::Zero();
};

/// Prepares `mesh`; `collider`: the mesh belongs to a static or kinematic body.
std::shared_ptr<const MeshData> make_mesh_data(const TriangleMesh& mesh, bool collider);

}  // namespace mabd::detail
