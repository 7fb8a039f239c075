// Value refill of a cached sparse structure from triplets (the dual solvers keep their matrix
// structure while the sparsity pattern is unchanged and only scatter new values into it).
#pragma once

#include <cstdint>
#include <vector>

#include <Eigen/SparseCore>

namespace mabd::detail {

/// One 64-bit key per (row, column).
inline std::uint64_t pack_coordinate(int row, int col) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(row)) << 32) |
         static_cast<std::uint32_t>(col);
}

/// Adds every triplet's value into `values[slots[k]]` (slots < 0 are dropped). Returns false,
/// leaving `values` partly filled, as soon as a triplet's coordinate differs from the cached
/// `coords[k]` (the caller then rebuilds the structure). `values` must be zeroed by the caller.
inline bool scatter_triplets(const std::vector<Eigen::Triplet<double>>& triplets,
                             const std::vector<std::uint64_t>& coords,
                             const std::vector<int>& slots, double* values) {
  const std::size_t nt = triplets.size();
  for (std::size_t k = 0; k < nt; ++k) {
    const auto& t = triplets[k];
    if (coords[k] != pack_coordinate(t.row(), t.col())) return false;
    if (slots[k] >= 0) values[slots[k]] += t.value();
  }
  return true;
}

}  // namespace mabd::detail
