// The contact problem's matrix K = D + diag(alpha) in 3x3 blocks, one block row per contact
// point (its normal and two tangent rows), for the projected Gauss-Seidel sweeps
// (contact_lcp.cpp). A point's three products (K lambda)_{3k..3k+2} then read each coupled
// point's three multipliers and nine coefficients contiguously, where the compressed columns
// of D gather one multiplier per coefficient through an index.
#pragma once

#include <vector>

#include <Eigen/Core>

#include "solvers/contact_lcp.h"

namespace mabd::detail {

struct LcpBlocks {
  int points = 0;
  /// Per point k: its blocks are block_col / block_val[begin_k .. begin_{k+1}).
  std::vector<int> block_begin;
  std::vector<int> block_col;        ///< the coupled point j of each block
  std::vector<double> block_val;     ///< 9 per block, row-major: K(3k + t, 3j + s) at 3t + s
  std::vector<int> diag;             ///< per point: its own block's position
  /// Scalar entries: per row r of the problem, those in columns after the points' (3 points
  /// onwards) for point rows, every entry for the rows after them; K(r, col) = val.
  std::vector<int> scalar_begin;
  std::vector<int> scalar_col;
  std::vector<double> scalar_val;
  std::vector<int> slot;  ///< build's scratch

  LcpBlocks() = default;
  /// Builds the blocks of p's K.
  explicit LcpBlocks(const ContactLcp& p) { build(p); }
  /// Builds the blocks of p's K into the storage of the last build (a pile of boxes builds
  /// blocks of tens of megabytes several times a step: grown into fresh memory each time,
  /// their pages' first touch and the growth's copies cost a tenth of the step).
  void build(const ContactLcp& p);

  /// (K lambda)_{3k + t} for t = 0, 1, 2 (m).
  Eigen::Vector3d point_times(int k, const Eigen::VectorXd& lambda) const {
    // Three scalar sums: they stay in registers (an Eigen vector's entries went through
    // memory at every block).
    double s0 = 0, s1 = 0, s2 = 0;
    const double* values = block_val.data();
    const double* x = lambda.data();
    for (int e = block_begin[k]; e < block_begin[k + 1]; ++e) {
      const double* v = values + 9 * static_cast<std::size_t>(e);
      const double* l = x + 3 * static_cast<std::size_t>(block_col[e]);
      const double l0 = l[0], l1 = l[1], l2 = l[2];
      s0 += v[0] * l0 + v[1] * l1 + v[2] * l2;
      s1 += v[3] * l0 + v[4] * l1 + v[5] * l2;
      s2 += v[6] * l0 + v[7] * l1 + v[8] * l2;
    }
    if (scalar_begin[3 * k] != scalar_begin[3 * k + 3]) {
      s0 += scalar_times(3 * k, lambda);
      s1 += scalar_times(3 * k + 1, lambda);
      s2 += scalar_times(3 * k + 2, lambda);
    }
    return {s0, s1, s2};
  }
  /// The scalar entries' part of (K lambda)_r (m); all of it for a row after the points'.
  double scalar_times(int r, const Eigen::VectorXd& lambda) const {
    double s = 0;
    for (int e = scalar_begin[r]; e < scalar_begin[r + 1]; ++e) {
      s += scalar_val[e] * lambda[scalar_col[e]];
    }
    return s;
  }
  /// K(3k + t, 3k + s) (m/N).
  double own(int k, int t, int s) const {
    return block_val[9 * static_cast<std::size_t>(diag[k]) + 3 * t + s];
  }
};

}  // namespace mabd::detail
