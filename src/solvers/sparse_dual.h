// General sparse solver for the dual system (S + diag(alpha)) lambda = b (DESIGN section 3),
// S = G H^{-1} G^T block-sparse (blocks of joints sharing a body). Sparse LDL^T (Eigen
// SimplicialLDLT) with the symbolic analysis reused while the sparsity pattern is unchanged.
// Redundant rows (a singular S) are detected from the pivots and regularised.
#pragma once

#include <cstdint>
#include <vector>

#include <Eigen/Sparse>
#include <Eigen/SparseCholesky>

namespace mabd::detail {

class SparseDualSolver {
 public:
  /// Solves the system given as triplets (both triangles, duplicates summed) of size n.
  /// `pattern` identifies the sparsity pattern: an unchanged value reuses the analysis.
  /// Returns false if the system could not be factored even after regularisation.
  bool solve(int n, const std::vector<Eigen::Triplet<double>>& triplets, const Eigen::VectorXd& b,
             std::uint64_t pattern, Eigen::VectorXd& lambda);

  /// True if the last solve had to regularise redundant rows.
  bool regularised() const { return regularised_; }

 private:
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt_;
  Eigen::SparseMatrix<double> S_;
  std::uint64_t pattern_ = 0;
  int n_ = -1;
  bool regularised_ = false;
};

}  // namespace mabd::detail
