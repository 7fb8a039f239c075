// Round body primitives against soft surface triangles (see triangle_contacts.h): spheres
// and capsules in closed form from their core (centre, axis).
#include "collision/triangle_contacts.h"

#include "collision/closest_point.h"

namespace mabd::detail {

bool primitive_triangle(const Placed& prim, const Vec3& a, const Vec3& b, const Vec3& c,
                        const Vec3& outward, double margin, TriangleContact& out,
                        Vec3& p_world) {
  const Primitive& s = *prim.prim;
  Vec3 x;  // the triangle's point
  if (s.type == ShapeType::Sphere || s.type == ShapeType::Capsule) {
    Vec3 core = prim.translation;
    if (s.type == ShapeType::Sphere) {
      x = closest_on_triangle(core, a, b, c).point;
    } else {
      const Vec3 p = prim.to_world(Vec3(0, 0, -s.half_length));
      const Vec3 q = prim.to_world(Vec3(0, 0, s.half_length));
      double t = 0;
      closest_segment_triangle(p, q, a, b, c, t, x);
      core = p + t * (q - p);
    }
    // A core behind the plane has passed through the surface: no push sends it back out.
    if (outward.dot(core - x) <= 0) return false;
    const Vec3 v = x - core;
    const double dist = v.norm();
    out.normal = dist > 1e-12 * s.radius ? Vec3(v / dist) : Vec3(-outward);
    out.gap = dist - s.radius;
    out.radius = s.radius;
    p_world = core + s.radius * out.normal;
  } else {
    return false;  // flat and edged primitives touch a face at its corners
  }
  if (!(out.gap < margin)) return false;
  out.weights = barycentric(x, a, b, c);
  for (int k = 0; k < 3; ++k) {
    if (out.weights[k] < 1e-9) out.weights[k] = 0;  // on the opposite edge
  }
  out.weights /= out.weights.sum();
  return out.weights.maxCoeff() < 1 - 1e-9;  // a corner is a node: detect_points has it
}

}  // namespace mabd::detail
