// GJK/EPA through Bullet (see gjk.h).
#include "collision/gjk.h"

#include <BulletCollision/CollisionShapes/btBoxShape.h>
#include <BulletCollision/CollisionShapes/btConvexHullShape.h>
#include <BulletCollision/CollisionShapes/btCylinderShape.h>
#include <BulletCollision/CollisionShapes/btTriangleShape.h>
#include <BulletCollision/NarrowPhaseCollision/btGjkEpaPenetrationDepthSolver.h>
#include <BulletCollision/NarrowPhaseCollision/btGjkPairDetector.h>
#include <BulletCollision/NarrowPhaseCollision/btPointCollector.h>
#include <BulletCollision/NarrowPhaseCollision/btVoronoiSimplexSolver.h>

#include <optional>
#include <stdexcept>

#include "collision/closest_point.h"
#include "collision/mesh_data.h"

namespace mabd::detail {
namespace {

btVector3 bt(const Vec3& v) { return btVector3(v.x(), v.y(), v.z()); }
Vec3 eig(const btVector3& v) { return Vec3(v.x(), v.y(), v.z()); }

btTransform bt(const Mat3& r, const Vec3& t) {
  return btTransform(
      btMatrix3x3(r(0, 0), r(0, 1), r(0, 2), r(1, 0), r(1, 1), r(1, 2), r(2, 0), r(2, 1), r(2, 2)),
      bt(t));
}

/// A zero-margin Bullet shape for a box, cylinder or hull primitive, built on the stack.
class ShapeHolder {
 public:
  explicit ShapeHolder(const Primitive& p) {
    switch (p.type) {
      case ShapeType::Box:
        box_.emplace(bt(p.half_extents));
        box_->setMargin(0);
        shape_ = &*box_;
        break;
      case ShapeType::Cylinder:
        cylinder_.emplace(btVector3(p.radius, p.radius, p.half_length));
        cylinder_->setMargin(0);
        shape_ = &*cylinder_;
        break;
      case ShapeType::Mesh:
        shape_ = p.mesh->hull_shape.get();
        break;
      default:
        throw std::logic_error("gjk: unsupported primitive");
    }
  }
  const btConvexShape* get() const { return shape_; }

 private:
  std::optional<btBoxShape> box_;
  std::optional<btCylinderShapeZ> cylinder_;
  const btConvexShape* shape_ = nullptr;
};

bool run(const btConvexShape* a, const btTransform& ta, const btConvexShape* b,
         const btTransform& tb, GjkResult& out) {
  btVoronoiSimplexSolver simplex;
  btGjkEpaPenetrationDepthSolver epa;
  btGjkPairDetector detector(a, b, &simplex, &epa);
  btGjkPairDetector::ClosestPointInput input;
  input.m_transformA = ta;
  input.m_transformB = tb;
  btPointCollector result;
  detector.getClosestPoints(input, result, nullptr);
  if (!result.m_hasResult) return false;
  const Vec3 n = eig(result.m_normalOnBInWorld);
  if (!(n.norm() > 0.5)) return false;
  out.normal = n.normalized();
  out.distance = result.m_distance;
  out.p_collider = eig(result.m_pointInWorld);
  out.p_body = out.p_collider + out.distance * out.normal;
  return true;
}

/// Makes a solver answer exact where it can, given exact closest-point projections onto
/// the body and the collider (world in, world out). Separated: GJK stops at a relative
/// tolerance that leaves ~1e-5 m between curved features (rim against rim), so alternate
/// projections from its answer while the distance decreases. Penetrating: EPA's witness
/// points on curved shapes can be off the surfaces (by decimetres for cylinders); put them on
/// the surfaces and re-measure the gap along its normal, or reject the answer when they were
/// off by more than 1% of the body's size.
template <class OntoBody, class OntoCollider>
bool polish(GjkResult& out, double size, OntoBody&& onto_body, OntoCollider&& onto_collider) {
  if (out.distance > 0) {
    for (int it = 0; it < 8; ++it) {
      const Vec3 on_collider = onto_collider(out.p_body);
      const Vec3 on_body = onto_body(on_collider);
      const Vec3 d = on_body - on_collider;
      const double dist = d.norm();
      if (!(dist < out.distance - 1e-15) || dist <= 0) break;
      out.distance = dist;
      out.normal = d / dist;
      out.p_body = on_body;
      out.p_collider = on_collider;
    }
    return true;
  }
  const Vec3 on_body = onto_body(out.p_body);
  const Vec3 on_collider = onto_collider(out.p_collider);
  if ((on_body - out.p_body).norm() > 0.01 * size ||
      (on_collider - out.p_collider).norm() > 0.01 * size) {
    return false;
  }
  out.p_body = on_body;
  out.p_collider = on_collider;
  out.distance = out.normal.dot(on_body - on_collider);
  return true;
}

/// Exact closest surface point of a placed primitive to a world point (world).
Vec3 onto(const Placed& p, const Vec3& x) {
  return p.to_world(closest_on_surface(*p.prim, p.to_local(x)).point);
}

}  // namespace

bool gjk_closest(const Placed& body, const Placed& collider, GjkResult& out) {
  const ShapeHolder a(*body.prim);
  const ShapeHolder b(*collider.prim);
  return run(a.get(), bt(body.rotation, body.translation), b.get(),
             bt(collider.rotation, collider.translation), out) &&
         polish(
             out, body.prim->bound_radius, [&](const Vec3& x) { return onto(body, x); },
             [&](const Vec3& x) { return onto(collider, x); });
}

bool gjk_closest_triangle(const Placed& body, const Vec3& a, const Vec3& b, const Vec3& c,
                          GjkResult& out) {
  const ShapeHolder shape(*body.prim);
  btTriangleShape triangle(bt(a), bt(b), bt(c));
  triangle.setMargin(0);
  btTransform identity;
  identity.setIdentity();
  return run(shape.get(), bt(body.rotation, body.translation), &triangle, identity, out) &&
         polish(
             out, body.prim->bound_radius, [&](const Vec3& x) { return onto(body, x); },
             [&](const Vec3& x) { return closest_on_triangle(x, a, b, c).point; });
}

void add_gjk_contact(const GjkResult& g, std::uint32_t feature, double scale,
                     std::vector<Contact>& cand, std::size_t first) {
  for (std::size_t i = first; i < cand.size(); ++i) {
    if (cand[i].gap <= g.distance + 1e-7 * scale) return;
  }
  Contact c;
  c.p_body = g.p_body;
  c.p_collider = g.p_collider;
  c.normal = g.normal;
  c.gap = g.distance;
  c.feature = feature;
  cand.push_back(c);
}

}  // namespace mabd::detail
