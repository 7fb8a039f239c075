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
// against the other side, for a manifold. Every pair keeps at most 4 points (manifold.h),
// but two boxes, whose corners off the manifold's face are guarded too (reduce_boxes).
//
// Feature ids: round side: end 0 (z = -L/2), end 1, clipped ends 2 and 3, least-distance
// point 4; polytope side: the body's support points as in support_points.h (mesh vertices
// offset by 32), the collider's offset by 8, the GJK point 16; two boxes: face contacts from
// 64, corner guards from 256.
#include <algorithm>
#include <cmath>
#include <limits>

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
/// Box-box corner guards (reduce_boxes): the body's corners from here, the other's from
/// here + kColliderPointOffset (past the face contacts' 64 + 16 * 12).
constexpr std::uint32_t kGuardFeature = 256;
/// Two boxes take a face's normal for their manifold where the face's axis separates them
/// by at least this fraction of their separation along the pair's direction, or, when they
/// overlap, by at most 1 / this of its overlap (box_face_contacts): apart, about 20 degrees
/// between the face and the closest points' direction.
constexpr double kFaceAxisCos = 0.94;

bool is_round(ShapeType t) { return t == ShapeType::Sphere || t == ShapeType::Capsule; }

/// Tests the point p (world) swollen by `radius` against `solid`. The normal points from the
/// solid to the point unless `flip` (then the point belongs to the collider). A round solid
/// (sphere, capsule; its closest surface point lies its radius from its core along the
/// normal) reports its radius too: both sides' normal rows then act at their core points.
/// At a material point of a capsule's surface, the capsule spinning about its axis (free
/// there but for a tiny inertia) moves that point off the line of contact and the push turns
/// it further: a chain of capsule links running over a capsule wheel spun its links up
/// (doubling every step or so) until the row's gap missed a penetration of a link's radius.
void add_point_vs_solid(const Vec3& p, double radius, const Placed& solid, bool flip,
                        std::uint32_t feature, double margin, std::vector<Contact>& cand) {
  const SurfacePoint sp = closest_on_surface(*solid.prim, solid.to_local(p));
  const double gap = sp.distance - radius;
  if (gap >= margin) return;
  const Vec3 n = solid.rotation * sp.normal;
  const Vec3 q = solid.to_world(sp.point);
  const double solid_radius = is_round(solid.prim->type) ? solid.prim->radius : 0.0;
  Contact c;
  c.gap = gap;
  c.feature = feature;
  if (flip) {
    c.normal = -n;
    c.p_body = q;
    c.p_collider = p - radius * n;
    c.collider_radius = radius;
    c.body_radius = solid_radius;
  } else {
    c.normal = n;
    c.p_body = p - radius * n;
    c.p_collider = q;
    c.body_radius = radius;
    c.collider_radius = solid_radius;
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

double support_extent(const Placed& p, const Vec3& d);

/// Separation of `body` from `other` along u (unit, from `other` towards `body`): the body's
/// lowest point along u above the other's highest (m); negative where they overlap.
double separation(const Placed& body, const Placed& other, const Vec3& u) {
  return -support_extent(body, -u) - support_extent(other, u);
}

/// Whether two boxes are `margin` or more apart along one of the 15 axes of the separating-
/// axis test (their faces' normals and the cross products of their edges). The separation
/// along any unit axis is at most the boxes' distance, so GJK finds such boxes apart too.
bool boxes_apart(const Placed& a, const Placed& b, double margin) {
  const Vec3& ha = a.prim->half_extents;
  const Vec3& hb = b.prim->half_extents;
  const Mat3 R = a.rotation.transpose() * b.rotation;  // b's axes in a's frame
  const Mat3 abs_r = R.cwiseAbs();
  const Vec3 t = a.rotation.transpose() * (b.translation - a.translation);  // m, a's frame
  for (int i = 0; i < 3; ++i) {
    if (std::abs(t[i]) - ha[i] - hb.dot(abs_r.row(i)) >= margin) return true;
  }
  for (int j = 0; j < 3; ++j) {
    if (std::abs(t.dot(R.col(j))) - ha.dot(abs_r.col(j)) - hb[j] >= margin) return true;
  }
  for (int i = 0; i < 3; ++i) {
    const int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
    for (int j = 0; j < 3; ++j) {
      const int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
      // u = a_i x b_j, of length sqrt(1 - R_ij^2): nearly parallel edges give no axis.
      const double length = std::sqrt(std::max(0.0, 1 - R(i, j) * R(i, j)));
      if (length < 1e-6) continue;
      const double ra = ha[i1] * abs_r(i2, j) + ha[i2] * abs_r(i1, j);
      const double rb = hb[j1] * abs_r(i, j2) + hb[j2] * abs_r(i, j1);
      const double d = std::abs(t[i2] * R(i1, j) - t[i1] * R(i2, j));
      if (d - ra - rb >= margin * length) return true;
    }
  }
  return false;
}

/// Whether GJK's closest points `g` of two shapes apart (g.distance > 0) hold: their
/// supports along its normal are its distance apart (to the tie band). Near touching, GJK
/// found two boxes of falling_joints 3e-10 m apart along a direction in which they overlapped
/// by 23 cm, and the manifold on it reported that overlap as their depth.
bool gjk_separates(const Placed& body, const Placed& other, const GjkResult& g) {
  const double sep = separation(body, other, g.normal);
  const double band = kTieBand * std::max(body.prim->bound_radius, other.prim->bound_radius);
  return sep >= g.distance - band;
}

/// Box, cylinder or convex mesh body against a box or cylinder collider.
void polytope_vs_solid(const Placed& body, const Placed& collider, double margin,
                       std::vector<Contact>& cand) {
  GjkResult g;
  bool have_gjk = gjk_closest(body, collider, g);
  if (have_gjk && g.distance >= margin) return;  // every point is at least that far
  if (have_gjk && g.distance > 0 && !gjk_separates(body, collider, g)) have_gjk = false;
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

/// Largest d . x over the placed primitive (box, cylinder, dynamic mesh), world frame (m).
double support_extent(const Placed& p, const Vec3& d) {
  const Primitive& s = *p.prim;
  const Vec3 dl = p.rotation.transpose() * d;
  double e = d.dot(p.translation);
  switch (s.type) {
    case ShapeType::Box:
      return e + s.half_extents.dot(dl.cwiseAbs());
    case ShapeType::Cylinder:
      return e + std::abs(dl.z()) * s.half_length + s.radius * std::hypot(dl.x(), dl.y());
    case ShapeType::Mesh: {
      double m = -std::numeric_limits<double>::infinity();
      for (int v : s.mesh->hull_vertices) m = std::max(m, dl.dot(s.mesh->vertices[v]));
      return e + m;
    }
    default:
      return e;
  }
}

/// Face directions of a placed primitive (world): a box's three axes, a cylinder's axis, a
/// hull's face normals.
template <class F>
void for_each_face_axis(const Placed& p, F&& f) {
  switch (p.prim->type) {
    case ShapeType::Box:
      for (int k = 0; k < 3; ++k) f(Vec3(p.rotation.col(k)), true);
      break;
    case ShapeType::Cylinder:
      f(Vec3(p.rotation.col(2)), false);
      break;
    case ShapeType::Mesh:
      for (const auto& plane : p.prim->mesh->hull_planes) {
        f(Vec3(p.rotation * plane.head<3>()), false);
      }
      break;
    default:
      break;
  }
}

/// The separating-axis direction of two overlapping polytopes (from `other` towards `body`):
/// of the candidate axes (face normals, box edge crossings, and `hint`), the one of largest
/// separation, i.e. least penetration; face axes win ties within 1e-9 of the size. (GJK/EPA
/// alone can return a diagonal for two aligned boxes whose faces coincide.)
Vec3 separating_axis(const Placed& body, const Placed& other, const Vec3& hint) {
  const Vec3 between = body.bound_center() - other.bound_center();
  const double tie = 1e-9 * std::max(body.prim->bound_radius, other.prim->bound_radius);
  Vec3 best = hint;
  double best_sep = -std::numeric_limits<double>::infinity();
  auto consider = [&](Vec3 u, bool face) {
    const double len = u.norm();
    if (!(len > 1e-9)) return;
    u /= len;
    if (u.dot(between) < 0) u = -u;
    // Separation along u: the body's lowest point above the other's highest.
    const double sep = separation(body, other, u) - (face ? 0 : tie);
    if (sep > best_sep) {
      best_sep = sep;
      best = u;
    }
  };
  for_each_face_axis(body, [&](const Vec3& u, bool) { consider(u, true); });
  for_each_face_axis(other, [&](const Vec3& u, bool) { consider(u, true); });
  if (body.prim->type == ShapeType::Box && other.prim->type == ShapeType::Box) {
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) {
        consider(Vec3(body.rotation.col(i)).cross(Vec3(other.rotation.col(j))), false);
      }
    }
  }
  consider(hint, false);
  return best;
}

/// Face contact of two boxes (Sutherland-Hodgman, as box-box detectors do): the reference
/// face is the face of either box most aligned with the pair normal n (from `other` towards
/// `body`), the incident face the other box's face most opposed to it; the incident face is
/// clipped to the reference face's sides and its points below the reference plane (within
/// margin) are the contacts. Where n (the closest points' direction apart, the axis of least
/// overlap else) is not within 1e-3 rad of a face normal:
/// - the face axis that separates the boxes most takes its place if it separates them
///   nearly as well (kFaceAxisCos); the rows then take that face's normal;
/// - else the faces most aligned with n are projected onto each other along n and the rows
///   take n, their gaps measured along it (as Jolt's manifolds);
/// - either way, faces that give no point within the margin return false (the caller's
///   points: the support points along n).
/// The rows' normal is written to `normal`. A box landing on a tilted one, 4.9 cm above it
/// and 8 degrees off its face (falling_joints), had one point at its nearest corner, tipped
/// about it and came 7 cm into the other within two steps; touching at an edge, a box
/// spinning at 33 rad/s about its one point came 6 cm in within a step.
bool box_face_contacts(const Placed& body, const Placed& other, const Vec3& n, double margin,
                       std::vector<Contact>& cand, Vec3& normal) {
  // Reference: the box whose face normal is best aligned with the normal out of it.
  int axis[2] = {0, 0};
  double align[2] = {-1, -1};
  const Placed* box[2] = {&other, &body};  // other's face points along n, body's along -n
  for (int s = 0; s < 2; ++s) {
    for (int k = 0; k < 3; ++k) {
      const double d = std::abs(box[s]->rotation.col(k).dot(n));
      if (d > align[s]) {
        align[s] = d;
        axis[s] = k;
      }
    }
  }
  int ref = align[0] >= align[1] - 1e-9 ? 0 : 1;
  Vec3 out_n = ref == 0 ? n : Vec3(-n);  // the reference face's outward normal
  normal = n;
  bool along_n = false;  // points projected onto the reference face along n, not its normal
  const bool turned = align[ref] < std::cos(1e-3);  // n is not a face normal
  if (turned) {
    // Separation along n (negative: overlap), and the least a face axis must have to take
    // its place: 6% less apart, 6% deeper overlapping (as box-box detectors prefer faces to
    // edges within a fudge factor).
    const double sep_n = separation(body, other, n);
    const double needed = sep_n >= 0 ? kFaceAxisCos * sep_n : sep_n / kFaceAxisCos;
    // The face axis of largest separation (the body's lowest point along it above the
    // other's highest), each axis turned to point from `other` towards `body`.
    double best_sep = -std::numeric_limits<double>::infinity();
    int face_ref = ref, face_axis = axis[ref];
    Vec3 face_normal = n;
    for (int s = 0; s < 2; ++s) {
      for (int k = 0; k < 3; ++k) {
        Vec3 u = box[s]->rotation.col(k);
        if (u.dot(n) < 0) u = -u;
        const double sep = separation(body, other, u);
        if (sep > best_sep) {
          best_sep = sep;
          face_ref = s;
          face_axis = k;
          face_normal = u;
        }
      }
    }
    if (best_sep >= needed) {
      ref = face_ref;
      axis[ref] = face_axis;
      normal = face_normal;
      out_n = ref == 0 ? normal : Vec3(-normal);
    } else {
      along_n = true;
    }
  }
  const Placed& R = *box[ref];
  const Placed& I = *box[1 - ref];
  const int ra = axis[ref];
  const Vec3 ha = R.prim->half_extents, hi = I.prim->half_extents;
  const double sign_r = R.rotation.col(ra).dot(out_n) > 0 ? 1.0 : -1.0;
  const Vec3 nr = sign_r * Vec3(R.rotation.col(ra));
  const Vec3 cr = R.translation + nr * ha[ra];
  const int ua = (ra + 1) % 3, va = (ra + 2) % 3;
  const Vec3 u = R.rotation.col(ua), v = R.rotation.col(va);
  // The direction m along which the incident face is projected onto the reference plane
  // and its points' gaps are measured: the reference face's normal, or n (as Jolt does).
  const Vec3 m = along_n ? out_n : nr;
  // Incident face: I's face whose outward normal is most opposed to m.
  int ia = 0;
  double best = -1;
  for (int k = 0; k < 3; ++k) {
    const double d = std::abs(I.rotation.col(k).dot(m));
    if (d > best) {
      best = d;
      ia = k;
    }
  }
  const double sign_i = I.rotation.col(ia).dot(m) > 0 ? -1.0 : 1.0;
  const Vec3 ni = sign_i * Vec3(I.rotation.col(ia));
  const Vec3 ci = I.translation + ni * hi[ia];
  const int iu = (ia + 1) % 3, iv = (ia + 2) % 3;
  const Vec3 eu = I.rotation.col(iu) * hi[iu], ev = I.rotation.col(iv) * hi[iv];
  std::vector<Vec3> poly = {ci + eu + ev, ci - eu + ev, ci - eu - ev, ci + eu - ev};
  // Onto the reference plane along m (the identity's projection where m = nr): clipped
  // there, each point's distance along m back to the incident face is its gap.
  const double m_nr = m.dot(nr), m_ni = m.dot(ni);
  for (Vec3& p : poly) p -= ((p - cr).dot(nr) / m_nr) * m;
  std::vector<Vec3> next;
  // Clip against the four sides |(p - cr) . w| <= e of the reference face.
  for (const auto& [w, e] : {std::pair{u, ha[ua]}, std::pair{Vec3(-u), ha[ua]},
                             std::pair{v, ha[va]}, std::pair{Vec3(-v), ha[va]}}) {
    next.clear();
    for (std::size_t k = 0; k < poly.size(); ++k) {
      const Vec3& p = poly[k];
      const Vec3& q = poly[(k + 1) % poly.size()];
      const double dp = (p - cr).dot(w) - e, dq = (q - cr).dot(w) - e;
      if (dp <= 0) next.push_back(p);
      if ((dp < 0) != (dq < 0) && dp != dq) next.push_back(p + (q - p) * (dp / (dp - dq)));
    }
    poly.swap(next);
    if (poly.empty()) break;
  }
  // Faces that do not face each other (the clipped face empty, or no point of it within the
  // margin though the boxes are that close): the caller's points instead.
  const std::size_t first = cand.size();
  const std::uint32_t feature_base = 64 + 16 * std::uint32_t(ref * 6 + ra * 2 + (sign_r > 0));
  for (std::size_t k = 0; k < poly.size(); ++k) {
    const Vec3& on_ref = poly[k];
    const double sep = (ci - on_ref).dot(ni) / m_ni;  // incident point: on_ref + sep m
    if (sep >= margin) continue;
    Contact c;
    c.normal = normal;
    c.gap = sep;
    c.feature = feature_base + std::uint32_t(k);
    const Vec3 p = on_ref + sep * m;
    if (ref == 0) {  // reference on other: the incident points are the body's
      c.p_body = p;
      c.p_collider = on_ref;
    } else {
      c.p_body = on_ref;
      c.p_collider = p;
    }
    cand.push_back(c);
  }
  return !turned || cand.size() > first;
}

/// Two boxes: the pair's manifold (one normal n, from `other` towards `body`) and guards of
/// the corners it does not hold. A corner over another face of the other box (its normal
/// more than about 10 degrees from n) is tested exactly against that face, so that it
/// cannot come in through it within the step: the manifold's rows hold the boxes apart along
/// n only (one point with a diagonal normal for two edges that touch), and a box whose corner
/// came through another face went 3 cm deep in one step (falling_joints: 16 cm boxes at
/// 3 m/s), to be pushed out at 0.1 m/s. Grouped by normal as against a mesh (the manifold,
/// then up to three guarded faces, 4 points each).
int reduce_boxes(const Placed& body, const Placed& other, const Vec3& n, double margin,
                 std::vector<Contact>& cand, Contact* out) {
  const double band = kTieBand * body.prim->bound_radius;
  const std::size_t first = cand.size();
  // A guard only for a corner outside `solid` (by more than the tie band: one on its
  // surface, as in an aligned stack, is the manifold's), over one of its faces (closest to a
  // face's inside, the normal that face's: near an edge the normal turns with the corner's
  // position, and a guard there would stop a box sliding back over the face it overhangs),
  // and off the manifold's normal.
  auto guard = [&](const Vec3& p, const Placed& solid, bool flip, std::uint32_t feature) {
    const std::size_t size = cand.size();
    add_point_vs_solid(p, 0, solid, flip, feature, margin, cand);
    if (cand.size() == size) return;
    const Contact& c = cand.back();
    const double face = (solid.rotation.transpose() * c.normal).cwiseAbs().maxCoeff();
    if (!(c.gap > band) || face < 1 - 1e-9 || c.normal.dot(n) >= kManifoldNormalCos) {
      cand.pop_back();
    }
  };
  for_each_support_point(body, n, [&](const Vec3& p, std::uint32_t f) {
    guard(p, other, false, kGuardFeature + f);
  });
  for_each_support_point(other, -n, [&](const Vec3& p, std::uint32_t f) {
    guard(p, body, true, kGuardFeature + kColliderPointOffset + f);
  });
  if (cand.size() == first) return reduce_manifold(cand.data(), int(cand.size()), out, band);
  return reduce_mesh_manifolds(cand.data(), int(cand.size()), out, band);
}

}  // namespace

int collide_polytopes(const Placed& body, const Placed& other, double margin,
                      NarrowScratch& scratch, Contact* out) {
  auto& cand = scratch.candidates;
  cand.clear();
  const bool boxes = body.prim->type == ShapeType::Box && other.prim->type == ShapeType::Box;
  // Two thirds of the box pairs that reach GJK in a settled pile are apart beyond the margin;
  // the separating-axis test tells most of them at a fraction of its cost.
  if (boxes && boxes_apart(body, other, margin)) return 0;
  GjkResult g;
  bool have_gjk = gjk_closest(body, other, g);
  if (have_gjk && g.distance >= margin) return 0;
  // A wrong direction near touching (gjk_separates): the axes of the overlap's test instead.
  if (have_gjk && g.distance > 0 && !gjk_separates(body, other, g)) have_gjk = false;
  const Vec3 hint =
      have_gjk ? g.normal : Vec3((body.bound_center() - other.bound_center()).normalized());
  // Apart: the closest-point direction; overlapping: the axis of least penetration.
  const Vec3 n = have_gjk && g.distance > 0 ? hint : separating_axis(body, other, hint);
  Vec3 face_n;
  if (boxes && box_face_contacts(body, other, n, margin, cand, face_n)) {
    return reduce_boxes(body, other, face_n, margin, cand, out);
  }
  // The two support planes across n: the body's lowest points and the other's highest.
  double low = std::numeric_limits<double>::infinity();
  double high = -low;
  for_each_support_point(body, n, [&](const Vec3& p, std::uint32_t) { low = std::min(low, n.dot(p)); });
  for_each_support_point(other, -n,
                         [&](const Vec3& p, std::uint32_t) { high = std::max(high, n.dot(p)); });
  if (!std::isfinite(low) || !std::isfinite(high)) return 0;
  // A support point counts where its projection onto the other side's plane lies on that
  // side (within its face): the overlap of the two faces, one normal for the whole pair.
  // A point p of one side (gap to the other side's plane, along n from the other towards the
  // body) and its projection q onto that plane, kept if q lies on the other side's solid.
  auto add = [&](const Vec3& p, double gap, const Placed& onto, bool from_body,
                 std::uint32_t feature) {
    if (gap >= margin) return;
    const Vec3 q = from_body ? Vec3(p - gap * n) : Vec3(p + gap * n);
    if (closest_on_surface(*onto.prim, onto.to_local(q)).distance >
        1e-6 * onto.prim->bound_radius) {
      return;
    }
    Contact c;
    c.p_body = from_body ? p : q;
    c.p_collider = from_body ? q : p;
    c.normal = n;
    c.gap = gap;
    c.feature = feature;
    cand.push_back(c);
  };
  const std::uint32_t body_offset = body.prim->type == ShapeType::Mesh ? kMeshVertexOffset : 0;
  const std::uint32_t other_offset =
      kColliderPointOffset + (other.prim->type == ShapeType::Mesh ? kMeshVertexOffset : 0);
  for_each_support_point(body, n, [&](const Vec3& p, std::uint32_t f) {
    add(p, n.dot(p) - high, other, true, body_offset + f);
  });
  for_each_support_point(other, -n, [&](const Vec3& p, std::uint32_t f) {
    add(p, low - n.dot(p), body, false, other_offset + f);
  });
  if (have_gjk) add_gjk_contact(g, kGjkFeature, body.prim->bound_radius, cand, 0);
  if (boxes) return reduce_boxes(body, other, n, margin, cand, out);
  return reduce_manifold(cand.data(), int(cand.size()), out, kTieBand * body.prim->bound_radius);
}

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
