// Internal representation of collision primitives (preprocessed once when a body is added)
// and of contacts while the narrow phase computes them.
//
// Frames: a Primitive stores its frame relative to its body's user frame; a Placed primitive
// carries the primitive frame in world (x_world = R x_prim + t). Narrow-phase contacts are in
// world coordinates; CollisionWorld converts them to user frames at the end. Lengths in m.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "mabd/body.h"
#include "mabd/math.h"

namespace mabd::detail {

struct MeshData;  // mesh_data.h

/// One collision primitive of a body, in the shape's own frame.
struct Primitive {
  ShapeType type = ShapeType::Sphere;
  Vec3 half_extents = Vec3::Zero();  ///< box half extents (m)
  double radius = 0;                 ///< sphere, capsule, cylinder radius (m)
  double half_length = 0;            ///< capsule, cylinder: half the cylindrical length (m)
  Mat3 rotation = Mat3::Identity();  ///< primitive frame -> body user frame
  Vec3 translation = Vec3::Zero();   ///< primitive frame origin in the body user frame (m)
  /// Bounding sphere in the primitive frame (not used for planes).
  Vec3 bound_center = Vec3::Zero();
  double bound_radius = 0;
  /// Mesh primitives: vertices, triangles and search structures (shared, immutable).
  std::shared_ptr<const MeshData> mesh;
};

/// Preprocesses `def` for a body of `kind`; `where` names it in error messages.
/// Throws InvalidArgument on an invalid or unsupported primitive.
Primitive make_primitive(const CollisionPrimitive& def, BodyKind kind, const std::string& where);

/// A primitive placed in world at the current poses.
struct Placed {
  const Primitive* prim = nullptr;
  Mat3 rotation = Mat3::Identity();  ///< primitive frame -> world
  Vec3 translation = Vec3::Zero();   ///< primitive frame origin in world (m)

  Vec3 to_world(const Vec3& p) const { return rotation * p + translation; }
  Vec3 to_local(const Vec3& p) const { return rotation.transpose() * (p - translation); }
  /// Bounding sphere centre in world (m).
  Vec3 bound_center() const { return to_world(prim->bound_center); }
};

/// Places `prim` for a body whose user frame has rotation `body_rotation` and origin
/// `body_position` in world.
Placed place(const Primitive& prim, const Mat3& body_rotation, const Vec3& body_position);

/// World axis-aligned box of a placed (non-plane) primitive: lower and upper corners (m).
void world_aabb(const Placed& p, Vec3& lower, Vec3& upper);

/// A contact between a dynamic primitive and a collider primitive, world frame.
/// gap = normal . (p_body - p_collider), normal from the collider towards the body.
struct Contact {
  Vec3 p_body = Vec3::Zero();
  Vec3 p_collider = Vec3::Zero();
  Vec3 normal = Vec3::UnitZ();
  double gap = 0;
  std::uint32_t feature = 0;  ///< unique among the points of one primitive pair
  /// Rounding (m) of the body's side: a sphere or capsule point p_body lies this far from its
  /// core (the centre, the axis) along -normal. 0 for other shapes.
  double body_radius = 0;
  /// The same for the collider's side: p_collider lies this far from its core along +normal.
  double collider_radius = 0;
};

/// Most points of one manifold: the points of a pair that share a normal direction.
constexpr int kManifoldPoints = 4;
/// Most manifolds of a body against a triangle mesh (faces of distinct normals: a crease, a
/// bowl's floor and wall); other pairs make one.
constexpr int kMaxMeshManifolds = 4;
/// Most points a primitive pair produces.
constexpr int kMaxPairPoints = kManifoldPoints * kMaxMeshManifolds;

}  // namespace mabd::detail
