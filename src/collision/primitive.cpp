// Collision primitive preprocessing, placement and bounds.
#include "collision/primitive.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "collision/mesh_data.h"
#include "mabd/error.h"

namespace mabd::detail {

Primitive make_primitive(const CollisionPrimitive& def, BodyKind kind, const std::string& where) {
  const bool collider = kind != BodyKind::Dynamic;
  const ShapeDef& s = def.shape;
  if (s.type == ShapeType::Plane && !collider) {
    throw InvalidArgument(where + ": a plane is only allowed on static or kinematic bodies");
  }
  try {
    validate_shape(s, collider);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(where + ": " + e.what());
  }
  const Quat& q = def.pose.orientation;
  if (!def.pose.position.allFinite() || !q.coeffs().allFinite() || q.norm() < 1e-12) {
    throw InvalidArgument(where + ": pose must be finite with a non-zero orientation quaternion");
  }

  Primitive p;
  p.type = s.type;
  p.rotation = q.normalized().toRotationMatrix();
  p.translation = def.pose.position;
  switch (s.type) {
    case ShapeType::Box:
      p.half_extents = 0.5 * s.size;
      p.bound_radius = p.half_extents.norm();
      break;
    case ShapeType::Sphere:
      p.radius = s.radius;
      p.bound_radius = s.radius;
      break;
    case ShapeType::Capsule:
      p.radius = s.radius;
      p.half_length = 0.5 * s.length;
      p.bound_radius = p.half_length + p.radius;
      break;
    case ShapeType::Cylinder:
      p.radius = s.radius;
      p.half_length = 0.5 * s.length;
      p.bound_radius = std::hypot(p.half_length, p.radius);
      break;
    case ShapeType::Mesh: {
      p.mesh = make_mesh_data(s.mesh, collider);
      p.bound_center = 0.5 * (p.mesh->lower + p.mesh->upper);
      for (const Vec3& v : p.mesh->vertices) {
        p.bound_radius = std::max(p.bound_radius, (v - p.bound_center).norm());
      }
      break;
    }
    case ShapeType::Plane:
      break;
  }
  return p;
}

Placed place(const Primitive& prim, const Mat3& body_rotation, const Vec3& body_position) {
  Placed out;
  out.prim = &prim;
  out.rotation = body_rotation * prim.rotation;
  out.translation = body_rotation * prim.translation + body_position;
  return out;
}

void world_aabb(const Placed& p, Vec3& lower, Vec3& upper) {
  const Primitive& s = *p.prim;
  const Mat3 abs_r = p.rotation.cwiseAbs();
  Vec3 center = p.translation;
  Vec3 half = Vec3::Zero();
  switch (s.type) {
    case ShapeType::Box:
      half = abs_r * s.half_extents;
      break;
    case ShapeType::Sphere:
      half.setConstant(s.radius);
      break;
    case ShapeType::Capsule:
      half = abs_r.col(2) * s.half_length + Vec3::Constant(s.radius);
      break;
    case ShapeType::Cylinder: {
      const Vec3 a = p.rotation.col(2);
      for (int i = 0; i < 3; ++i) {
        half[i] =
            s.half_length * std::abs(a[i]) + s.radius * std::sqrt(std::max(0.0, 1.0 - a[i] * a[i]));
      }
      break;
    }
    case ShapeType::Mesh:
      center = p.to_world(0.5 * (s.mesh->lower + s.mesh->upper));
      half = abs_r * (0.5 * (s.mesh->upper - s.mesh->lower));
      break;
    case ShapeType::Plane:
      half.setConstant(std::numeric_limits<double>::infinity());
      break;
  }
  lower = center - half;
  upper = center + half;
}

}  // namespace mabd::detail
