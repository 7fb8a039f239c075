// Reduction of candidate contact points to a small manifold.
#pragma once

#include "collision/primitive.h"

namespace mabd::detail {

/// Gaps within this fraction of a primitive's bounding radius count as equally deep when
/// choosing a spread set (a flat face tilted by less than about 1e-3 rad stays spread).
constexpr double kTieBand = 1e-3;

/// Keeps at most kManifoldPoints of the `n` candidates (world frame): all of them when there
/// are no more than that (duplicates aside), else depth first with spread among near-ties:
/// each next point is taken among the remaining candidates whose gap is within `tie_band`
/// (m) of the smallest remaining gap, as the one that spreads the set most across the
/// deepest point's normal (farthest from the first point, then the largest triangle, then
/// the largest area added outside it). A point within `merge_distance` (m) of a kept point
/// with the same normal (to 1e-6) is a duplicate and dropped; the same body point against
/// two surfaces (a corner in a crease) is two contacts. Ties go to the earlier candidate, so a
/// stable candidate order gives a stable choice. Writes to `out`, returns the count; consumes
/// `candidates` (the chosen and dropped ones get an infinite gap).
int reduce_manifold(Contact* candidates, int n, Contact* out, double tie_band,
                    double merge_distance = 1e-9);

/// Normals within this angle's cosine of a manifold's first (deepest) point belong to it.
constexpr double kManifoldNormalCos = 0.985;  // about 10 degrees

/// Reduces candidates against a triangle mesh, whose faces may meet at a crease: the
/// candidates are grouped by normal (each group takes the candidates within
/// kManifoldNormalCos of its deepest one; the deepest candidates found the groups, at most
/// kMaxMeshManifolds), and each group is reduced by reduce_manifold. The points of one group
/// may then not all be dropped for deeper ones of another face, so nothing tunnels into the
/// shallower face within the step. A candidate whose normal matches no group when the groups
/// are full joins the one of the closest normal. Writes at most kMaxPairPoints to `out`,
/// returns the count; consumes `candidates`.
int reduce_mesh_manifolds(Contact* candidates, int n, Contact* out, double tie_band);

}  // namespace mabd::detail
