// Cholesky factor of a symmetric positive definite 3x3 matrix, D = L L^T, with solves for a
// vector and for three right-hand sides: the pivot of the 3x3 block solvers, written out
// (Eigen's general triangular-solve path costs more than the arithmetic at this size).
#pragma once

#include <cmath>

#include "mabd/math.h"

namespace mabd::detail {

struct Chol3 {
  double l00 = 1, l10 = 0, l11 = 1, l20 = 0, l21 = 0, l22 = 1;

  /// Factors D (lower triangle read). Returns false unless D is positive definite with
  /// min(L_ii) > rel_floor * max(L_ii) (near-singular pivots count as singular).
  bool compute(const Mat3& D, double rel_floor) {
    const double d0 = D(0, 0);
    if (!(d0 > 0)) return false;
    l00 = std::sqrt(d0);
    l10 = D(1, 0) / l00;
    l20 = D(2, 0) / l00;
    const double d1 = D(1, 1) - l10 * l10;
    if (!(d1 > 0)) return false;
    l11 = std::sqrt(d1);
    l21 = (D(2, 1) - l20 * l10) / l11;
    const double d2 = D(2, 2) - l20 * l20 - l21 * l21;
    if (!(d2 > 0)) return false;
    l22 = std::sqrt(d2);
    const double lo = std::fmin(l00, std::fmin(l11, l22));
    const double hi = std::fmax(l00, std::fmax(l11, l22));
    return lo > rel_floor * hi;
  }

  /// D^{-1} b.
  Vec3 solve(const Vec3& b) const {
    // L y = b
    const double y0 = b[0] / l00;
    const double y1 = (b[1] - l10 * y0) / l11;
    const double y2 = (b[2] - l20 * y0 - l21 * y1) / l22;
    // L^T x = y
    const double x2 = y2 / l22;
    const double x1 = (y1 - l21 * x2) / l11;
    const double x0 = (y0 - l10 * x1 - l20 * x2) / l00;
    return Vec3(x0, x1, x2);
  }

  /// D^{-1} B.
  Mat3 solve(const Mat3& B) const {
    Mat3 X;
    for (int c = 0; c < 3; ++c) X.col(c) = solve(Vec3(B.col(c)));
    return X;
  }
};

}  // namespace mabd::detail
