// Closed-form contacts of every dynamic primitive against a plane collider (the half-space
// z <= 0 of the plane's frame, outward normal +z). Each pair yields its full manifold in one
// call. Feature ids (stable from step to step for the same feature):
//   sphere: 0; capsule: end 0 (z = -L/2) or 1 (z = +L/2); box: corner index, bit k set when
//   the corner is on the + side of axis k; cylinder: 4 * cap + k with cap 0 at z = -L/2 and
//   k the rim point (0 deepest, 1 and 3 at +-90 degrees, 2 opposite; when the axis is within
//   1e-3 rad of the plane normal the rim points are fixed at the frame's +x, +y, -x, -y so a
//   standing cylinder keeps its points); mesh (its convex hull): vertex index.
#include <cmath>

#include "collision/manifold.h"
#include "collision/mesh_data.h"
#include "collision/narrow_phase.h"

namespace mabd::detail {
namespace {

/// Gaps within this fraction of the primitive's bounding radius count as equally deep when
/// choosing a spread set (a flat face tilted by less than about 1e-3 rad stays spread).
constexpr double kTieBand = 1e-3;

/// Contact of a sphere of `radius` centred at `center` (world) with the plane (n, o).
Contact sphere_point(const Vec3& center, double radius, const Vec3& n, const Vec3& o,
                     std::uint32_t feature) {
  const double height = n.dot(center - o);
  Contact c;
  c.normal = n;
  c.p_body = center - radius * n;
  c.p_collider = center - height * n;
  c.gap = height - radius;
  c.feature = feature;
  return c;
}

/// Rim point k of a cylinder cap in the cylinder frame: the deepest towards -n_local when
/// the axis is tilted, else fixed frame directions (see the file comment).
Vec3 rim_direction(const Vec3& n_local, int k) {
  Vec3 u(1, 0, 0);
  const double tilt = std::hypot(n_local.x(), n_local.y());
  if (tilt > 1e-3 * n_local.norm()) u = Vec3(-n_local.x(), -n_local.y(), 0) / tilt;
  const Vec3 v(-u.y(), u.x(), 0);
  switch (k) {
    case 0: return u;
    case 1: return v;
    case 2: return -u;
    default: return -v;
  }
}

}  // namespace

int collide_plane(const Placed& body, const Placed& plane, double margin, NarrowScratch& scratch,
                  Contact* out) {
  const Vec3 n = plane.rotation.col(2);
  const Vec3& o = plane.translation;
  const Primitive& s = *body.prim;
  auto& cand = scratch.candidates;
  cand.clear();
  // Vertex-like point of the body (world) with its feature, kept when within the margin.
  auto add_point = [&](const Vec3& p, double radius, std::uint32_t feature) {
    const Contact c = sphere_point(p, radius, n, o, feature);
    if (c.gap < margin) cand.push_back(c);
  };

  switch (s.type) {
    case ShapeType::Sphere:
      add_point(body.translation, s.radius, 0);
      break;
    case ShapeType::Capsule:
      for (int end = 0; end < 2; ++end) {
        const double z = end == 0 ? -s.half_length : s.half_length;
        add_point(body.to_world(Vec3(0, 0, z)), s.radius, std::uint32_t(end));
      }
      break;
    case ShapeType::Box:
      for (int k = 0; k < 8; ++k) {
        const Vec3 corner((k & 1) ? s.half_extents.x() : -s.half_extents.x(),
                          (k & 2) ? s.half_extents.y() : -s.half_extents.y(),
                          (k & 4) ? s.half_extents.z() : -s.half_extents.z());
        add_point(body.to_world(corner), 0, std::uint32_t(k));
      }
      break;
    case ShapeType::Cylinder: {
      const Vec3 n_local = body.rotation.transpose() * n;
      for (int cap = 0; cap < 2; ++cap) {
        const double z = cap == 0 ? -s.half_length : s.half_length;
        for (int k = 0; k < 4; ++k) {
          const Vec3 p = s.radius * rim_direction(n_local, k) + Vec3(0, 0, z);
          add_point(body.to_world(p), 0, std::uint32_t(4 * cap + k));
        }
      }
      break;
    }
    case ShapeType::Mesh:
      // A dynamic mesh collides as the convex hull of its vertices.
      for (int v : s.mesh->hull_vertices) {
        add_point(body.to_world(s.mesh->vertices[v]), 0, std::uint32_t(v));
      }
      break;
    case ShapeType::Plane:
      break;  // rejected when the body is added
  }
  return reduce_manifold(cand.data(), int(cand.size()), out, kTieBand * s.bound_radius);
}

}  // namespace mabd::detail
