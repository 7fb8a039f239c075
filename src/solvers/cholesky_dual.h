// The general dual solver (paper "Case IV: Joint graph", DESIGN section 3): S assembled body
// by body as triplets and factored by the sparse Cholesky of sparse_dual.h (the analysis kept
// while the active set is unchanged). Any topology; the fallback of the other solvers.
#pragma once

#include "solvers/dual_solver.h"
#include "solvers/sparse_dual.h"

namespace mabd::detail {

class CholeskyDual : public DualSolver {
 public:
  /// A contact pass updates the last factor (sparse_dual.h, reuse_iterations).
  CholeskyDual() { solver_.reuse_iterations = 4; }
  const char* name() const override { return "sparse"; }
  bool solve(const RowSet& rows, const BodyOperators& ops, const std::vector<int>& index, int m,
             std::uint64_t pattern, const Eigen::VectorXd& rhs, Eigen::VectorXd& sol) override;
  /// With the factor of the last solve.
  bool resolve(const std::vector<int>& index, const Eigen::VectorXd& rhs,
               Eigen::VectorXd& sol) override;
  bool regularised() const override { return solver_.regularised(); }

 private:
  SparseDualSolver solver_;
  std::vector<Eigen::Triplet<double>> trip_;
  /// What trip_ holds: each body's first triplet, and the rows' w_serial, active-set hash
  /// and size it was assembled for (a contact pass that changed a few bodies' W patches it).
  std::vector<std::size_t> body_trip_;
  std::uint64_t trip_serial_ = 0, trip_pattern_ = 0;
  int trip_rows_ = -1;
};

}  // namespace mabd::detail
