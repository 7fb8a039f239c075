// Collision detection between the bodies of a world (DESIGN section 7): broad phase, then
// closed-form or library narrow phases, returning contact points. Knows nothing of solvers:
// it reads shapes and rigid poses and writes geometry.
//
// Frames: every point is given in the *user frame* of its body (the frame its ShapeDef is
// written in); normals are world vectors. The caller converts to its own body frames.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "mabd/body.h"
#include "mabd/math.h"

namespace mabd::detail {

/// One contact point between a dynamic body and a collider (a static or kinematic body).
struct ContactPoint {
  std::uint32_t body = 0;      ///< the dynamic body (index in the world)
  std::uint32_t collider = 0;  ///< the static or kinematic body (index in the world)
  Vec3 p_body = Vec3::Zero();      ///< contact point on the body's surface, its user frame (m)
  Vec3 p_collider = Vec3::Zero();  ///< contact point on the collider's surface, its user frame (m)
  /// Unit contact normal, world, pointing from the collider towards the body.
  Vec3 normal = Vec3::UnitZ();
  /// Signed distance (m) along `normal` between the two points at the poses given:
  /// normal . (x_body - x_collider); negative = penetration.
  double gap = 0;
  /// Identifies the feature pair (e.g. a box vertex index, a capsule end) so that a contact
  /// persisting between steps can be matched; unique among the points of one pair.
  std::uint32_t feature = 0;
  /// Rounding of the body's side (m): a sphere's or capsule's p_body lies this far from its
  /// core (centre, axis) along -normal, so p_body + body_radius * normal is the core point.
  /// 0 for other shapes.
  double body_radius = 0;
  /// The same for the collider's side (or body b of a pair): p_collider lies this far from
  /// its core along +normal.
  double collider_radius = 0;
};

/// One point (a soft body's node) near a body's surface (CollisionWorld::detect_points).
struct PointContact {
  std::uint32_t point = 0;   ///< index in the points given
  std::uint32_t body = 0;    ///< the body (static, kinematic or dynamic)
  Vec3 p_body = Vec3::Zero();  ///< closest point on the body's surface, its user frame (m)
  Vec3 normal = Vec3::UnitZ();   ///< unit, world, from the body towards the point
  double gap = 0;            ///< normal . (point - surface point) (m); negative = inside
  /// Rounding of the body (m): a sphere's or capsule's p_body lies this far from its core
  /// (centre, axis) along +normal, so p_body - radius * normal is the core point. 0 for
  /// other shapes.
  double radius = 0;
};

/// A triangle (a soft body's surface face) near a body's surface, closer there than at its
/// corners (CollisionWorld::detect_triangles): a body edge or corner between the nodes.
struct TriangleContact {
  std::uint32_t triangle = 0;  ///< index in the triangles given
  std::uint32_t body = 0;      ///< the body (static, kinematic or dynamic)
  /// Weights of the triangle's corners at the touched point (they sum to 1; a point on an
  /// edge has one zero weight).
  Vec3 weights = Vec3::Zero();
  Vec3 p_body = Vec3::Zero();  ///< closest point on the body's surface, its user frame (m)
  Vec3 normal = Vec3::UnitZ();   ///< unit, world, from the body towards the triangle
  double gap = 0;            ///< normal . (triangle point - surface point) (m)
  /// Rounding of the body (m), as PointContact::radius.
  double radius = 0;
  /// The body's core, its user frame (m): a capsule's axis from core0 to core1, a sphere's
  /// centre (both).
  Vec3 core0 = Vec3::Zero(), core1 = Vec3::Zero();
};

/// How one body takes part in collision detection.
struct CollisionGeometry {
  BodyKind kind = BodyKind::Dynamic;
  /// Primitives in the body's user frame (a body's own shape is one primitive at identity).
  /// Empty: the body does not collide.
  std::vector<CollisionPrimitive> primitives;
  std::uint32_t group = 1;            ///< collision group bits
  std::uint32_t mask = 0xFFFFFFFFu;   ///< groups it collides with
};

/// What the last detect did (counts).
struct DetectStats {
  std::size_t bodies_tested = 0;    ///< dynamic bodies some collider's filter accepts
  std::size_t broad_hits = 0;       ///< (body, collider primitive) pairs the broad phase kept
  std::size_t primitive_pairs = 0;  ///< narrow-phase calls (primitive pairs in reach)
  std::size_t points = 0;           ///< contact points returned
};

/// Broad phase (dynamic AABB tree) plus narrow phase over dynamic-vs-collider pairs.
/// Two bodies a, b are tested iff one is dynamic and the other static or kinematic,
/// (group_a & mask_b) != 0 and (group_b & mask_a) != 0, and the pair is not excluded.
class CollisionWorld {
 public:
  CollisionWorld();
  ~CollisionWorld();
  CollisionWorld(CollisionWorld&&) noexcept;
  CollisionWorld& operator=(CollisionWorld&&) noexcept;
  /// A copy of the bodies, geometries and exclusions; the broad phase is rebuilt at its first
  /// detect (the contacts found are the same).
  CollisionWorld(const CollisionWorld& other);

  /// Registers body `index` (indices are dense, added in increasing order from 0).
  /// Throws InvalidArgument on an unsupported primitive (e.g. a plane on a dynamic body).
  void add_body(std::uint32_t index, const CollisionGeometry& geometry);
  /// Makes room for `bodies` registered bodies and `excluded_pairs` excluded pairs in all.
  void reserve(std::size_t bodies, std::size_t excluded_pairs);
  /// The pair (a, b) never collides.
  void exclude_pair(std::uint32_t a, std::uint32_t b);
  /// Number of registered bodies that collide (non-empty primitives).
  std::size_t colliding_bodies() const;

  /// Finds every contact point with gap < margin (m) at the given poses of the bodies' user
  /// frames (one per registered body, world). At most 4 points per pair of primitives, or
  /// against a triangle mesh 4 per face direction (up to kMaxPairPoints).
  /// Appends to `out` (cleared first), sorted by (body, collider, feature).
  void detect(const std::vector<Pose>& poses, double margin, std::vector<ContactPoint>& out);
  /// Contact points between pairs of dynamic bodies with gap < margin (m): both collide,
  /// their filters match and the pair is not excluded. In each point `body` is the lower
  /// index a and `collider` the higher b, the normal points from b towards a and p_collider
  /// is in b's user frame. At most 4 points per pair of primitives. Appends to `out` (cleared
  /// first), sorted by (a, b, feature). Convex primitives only (a dynamic mesh is its hull).
  /// `accept(a, b)` (a < b; may be empty) filters pairs before the narrow phase (the
  /// caller's own rules, e.g. bodies of one articulation).
  /// Every body surface within `margin` (m) of each of `points` (world), at the given poses:
  /// at most one contact per point and body primitive, against every colliding body whatever
  /// its kind, except those `skip(body)` names (may be empty). Appends to `out` (cleared
  /// first), sorted by (point, body).
  void detect_points(const std::vector<Pose>& poses, const std::vector<Vec3>& points,
                     double margin, const std::function<bool(std::uint32_t)>& skip,
                     std::vector<PointContact>& out);
  /// Every body surface within `margin` (m) of the triangles (corner indices into
  /// `vertices`, world; `outward[t]` the unit normal of triangle t out of the solid it
  /// bounds) whose closest point lies inside the triangle or on an edge, not at a corner
  /// (detect_points finds those): at most one contact per triangle edge or face and body
  /// primitive, an edge's from the first triangle that has it. Round primitives only
  /// (spheres, capsules: a smooth distance, which the soft rows follow as the face rolls);
  /// flat and edged ones touch a face at its corners. Appends to `out` (cleared first), sorted by
  /// (triangle, body).
  void detect_triangles(const std::vector<Pose>& poses, const std::vector<Vec3>& vertices,
                        const std::vector<std::array<int, 3>>& triangles,
                        const std::vector<Vec3>& outward, double margin,
                        const std::function<bool(std::uint32_t)>& skip,
                        std::vector<TriangleContact>& out);
  void detect_pairs(const std::vector<Pose>& poses, double margin, std::vector<ContactPoint>& out,
                    const std::function<bool(std::uint32_t, std::uint32_t)>& accept = {});
  /// Counts of the last detect.
  const DetectStats& stats() const;
  /// Body pairs the last detect_pairs passed to the narrow phase.
  std::size_t pair_candidates() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mabd::detail
