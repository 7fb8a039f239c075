// The closest points of a body primitive and a triangle of a soft body's surface (world
// frame, m): the narrow phase of CollisionWorld::detect_triangles.
#pragma once

#include "collision/collision_world.h"
#include "collision/primitive.h"

namespace mabd::detail {

/// Contact of placed primitive `prim` (a sphere or capsule; false for others) with triangle
/// (a, b, c) whose solid lies behind `outward` (unit): false when it is `margin` (m) or
/// farther, when the triangle's point is one of its corners, or when the primitive's core has
/// passed behind the triangle's plane. Sets weights, normal (from the body towards the triangle), gap and
/// radius of `out`, and `p_world`, the body's surface point (world).
bool primitive_triangle(const Placed& prim, const Vec3& a, const Vec3& b, const Vec3& c,
                        const Vec3& outward, double margin, TriangleContact& out, Vec3& p_world);

}  // namespace mabd::detail
