// Elastic energies and their derivatives for affine bodies (see elasticity.h).
#include "body/elasticity.h"

#include <algorithm>

#include <Eigen/Eigenvalues>

namespace mabd::detail {

double corotated_energy_density(const Mat3& A, const Mat3& R, double mu, double lambda) {
  const Mat3 F = R.transpose() * A;
  const Mat3 eps = 0.5 * (F + F.transpose()) - Mat3::Identity();
  const double tr = eps.trace();
  return mu * eps.squaredNorm() + 0.5 * lambda * tr * tr;
}

Mat3 corotated_stress(const Mat3& A, const Mat3& R, double mu, double lambda) {
  const Mat3 F = R.transpose() * A;
  const Mat3 eps = 0.5 * (F + F.transpose()) - Mat3::Identity();
  return R * (2 * mu * eps + lambda * eps.trace() * Mat3::Identity());
}

Mat3 corotated_twist_stiffness(const Mat3& A, const Mat3& R, double mu, double lambda) {
  const Mat3 F = R.transpose() * A;
  Eigen::SelfAdjointEigenSolver<Mat3> eig;
  eig.computeDirect(Mat3(0.5 * (F + F.transpose())));
  const Vec3 sig = eig.eigenvalues();  // singular values of A (A = R S, S = sym(R^T A))
  const Vec3 s = (2 * mu * (sig.array() - 1) + lambda * (sig.sum() - 3)).matrix();
  constexpr int kOther[3][2] = {{1, 2}, {0, 2}, {0, 1}};
  Vec3 kappa;
  for (int k = 0; k < 3; ++k) {
    const int i = kOther[k][0], j = kOther[k][1];
    const double den = sig[i] + sig[j];
    kappa[k] = den > 0 ? std::max(0.0, (s[i] + s[j]) / (2 * den)) : 0.0;
  }
  const Mat3& V = eig.eigenvectors();
  return V * kappa.asDiagonal() * V.transpose();
}

double stvk_energy_density(const Mat3& A, double mu, double lambda) {
  const Mat3 E = 0.5 * (A.transpose() * A - Mat3::Identity());
  const double tr = E.trace();
  return mu * E.squaredNorm() + 0.5 * lambda * tr * tr;
}

Mat3 stvk_stress(const Mat3& A, double mu, double lambda) {
  const Mat3 E = 0.5 * (A.transpose() * A - Mat3::Identity());
  return A * (2 * mu * E + lambda * E.trace() * Mat3::Identity());
}

double orthogonality_energy(const Mat3& A, double k) {
  return k * (A * A.transpose() - Mat3::Identity()).squaredNorm();
}

Mat3 orthogonality_gradient(const Mat3& A, double k) {
  return 4 * k * (A * A.transpose() - Mat3::Identity()) * A;
}

Eigen::Matrix<double, 9, 9> orthogonality_hessian(const Mat3& A, double k) {
  // d(grad) = 4k [ (dA A^T + A dA^T) A + (A A^T - I) dA ], applied to each unit dA.
  const Mat3 B = A * A.transpose() - Mat3::Identity();
  const Mat3 AtA = A.transpose() * A;
  Eigen::Matrix<double, 9, 9> H;
  for (int c = 0; c < 9; ++c) {
    Mat3 dA = Mat3::Zero();
    dA(c % 3, c / 3) = 1;
    const Mat3 d = 4 * k * (dA * AtA + A * dA.transpose() * A + B * dA);
    H.col(c) = Eigen::Map<const Eigen::Matrix<double, 9, 1>>(d.data());
  }
  return H;
}

}  // namespace mabd::detail
