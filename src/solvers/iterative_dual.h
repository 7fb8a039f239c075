// Iterative solver for the dual system (S + diag(alpha)) lambda = b (DESIGN section 3): the
// preconditioned conjugate gradient method with a block-Jacobi preconditioner whose blocks are
// the row groups of the joints (1-6 rows each, factored densely). Meant for large jointed
// graphs, warm-started from the multipliers of the previous step or Newton iteration.
//
// Intended use, once per dual solve:
//
//   IterativeDualSolver solver;            // kept between steps, like SparseDualSolver
//   solver.settings.tolerance = 1e-10;     // on |b - A x| / |b|
//   Eigen::VectorXd x = previous_lambda;   // warm start (size n), or empty for x = 0
//   const IterativeDualResult r = solver.solve(n, triplets, block_begin, b, pattern, x);
//   if (!r.converged) { /* fall back to SparseDualSolver, or accept r.residual */ }
//
// `triplets` and `pattern` are exactly those given to SparseDualSolver::solve (both
// triangles, duplicates summed; the same pattern value for the same sparsity pattern, and then
// the same triplet order). `block_begin` holds the first row of every block and n at the end
// (block_begin = {0, 3, 6, ..., n}): the active rows of one joint, in the index space of the
// system. Blocks with redundant (linearly dependent) rows are factored with a small
// diagonal shift; a singular but consistent system converges in its range, an inconsistent
// one stops at max_iterations with converged == false.
//
// Cost: one sparse matrix-vector product and one block solve per iteration; the iteration
// count grows with the size of the joint graph (a block preconditioner does not remove the
// long-range, Laplacian-like part of S): on the n x n net of bench/dual_solver_bench.cpp at
// 1e-10 it is about 1000 (n = 10) to 7000 (n = 100) iterations, so the sparse Cholesky
// (SparseDualSolver) is the faster exact solver there; this one suits loose tolerances,
// compliant joints and good warm starts. A symmetric block Gauss-Seidel preconditioner was
// measured too: about half the iterations at twice the cost per iteration, no faster from
// n = 20 on, so it is not offered.
#pragma once

#include <cstdint>
#include <vector>

#include <Eigen/Core>
#include <Eigen/SparseCore>

namespace mabd::detail {

struct IterativeDualSettings {
  double tolerance = 1e-10;   ///< stop at |b - A x| <= tolerance |b|
  int max_iterations = 1000;  ///< matrix-vector products in the iteration
};

struct IterativeDualResult {
  int iterations = 0;      ///< PCG iterations (0: the initial guess was good enough)
  double residual = 0;     ///< true relative residual |b - A x| / |b| of the returned x
  bool converged = false;  ///< residual <= tolerance
};

class IterativeDualSolver {
 public:
  IterativeDualSettings settings;

  /// Solves A x = b, A of size n given as triplets; x is the initial guess on entry (size n;
  /// any other size starts from zero) and the solution on exit. Invalid input (indices or
  /// blocks out of range, sizes) returns iterations = -1 and converged = false.
  IterativeDualResult solve(int n, const std::vector<Eigen::Triplet<double>>& triplets,
                            const std::vector<int>& block_begin, const Eigen::VectorXd& b,
                            std::uint64_t pattern, Eigen::VectorXd& x);

  /// Number of times the matrix structure was rebuilt (a new pattern or triplet order).
  int rebuilds() const { return rebuilds_; }

 private:
  bool build(int n, const std::vector<Eigen::Triplet<double>>& triplets,
             const std::vector<int>& block_begin);
  bool fill(const std::vector<Eigen::Triplet<double>>& triplets);
  void factor_blocks();
  void multiply(const Eigen::VectorXd& v, Eigen::VectorXd& out) const;  ///< out = A v
  void precondition(const Eigen::VectorXd& r, Eigen::VectorXd& z) const;  ///< z = M^{-1} r

  // Full matrix (both triangles) in CSR, columns sorted within each row.
  std::vector<int> row_start_, col_;
  std::vector<double> val_;
  std::vector<int> diag_begin_, diag_end_;  ///< per row: entries inside the row's block
  // Blocks and their dense inverses (row-major, size s x s each).
  std::vector<int> block_begin_, inv_start_;
  std::vector<double> inv_;
  // Triplet -> value slot, and the triplets' coordinates to check the order.
  std::vector<std::uint64_t> coord_;
  std::vector<int> slot_;
  std::uint64_t pattern_ = 0;
  int n_ = -1;
  bool valid_ = false;
  int rebuilds_ = 0;
  Eigen::VectorXd r_, z_, p_, q_;
};

}  // namespace mabd::detail
