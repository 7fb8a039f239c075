// The state of SparseDualSolver (sparse_dual.h), shared by its factorisation
// (sparse_dual.cpp) and its factor updates (sparse_dual_update.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include <Eigen/Core>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>

#include "solvers/sparse_dual.h"

#if __has_include(<suitesparse/cholmod.h>)
#include <suitesparse/cholmod.h>
#else
#include <cholmod.h>
#endif

namespace mabd::detail {

struct SparseDualSolver::Impl {
  // Upper triangle in CSC (sorted rows, the diagonal always present: it is the last entry of
  // its column), shared by both back ends: the values live in A->x or in S.
  std::vector<int> colptr, rowind;
  double* values = nullptr;
  bool use_cholmod = false;

  // CHOLMOD back end.
  cholmod_common common;
  cholmod_sparse* A = nullptr;
  cholmod_factor* L = nullptr;  ///< analysis (and factor) for A's structure
  cholmod_factor* Lsym = nullptr;  ///< a copy of the analysis (L turns simplicial on updates)
  cholmod_dense* X = nullptr;   ///< solution and workspaces of cholmod_solve2
  cholmod_dense* Y = nullptr;
  cholmod_dense* E = nullptr;

  // Eigen back end (small systems).
  Eigen::SparseMatrix<double> S;
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>, Eigen::Upper> ldlt;

  // Cached pattern: coordinates of every triplet (to check the order) and its value slot
  // (-1 for the lower triangle).
  std::vector<std::uint64_t> coord;
  std::vector<int> slot;
  std::uint64_t pattern = 0;
  int n = -1;
  bool valid = false;
  bool analysed = false;

  Impl() {
    cholmod_start(&common);
    common.print = 0;  // status is checked here; no messages on stderr
    common.supernodal = CHOLMOD_SUPERNODAL;
    common.quick_return_if_not_posdef = 1;
  }
  ~Impl() {
    free_cholmod();
    cholmod_finish(&common);
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  void free_cholmod() {
    if (X) cholmod_free_dense(&X, &common);
    if (Y) cholmod_free_dense(&Y, &common);
    if (E) cholmod_free_dense(&E, &common);
    if (L) cholmod_free_factor(&L, &common);
    if (Lsym) cholmod_free_factor(&Lsym, &common);
    if (A) cholmod_free_sparse(&A, &common);
  }

  /// Builds the structure and the slot map from the triplets and, if the structure changed,
  /// the matrix of the chosen back end (then `analysed` is false). False on indices out of
  /// range or allocation failure.
  bool build(int size, const std::vector<Eigen::Triplet<double>>& triplets, int cholmod_min_rows);
  /// Scatters the values; false if a triplet's coordinates differ from the cache.
  bool fill(const std::vector<Eigen::Triplet<double>>& triplets);
  bool analyse();
  /// Numeric factorisation; `ok` false if it failed, `tiny` true if a pivot is at round-off
  /// level relative to its diagonal entry.
  void factorize(bool& ok, bool& tiny);
  bool solve(const Eigen::VectorXd& b, Eigen::VectorXd& x);
  /// y = A x, A held as its upper triangle.
  void multiply(const Eigen::VectorXd& x, Eigen::VectorXd& y) const;
  /// Conjugate gradients on the current values, preconditioned by the factor (of an earlier
  /// matrix). Returns the iterations (factor solves) taken to |b - A x| <= tol |b|, checked on
  /// the true residual, or -1 if max_it were not enough.
  int pcg(const Eigen::VectorXd& b, Eigen::VectorXd& x, int max_it, double tol);

  /// Updates (CHOLMOD's L) from the matrix it factors, `factored`, to the current values:
  /// the difference, split into the connected components of its rows, each eigendecomposed
  /// into update and downdate columns. False if a component exceeds max_block rows or the
  /// update fails (L is then unusable).
  bool update_factor(int max_block, int max_columns);

  /// Records that L now factors the current values (shifted: a regularised copy of them).
  void mark_factored(bool shifted) {
    has_factor = true;
    factor_shifted = shifted;
    if (use_cholmod) factored.assign(values, values + colptr[n]);
  }

  std::vector<double> factored;  ///< the values the factor represents
  bool has_factor = false;      ///< L holds a numeric factor of the current structure
  bool factor_shifted = false;  ///< that factor is of a regularised (shifted) matrix
  Eigen::VectorXd r, z, d, q;   ///< conjugate-gradient scratch
};

}  // namespace mabd::detail
