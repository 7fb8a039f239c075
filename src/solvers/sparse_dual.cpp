// Sparse LDL^T of the dual matrix with pivot checks (see sparse_dual.h).
#include "solvers/sparse_dual.h"

#include <cmath>

namespace mabd::detail {

bool SparseDualSolver::solve(int n, const std::vector<Eigen::Triplet<double>>& triplets,
                             const Eigen::VectorXd& b, std::uint64_t pattern,
                             Eigen::VectorXd& lambda) {
  regularised_ = false;
  S_.resize(n, n);
  S_.setFromTriplets(triplets.begin(), triplets.end());
  if (n != n_ || pattern != pattern_) {
    ldlt_.analyzePattern(S_);
    n_ = n;
    pattern_ = pattern;
  }
  ldlt_.factorize(S_);
  // A redundant row leaves a pivot at round-off level (or the factorisation fails): add a
  // small multiple of the diagonal scale and factor again. The regularised solution keeps
  // the redundant rows consistent instead of producing NaN.
  const double scale = S_.diagonal().cwiseAbs().maxCoeff();
  auto singular = [&] {
    if (ldlt_.info() != Eigen::Success) return true;
    const Eigen::VectorXd d = ldlt_.vectorD();
    return !d.allFinite() || d.minCoeff() <= 1e-11 * scale;
  };
  if (n > 0 && singular()) {
    regularised_ = true;
    Eigen::SparseMatrix<double> I(n, n);
    I.setIdentity();
    S_ += (1e-9 * scale) * I;
    ldlt_.factorize(S_);
    if (ldlt_.info() != Eigen::Success) return false;
  }
  lambda = n > 0 ? Eigen::VectorXd(ldlt_.solve(b)) : Eigen::VectorXd();
  return lambda.allFinite();
}

}  // namespace mabd::detail
