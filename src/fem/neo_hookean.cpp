// Stable Neo-Hookean energy, stress and Hessian (see neo_hookean.h).
// Eigen's 9x9 tridiagonalisation (project_psd) trips a false -Wmaybe-uninitialized in
// GCC 12 at -O2; the warning is emitted after inlining, so it is silenced for this file.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "fem/neo_hookean.h"

#include <cmath>
#include <string>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include "mabd/error.h"

namespace mabd::fem {
namespace {

/// [a]x: the matrix of v -> a x v.
Mat3 cross_matrix(const Vec3& a) {
  Mat3 m;
  m << 0, -a.z(), a.y(), a.z(), 0, -a.x(), -a.y(), a.x(), 0;
  return m;
}

}  // namespace

Mat3 cofactor(const Mat3& F) {
  Mat3 C;
  C.col(0) = F.col(1).cross(F.col(2));
  C.col(1) = F.col(2).cross(F.col(0));
  C.col(2) = F.col(0).cross(F.col(1));
  return C;
}

StableNeoHookean::StableNeoHookean(double mu, double lambda)
    : mu_(mu), lambda_(lambda), alpha_(1 + 0.75 * mu / lambda) {
  if (!(mu > 0) || !(lambda > 0) || !std::isfinite(mu) || !std::isfinite(lambda)) {
    throw InvalidArgument("StableNeoHookean: mu = " + std::to_string(mu) + " Pa, lambda = " +
                          std::to_string(lambda) + " Pa: both must be finite and positive");
  }
  psi0_ = 0.5 * lambda_ * (1 - alpha_) * (1 - alpha_) - 0.5 * mu_ * std::log(4.0);
}

StableNeoHookean StableNeoHookean::from_young_poisson(double E, double nu) {
  if (!(E > 0) || !std::isfinite(E) || !(nu > -1) || !(nu < 0.5)) {
    throw InvalidArgument("StableNeoHookean: E = " + std::to_string(E) + " Pa, nu = " +
                          std::to_string(nu) + ": need E > 0 and -1 < nu < 0.5");
  }
  const double mu_l = E / (2 * (1 + nu));
  const double lambda_l = E * nu / ((1 + nu) * (1 - 2 * nu));
  return StableNeoHookean(4.0 / 3.0 * mu_l, lambda_l + 5.0 / 6.0 * mu_l);
}

double StableNeoHookean::energy_density(const Mat3& F) const {
  const double Ic = F.squaredNorm();
  const double Jm = F.determinant() - alpha_;
  return 0.5 * mu_ * (Ic - 3) + 0.5 * lambda_ * Jm * Jm - 0.5 * mu_ * std::log(Ic + 1) - psi0_;
}

Mat3 StableNeoHookean::stress(const Mat3& F) const {
  const double Ic = F.squaredNorm();
  const double Jm = F.determinant() - alpha_;
  return mu_ * (1 - 1 / (Ic + 1)) * F + lambda_ * Jm * cofactor(F);
}

Mat9 StableNeoHookean::hessian(const Mat3& F) const {
  const double Ic = F.squaredNorm();
  const double Jm = F.determinant() - alpha_;
  const Vec9 f = vec(F);
  const Vec9 g = vec(cofactor(F));
  Mat9 H = mu_ * (1 - 1 / (Ic + 1)) * Mat9::Identity();
  H += (2 * mu_ / ((Ic + 1) * (Ic + 1))) * f * f.transpose();
  H += lambda_ * g * g.transpose();
  // H_J: d(cof F)/dF. Column k of cof F is f_{k+1} x f_{k+2}, so block (k, k+1) is
  // -[f_{k+2}]x and block (k, k+2) is [f_{k+1}]x (indices mod 3).
  const double s = lambda_ * Jm;
  for (int k = 0; k < 3; ++k) {
    const int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
    H.block<3, 3>(3 * k, 3 * k1) -= s * cross_matrix(F.col(k2));
    H.block<3, 3>(3 * k, 3 * k2) += s * cross_matrix(F.col(k1));
  }
  return H;
}

Mat9 StableNeoHookean::projected_hessian(const Mat3& F) const { return project_psd(hessian(F)); }

Mat9 project_psd(const Mat9& H) {
  const Mat9 S = 0.5 * (H + H.transpose());
  // Fast path: a Cholesky factor exists only for a positive definite S (the common case
  // near the rest shape), which needs no projection.
  if (Eigen::LLT<Mat9>(S).info() == Eigen::Success) return S;
  const Eigen::SelfAdjointEigenSolver<Mat9> es(S);
  const Vec9 lambda = es.eigenvalues().cwiseMax(0.0);
  return es.eigenvectors() * lambda.asDiagonal() * es.eigenvectors().transpose();
}

}  // namespace mabd::fem
