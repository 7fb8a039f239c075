// Block Thomas elimination (see block_thomas.h).
#include "solvers/block_thomas.h"

namespace mabd::detail {

bool block_thomas_solve(const BlockTridiagonal& sys, std::vector<Eigen::VectorXd>& x) {
  const std::size_t K = sys.D.size();
  std::vector<Eigen::LLT<Eigen::MatrixXd>> pivot(K);
  std::vector<Eigen::VectorXd> bp(K);
  // Forward: D'_k = D_k - B_{k-1}^T D'_{k-1}^{-1} B_{k-1}, b'_k likewise.
  for (std::size_t k = 0; k < K; ++k) {
    Eigen::MatrixXd Dk = sys.D[k];
    bp[k] = sys.b[k];
    if (k > 0) {
      const Eigen::MatrixXd X = pivot[k - 1].solve(sys.B[k - 1]);
      Dk.noalias() -= sys.B[k - 1].transpose() * X;
      bp[k].noalias() -= X.transpose() * bp[k - 1];
    }
    pivot[k].compute(Dk);
    if (pivot[k].info() != Eigen::Success) return false;
    // Reject near-singular pivots (redundant rows) as well.
    const double dmin = pivot[k].matrixLLT().diagonal().minCoeff();
    const double dmax = pivot[k].matrixLLT().diagonal().maxCoeff();
    if (!(dmin > 1e-7 * dmax)) return false;
  }
  // Backward: x_k = D'_k^{-1} (b'_k - B_k x_{k+1}).
  x.resize(K);
  for (std::size_t k = K; k-- > 0;) {
    Eigen::VectorXd r = bp[k];
    if (k + 1 < K) r.noalias() -= sys.B[k] * x[k + 1];
    x[k] = pivot[k].solve(r);
  }
  return true;
}

}  // namespace mabd::detail
