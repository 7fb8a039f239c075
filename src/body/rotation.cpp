// Polar rotation by Higham's scaled Newton iteration X <- (g X + X^{-T} / g) / 2. For the
// near-rigid matrices of affine bodies it converges to round-off in one to three iterations
// (the links of chain_1e4: one for 69%, two for 22%).
#include "body/rotation.h"

#include <cmath>

namespace mabd::detail {

bool polar_rotation(const Mat3& A, Mat3& R) {
  double det = A.determinant();
  if (!(det > 0) || !std::isfinite(det)) return false;
  // The iteration keeps the singular vectors and maps every singular value s to
  // (g s + 1 / (g s)) / 2: the distance to R falls from e to about e^2 / 2 per iteration, and
  // the step just taken is about the distance before it. A step c below 3e-9 leaves
  // c^2 / 2 < 5e-18, below round-off: no further iteration.
  Mat3 X = A;
  double change = 1;
  // The first iteration scales only a matrix whose volume is off by more than 1%. A near-rigid
  // one (the common case) has g = 1 + O(strain), which moves the step by O(strain^2), what
  // the next iteration removes anyway; its two square roots cost a tenth of a chain's body
  // phase. Unscaled, the iteration still converges from any A with det A > 0.
  const bool scale_first = std::abs(det - 1) > 1e-2;
  for (int it = 0; it < 30 && change >= 1e-17; ++it) {
    // X^{-T} = cof(X) / det X, the cofactor columns being cross products of X's columns.
    Mat3 Xinv_t;
    Xinv_t.col(0) = X.col(1).cross(X.col(2));
    Xinv_t.col(1) = X.col(2).cross(X.col(0));
    Xinv_t.col(2) = X.col(0).cross(X.col(1));
    det = X.col(0).dot(Xinv_t.col(0));
    Xinv_t /= det;
    // Frobenius-norm scaling speeds up far-from-orthogonal cases; near convergence g -> 1.
    const bool scaled = it == 0 ? scale_first : change > 1e-4;
    Mat3 next;
    if (scaled) {
      const double g = std::sqrt(std::sqrt(Xinv_t.squaredNorm() / X.squaredNorm()));
      next = 0.5 * (g * X + Xinv_t / g);
    } else {
      next = 0.5 * (X + Xinv_t);
    }
    change = (next - X).squaredNorm();
    X = next;
  }
  R = X;
  return true;
}

}  // namespace mabd::detail
