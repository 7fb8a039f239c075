// Polar rotation by Higham's scaled Newton iteration X <- (g X + X^{-T} / g) / 2. For the
// near-rigid matrices of affine bodies it converges to round-off in two or three iterations.
#include "body/rotation.h"

#include <cmath>

namespace mabd::detail {

bool polar_rotation(const Mat3& A, Mat3& R) {
  double det = A.determinant();
  if (!(det > 0) || !std::isfinite(det)) return false;
  Mat3 X = A;
  for (int it = 0; it < 30; ++it) {
    const Mat3 Xinv_t = X.inverse().transpose();
    // Frobenius-norm scaling speeds up far-from-orthogonal cases; near convergence g -> 1.
    const double g = std::sqrt(Xinv_t.norm() / X.norm());
    const Mat3 next = 0.5 * (g * X + Xinv_t / g);
    const double change = (next - X).squaredNorm();
    X = next;
    if (change < 1e-28) break;
  }
  R = X;
  return true;
}

}  // namespace mabd::detail
