#include "solvers/cholesky_dual.h"

namespace mabd::detail {

bool CholeskyDual::solve(const RowSet& rows, const BodyOperators& /*ops*/,
                         const std::vector<int>& index, int m, std::uint64_t pattern,
                         const Eigen::VectorXd& rhs, Eigen::VectorXd& sol) {
  assemble_dual(rows, index, trip_);
  return solver_.solve(m, trip_, rhs, pattern, sol);
}

bool CholeskyDual::resolve(const std::vector<int>& /*index*/, const Eigen::VectorXd& rhs,
                           Eigen::VectorXd& sol) {
  return solver_.resolve(rhs, sol);
}

}  // namespace mabd::detail
