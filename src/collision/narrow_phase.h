// Narrow phase: contact points between one dynamic primitive and one collider primitive.
// All inputs and outputs in world coordinates (m); normals point from the collider towards
// the body; only points with gap < margin are returned, at most kMaxPairPoints per pair.
#pragma once

#include <vector>

#include "collision/primitive.h"

namespace mabd::detail {

/// Buffers reused from call to call so that the narrow phase does not allocate once warm.
struct NarrowScratch {
  std::vector<Contact> candidates;
  std::vector<std::uint32_t> triangles;
};

/// Dispatches on the two primitive types. Returns the number of points written to `out`
/// (capacity kMaxPairPoints).
int collide(const Placed& body, const Placed& collider, double margin, NarrowScratch& scratch,
            Contact* out);

/// Any dynamic primitive against a plane collider (plane_pairs.cpp).
int collide_plane(const Placed& body, const Placed& plane, double margin, NarrowScratch& scratch,
                  Contact* out);

/// Any dynamic primitive against a box, sphere, capsule or cylinder (convex_pairs.cpp).
int collide_convex(const Placed& body, const Placed& collider, double margin,
                   NarrowScratch& scratch, Contact* out);

/// Two box, cylinder or convex mesh primitives (dynamic pairs), with one normal for the pair:
/// the GJK/EPA direction, and the support points of each side whose projection onto the other
/// side's support plane lies on it (per-point closest features would turn a corner that sits
/// on an edge of an equal face sideways).
int collide_polytopes(const Placed& body, const Placed& other, double margin,
                      NarrowScratch& scratch, Contact* out);

/// Any dynamic primitive against a triangle mesh collider (mesh_pairs.cpp).
int collide_mesh(const Placed& body, const Placed& mesh, double margin, NarrowScratch& scratch,
                 Contact* out);

}  // namespace mabd::detail
