// The symmetric part 0.5 (D + D^T) of a square matrix D given as triplets (duplicates summed in
// their order). The contact problem's D = G_c M_J^{-1} G_c^T is assembled so
// (contact_schur.cpp): its two triangles come from different products and agree only to
// round-off. The result equals, to the bit and in its pattern, Eigen's
//   D.setFromTriplets(first, last);  out = 0.5 * (D + SparseMatrix(D.transpose()));
// Dense enough matrices go through dense scratch arrays instead of three sorted copies of the
// entries: the contacts on one articulation (a chain over a wheel, ragdolls on a net) couple
// every pair of their rows.
#pragma once

#include <cstddef>
#include <vector>

#include <Eigen/SparseCore>

namespace mabd::detail {

class SymmetricAssembly {
 public:
  /// out = 0.5 (D + D^T) for D (n x n) the sum of `triplets` (units: those of the values).
  void assemble(int n, const std::vector<Eigen::Triplet<double>>& triplets,
                Eigen::SparseMatrix<double>& out);
  /// Matrices of at most this many rows with at least n^2 / 4 triplets take the dense path
  /// (its scratch: 18 bytes per entry, 19 MB at the largest).
  static constexpr int kDenseRows = 1024;
  /// True if the last assemble() took the dense path.
  bool dense() const { return dense_; }

 private:
  std::vector<double> d_, t_;        ///< D and D^T, column-major
  std::vector<char> has_d_, has_t_;  ///< whether a triplet set each entry
  std::vector<int> count_;
  bool dense_ = false;
};

}  // namespace mabd::detail
