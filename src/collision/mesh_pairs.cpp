// Contacts of a dynamic primitive against a triangle mesh collider (open or closed).
//
// Triangles collide on the side their counter-clockwise normal points to: a triangle is
// tested only when the body primitive's centre is in front of its plane. Each body point
// (a sphere centre, capsule axis samples, box corners, cylinder rim points, hull vertices)
// is tested against each nearby triangle through its closest point: in the face region the
// signed distance to the plane (so penetration is measured), on an edge or a vertex the
// distance to that feature, kept only if no triangle sharing the feature is nearer (so a
// point over a flat or concave seam is not reported twice with a tilted normal) and only if
// the point is in front of the triangle. Box, cylinder and convex mesh bodies add the mesh
// vertices tested against the body's surface and the GJK closest points of each triangle
// when they lie on a boundary or convex edge (edge-against-edge contacts). Points at the
// same place with the same normal, found through two triangles, are merged; at most 4
// points remain per face direction, up to 4 directions (a crease, a bowl's floor and wall;
// manifold.h).
//
// Feature ids: 64 * triangle + sub, with sub: round bodies 0 and 1 (capsule ends, the sphere
// centre is 0), 2 (nearest axis point), 3 and 4 (axis clipped at a mesh boundary edge);
// other bodies: the support point id (support_points.h; mesh vertices 8 + index mod 32),
// 44 (GJK point); mesh vertices against the body: 64 * vertex + 48.
#include <algorithm>
#include <cmath>

#include "collision/closest_point.h"
#include "collision/gjk.h"
#include "collision/manifold.h"
#include "collision/mesh_data.h"
#include "collision/narrow_phase.h"
#include "collision/support_points.h"

namespace mabd::detail {
namespace {

constexpr std::uint32_t kSubAxisNearest = 2;
constexpr std::uint32_t kSubClip = 3;
constexpr std::uint32_t kSubHullVertex = 8;
constexpr std::uint32_t kSubGjk = 44;
constexpr std::uint32_t kSubMeshVertex = 48;

/// A mesh collider placed in world, with the queries of this file in its frame.
struct MeshView {
  const MeshData& m;
  const Placed& placed;

  const Vec3& v(int t, int k) const { return m.vertices[m.triangles[t][k]]; }
  TrianglePoint closest(int t, const Vec3& p) const {
    return closest_on_triangle(p, v(t, 0), v(t, 1), v(t, 2));
  }
  double distance(int t, const Vec3& p) const { return (p - closest(t, p).point).norm(); }

  /// Whether no triangle sharing the edge or vertex `region` of triangle t is nearer to p
  /// than d (m).
  bool owns(int t, TriangleRegion region, const Vec3& p, double d) const {
    const double tol = 1e-10 * (1 + d);
    int vertex = -1;
    switch (region) {
      case TriangleRegion::Edge01:
      case TriangleRegion::Edge12:
      case TriangleRegion::Edge20: {
        const int nb = m.neighbors[t][int(region) - int(TriangleRegion::Edge01)];
        return nb < 0 || distance(nb, p) >= d - tol;
      }
      case TriangleRegion::Vertex0:
        vertex = m.triangles[t][0];
        break;
      case TriangleRegion::Vertex1:
        vertex = m.triangles[t][1];
        break;
      case TriangleRegion::Vertex2:
        vertex = m.triangles[t][2];
        break;
      case TriangleRegion::Face:
        return true;
    }
    for (int k = m.vertex_triangle_offsets[vertex]; k < m.vertex_triangle_offsets[vertex + 1];
         ++k) {
      const int other = m.vertex_triangles[k];
      if (other != t && distance(other, p) < d - tol) return false;
    }
    return true;
  }

  /// Tests the point p (mesh frame) swollen by `radius` against triangle t.
  void point_vs_triangle(int t, const Vec3& p, double radius, std::uint32_t feature, double margin,
                         std::vector<Contact>& cand) const {
    const Vec3& n = m.normals[t];
    const TrianglePoint tp = closest(t, p);
    const double height = n.dot(p - v(t, 0));
    Vec3 normal = n;
    double d = height;
    if (tp.region != TriangleRegion::Face) {
      if (height <= 0) return;  // behind the plane, off the face: not this triangle's side
      const Vec3 diff = p - tp.point;
      d = diff.norm();
      if (d <= 0) return;
      normal = diff / d;
      if (d - radius >= margin || !owns(t, tp.region, p, d)) return;
    }
    if (d - radius >= margin) return;
    Contact c;
    c.normal = placed.rotation * normal;
    c.p_collider = placed.to_world(tp.point);
    c.p_body = placed.to_world(p) - radius * c.normal;
    c.gap = d - radius;
    c.feature = feature;
    c.body_radius = radius;
    cand.push_back(c);
  }
};

/// Parameter range of segment a + s d (s in [0, 1]) above triangle t (inside the prism of its
/// edges along its normal); `edge0`, `edge1`: the edge slot bounding each end, -1 if none.
void clip_to_prism(const MeshView& mv, int t, const Vec3& a, const Vec3& d, double& s0, double& s1,
                   int& edge0, int& edge1) {
  const Vec3& n = mv.m.normals[t];
  for (int e = 0; e < 3 && s0 <= s1; ++e) {
    const Vec3& p = mv.v(t, e);
    const Vec3 inward = n.cross(mv.v(t, (e + 1) % 3) - p);  // points into the triangle
    const double fa = inward.dot(a - p), fd = inward.dot(d);
    if (std::abs(fd) < 1e-300) {
      if (fa < 0) s1 = s0 - 1;
      continue;
    }
    const double s = -fa / fd;
    if (fd > 0 && s > s0) {
      s0 = s;
      edge0 = e;
    } else if (fd < 0 && s < s1) {
      s1 = s;
      edge1 = e;
    }
  }
}

/// Sphere or capsule body: axis [a, b] in the mesh frame (a == b for a sphere).
void round_vs_triangle(const MeshView& mv, int t, const Vec3& a, const Vec3& b, double radius,
                       double margin, std::vector<Contact>& cand) {
  const auto base = std::uint32_t(t) * 64;
  mv.point_vs_triangle(t, a, radius, base, margin, cand);
  if (a == b) return;
  mv.point_vs_triangle(t, b, radius, base + 1, margin, cand);

  const Vec3 d = b - a;
  double least = std::min(mv.distance(t, a), mv.distance(t, b));
  // Axis clipped where it leaves the mesh over a boundary edge: the ends of a line contact.
  double s0 = 0, s1 = 1;
  int e0 = -1, e1 = -1;
  clip_to_prism(mv, t, a, d, s0, s1, e0, e1);
  constexpr double kEnd = 1e-9;
  if (s1 > s0) {
    if (e0 >= 0 && mv.m.neighbors[t][e0] < 0 && s0 > kEnd) {
      mv.point_vs_triangle(t, a + s0 * d, radius, base + kSubClip, margin, cand);
      least = std::min(least, mv.distance(t, a + s0 * d));
    }
    if (e1 >= 0 && mv.m.neighbors[t][e1] < 0 && s1 < 1 - kEnd && s1 - s0 > kEnd) {
      mv.point_vs_triangle(t, a + s1 * d, radius, base + kSubClip + 1, margin, cand);
      least = std::min(least, mv.distance(t, a + s1 * d));
    }
  }
  // Nearest axis point when strictly nearer than the samples (the axis crossing an edge or
  // the triangle): against the three edges and the plane crossing.
  double best_s = -1, best_d = least - 1e-9 * (1 + d.norm());
  for (int e = 0; e < 3; ++e) {
    double s, u;
    const Vec3& p = mv.v(t, e);
    const Vec3& q = mv.v(t, (e + 1) % 3);
    closest_segment_segment(a, b, p, q, s, u);
    const double dist = (a + s * d - (p + u * (q - p))).norm();
    if (dist < best_d) {
      best_d = dist;
      best_s = s;
    }
  }
  const Vec3& n = mv.m.normals[t];
  const double ha = n.dot(a - mv.v(t, 0)), hb = n.dot(b - mv.v(t, 0));
  if (ha * hb < 0) {
    const double s = ha / (ha - hb);
    if (mv.closest(t, a + s * d).region == TriangleRegion::Face) best_s = s;
  }
  if (best_s > kEnd && best_s < 1 - kEnd) {
    mv.point_vs_triangle(t, a + best_s * d, radius, base + kSubAxisNearest, margin, cand);
  }
}

/// Box, cylinder or convex mesh body against triangle t.
void solid_vs_triangle(const MeshView& mv, int t, const Placed& body, double margin,
                       std::vector<Contact>& cand) {
  const auto base = std::uint32_t(t) * 64;
  const std::size_t first = cand.size();
  const Vec3 n_world = mv.placed.rotation * mv.m.normals[t];
  const bool hull = body.prim->type == ShapeType::Mesh;
  for_each_support_point(body, n_world, [&](const Vec3& p, std::uint32_t f) {
    const std::uint32_t sub = hull ? kSubHullVertex + f % 32 : f;
    mv.point_vs_triangle(t, mv.placed.to_local(p), 0, base + sub, margin, cand);
  });
  // Mesh vertices against the body's surface.
  for (int k = 0; k < 3; ++k) {
    const Vec3 q = mv.placed.to_world(mv.v(t, k));
    const SurfacePoint sp = closest_on_surface(*body.prim, body.to_local(q));
    const Vec3 normal = -(body.rotation * sp.normal);  // from the mesh towards the body
    if (sp.distance >= margin || normal.dot(n_world) <= 0) continue;
    Contact c;
    c.normal = normal;
    c.p_body = body.to_world(sp.point);
    c.p_collider = q;
    c.gap = sp.distance;
    c.feature = std::uint32_t(mv.m.triangles[t][k]) * 64 + kSubMeshVertex;
    cand.push_back(c);
  }
  // GJK closest points: only an edge of the body on a sharp edge of the mesh (elsewhere the
  // vertex samples above see every contact, and a flat seam would add a spurious one).
  GjkResult g;
  if (gjk_closest_triangle(body, mv.placed.to_world(mv.v(t, 0)), mv.placed.to_world(mv.v(t, 1)),
                           mv.placed.to_world(mv.v(t, 2)), g) &&
      g.distance < margin && g.normal.dot(n_world) > 0) {
    const TriangleRegion region = mv.closest(t, mv.placed.to_local(g.p_body)).region;
    const int edge = int(region) - int(TriangleRegion::Edge01);
    if (edge >= 0 && edge < 3 && mv.m.sharp_edges[t][edge]) {
      add_gjk_contact(g, base + kSubGjk, body.prim->bound_radius, cand, first);
    }
  }
}

}  // namespace

int collide_mesh(const Placed& body, const Placed& mesh, double margin, NarrowScratch& scratch,
                 Contact* out) {
  const MeshView mv{*mesh.prim->mesh, mesh};
  const Primitive& s = *body.prim;
  const Vec3 center = mesh.to_local(body.bound_center());
  const Vec3 reach = Vec3::Constant(s.bound_radius + margin);
  auto& tris = scratch.triangles;
  tris.clear();
  mv.m.tree.query(center - reach, center + reach, tris);
  std::sort(tris.begin(), tris.end());  // a stable order gives stable choices

  const bool round = s.type == ShapeType::Sphere || s.type == ShapeType::Capsule;
  Vec3 a = center, b = center;
  if (s.type == ShapeType::Capsule) {
    a = mesh.to_local(body.to_world(Vec3(0, 0, -s.half_length)));
    b = mesh.to_local(body.to_world(Vec3(0, 0, s.half_length)));
  }
  auto& cand = scratch.candidates;
  cand.clear();
  for (std::uint32_t tu : tris) {
    const int t = int(tu);
    const Vec3& n = mv.m.normals[t];
    if (n.isZero(0) || n.dot(center - mv.v(t, 0)) <= 0) continue;  // degenerate or its back
    if (round) {
      round_vs_triangle(mv, t, a, b, s.radius, margin, cand);
    } else {
      solid_vs_triangle(mv, t, body, margin, cand);
    }
  }
  return reduce_mesh_manifolds(cand.data(), int(cand.size()), out, kTieBand * s.bound_radius);
}

}  // namespace mabd::detail
