// Closed-form closest points (all in one frame, m): point to solid primitive, point to
// triangle, segment to segment.
#pragma once

#include "collision/primitive.h"

namespace mabd::detail {

/// Closest point on the surface of a solid to a query point, in the solid's frame.
struct SurfacePoint {
  double distance = 0;          ///< signed: negative when the query point is inside (m)
  Vec3 point = Vec3::Zero();    ///< closest surface point (m)
  Vec3 normal = Vec3::UnitZ();  ///< unit outward normal there: (p - point) / distance
};

/// `p` in the frame of `s`, exactly: box, sphere, capsule, cylinder, a dynamic mesh (its
/// convex hull: the nearest face plane inside, the nearest face point outside) and a plane
/// (the half-space z <= 0).
SurfacePoint closest_on_surface(const Primitive& s, const Vec3& p);

/// Where on a triangle the closest point lies.
enum class TriangleRegion { Face, Edge01, Edge12, Edge20, Vertex0, Vertex1, Vertex2 };

struct TrianglePoint {
  Vec3 point = Vec3::Zero();
  TriangleRegion region = TriangleRegion::Face;
};

/// Closest point of triangle (a, b, c) to p (Ericson, Real-Time Collision Detection 5.1.5).
TrianglePoint closest_on_triangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c);

/// Closest points of segments [p1, q1] and [p2, q2]: parameters s, t in [0, 1] of the points
/// p1 + s (q1 - p1) and p2 + t (q2 - p2). Parallel segments: some closest pair.
void closest_segment_segment(const Vec3& p1, const Vec3& q1, const Vec3& p2, const Vec3& q2,
                             double& s, double& t);

/// Barycentric weights (w_a, w_b, w_c; sum 1) of point x of the plane of triangle (a, b, c).
Vec3 barycentric(const Vec3& x, const Vec3& a, const Vec3& b, const Vec3& c);

/// Closest points of segment [p, q] and triangle (a, b, c): parameter s in [0, 1] of the
/// segment's point p + s (q - p) and the triangle's point x. A segment through the triangle
/// gives its crossing point (distance 0).
void closest_segment_triangle(const Vec3& p, const Vec3& q, const Vec3& a, const Vec3& b,
                              const Vec3& c, double& s, Vec3& x);

/// Parameter in [0, 1] of the point of segment [a, b] closest to p.
double closest_on_segment(const Vec3& p, const Vec3& a, const Vec3& b);

}  // namespace mabd::detail
