// Points of a box, cylinder or convex mesh primitive that can touch a surface: the candidates
// of its contact manifolds (world frame, m).
#pragma once

#include <cmath>
#include <cstdint>

#include "collision/mesh_data.h"
#include "collision/primitive.h"

namespace mabd::detail {

/// Rim point direction k (0 deepest, 1 and 3 at +-90 degrees, 2 opposite) of a cylinder cap
/// against a surface of normal `n_local` (cylinder frame, pointing towards the cylinder).
/// Within 1e-3 rad of the axis the directions are the frame's +x, +y, -x, -y, so a standing
/// cylinder keeps its points from step to step.
inline Vec3 rim_direction(const Vec3& n_local, int k) {
  Vec3 u(1, 0, 0);
  const double tilt = std::hypot(n_local.x(), n_local.y());
  if (tilt > 1e-3 * n_local.norm()) u = Vec3(-n_local.x(), -n_local.y(), 0) / tilt;
  const Vec3 v(-u.y(), u.x(), 0);
  switch (k) {
    case 0:
      return u;
    case 1:
      return v;
    case 2:
      return -u;
    default:
      return -v;
  }
}

/// Calls f(world point, feature) for the candidate points of `p` against a surface whose
/// normal `n` (world) points towards p: box corners (feature: bit k set on the + side of
/// axis k), cylinder rim points (4 * cap + k, cap 0 at z = -L/2, k as in rim_direction),
/// convex mesh hull vertices (feature: vertex index). Other types: nothing.
template <class F>
void for_each_support_point(const Placed& p, const Vec3& n, F&& f) {
  const Primitive& s = *p.prim;
  switch (s.type) {
    case ShapeType::Box:
      for (int k = 0; k < 8; ++k) {
        const Vec3 corner((k & 1) ? s.half_extents.x() : -s.half_extents.x(),
                          (k & 2) ? s.half_extents.y() : -s.half_extents.y(),
                          (k & 4) ? s.half_extents.z() : -s.half_extents.z());
        f(p.to_world(corner), std::uint32_t(k));
      }
      break;
    case ShapeType::Cylinder: {
      const Vec3 n_local = p.rotation.transpose() * n;
      for (int cap = 0; cap < 2; ++cap) {
        const double z = cap == 0 ? -s.half_length : s.half_length;
        for (int k = 0; k < 4; ++k) {
          f(p.to_world(s.radius * rim_direction(n_local, k) + Vec3(0, 0, z)),
            std::uint32_t(4 * cap + k));
        }
      }
      break;
    }
    case ShapeType::Mesh:
      for (int v : s.mesh->hull_vertices) f(p.to_world(s.mesh->vertices[v]), std::uint32_t(v));
      break;
    default:
      break;
  }
}

}  // namespace mabd::detail
