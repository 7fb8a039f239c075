// The constant co-rotated system matrix of one affine body (paper Eq. abd_final):
//   Hb = M_A / h^2 + Kb,  M_A = diag(Sigma, m) (x) I3,
//   Kb = V (mu (I9 + P) + lambda vec(I) vec(I)^T) on vec(A), zero on t.
// With the body frame at the COM and on principal axes Hb splits into a 3x3 block (the
// diagonal entries of A, coupled by lambda), three 2x2 blocks (A_ij, A_ji, coupled by mu) and
// m/h^2 I3, so Hb^{-1} v costs a few dozen flops. Bodies with equal (shape, material, h)
// share one factor.
#pragma once

#include <array>
#include <map>
#include <vector>

#include "mabd/math.h"

namespace mabd::detail {

using Mat12 = Eigen::Matrix<double, 12, 12>;

/// Index of A(i, j) in q = [a1; a2; a3; t] (columns of A stacked).
constexpr int qidx(int i, int j) { return 3 * j + i; }

struct BodyHessian {
  Mat3 diag_inv;                       ///< inverse of the 3x3 block on (A00, A11, A22)
  std::array<Eigen::Matrix2d, 3> pair_inv;  ///< inverses on (A01,A10), (A02,A20), (A12,A21)
  double inv_m_over_h2 = 0;            ///< h^2 / m on t
  /// Hb^{-1} E(I) (dimensionless rotations to q, s^2/kg-weighted): column c is Hb^{-1} of the
  /// q-direction of a rotation about axis c of the identity (block k: e_c x e_k); zero on t.
  /// With E(R) = D(R) E(I) R^T, H^{-1} E(R) = D(R) Z0 R^T for any rotation R.
  Eigen::Matrix<double, 12, 3> Z0;
  Mat3 W0;  ///< E(I)^T Z0, symmetric

  /// Builds the factor for second moments sigma (kg m^2, principal), mass m (kg), volume
  /// V (m^3), Lame parameters mu, lambda (Pa) and time step h (s).
  static BodyHessian build(const Vec3& sigma, double m, double V, double mu, double lambda,
                           double h);
  /// Hb as a dense matrix (tests and the vanilla comparison).
  static Mat12 dense(const Vec3& sigma, double m, double V, double mu, double lambda, double h);

  /// Returns Hb^{-1} v.
  Vec12 solve(const Vec12& v) const;
};

/// Shares factors between bodies with identical parameters.
class HessianCache {
 public:
  /// Returns the index of the factor for these parameters, building it if new.
  std::uint32_t get(const Vec3& sigma, double m, double V, double mu, double lambda, double h);
  const BodyHessian& operator[](std::uint32_t i) const { return factors_[i]; }
  std::size_t size() const { return factors_.size(); }

 private:
  std::map<std::array<double, 8>, std::uint32_t> index_;
  std::vector<BodyHessian> factors_;
};

}  // namespace mabd::detail
