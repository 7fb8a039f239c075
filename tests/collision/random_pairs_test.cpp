// Every pair of shape types at random poses near contact: the invariants every contact must
// satisfy (finite values, unit normal, gap = n . (x_body - x_collider) < margin, points on
// the surfaces, a positive gap equal to the points' distance, at most 4 points per
// primitive pair, unique features), and the deepest gap against a reference: the least
// distance from points sampled densely on either surface to the other shape (signed
// distances written out here), an upper bound of the true distance. Together: the deepest
// gap is the true distance to the reference's accuracy.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <set>

#include "collision/primitive.h"
#include "collision_test_util.h"

namespace mabd::test {
namespace {

std::vector<ShapeDef> body_shapes() {
  return {sphere_shape(0.3), capsule_shape(0.2, 0.8), box_shape(Vec3(0.6, 0.4, 0.3)),
          cylinder_shape(0.25, 0.6), mesh_shape(cube_mesh(0.3))};
}

std::vector<ShapeDef> collider_shapes() {
  TriangleMesh terrain;  // a bumpy open 5 x 5 grid
  const int n = 5;
  for (int j = 0; j <= n; ++j) {
    for (int i = 0; i <= n; ++i) {
      terrain.vertices.emplace_back(i - 2.5, j - 2.5, 0.15 * std::sin(1.7 * i) * std::cos(1.3 * j));
    }
  }
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < n; ++i) {
      const int a = j * (n + 1) + i, b = a + 1, c = a + n + 2, d = a + n + 1;
      terrain.triangles.push_back({a, b, c});
      terrain.triangles.push_back({a, c, d});
    }
  }
  return {plane_shape(),
          sphere_shape(0.5),
          capsule_shape(0.3, 1.0),
          box_shape(Vec3(1, 1, 0.5)),
          cylinder_shape(0.5, 0.8),
          mesh_shape(terrain),
          mesh_shape(cube_mesh(0.6))};
}

double point_segment_distance(const Vec3& p, const Vec3& a, const Vec3& b) {
  const Vec3 d = b - a;
  const double t = std::clamp((p - a).dot(d) / d.squaredNorm(), 0.0, 1.0);
  return (p - a - t * d).norm();
}

double point_triangle_distance(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
  const Vec3 n = (b - a).cross(c - a).normalized();
  const Vec3 q = p - n.dot(p - a) * n;
  const bool inside = n.dot((b - a).cross(q - a)) >= 0 && n.dot((c - b).cross(q - b)) >= 0 &&
                      n.dot((a - c).cross(q - c)) >= 0;
  if (inside) return std::abs(n.dot(p - a));
  return std::min({point_segment_distance(p, a, b), point_segment_distance(p, b, c),
                   point_segment_distance(p, c, a)});
}

/// Height of an open height-field mesh under (x, y); NaN outside it.
double mesh_height(const TriangleMesh& m, double x, double y) {
  for (const auto& t : m.triangles) {
    const Vec3 &a = m.vertices[t[0]], &b = m.vertices[t[1]], &c = m.vertices[t[2]];
    const double det = (b.x() - a.x()) * (c.y() - a.y()) - (c.x() - a.x()) * (b.y() - a.y());
    const double u = ((x - a.x()) * (c.y() - a.y()) - (c.x() - a.x()) * (y - a.y())) / det;
    const double v = ((b.x() - a.x()) * (y - a.y()) - (x - a.x()) * (b.y() - a.y())) / det;
    if (u >= 0 && v >= 0 && u + v <= 1) return a.z() + u * (b.z() - a.z()) + v * (c.z() - a.z());
  }
  return std::numeric_limits<double>::quiet_NaN();
}

/// Points on the surface of a shape (its frame): faces on a grid, edges and rims densely
/// (the nearest points of two shapes are often on them). Planes and open meshes: none.
std::vector<Vec3> surface_samples(const ShapeDef& s) {
  constexpr double kPi = std::numbers::pi;
  std::vector<Vec3> out;
  const int n = 30, dense = 400;
  auto grid = [&](auto&& f) {
    for (int i = 0; i <= n; ++i) {
      for (int j = 0; j <= n; ++j) f(double(i) / n, double(j) / n);
    }
  };
  auto line = [&](auto&& f) {
    for (int i = 0; i <= dense; ++i) f(double(i) / dense);
  };
  const bool cube = s.type == ShapeType::Mesh && s.mesh.triangles.size() == 12;
  if (s.type == ShapeType::Box || cube) {
    const Vec3 h = cube ? Vec3(s.mesh.vertices[7]) : Vec3(0.5 * s.size);
    for (int axis = 0; axis < 3; ++axis) {
      const int i1 = (axis + 1) % 3, i2 = (axis + 2) % 3;
      for (double side : {-1.0, 1.0}) {
        grid([&](double a, double b) {
          Vec3 p;
          p[axis] = side * h[axis];
          p[i1] = (2 * a - 1) * h[i1];
          p[i2] = (2 * b - 1) * h[i2];
          out.push_back(p);
        });
        for (double side2 : {-1.0, 1.0}) {  // the edges along i2
          line([&](double a) {
            Vec3 p;
            p[axis] = side * h[axis];
            p[i1] = side2 * h[i1];
            p[i2] = (2 * a - 1) * h[i2];
            out.push_back(p);
          });
        }
      }
    }
  } else if (s.type == ShapeType::Sphere || s.type == ShapeType::Capsule) {
    const double hl = s.type == ShapeType::Capsule ? 0.5 * s.length : 0;
    const int m = 50;  // latitude-longitude
    for (int i = 0; i <= m; ++i) {
      for (int j = 0; j < 2 * m; ++j) {
        const double th = kPi * i / m, ph = kPi * j / m;
        const Vec3 d(std::sin(th) * std::cos(ph), std::sin(th) * std::sin(ph), std::cos(th));
        out.push_back(s.radius * d + Vec3(0, 0, d.z() >= 0 ? hl : -hl));
        if (hl > 0) {
          out.push_back(
              Vec3(s.radius * std::cos(ph), s.radius * std::sin(ph), (2.0 * i / m - 1) * hl));
        }
      }
    }
  } else if (s.type == ShapeType::Mesh) {  // an open mesh: its triangles and their edges
    for (const auto& t : s.mesh.triangles) {
      const Vec3 &a = s.mesh.vertices[t[0]], &b = s.mesh.vertices[t[1]], &c = s.mesh.vertices[t[2]];
      grid([&](double u, double v) {
        if (u + v <= 1) out.push_back(a + u * (b - a) + v * (c - a));
      });
      line([&](double u) {
        out.push_back(a + u * (b - a));
        out.push_back(b + u * (c - b));
        out.push_back(c + u * (a - c));
      });
    }
  } else if (s.type == ShapeType::Cylinder) {
    const double hl = 0.5 * s.length;
    grid([&](double a, double b) {
      const double ph = 2 * kPi * b;
      out.push_back(Vec3(s.radius * std::cos(ph), s.radius * std::sin(ph), (2 * a - 1) * hl));
      for (double z : {-hl, hl})
        out.push_back(Vec3(a * s.radius * std::cos(ph), a * s.radius * std::sin(ph), z));
    });
    line([&](double a) {
      for (double z : {-hl, hl}) {
        out.push_back(Vec3(s.radius * std::cos(2 * kPi * a), s.radius * std::sin(2 * kPi * a), z));
      }
    });
  }
  return out;
}

/// Signed distance (m) from p (the shape's frame) to a solid shape; unsigned to an open mesh.
double shape_distance(const ShapeDef& s, const Vec3& p) {
  auto box = [](const Vec3& h, const Vec3& q) {
    const Vec3 d = q.cwiseAbs() - h;
    return d.cwiseMax(0.0).norm() + std::min(d.maxCoeff(), 0.0);
  };
  switch (s.type) {
    case ShapeType::Plane:
      return p.z();
    case ShapeType::Sphere:
      return p.norm() - s.radius;
    case ShapeType::Capsule: {
      const double hl = 0.5 * s.length;
      return (p - Vec3(0, 0, std::clamp(p.z(), -hl, hl))).norm() - s.radius;
    }
    case ShapeType::Box:
      return box(0.5 * s.size, p);
    case ShapeType::Cylinder: {
      const double dr = std::hypot(p.x(), p.y()) - s.radius, dz = std::abs(p.z()) - 0.5 * s.length;
      return std::hypot(std::max(dr, 0.0), std::max(dz, 0.0)) + std::min(std::max(dr, dz), 0.0);
    }
    case ShapeType::Mesh:
      if (s.mesh.triangles.size() == 12) return box(Vec3(s.mesh.vertices[7]), p);  // cube
      {
        double d = std::numeric_limits<double>::infinity();
        for (const auto& t : s.mesh.triangles) {
          const Vec3 &a = s.mesh.vertices[t[0]], &b = s.mesh.vertices[t[1]],
                     &c = s.mesh.vertices[t[2]];
          const Vec3 centre = (a + b + c) / 3;
          const double reach =
              std::max({(a - centre).norm(), (b - centre).norm(), (c - centre).norm()});
          if ((p - centre).norm() - reach < d) d = std::min(d, point_triangle_distance(p, a, b, c));
        }
        return d;
      }
  }
  return std::numeric_limits<double>::quiet_NaN();
}

/// Upper bound of the distance between two shapes at the given poses: the least distance
/// from either's samples to the other.
double sampled_distance(const ShapeDef& a, const std::vector<Vec3>& samples_a, const Pose& pa,
                        const ShapeDef& b, const std::vector<Vec3>& samples_b, const Pose& pb) {
  double d = std::numeric_limits<double>::infinity();
  for (const Vec3& q : samples_a) {
    d = std::min(d, shape_distance(b, pb.orientation.conjugate() *
                                          (pa.orientation * q + pa.position - pb.position)));
  }
  for (const Vec3& q : samples_b) {
    d = std::min(d, shape_distance(a, pa.orientation.conjugate() *
                                          (pb.orientation * q + pb.position - pa.position)));
  }
  return d;
}

void expect_on_surface(const ShapeDef& s, const Vec3& p) {
  const double d = shape_distance(s, p);
  if (std::isnan(d)) return;
  const bool round = s.type == ShapeType::Sphere || s.type == ShapeType::Capsule;
  EXPECT_LE(d, 1e-6);
  EXPECT_GE(d, round ? -s.radius : -1e-6);
}

Quat random_rotation(std::mt19937& rng) {
  std::normal_distribution<double> g;
  return Quat(g(rng), g(rng), g(rng), g(rng)).normalized();
}

TEST(RandomPairs, InvariantsHoldForEveryPairType) {
  std::mt19937 rng(12345);
  std::uniform_real_distribution<double> u(-1, 1);
  const double margin = 0.2;
  const auto bodies = body_shapes();
  const auto colliders = collider_shapes();
  std::vector<std::vector<Vec3>> body_samples, collider_samples;
  for (const auto& b : bodies) body_samples.push_back(surface_samples(b));
  for (const auto& c : colliders) collider_samples.push_back(surface_samples(c));
  std::size_t total_points = 0;
  std::size_t checked = 0;
  std::vector<std::size_t> checked_per_collider(colliders.size(), 0);
  for (std::size_t ci = 0; ci < colliders.size(); ++ci) {
    for (std::size_t bi = 0; bi < bodies.size(); ++bi) {
      for (int trial = 0; trial < 40; ++trial) {
        SCOPED_TRACE("collider " + std::to_string(ci) + " body " + std::to_string(bi) + " trial " +
                     std::to_string(trial));
        Scene s;
        s.add(geometry(BodyKind::Static, colliders[ci]),
              pose_at(Vec3(0, 0, 0), ci == 0 || ci == 5 ? Quat::Identity() : random_rotation(rng)));
        const Vec3 p(0.6 * u(rng), 0.6 * u(rng), 0.3 + 0.6 * u(rng));
        s.add(geometry(BodyKind::Dynamic, bodies[bi]), pose_at(p, random_rotation(rng)));
        const auto& c = s.detect(margin);
        // One manifold of at most 4 points; against a triangle mesh, one per face direction.
        const bool mesh = colliders[ci].type == ShapeType::Mesh;
        ASSERT_LE(c.size(), std::size_t(mesh ? detail::kMaxPairPoints : detail::kManifoldPoints));
        std::set<std::uint32_t> features;
        for (const auto& x : c) {
          ASSERT_TRUE(x.p_body.allFinite() && x.p_collider.allFinite() && x.normal.allFinite());
          ASSERT_TRUE(std::isfinite(x.gap));
          EXPECT_LT(x.gap, margin);
          expect_consistent(x, s.poses, 1e-9);
          EXPECT_TRUE(features.insert(x.feature).second) << "duplicate feature " << x.feature;
          // Points on the surfaces (a sphere or capsule may give a point of the sphere
          // swept at an axis sample, not the support one: inside, within its radius), and a
          // positive gap is their distance: then no gap is below the true distance.
          expect_on_surface(bodies[bi], x.p_body);
          expect_on_surface(colliders[ci], x.p_collider);
          if (x.gap > 0) {
            const Vec3 xb = s.poses[1].orientation * x.p_body + s.poses[1].position;
            const Vec3 xc = s.poses[0].orientation * x.p_collider + s.poses[0].position;
            EXPECT_NEAR((xb - xc).norm(), x.gap, 1e-9);
          }
        }
        total_points += c.size();

        // Deepest gap against the sampled reference, for separated shapes.
        if (colliders[ci].type == ShapeType::Mesh && colliders[ci].mesh.triangles.size() != 12) {
          // The terrain (at the identity pose) has one side: only bodies wholly above it.
          bool above = true;
          for (const Vec3& q : body_samples[bi]) {
            const Vec3 w = s.poses[1].orientation * q + s.poses[1].position;
            const double h = mesh_height(colliders[ci].mesh, w.x(), w.y());
            above = above && !std::isnan(h) && w.z() > h;
            if (!above) break;
          }
          if (!above) continue;
        }
        const double reference = sampled_distance(bodies[bi], body_samples[bi], s.poses[1],
                                                  colliders[ci], collider_samples[ci], s.poses[0]);
        if (std::isnan(reference) || reference < 0.005 || reference > margin - 0.01) continue;
        ASSERT_FALSE(c.empty()) << "missed contact at distance " << reference;
        double deepest = c[0].gap;
        for (const auto& x : c) deepest = std::min(deepest, x.gap);
        EXPECT_LE(deepest, reference + 1e-7);
        ++checked;
        ++checked_per_collider[ci];
      }
    }
  }
  EXPECT_GT(total_points, 300u);  // the poses do produce contacts
  EXPECT_GT(checked, 50u);
  for (std::size_t ci = 0; ci < colliders.size(); ++ci) {
    EXPECT_GT(checked_per_collider[ci], 2u) << "collider " << ci << ": too few checked poses";
  }
}

}  // namespace
}  // namespace mabd::test
