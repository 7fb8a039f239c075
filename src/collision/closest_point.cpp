// Closed-form closest points (see closest_point.h).
#include "collision/closest_point.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "collision/mesh_data.h"

namespace mabd::detail {
namespace {

/// Closest point of a sphere of `radius` centred at `center` to p.
SurfacePoint round_point(const Vec3& center, double radius, const Vec3& p,
                         const Vec3& fallback_normal) {
  SurfacePoint sp;
  const Vec3 d = p - center;
  const double len = d.norm();
  sp.normal = len > 1e-300 ? Vec3(d / len) : fallback_normal;
  sp.distance = len - radius;
  sp.point = center + radius * sp.normal;
  return sp;
}

SurfacePoint on_box(const Vec3& e, const Vec3& p) {
  SurfacePoint sp;
  const Vec3 q = p.cwiseMax(-e).cwiseMin(e);
  const Vec3 d = p - q;
  const double len = d.norm();
  if (len > 0) {  // outside
    sp.distance = len;
    sp.point = q;
    sp.normal = d / len;
    return sp;
  }
  // Inside: the nearest face.
  int axis = 0;
  double depth = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 3; ++i) {
    const double di = e[i] - std::abs(p[i]);
    if (di < depth) {
      depth = di;
      axis = i;
    }
  }
  const double sign = p[axis] >= 0 ? 1.0 : -1.0;
  sp.distance = -depth;
  sp.point = p;
  sp.point[axis] = sign * e[axis];
  sp.normal = Vec3::Zero();
  sp.normal[axis] = sign;
  return sp;
}

SurfacePoint on_cylinder(double r, double h, const Vec3& p) {
  const double rho = std::hypot(p.x(), p.y());
  const Vec3 radial = rho > 1e-300 ? Vec3(p.x() / rho, p.y() / rho, 0) : Vec3(1, 0, 0);
  const double dr = rho - r;
  const double dz = std::abs(p.z()) - h;
  const double sz = p.z() >= 0 ? 1.0 : -1.0;
  SurfacePoint sp;
  if (dr <= 0 && dz <= 0) {  // inside: side or cap, whichever is nearer
    if (dr > dz) {
      sp.distance = dr;
      sp.normal = radial;
      sp.point = Vec3(r * radial.x(), r * radial.y(), p.z());
    } else {
      sp.distance = dz;
      sp.normal = Vec3(0, 0, sz);
      sp.point = Vec3(p.x(), p.y(), sz * h);
    }
    return sp;
  }
  const double rq = std::min(rho, r);
  const Vec3 q(rq * radial.x(), rq * radial.y(), std::clamp(p.z(), -h, h));
  const Vec3 d = p - q;
  sp.distance = d.norm();
  sp.point = q;
  sp.normal = d / sp.distance;
  return sp;
}

/// Convex hull: inside, the nearest face plane; outside, the nearest point of its faces.
SurfacePoint on_hull(const MeshData& m, const Vec3& p) {
  SurfacePoint sp;
  sp.distance = -std::numeric_limits<double>::infinity();
  for (const auto& plane : m.hull_planes) {
    const Vec3 n = plane.head<3>();
    const double d = n.dot(p) - plane[3];
    if (d > sp.distance) {
      sp.distance = d;
      sp.normal = n;
    }
  }
  sp.point = p - sp.distance * sp.normal;
  if (sp.distance <= 0) return sp;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& t : m.hull_triangles) {
    const Vec3 q =
        closest_on_triangle(p, m.vertices[t[0]], m.vertices[t[1]], m.vertices[t[2]]).point;
    const double d2 = (p - q).squaredNorm();
    if (d2 < best) {
      best = d2;
      sp.point = q;
    }
  }
  sp.distance = std::sqrt(best);
  if (sp.distance > 0) sp.normal = (p - sp.point) / sp.distance;
  return sp;
}

}  // namespace

SurfacePoint closest_on_surface(const Primitive& s, const Vec3& p) {
  switch (s.type) {
    case ShapeType::Box:
      return on_box(s.half_extents, p);
    case ShapeType::Sphere:
      return round_point(Vec3::Zero(), s.radius, p, Vec3::UnitZ());
    case ShapeType::Capsule: {
      const Vec3 axis_point(0, 0, std::clamp(p.z(), -s.half_length, s.half_length));
      return round_point(axis_point, s.radius, p, Vec3::UnitX());
    }
    case ShapeType::Cylinder:
      return on_cylinder(s.radius, s.half_length, p);
    case ShapeType::Mesh:
      return on_hull(*s.mesh, p);
    case ShapeType::Plane:
      break;
  }
  SurfacePoint sp;  // plane: half-space z <= 0
  sp.distance = p.z();
  sp.point = Vec3(p.x(), p.y(), 0);
  return sp;
}

TrianglePoint closest_on_triangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
  // Voronoi regions of the vertices, then edges, else the face.
  const Vec3 ab = b - a, ac = c - a, ap = p - a;
  const double d1 = ab.dot(ap), d2 = ac.dot(ap);
  if (d1 <= 0 && d2 <= 0) return {a, TriangleRegion::Vertex0};
  const Vec3 bp = p - b;
  const double d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0 && d4 <= d3) return {b, TriangleRegion::Vertex1};
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) return {a + d1 / (d1 - d3) * ab, TriangleRegion::Edge01};
  const Vec3 cp = p - c;
  const double d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0 && d5 <= d6) return {c, TriangleRegion::Vertex2};
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) return {a + d2 / (d2 - d6) * ac, TriangleRegion::Edge20};
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
    return {b + (d4 - d3) / ((d4 - d3) + (d5 - d6)) * (c - b), TriangleRegion::Edge12};
  }
  const double denom = 1.0 / (va + vb + vc);
  return {a + ab * (vb * denom) + ac * (vc * denom), TriangleRegion::Face};
}

void closest_segment_segment(const Vec3& p1, const Vec3& q1, const Vec3& p2, const Vec3& q2,
                             double& s, double& t) {
  // Ericson 5.1.9.
  const Vec3 d1 = q1 - p1, d2 = q2 - p2, r = p1 - p2;
  const double a = d1.squaredNorm(), e = d2.squaredNorm(), f = d2.dot(r);
  constexpr double kTiny = 1e-300;
  if (a <= kTiny && e <= kTiny) {
    s = t = 0;
    return;
  }
  if (a <= kTiny) {
    s = 0;
    t = std::clamp(f / e, 0.0, 1.0);
    return;
  }
  const double c = d1.dot(r);
  if (e <= kTiny) {
    t = 0;
    s = std::clamp(-c / a, 0.0, 1.0);
    return;
  }
  const double b = d1.dot(d2), denom = a * e - b * b;
  s = denom > 1e-14 * a * e ? std::clamp((b * f - c * e) / denom, 0.0, 1.0) : 0.0;
  t = (b * s + f) / e;
  if (t < 0) {
    t = 0;
    s = std::clamp(-c / a, 0.0, 1.0);
  } else if (t > 1) {
    t = 1;
    s = std::clamp((b - c) / a, 0.0, 1.0);
  }
}

double closest_on_segment(const Vec3& p, const Vec3& a, const Vec3& b) {
  const Vec3 d = b - a;
  const double len2 = d.squaredNorm();
  return len2 > 1e-300 ? std::clamp((p - a).dot(d) / len2, 0.0, 1.0) : 0.0;
}

Vec3 barycentric(const Vec3& x, const Vec3& a, const Vec3& b, const Vec3& c) {
  const Vec3 v0 = b - a, v1 = c - a, v2 = x - a;
  const double d00 = v0.dot(v0), d01 = v0.dot(v1), d11 = v1.dot(v1);
  const double d20 = v2.dot(v0), d21 = v2.dot(v1);
  const double den = d00 * d11 - d01 * d01;
  if (!(den > 0)) return Vec3(1, 0, 0);  // degenerate: its first corner
  const double v = (d11 * d20 - d01 * d21) / den, w = (d00 * d21 - d01 * d20) / den;
  return Vec3(1 - v - w, v, w);
}

void closest_segment_triangle(const Vec3& p, const Vec3& q, const Vec3& a, const Vec3& b,
                              const Vec3& c, double& s, Vec3& x) {
  const Vec3 d = q - p;
  // Through the face: the crossing point.
  const Vec3 n = (b - a).cross(c - a);
  const double dp = n.dot(p - a), dq = n.dot(q - a);
  if (dp != dq && ((dp <= 0 && dq >= 0) || (dp >= 0 && dq <= 0))) {
    const double t = dp / (dp - dq);
    const Vec3 y = p + t * d;
    const Vec3 w = barycentric(y, a, b, c);
    if (w.minCoeff() >= 0) {
      s = t;
      x = y;
      return;
    }
  }
  // Otherwise an end of the segment against the triangle, or the segment against an edge.
  double best = INFINITY;
  for (int e = 0; e < 2; ++e) {
    const Vec3& end = e == 0 ? p : q;
    const Vec3 y = closest_on_triangle(end, a, b, c).point;
    const double dist = (y - end).squaredNorm();
    if (dist < best) {
      best = dist;
      s = e;
      x = y;
    }
  }
  const Vec3* corners[3] = {&a, &b, &c};
  for (int k = 0; k < 3; ++k) {
    const Vec3& u = *corners[k];
    const Vec3& v = *corners[(k + 1) % 3];
    double s1 = 0, t1 = 0;
    closest_segment_segment(p, q, u, v, s1, t1);
    const Vec3 y = u + t1 * (v - u);
    const double dist = (y - (p + s1 * d)).squaredNorm();
    if (dist < best) {
      best = dist;
      s = s1;
      x = y;
    }
  }
}

}  // namespace mabd::detail
