// Elastic energy of an affine body (DESIGN section 1). Every element of an affine body has
// deformation gradient F = A, so the energy is V * Psi(A), exact and mesh independent.
#pragma once

#include "mabd/math.h"

namespace mabd::detail {

/// Lame parameters (Pa) from Young's modulus E (Pa) and Poisson ratio nu.
inline double lame_mu(double E, double nu) { return E / (2 * (1 + nu)); }
inline double lame_lambda(double E, double nu) { return E * nu / ((1 + nu) * (1 - 2 * nu)); }

/// Co-rotated linear energy density Psi = mu |eps|^2 + lambda/2 tr(eps)^2,
/// eps = sym(R^T A) - I (J/m^3), and its gradient P = R (2 mu eps + lambda tr(eps) I).
double corotated_energy_density(const Mat3& A, const Mat3& R, double mu, double lambda);
Mat3 corotated_stress(const Mat3& A, const Mat3& R, double mu, double lambda);

/// The exact Hessian of the co-rotated energy density on vec(A) is the rest Hessian rotated,
/// D(R) Kb D(R)^T, plus a term on the three twist modes of A = U Sigma V^T alone, which are
/// the rotation directions at R = U V^T: E(R) u with E(R) u = vec([u]x R) and u = R v_k.
/// Returns the K (body frame, R^T K_world R; Pa = J/m^3 per unit volume) of that term written
/// as E(R) R K R^T E(R)^T:
///   K = V diag(kappa) V^T,  kappa_k = (s_i + s_j) / (2 (sigma_i + sigma_j)),
/// (i, j) the other two singular values of axis k, s = dPsi/dsigma the principal stresses
/// (the twist eigenvalues of Smith et al. 2019, over |E(R) u|^2 = 2). kappa is clamped at 0:
/// a compressed twist mode would make the Hessian indefinite.
Mat3 corotated_twist_stiffness(const Mat3& A, const Mat3& R, double mu, double lambda);

/// St. Venant-Kirchhoff with Green strain E = (A^T A - I)/2 (used with the normalized
/// rotation shortcut, which never forms R): Psi = mu |E|^2 + lambda/2 tr(E)^2,
/// P = A (2 mu E + lambda tr(E) I). Same rest Hessian Kb as the co-rotated model.
double stvk_energy_density(const Mat3& A, double mu, double lambda);
Mat3 stvk_stress(const Mat3& A, double mu, double lambda);

/// Vanilla ABD orthogonality energy k |A A^T - I|_F^2 (J), its gradient on vec(A) and its
/// 9x9 Hessian on vec(A) (columns of A stacked).
double orthogonality_energy(const Mat3& A, double k);
Mat3 orthogonality_gradient(const Mat3& A, double k);
Eigen::Matrix<double, 9, 9> orthogonality_hessian(const Mat3& A, double k);

}  // namespace mabd::detail
