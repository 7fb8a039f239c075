// One linear tetrahedron: deformation gradient, elastic force and stiffness.
// With the shape-function gradients b_a (1/m, constant per tet; b_1..b_3 are the rows of
// Dm^-1 and b_0 = -(b_1 + b_2 + b_3)) the deformation gradient is F = sum_a x_a b_a^T, so
//   dvec(F)/dx_e = B (9x12),  B(i + 3j, 3a + i) = b_a[j],
//   d(V Psi)/dx_a = V P b_a,   d2(V Psi)/dx_e^2 = V B^T (d2Psi/dF2) B,
// with x_e = [x_0; x_1; x_2; x_3] the tet's node positions (m).
#pragma once

#include "fem/neo_hookean.h"
#include "fem/tet_mesh.h"

namespace mabd::fem {

using Mat34 = Eigen::Matrix<double, 3, 4>;
using Vec12 = Eigen::Matrix<double, 12, 1>;
using Mat12 = Eigen::Matrix<double, 12, 12>;

/// Shape-function gradients b_a (columns, 1/m) from Dm^-1.
Mat34 shape_gradients(const Mat3& Dm_inv);

/// Deformation gradient F = sum_a x_a b_a^T of tet e, x the 3N node positions (m).
Mat3 deformation_gradient(const TetMesh& mesh, int e, const Eigen::VectorXd& x);

/// Gradient of the tet's elastic energy V Psi on its 12 node coordinates (N), given the first
/// Piola stress P (Pa) and the volume V (m^3).
Vec12 tet_gradient(const Mat34& b, double V, const Mat3& P);

/// Hessian V B^T H9 B of the tet's elastic energy on its 12 node coordinates (N/m), from the
/// 9x9 dPsi/dF Hessian H9 (Pa); PSD if H9 is.
Mat12 tet_hessian(const Mat34& b, double V, const Mat9& H9);

}  // namespace mabd::fem
