// The iterative dual solver for very large joint graphs (paper "Case IV: Joint graph"):
// conjugate gradient on (S + diag(alpha)) lambda = b preconditioned by lines of joints (exact
// block Thomas along chains of bodies, solvers/line_partition.h) plus a coarse correction on
// the local slow modes (solvers/coarse_space.h), warm-started from the multipliers of the
// previous solve. Its iterations and residual
// are reported in the step statistics; a solve that does not reach settings.dual_tolerance
// within settings.dual_max_iterations falls back to the sparse Cholesky (with a warning).
#include "world/world_impl.h"

namespace mabd {

bool World::Impl::solve_iterative(int m, const std::vector<int>& index, const Eigen::VectorXd& rhs,
                                  std::uint64_t pattern, Eigen::VectorXd& sol) {
  block_begin.clear();
  for (std::size_t j = 0; j < joints.size(); ++j) {
    for (std::size_t r = joint_row_begin[j]; r < joint_row_begin[j + 1]; ++r) {
      if (index[r] >= 0) {
        block_begin.push_back(index[r]);
        break;
      }
    }
  }
  block_begin.push_back(m);
  iterative_x.setZero(m);
  if (lambda_warm.size() == index.size()) {
    for (std::size_t r = 0; r < index.size(); ++r) {
      if (index[r] >= 0) iterative_x[index[r]] = lambda_warm[r];
    }
  }
  iterative_solver.settings.tolerance = settings.dual_tolerance;
  iterative_solver.settings.max_iterations = settings.dual_max_iterations;
  const auto result = iterative_solver.solve(m, trip, block_begin, rhs, pattern, iterative_x);
  stats.dual_iterations = result.iterations;
  stats.dual_residual = result.residual;
  if (!result.converged) {
    if (!iterative_fallback_reported) {
      warnings.push_back("step " + std::to_string(steps + 1) +
                         ": the iterative dual solver stopped at relative residual " +
                         std::to_string(result.residual) + " after " +
                         std::to_string(result.iterations) +
                         " iterations; solved by sparse Cholesky instead (raise "
                         "dual_max_iterations or dual_tolerance)");
      iterative_fallback_reported = true;
    }
    return false;
  }
  sol = iterative_x;
  return true;
}

}  // namespace mabd
