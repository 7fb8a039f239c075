// Dense Cholesky factor with row removals and appends (updatable_llt.h).
#include "solvers/updatable_llt.h"

#include <algorithm>
#include <cmath>

#include <Eigen/Cholesky>

namespace mabd::detail {

bool UpdatableLlt::factor(const Eigen::MatrixXd& K) {
  m_ = 0;
  const int m = static_cast<int>(K.rows());
  if (L_.rows() < m) L_.resize(m, m);
  auto block = L_.topLeftCorner(m, m);
  block.triangularView<Eigen::Lower>() = K;
  Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt(block);  // in place, on the lower triangle
  if (llt.info() != Eigen::Success) return false;
  m_ = m;
  return true;
}

void UpdatableLlt::remove(int k) {
  // L = [L11 0 0; l21^T l22 0; L31 l32 L33]. Without row and column k of K the trailing
  // block is K33 = L31 L31^T + l32 l32^T + L33 L33^T, so its new factor L33' satisfies
  // L33' L33'^T = L33 L33^T + l32 l32^T: a rank-one update (Givens-like, column by column).
  const int p = m_ - k - 1;
  Eigen::VectorXd v = L_.block(k + 1, k, p, 1);
  for (int j = 0; j < p; ++j) {
    const int J = k + 1 + j;
    const double Ljj = L_(J, J);
    const double r = std::hypot(Ljj, v[j]);
    const double c = r / Ljj, s = v[j] / Ljj;
    L_(J, J) = r;
    for (int i = j + 1; i < p; ++i) {
      const int I = k + 1 + i;
      L_(I, J) = (L_(I, J) + s * v[i]) / c;
      v[i] = c * v[i] - s * L_(I, J);
    }
  }
  // Close the gap: rows below k move up one; columns after k move left one.
  for (int j = 0; j < k; ++j) {
    for (int i = k + 1; i < m_; ++i) L_(i - 1, j) = L_(i, j);
  }
  for (int j = k + 1; j < m_; ++j) {
    for (int i = j; i < m_; ++i) L_(i - 1, j - 1) = L_(i, j);
  }
  --m_;
}

bool UpdatableLlt::append(const Eigen::VectorXd& c, double d) {
  // [K c; c^T d] = [L 0; l^T delta] [L^T l; 0 delta]: L l = c, delta^2 = d - l^T l.
  Eigen::VectorXd l = c;
  L_.topLeftCorner(m_, m_).triangularView<Eigen::Lower>().solveInPlace(l);
  const double delta2 = d - l.squaredNorm();
  if (!(delta2 > 1e-14 * std::abs(d))) return false;
  if (L_.rows() <= m_) {
    const int cap = std::max(2 * m_, m_ + 8);
    L_.conservativeResize(cap, cap);
  }
  L_.block(m_, 0, 1, m_) = l.transpose();
  L_(m_, m_) = std::sqrt(delta2);
  ++m_;
  return true;
}

void UpdatableLlt::solve_in_place(Eigen::VectorXd& b) const {
  const auto L = L_.topLeftCorner(m_, m_).triangularView<Eigen::Lower>();
  L.solveInPlace(b);
  L.adjoint().solveInPlace(b);
}

}  // namespace mabd::detail
