// Contacts of a dynamic primitive against a convex collider (box, sphere, capsule, cylinder).
//
// Round pairs (one side a sphere or capsule) are closed forms: the round shape is a segment
// (a point for a sphere) swollen by its radius, and each sample point of the segment is
// tested against the other solid through its exact closest surface point. Samples: the ends,
// the point of least distance (closed form against a sphere or capsule axis, else a golden-
// section search, the signed distance to a convex solid being convex along a line) and the
// ends of the segment clipped to the solid's contact face (a box face, a cylinder's side or
// cap, a capsule's cylindrical part) so that a capsule lying across a face keeps its line
// contact. Other pairs (box, cylinder, convex mesh against box or cylinder) use Bullet's
// GJK/EPA for the closest points, plus each side's corner or rim points tested exactly
// against the other side, for a manifold. Every pair keeps at most 4 points (manifold.h).
//
// Feature ids: round side: end 0 (z = -L/2), end 1, clipped ends 2 and 3, least-distance
// point 4; polytope side: the body's support points as in support_points.h (mesh vertices
// offset by 32), the collider's offset by 8, the GJK point 16.
#include <algorithm>
#include <cmath>

#include "collision/closest_point.h"
#include "collision/gjk.h"
#include "collision/manifold.h"
#include "collision/narrow_phase.h"
#include "collision/support_points.h"

namespace mabd::detail {
namespace {

constexpr std::uint32_t kGjkFeature = 16;
constexpr std::uint32_t kColliderPointOffset = 8;
constexpr std::uint32_t kMeshVertexOffset = 32;

bool is_round(ShapeType t) { return t == ShapeType::Sphere || t == ShapeType::Capsule; }

/// Tests the point p (world) swollen by `radius` against `solid`. The normal points from the
/// solid to the point unless `flip` (then the point belongs to the collider).
void add_point_vs_solid(const Vec3& p, double radius, const Placed& solid, bool flip,
                        std::uint32_t feature, double margin, std::vector<Contact>& cand) {
  const SurfacePoint sp = closest_on_surface(*solid.prim, solid.to_local(p));
  const double gap = sp.distance - radius;
  if (gap >= margin) return;
  const Vec3 n = solid.rotation * sp.normal;
  const Vec3 q = solid.to_world(sp.point);
  Contact c;
  c.gap = gap;
  c.feature = feature;
  if (flip) {
    c.normal = -n;
    c.p_body = q;
    c.p_collider = p - radius * n;
  } else {
    c.normal = n;
    c.p_body = p - radius * n;
    c.p_collider = q;
  }
  cand.push_back(c);
}

/// Parameter range [t0, t1] of the segment a + t d (t in [0, 1]) with |x_axis| <= e.
void clip_slab(const Vec3& a, const Vec3& d, int axis, double e, double& t0, double& t1) {
  if (std::abs(d[axis]) < 1e-300) {
    if (std::abs(a[axis]) > e) t1 = t0 - 1;  // outside for every t
    return;
  }
  double lo = (-e - a[axis]) / d[axis], hi = (e - a[axis]) / d[axis];
  if (lo > hi) std::swap(lo, hi);
  t0 = std::max(t0, lo);
  t1 = std::min(t1, hi);
}

/// Parameter range of the segment a + t d inside the infinite cylinder x^2 + y^2 <= r^2.
void clip_disc(const Vec3& a, const Vec3& d, double r, double& t0, double& t1) {
  const double qa = d.x() * d.x() + d.y() * d.y();
  const double qb = a.x() * d.x() + a.y() * d.y();
  const double qc = a.x() * a.x() + a.y() * a.y() - r * r;
  if (qa < 1e-300) {
    if (qc > 0) t1 = t0 - 1;
    return;
  }
  const double disc = qb * qb - qa * qc;
  if (disc < 0) {
    t1 = t0 - 1;
    return;
  }
  const double root = std::sqrt(disc);
  t0 = std::max(t0, (-qb - root) / qa);
  t1 = std::min(t1, (-qb + root) / qa);
}

/// Minimiser over [0, 1] of a convex function (golden-section search, ~1e-12 in t).
template <class F>
double minimize_convex(F&& f) {
  constexpr double kInvPhi = 0.6180339887498949;
  double lo = 0, hi = 1;
  double x1 = hi - kInvPhi * (hi - lo), x2 = lo + kInvPhi * (hi - lo);
  double f1 = f(x1), f2 = f(x2);
  for (int it = 0; it < 60; ++it) {
    if (f1 <= f2) {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - kInvPhi * (hi - lo);
      f1 = f(x1);
    } else {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + kInvPhi * (hi - lo);
      f2 = f(x2);
    }
  }
  return 0.5 * (lo + hi);
}

/// The round shape: segment [a, b] (world; a == b for a sphere) swollen by `radius`, against
/// `solid`. `flip`: the round shape is the collider.
void round_vs_solid(const Vec3& a, const Vec3& b, double radius, const Placed& solid, bool flip,
                    double margin, std::vector<Contact>& cand) {
  add_point_vs_solid(a, radius, solid, flip, 0, margin, cand);
  if (a == b) return;
  add_point_vs_solid(b, radius, solid, flip, 1, margin, cand);

  const Primitive& s = *solid.prim;
  const Vec3 la = solid.to_local(a), lb = solid.to_local(b), ld = lb - la;
  auto distance_at = [&](double t) { return closest_on_surface(s, la + t * ld).distance; };

  // Point of least distance.
  double t_min;
  if (s.type == ShapeType::Sphere) {
    t_min = closest_on_segment(Vec3::Zero(), la, lb);
  } else if (s.type == ShapeType::Capsule) {
    double t_axis;
    closest_segment_segment(la, lb, Vec3(0, 0, -s.half_length), Vec3(0, 0, s.half_length), t_min,
                            t_axis);
  } else {
    t_min = minimize_convex(distance_at);
  }
  const SurfacePoint at_min = closest_on_surface(s, la + t_min * ld);

  // Clip to the contact face.
  double t0 = 0, t1 = 1;
  bool clip = true;
  switch (s.type) {
    case ShapeType::Box: {
      int axis = 0;
      at_min.normal.cwiseAbs().maxCoeff(&axis);
      for (int j = 0; j < 3; ++j) {
        if (j != axis) clip_slab(la, ld, j, s.half_extents[j], t0, t1);
      }
      break;
    }
    case ShapeType::Cylinder:
      if (std::abs(at_min.normal.z()) >= 0.5) {
        clip_disc(la, ld, s.radius, t0, t1);
      } else {
        clip_slab(la, ld, 2, s.half_length, t0, t1);
      }
      break;
    case ShapeType::Capsule:
      clip_slab(la, ld, 2, s.half_length, t0, t1);
      break;
    default:
      clip = false;
  }
  constexpr double kEnd = 1e-9;  // parameters this close to an end duplicate it
  double least_sample = std::min(distance_at(0), distance_at(1));
  if (clip && t1 > t0) {
    if (t0 > kEnd) {
      add_point_vs_solid(a + t0 * (b - a), radius, solid, flip, 2, margin, cand);
      least_sample = std::min(least_sample, distance_at(t0));
    }
    if (t1 < 1 - kEnd && t1 - t0 > kEnd) {
      add_point_vs_solid(a + t1 * (b - a), radius, solid, flip, 3, margin, cand);
      least_sample = std::min(least_sample, distance_at(t1));
    }
  }
  // The least-distance point only when strictly nearer than every sample (a crossing, not a
  // parallel face contact that the samples already span).
  if (t_min > kEnd && t_min < 1 - kEnd &&
      at_min.distance < least_sample - 1e-9 * std::max(1.0, ld.norm())) {
    add_point_vs_solid(a + t_min * (b - a), radius, solid, flip, 4, margin, cand);
  }
}

/// Axis ends (world) of a sphere or capsule primitive.
void round_axis(const Placed& p, Vec3& a, Vec3& b) {
  if (p.prim->type == ShapeType::Sphere) {
    a = b = p.translation;
    return;
  }
  a = p.to_world(Vec3(0, 0, -p.prim->half_length));
  b = p.to_world(Vec3(0, 0, p.prim->half_length));
}

/// Box, cylinder or convex mesh body against a box or cylinder collider.
void polytope_vs_solid(const Placed& body, const Placed& collider, double margin,
                       std::vector<Contact>& cand) {
  GjkResult g;
  const bool have_gjk = gjk_closest(body, collider, g);
  if (have_gjk && g.distance >= margin) return;  // every point is at least that far
  const Vec3 n =
      have_gjk ? g.normal : Vec3((body.bound_center() - collider.bound_center()).normalized());
  const std::size_t first = cand.size();
  const std::uint32_t body_offset = body.prim->type == ShapeType::Mesh ? kMeshVertexOffset : 0;
  for_each_support_point(body, n, [&](const Vec3& p, std::uint32_t f) {
    add_point_vs_solid(p, 0, collider, false, body_offset + f, margin, cand);
  });
  for_each_support_point(collider, -n, [&](const Vec3& p, std::uint32_t f) {
    add_point_vs_solid(p, 0, body, true, kColliderPointOffset + f, margin, cand);
  });
  if (have_gjk) add_gjk_contact(g, kGjkFeature, body.prim->bound_radius, cand, first);
}

}  // namespace

int collide_convex(const Placed& body, const Placed& collider, double margin,
                   NarrowScratch& scratch, Contact* out) {
  auto& cand = scratch.candidates;
  cand.clear();
  Vec3 a, b;
  if (is_round(body.prim->type)) {
    round_axis(body, a, b);
    round_vs_solid(a, b, body.prim->radius, collider, false, margin, cand);
  } else if (is_round(collider.prim->type)) {
    round_axis(collider, a, b);
    round_vs_solid(a, b, collider.prim->radius, body, true, margin, cand);
  } else {
    polytope_vs_solid(body, collider, margin, cand);
  }
  return reduce_manifold(cand.data(), int(cand.size()), out, kTieBand * body.prim->bound_radius);
}

}  // namespace mabd::detail
