// The iterative dual solver for very large joint graphs (paper "Case IV: Joint graph"):
// conjugate gradient on (S + diag(alpha)) lambda = b preconditioned by lines of items (exact
// block Thomas along chains of bodies, line_partition.h) plus a coarse correction on the
// local slow modes (coarse_space.h), warm-started from the multipliers of the previous solve
// (iterative_dual.h). A solve that does not reach the tolerance within the iteration limit
// returns false (the caller falls back to the sparse Cholesky).
#pragma once

#include "solvers/dual_solver.h"
#include "solvers/iterative_dual.h"

namespace mabd::detail {

class CgDual : public DualSolver {
 public:
  const char* name() const override { return "iterative"; }
  /// Co-rotated polar bodies: the matrix from each body's body-frame clique, without W.
  bool needs_w(const BodyOperators& ops) const override { return !ops.body_frame(); }
  /// The multipliers of the last solve per row (its start point when the rows match).
  void warm_start(const std::vector<double>& lambda) { warm_ = lambda; }
  /// Relative residual to reach and iteration limit.
  void set_limits(double tolerance, int max_iterations) {
    solver_.settings.tolerance = tolerance;
    solver_.settings.max_iterations = max_iterations;
  }
  bool solve(const RowSet& rows, const BodyOperators& ops, const std::vector<int>& index, int m,
             std::uint64_t pattern, const Eigen::VectorXd& rhs, Eigen::VectorXd& sol) override;
  /// With the matrix and preconditioner of the last solve, from the warm start.
  bool resolve(const std::vector<int>& index, const Eigen::VectorXd& rhs,
               Eigen::VectorXd& sol) override;
  /// Threads for the assembly and the preconditioner's lines (iterative_dual.h).
  void set_pool(ThreadPool* pool) {
    pool_ = pool;
    solver_.set_pool(pool);
  }
  /// Iterations and residual of the last solve.
  const IterativeDualResult& result() const { return result_; }

 private:
  /// x_ = the warm start on the active rows (zero without one).
  void start(const std::vector<int>& index, int m);
  IterativeDualSolver solver_;
  IterativeDualResult result_;
  std::vector<double> warm_;
  std::vector<int> block_begin_;
  std::vector<Eigen::Triplet<double>> trip_;
  Eigen::VectorXd x_;
  ThreadPool* pool_ = nullptr;
  std::vector<double> sequence_;  ///< the threads' assembly scratch (assemble_dual_into)
};

}  // namespace mabd::detail
