// Stable Neo-Hookean material (Smith, de Goes, Kim 2018, "Stable Neo-Hookean Flesh
// Simulation", Eq. 14 with the rest-stability term), energy density per unit rest volume:
//   Psi(F) = mu/2 (I_C - 3) + lambda/2 (J - alpha)^2 - mu/2 log(I_C + 1) - Psi0,
//   I_C = tr(F^T F),  J = det F,  alpha = 1 + 3 mu / (4 lambda),
// where alpha makes F = I stress free and the constant Psi0 = lambda/2 (1 - alpha)^2 -
// mu/2 log 4 makes Psi(I) = 0. No log J: the energy is finite for inverted elements (J <= 0).
// Lame re-parametrisation (the paper's section 3.4): expanding Psi to second order in
// H = F - I gives mu_L |sym H|^2 + lambda_L/2 tr(H)^2 with mu_L = 3/4 mu and
// lambda_L = lambda - 5/8 mu, so for Young's modulus E and Poisson ratio nu we use
//   mu = 4/3 mu_L,  lambda = lambda_L + 5/6 mu_L,
//   mu_L = E / (2 (1 + nu)),  lambda_L = E nu / ((1 + nu)(1 - 2 nu)),
// and the small-strain response is exactly linear elasticity with (E, nu).
// Matrices on F use vec(F) = columns of F stacked (index i + 3 j for F(i, j)).
#pragma once

#include "mabd/math.h"

namespace mabd::fem {

using Mat9 = Eigen::Matrix<double, 9, 9>;
using Vec9 = Eigen::Matrix<double, 9, 1>;

/// Column-stacked vec(F) of a 3x3 matrix.
inline Vec9 vec(const Mat3& F) { return Eigen::Map<const Vec9>(F.data()); }

/// Cofactor matrix dJ/dF = [f1 x f2 ... ] of F: columns f2 x f3, f3 x f1, f1 x f2 (f_k the
/// columns of F).
Mat3 cofactor(const Mat3& F);

class StableNeoHookean {
 public:
  /// From the model parameters mu, lambda (Pa) of Psi above (lambda > 0).
  StableNeoHookean(double mu, double lambda);

  /// From Young's modulus E (Pa, > 0) and Poisson ratio nu (-1 < nu < 0.5) through the
  /// re-parametrisation above. Throws mabd::InvalidArgument on a value out of range.
  static StableNeoHookean from_young_poisson(double E, double nu);

  double mu() const { return mu_; }          ///< model parameter mu (Pa)
  double lambda() const { return lambda_; }  ///< model parameter lambda (Pa)
  double alpha() const { return alpha_; }    ///< rest volume ratio term 1 + 3 mu/(4 lambda)

  /// Energy density Psi(F) (J/m^3 of rest volume); Psi(R) = 0 for any rotation R.
  double energy_density(const Mat3& F) const;

  /// First Piola-Kirchhoff stress P = dPsi/dF (Pa):
  ///   P = mu (1 - 1/(I_C + 1)) F + lambda (J - alpha) cof(F).
  Mat3 stress(const Mat3& F) const;

  /// d2Psi/dvec(F)^2 (Pa):
  ///   mu (1 - 1/(I_C+1)) I9 + 2 mu/(I_C+1)^2 f f^T + lambda g g^T + lambda (J - alpha) H_J,
  /// f = vec(F), g = vec(cof F), H_J = d2J/dF2 (cross-product matrices of the columns of F).
  Mat9 hessian(const Mat3& F) const;

  /// hessian(F) projected to the nearest positive semi-definite matrix (negative
  /// eigenvalues clamped to zero).
  Mat9 projected_hessian(const Mat3& F) const;

 private:
  double mu_, lambda_, alpha_, psi0_;
};

/// Nearest symmetric positive semi-definite matrix of a symmetric 9x9 H (eigen-clamp).
Mat9 project_psd(const Mat9& H);

}  // namespace mabd::fem
