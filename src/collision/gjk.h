// Closest points or deepest penetration of two convex shapes by Bullet's GJK/EPA
// (btGjkPairDetector with btGjkEpaPenetrationDepthSolver), zero collision margins.
#pragma once

#include <vector>

#include "collision/primitive.h"

namespace mabd::detail {

/// World frame: normal is a unit vector from the collider towards the body; distance is
/// signed (negative: penetration depth) along it, p_body = p_collider + distance * normal.
struct GjkResult {
  double distance = 0;
  Vec3 p_body = Vec3::Zero();
  Vec3 p_collider = Vec3::Zero();
  Vec3 normal = Vec3::UnitZ();
};

/// `body` and `collider`: box, cylinder or dynamic mesh (its convex hull). False when the
/// solver gives no result.
bool gjk_closest(const Placed& body, const Placed& collider, GjkResult& out);

/// `body` against the triangle (a, b, c) given in world.
bool gjk_closest_triangle(const Placed& body, const Vec3& a, const Vec3& b, const Vec3& c,
                          GjkResult& out);

/// Appends the GJK closest points as a contact when they are nearer than every candidate
/// from index `first` on by more than the solver's accuracy (1e-7 * `scale`, m): an edge
/// against an edge, which no vertex sample sees.
void add_gjk_contact(const GjkResult& g, std::uint32_t feature, double scale,
                     std::vector<Contact>& cand, std::size_t first);

}  // namespace mabd::detail
