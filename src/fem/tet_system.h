// Sparse symmetric system on the free node coordinates of a tet mesh (the Newton Hessian
// H = M/h^2 + K restricted to free nodes). The pattern (3x3 blocks of every pair of free
// nodes sharing a tet, upper triangle, CSC) is fixed at construction, so each tet's 12x12
// matrix is scattered through a precomputed slot table, and the sparse Cholesky does its
// fill-reducing ordering and symbolic analysis once; later factorisations are numeric only.
// CHOLMOD is called directly on a view of the matrix (no copy), choosing supernodal or
// simplicial itself.
#pragma once

#include <memory>
#include <vector>

#include <Eigen/SparseCore>

#include "fem/tet_element.h"

namespace mabd::fem {

class TetSystem {
 public:
  /// `dof[i]` is the first of node i's three consecutive free coordinates, or -1 if node i
  /// is pinned; `num_dofs` is the number of free coordinates.
  TetSystem(const std::vector<Tet>& tets, const std::vector<int>& dof, int num_dofs);
  ~TetSystem();
  TetSystem(TetSystem&&) noexcept;
  TetSystem& operator=(TetSystem&&) noexcept;

  int size() const { return n_; }

  /// Values of the upper triangle (in the pattern's order).
  Eigen::Map<Eigen::VectorXd> values();

  /// Adds the free rows/columns of tet e's symmetric 12x12 matrix (node order of the tet;
  /// its upper triangle is read).
  void add_tet(int e, const Mat12& A);

  /// Factorises the current values (analysis on the first call only). Returns false if the
  /// matrix is not positive definite.
  bool factorize();

  /// Solves A y = r with the last factor (free coordinates); NaN if the last factorize()
  /// failed or there was none.
  Eigen::VectorXd solve(const Eigen::VectorXd& r) const;

  /// Solves A Y = R for every column of R at once (one pass over the factor).
  Eigen::MatrixXd solve_many(const Eigen::MatrixXd& r) const;

  /// A times y for the current values (free coordinates).
  Eigen::VectorXd multiply(const Eigen::VectorXd& y) const;

  /// True if the last factorize() succeeded (solve() is then valid).
  bool factored() const { return factored_; }
  int analyses() const { return analyses_; }  ///< symbolic analyses done (1 after the first)
  int factorizations() const { return factorizations_; }  ///< numeric factorisations done

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int n_ = 0;
  std::vector<int> slot_;  ///< 78 per tet (its upper triangle): value index, -1 if pinned
  int analyses_ = 0, factorizations_ = 0;
  bool factored_ = false;
};

}  // namespace mabd::fem
