// The updatable dense Cholesky factor against a new factor of the same matrix.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Dense>

#include "solvers/updatable_llt.h"

namespace mabd::detail {
namespace {

/// A symmetric positive definite pool matrix of n rows, J J^T + c I with J n x n/2: far from
/// diagonal (every pair of rows coupled, as a net couples its contacts).
Eigen::MatrixXd pool(std::mt19937& rng, int n, double c) {
  std::uniform_real_distribution<double> u(-1, 1);
  const Eigen::MatrixXd J = Eigen::MatrixXd::NullaryExpr(n, n / 2, [&] { return u(rng); });
  Eigen::MatrixXd K = J * J.transpose();
  K.diagonal().array() += c;
  return K;
}

Eigen::MatrixXd sub(const Eigen::MatrixXd& K, const std::vector<int>& rows) {
  const int m = static_cast<int>(rows.size());
  Eigen::MatrixXd S(m, m);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < m; ++j) S(i, j) = K(rows[i], rows[j]);
  }
  return S;
}

// 300 random changes of the row set (removals anywhere, appends at the end), each followed
// by a solve: the updated factor solves like a new one, to round-off of the matrix's
// condition, all the way (no drift from the updates gathering).
TEST(UpdatableLlt, RemovalsAndAppendsSolveLikeANewFactor) {
  for (int seed = 1; seed <= 5; ++seed) {
    std::mt19937 rng(seed);
    const int n = 80;
    const Eigen::MatrixXd K = pool(rng, n, 0.05);
    std::vector<int> rows, out;
    for (int r = 0; r < n; ++r) (r % 3 == 0 ? out : rows).push_back(r);
    UpdatableLlt llt;
    ASSERT_TRUE(llt.factor(sub(K, rows)));
    std::uniform_real_distribution<double> u(-1, 1);
    double worst = 0;
    for (int change = 0; change < 300; ++change) {
      const bool remove = out.empty() || (rows.size() > 10 && rng() % 2 == 0);
      if (remove) {
        const int k = static_cast<int>(rng() % rows.size());
        llt.remove(k);
        out.push_back(rows[k]);
        rows.erase(rows.begin() + k);
      } else {
        const int k = static_cast<int>(rng() % out.size());
        const int r = out[k];
        Eigen::VectorXd c(rows.size());
        for (std::size_t i = 0; i < rows.size(); ++i) c[i] = K(r, rows[i]);
        ASSERT_TRUE(llt.append(c, K(r, r))) << "seed " << seed << ", change " << change;
        rows.push_back(r);
        out.erase(out.begin() + k);
      }
      ASSERT_EQ(llt.size(), static_cast<int>(rows.size()));
      const Eigen::MatrixXd S = sub(K, rows);
      const Eigen::VectorXd b = Eigen::VectorXd::NullaryExpr(S.rows(), [&] { return u(rng); });
      Eigen::VectorXd x = b;
      llt.solve_in_place(x);
      const Eigen::VectorXd ref = Eigen::LLT<Eigen::MatrixXd>(S).solve(b);
      worst = std::max(worst, (x - ref).norm() / ref.norm());
      // The residual of the system itself, against K's scale.
      EXPECT_LT((S * x - b).norm(), 1e-10 * S.norm() * x.norm()) << "change " << change;
    }
    EXPECT_LT(worst, 1e-9) << "seed " << seed;
  }
}

// A row that repeats one already in the factor makes the bordered matrix singular: the append
// is refused and the factor kept as it was.
TEST(UpdatableLlt, AppendRefusesASingularBorder) {
  std::mt19937 rng(7);
  const Eigen::MatrixXd K = pool(rng, 30, 0.1);
  std::vector<int> rows(30);
  for (int r = 0; r < 30; ++r) rows[r] = r;
  UpdatableLlt llt;
  ASSERT_TRUE(llt.factor(K));
  const Eigen::VectorXd c = K.col(4);  // the new row equals row 4
  EXPECT_FALSE(llt.append(c, K(4, 4)));
  EXPECT_EQ(llt.size(), 30);
  Eigen::VectorXd x = Eigen::VectorXd::Ones(30);
  llt.solve_in_place(x);
  EXPECT_LT((K * x - Eigen::VectorXd::Ones(30)).norm(), 1e-10 * K.norm() * x.norm());
}

// An indefinite matrix is refused by the first factor, as by a new LLT.
TEST(UpdatableLlt, FactorRefusesAnIndefiniteMatrix) {
  Eigen::MatrixXd K = Eigen::MatrixXd::Identity(5, 5);
  K(2, 2) = -1;
  UpdatableLlt llt;
  EXPECT_FALSE(llt.factor(K));
  EXPECT_EQ(llt.size(), 0);
}

}  // namespace
}  // namespace mabd::detail
