// Rotation of an affine body: the exact polar rotation of A (paper Eq. polar) and the
// length-preserving shortcut of Alg. 1 (paper Eq. len_preserving).
#pragma once

#include "mabd/math.h"

namespace mabd::detail {

/// Rotation R of the polar decomposition A = R S (S symmetric positive definite).
/// Returns false if A is singular or inverted (det A <= 0), leaving R unspecified.
bool polar_rotation(const Mat3& A, Mat3& R);

/// R^T v approximated by A^T v rescaled to |v| (paper Eq. len_preserving, transposed).
inline Vec3 rotate_back_normalized(const Mat3& A, const Vec3& v) {
  const Vec3 w = A.transpose() * v;
  const double n = w.norm();
  return n > 0 ? Vec3(w * (v.norm() / n)) : w;
}

/// R v approximated by A v rescaled to |v| (paper Eq. len_preserving).
inline Vec3 rotate_normalized(const Mat3& A, const Vec3& v) {
  const Vec3 w = A * v;
  const double n = w.norm();
  return n > 0 ? Vec3(w * (v.norm() / n)) : w;
}

}  // namespace mabd::detail
