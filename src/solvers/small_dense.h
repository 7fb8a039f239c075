// Cholesky factorisation and solves for the small dense blocks (a few to a few dozen rows) of
// the tree and iterative dual solvers, as plain loops: at these sizes Eigen's blocked kernels (packing, triangular
// solves with matrix right-hand sides) cost more than the arithmetic.
#pragma once

#include <cmath>

#include <Eigen/Core>

namespace mabd::detail {

/// Overwrites the lower triangle of the symmetric positive definite n x n matrix A with its
/// Cholesky factor L (A = L L^T); the strict upper triangle is left alone. Returns false if a
/// pivot is not positive (A not positive definite).
inline bool small_cholesky(Eigen::Ref<Eigen::MatrixXd> A) {
  const Eigen::Index n = A.rows();
  for (Eigen::Index j = 0; j < n; ++j) {
    double d = A(j, j);
    for (Eigen::Index k = 0; k < j; ++k) d -= A(j, k) * A(j, k);
    if (!(d > 0)) return false;
    const double ljj = std::sqrt(d);
    A(j, j) = ljj;
    const double inv = 1.0 / ljj;
    for (Eigen::Index i = j + 1; i < n; ++i) {
      double s = A(i, j);
      for (Eigen::Index k = 0; k < j; ++k) s -= A(i, k) * A(j, k);
      A(i, j) = s * inv;
    }
  }
  return true;
}

/// B <- (L L^T)^{-1} B for the factor L of small_cholesky (lower triangle of L read).
template <typename Derived>
inline void small_cholesky_solve(const Eigen::Ref<const Eigen::MatrixXd>& L,
                                 Eigen::MatrixBase<Derived>& B) {
  const Eigen::Index n = L.rows();
  for (Eigen::Index c = 0; c < B.cols(); ++c) {
    for (Eigen::Index i = 0; i < n; ++i) {  // L y = b
      double s = B(i, c);
      for (Eigen::Index k = 0; k < i; ++k) s -= L(i, k) * B(k, c);
      B(i, c) = s / L(i, i);
    }
    for (Eigen::Index i = n; i-- > 0;) {  // L^T x = y
      double s = B(i, c);
      for (Eigen::Index k = i + 1; k < n; ++k) s -= L(k, i) * B(k, c);
      B(i, c) = s / L(i, i);
    }
  }
}

/// Partial Cholesky factorisation of the symmetric n x n matrix a (column-major, lower
/// triangle read and written) on its first m columns, in place:
///   [A11 .; A21 A22] -> [L .; A21 L^{-T}  A22 - A21 A11^{-1} A21^T],  A11 = L L^T,
/// the block elimination of the first m unknowns (m = n: the full factor). Returns false if a
/// pivot is not positive (A11 not positive definite).
inline bool small_partial_cholesky(double* a, int n, int m) {
  for (int j = 0; j < m; ++j) {
    double* cj = a + j * n;
    double d = cj[j];
    for (int k = 0; k < j; ++k) d -= a[j + k * n] * a[j + k * n];
    if (!(d > 0)) return false;
    const double ljj = std::sqrt(d);
    cj[j] = ljj;
    const double inv = 1.0 / ljj;
    for (int i = j + 1; i < n; ++i) {
      double s = cj[i];
      for (int k = 0; k < j; ++k) s -= a[i + k * n] * a[j + k * n];
      cj[i] = s * inv;
    }
  }
  for (int l = m; l < n; ++l) {  // Schur complement on the trailing block
    for (int i = l; i < n; ++i) {
      double s = a[i + l * n];
      for (int k = 0; k < m; ++k) s -= a[i + k * n] * a[l + k * n];
      a[i + l * n] = s;
    }
  }
  return true;
}

/// x <- L^{-1} x for the m x m lower-triangular L stored in column-major `a` (leading
/// dimension lda).
inline void small_lower_solve(const double* a, int lda, int m, double* x) {
  for (int i = 0; i < m; ++i) {
    double s = x[i];
    for (int k = 0; k < i; ++k) s -= a[i + k * lda] * x[k];
    x[i] = s / a[i + i * lda];
  }
}

/// x <- L^{-T} x for L as in small_lower_solve.
inline void small_lower_transpose_solve(const double* a, int lda, int m, double* x) {
  for (int i = m; i-- > 0;) {
    const double* ci = a + i * lda;
    double s = x[i];
    for (int k = i + 1; k < m; ++k) s -= ci[k] * x[k];
    x[i] = s / ci[i];
  }
}

/// Overwrites the lower triangle of the symmetric s x s matrix `a` (row-major) shifted by
/// shift I with its Cholesky factor L ((a + shift I) = L L^T); the strict upper triangle is left
/// alone. Returns false if a pivot is not above `pivot_floor` or not finite.
inline bool small_cholesky_rowmajor(double* a, int s, double shift = 0.0,
                                    double pivot_floor = 0.0) {
  for (int j = 0; j < s; ++j) {
    double d = a[j * s + j] + shift;
    for (int k = 0; k < j; ++k) d -= a[j * s + k] * a[j * s + k];
    if (!(d > pivot_floor) || !std::isfinite(d)) return false;
    d = std::sqrt(d);
    a[j * s + j] = d;
    for (int i = j + 1; i < s; ++i) {
      double v = a[i * s + j];
      for (int k = 0; k < j; ++k) v -= a[i * s + k] * a[j * s + k];
      a[i * s + j] = v / d;
    }
  }
  return true;
}

}  // namespace mabd::detail
