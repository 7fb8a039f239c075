// Block-tridiagonal solve by block Thomas elimination (paper Eq. chain-btd, Case I):
//   B_{k-1}^T x_{k-1} + D_k x_k + B_k x_{k+1} = b_k,  k = 0 .. K-1,
// with symmetric positive definite D_k of variable size r_k (a few rows: a joint's). With
// D'_0 = D_0 and D'_k = L_k L_k^T, Y_k = L_k^{-1} B_k, D'_{k+1} = D_{k+1} - Y_k^T Y_k:
//   forward:  y_k = L_k^{-1} (b_k - Y_{k-1}^T y_{k-1});
//   backward: x_k = L_k^{-T} (y_k - Y_k x_{k+1}).
// Block k is kept as one column-major (r_k + r_{k+1})^2 array [D_k .; B_k^T 0] and factored
// in place to [L_k .; Y_k^T -Y_k^T Y_k] (a partial Cholesky, small_dense.h): every block in
// one flat array, no allocation once the sizes have been seen. O(K) small dense operations.
#pragma once

#include <cstddef>
#include <vector>

namespace mabd::detail {

class BlockThomas {
 public:
  /// Starts a system of sizes.size() blocks, block k with sizes[k] rows (0 allowed); every
  /// D_k and B_k is zero.
  void reset(const std::vector<int>& sizes);
  std::size_t blocks() const { return size_.size() - 1; }
  /// D_k(p, q) for p >= q (the lower triangle is all that is read), to be written.
  double& D(std::size_t k, int p, int q) { return a_[at_[k] + p + q * lda(k)]; }
  /// B_k(p, q), p < r_k, q < r_{k+1}, to be written (stored as B_k^T).
  double& B(std::size_t k, int p, int q) { return a_[at_[k] + size_[k] + q + p * lda(k)]; }
  /// Factors the system. Returns false if a pivot block is not positive definite or nearly
  /// singular (redundant rows: its Cholesky diagonal spans more than 1e7): the caller then
  /// falls back to a general solver.
  bool factor();
  /// x <- S^{-1} x in place, for x of sum r_k entries, block after block (after factor()).
  void solve(double* x) const;

 private:
  int lda(std::size_t k) const { return size_[k] + size_[k + 1]; }
  std::vector<int> size_;          ///< r_k, then a 0 past the last block
  std::vector<std::size_t> at_;    ///< offset of block k in a_
  std::vector<std::size_t> off_;   ///< offset of block k's unknowns in x
  std::vector<double> a_;
};

}  // namespace mabd::detail
