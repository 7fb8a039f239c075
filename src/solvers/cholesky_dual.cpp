#include "solvers/cholesky_dual.h"

namespace mabd::detail {

bool CholeskyDual::solve(const RowSet& rows, const BodyOperators& /*ops*/,
                         const std::vector<int>& index, int m, std::uint64_t pattern,
                         const Eigen::VectorXd& rhs, Eigen::VectorXd& sol) {
  const bool same_set = trip_rows_ == m && trip_pattern_ == pattern &&
                        body_trip_.size() == rows.rows_of.size() + 1;
  if (same_set && rows.w_partial && rows.w_serial_before == trip_serial_) {
    patch_dual(rows, index, rows.w_changed, body_trip_, trip_);
  } else if (!same_set || rows.w_serial != trip_serial_) {
    assemble_dual(rows, index, trip_, &body_trip_);
  }
  trip_serial_ = rows.w_serial;
  trip_pattern_ = pattern;
  trip_rows_ = m;
  return solver_.solve(m, trip_, rhs, pattern, sol);
}

bool CholeskyDual::resolve(const std::vector<int>& /*index*/, const Eigen::VectorXd& rhs,
                           Eigen::VectorXd& sol) {
  return solver_.resolve(rhs, sol);
}

}  // namespace mabd::detail
