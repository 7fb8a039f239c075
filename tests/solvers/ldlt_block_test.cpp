// B^T S^{-1} B through sparse forward solves on the elimination tree (ldlt_block.h) against
// the dense product, on grid systems like a net's joint rows: columns from one to a few
// nonzeros, few and many columns (the sparse and the dense parts of the product).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include <Eigen/Dense>

#include "solvers/ldlt_block.h"

namespace mabd::detail {
namespace {

/// A k x k grid's weighted Laplacian plus a positive diagonal (symmetric positive definite).
Eigen::SparseMatrix<double> grid_system(int k, std::mt19937& rng) {
  std::uniform_real_distribution<double> w(0.5, 2.0);
  const int m = k * k;
  std::vector<Eigen::Triplet<double>> t;
  Eigen::VectorXd diag = Eigen::VectorXd::Constant(m, 1e-3);
  auto edge = [&](int a, int b) {
    const double v = w(rng);
    t.emplace_back(a, b, -v);
    t.emplace_back(b, a, -v);
    diag[a] += v;
    diag[b] += v;
  };
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k; ++j) {
      if (i + 1 < k) edge(i * k + j, (i + 1) * k + j);
      if (j + 1 < k) edge(i * k + j, i * k + j + 1);
    }
  }
  for (int i = 0; i < m; ++i) t.emplace_back(i, i, diag[i]);
  Eigen::SparseMatrix<double> S(m, m);
  S.setFromTriplets(t.begin(), t.end());
  return S;
}

/// n columns with 1 to 3 nonzeros each, within a window of neighbouring rows (a contact's
/// body and its joints).
Eigen::SparseMatrix<double> contact_columns(int m, int n, std::mt19937& rng) {
  std::uniform_int_distribution<int> row(0, m - 1), count(1, 3), near(0, 4);
  std::uniform_real_distribution<double> v(-1, 1);
  std::vector<Eigen::Triplet<double>> t;
  for (int c = 0; c < n; ++c) {
    const int r0 = row(rng), k = count(rng);
    for (int e = 0; e < k; ++e) t.emplace_back(std::min(m - 1, r0 + near(rng)), c, v(rng));
  }
  Eigen::SparseMatrix<double> B(m, n);
  B.setFromTriplets(t.begin(), t.end());
  return B;
}

TEST(LdltBlock, MatchesTheDenseProduct) {
  std::mt19937 rng(7);
  for (int k : {6, 20}) {
    const Eigen::SparseMatrix<double> S = grid_system(k, rng);
    LdltBlock::Factor factor(S);
    ASSERT_EQ(factor.info(), Eigen::Success);
    LdltBlock block;
    block.prepare(factor);
    const Eigen::MatrixXd Sd(S);
    const Eigen::LDLT<Eigen::MatrixXd> dense(Sd);
    for (int n : {1, 5, 40, 300}) {
      const Eigen::SparseMatrix<double> B = contact_columns(k * k, n, rng);
      const Eigen::MatrixXd Bd(B);
      const Eigen::MatrixXd ref = Bd.transpose() * dense.solve(Bd);
      for (auto method : {LdltBlock::Method::Auto, LdltBlock::Method::Reach,
                          LdltBlock::Method::Solve}) {
        Eigen::MatrixXd C;
        block.product(factor, B, C, method);
        ASSERT_EQ(C.rows(), n);
        ASSERT_EQ(C.cols(), n);
        EXPECT_LT((C - ref).lpNorm<Eigen::Infinity>() / ref.lpNorm<Eigen::Infinity>(), 1e-10)
            << "grid " << k << ", " << n << " columns, method " << static_cast<int>(method);
        // Over the reaches each column visits its tree paths only: on the larger grid fewer
        // factor entries than one forward solve per column over the whole factor.
        const auto& L = factor.matrixL().nestedExpression();
        if (k == 20 && method == LdltBlock::Method::Reach) {
          EXPECT_LT(block.visited(), static_cast<std::int64_t>(n) * L.nonZeros());
        }
      }
    }
  }
}

}  // namespace
}  // namespace mabd::detail
