// The symmetric part 0.5 (D + D^T) of a square matrix D given as triplets (duplicates summed in
// their order). The contact problem's D = G_c M_J^{-1} G_c^T is assembled so
// (contact_schur.cpp): its two triangles come from different products and agree only to
// round-off. The result equals, to the bit and in its pattern, Eigen's
//   D.setFromTriplets(first, last);  out = 0.5 * (D + SparseMatrix(D.transpose()));
// Dense enough matrices go through dense scratch arrays: the contacts on one articulation (a
// chain over a wheel, ragdolls on a net) couple every pair of their rows. Others go through
// counting sorts into scratch kept between calls: a world of many pulleys assembles millions of
// entries at every Newton iteration, and fresh temporaries of that size cost more in page
// faults than the sorting itself.
#pragma once

#include <cstddef>
#include <utility>
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
  /// The sparse path: D's columns, then D^T's, in compressed form (n + 1 starts, rows, values).
  void sparse(int n, const std::vector<Eigen::Triplet<double>>& triplets,
              Eigen::SparseMatrix<double>& out);

  std::vector<double> d_, t_;        ///< D and D^T, column-major
  std::vector<char> has_d_, has_t_;  ///< whether a triplet set each entry
  std::vector<int> count_;
  // Sparse path scratch.
  std::vector<int> by_col_;               ///< triplet indices, stably sorted by column
  std::vector<int> slot_, slot_col_;      ///< per row: the entry it holds in the current column
  std::vector<int> d_start_, d_row_;      ///< D compressed by columns (rows ascending)
  std::vector<double> d_val_;
  std::vector<int> t_start_, t_row_;      ///< D^T compressed by columns (rows ascending)
  std::vector<double> t_val_;
  std::vector<std::pair<int, double>> column_;  ///< one column of D while it is summed
  bool dense_ = false;
};

}  // namespace mabd::detail
