// Dynamic tree of axis-aligned boxes (Bullet's btDbvt) with integer leaf ids: the broad phase
// over collider primitives and the triangle index of mesh colliders. Coordinates in m, in
// whatever frame the caller uses consistently.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "mabd/math.h"

namespace mabd::detail {

class AabbTree {
 public:
  AabbTree();
  ~AabbTree();
  AabbTree(const AabbTree&) = delete;
  AabbTree& operator=(const AabbTree&) = delete;

  /// Inserts leaf `id` with the box [lower, upper], or moves it there if present.
  void set(std::uint32_t id, const Vec3& lower, const Vec3& upper);
  bool empty() const;
  /// Box enclosing every leaf (unspecified when empty).
  void bounds(Vec3& lower, Vec3& upper) const;
  /// Appends to `hits` the ids of the leaves whose boxes overlap [lower, upper]. Does not
  /// allocate once `hits` and the internal stack have grown (one query at a time).
  void query(const Vec3& lower, const Vec3& upper, std::vector<std::uint32_t>& hits) const;
  /// Appends every pair of leaves whose boxes overlap, once each (in no set order), in one
  /// traversal of the tree against itself.
  void overlapping_pairs(std::vector<std::pair<std::uint32_t, std::uint32_t>>& out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mabd::detail
