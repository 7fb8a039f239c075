// Closed-form contacts of every dynamic primitive against a plane collider (the half-space
// z <= 0 of the plane's frame, outward normal +z). Each pair yields its full manifold in one
// call. Feature ids (stable from step to step for the same feature):
//   sphere: 0; capsule: end 0 (z = -L/2) or 1 (z = +L/2); box: corner index, bit k set when
//   the corner is on the + side of axis k; cylinder: 4 * cap + k with cap 0 at z = -L/2 and
//   k the rim point (see rim_direction); mesh (its convex hull): vertex index.
#include <cmath>

#include "collision/manifold.h"
#include "collision/narrow_phase.h"
#include "collision/support_points.h"

namespace mabd::detail {
namespace {

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
  c.body_radius = radius;
  return c;
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
    case ShapeType::Cylinder:
    case ShapeType::Mesh:  // a dynamic mesh collides as the convex hull of its vertices
      for_each_support_point(
          body, n, [&](const Vec3& p, std::uint32_t feature) { add_point(p, 0, feature); });
      break;
    case ShapeType::Plane:
      break;  // rejected when the body is added
  }
  return reduce_manifold(cand.data(), int(cand.size()), out, kTieBand * s.bound_radius);
}

}  // namespace mabd::detail
