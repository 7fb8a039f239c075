// The contact problem's K in 3x3 point blocks against the dense K = D + diag(alpha).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include <Eigen/Dense>
#include <Eigen/SparseCore>

#include "solvers/contact_lcp.h"
#include "solvers/lcp_blocks.h"

namespace mabd::detail {
namespace {

/// A sparse symmetric D over `points` points and `extra` rows after them, each pair of rows
/// coupled with probability `fill`; some diagonal entries left out (an extra row that D does
/// not reach keeps its compliance alone).
ContactLcp sparse_lcp(std::mt19937& rng, int points, int extra, double fill) {
  std::uniform_real_distribution<double> u(-1, 1), pos(0, 1);
  const int n = 3 * points + extra;
  std::vector<Eigen::Triplet<double>> trip;
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c <= r; ++c) {
      if (pos(rng) > fill) continue;
      const double v = u(rng);
      trip.emplace_back(r, c, v);
      if (c != r) trip.emplace_back(c, r, v);
    }
  }
  ContactLcp p;
  p.D.resize(n, n);
  p.D.setFromTriplets(trip.begin(), trip.end());
  p.alpha = Eigen::VectorXd::NullaryExpr(n, [&] { return 0.1 + pos(rng); });
  p.b = Eigen::VectorXd::Zero(n);
  p.mu.assign(points, 0.5);
  p.extra_lo.assign(extra, -1);
  p.extra_hi.assign(extra, 1);
  return p;
}

TEST(LcpBlocks, ProductsMatchTheDenseMatrix) {
  for (int seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    const int points = 1 + seed % 7, extra = seed % 4;
    const ContactLcp p = sparse_lcp(rng, points, extra, seed % 2 ? 0.15 : 0.6);
    Eigen::MatrixXd K = Eigen::MatrixXd(p.D);
    K.diagonal() += p.alpha;
    const LcpBlocks blocks(p);
    std::uniform_real_distribution<double> u(-1, 1);
    const Eigen::VectorXd lambda = Eigen::VectorXd::NullaryExpr(p.size(), [&] { return u(rng); });
    const Eigen::VectorXd ref = K * lambda;
    for (int k = 0; k < points; ++k) {
      const Eigen::Vector3d v = blocks.point_times(k, lambda);
      for (int t = 0; t < 3; ++t) {
        EXPECT_NEAR(v[t], ref[3 * k + t], 1e-13) << "seed " << seed << " point " << k;
        for (int s = 0; s < 3; ++s) EXPECT_EQ(blocks.own(k, t, s), K(3 * k + t, 3 * k + s));
      }
    }
    for (int r = 3 * points; r < p.size(); ++r) {
      EXPECT_NEAR(blocks.scalar_times(r, lambda), ref[r], 1e-13) << "seed " << seed << " row " << r;
    }
  }
}

}  // namespace
}  // namespace mabd::detail
