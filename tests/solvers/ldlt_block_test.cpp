// B^T S^{-1} B through sparse forward solves on the elimination tree (ldlt_block.h) against
// the dense product, on grid systems like a net's joint rows: columns from one to a few
// nonzeros, few and many columns (the sparse and the dense parts of the product); and on a
// chain whose contact rows are ordered last, where every column's reach stays among them.
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
        // The reach product fills one triangle and mirrors it.
        if (method == LdltBlock::Method::Reach) EXPECT_TRUE(C == C.transpose());
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

// A chain (a path of 600 rows, like a hanging chain's joint rows) touching something along rows
// 280 to 319: the rows are numbered from both ends inwards and the touching rows last, so each
// elimination-tree path from a touching row stays among the last 40. The product over the
// reaches then visits only the factor's last 40 columns per column, and matches the dense one.
TEST(LdltBlock, ContactRowsOrderedLastKeepTheReachesAmongThem) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> w(0.5, 2.0), v(-1, 1);
  const int m = 600, first = 280, touching = 40;
  std::vector<int> position(m);  // path node -> row
  int next = 0;
  for (int i = 0; i < first; ++i) position[i] = next++;
  for (int i = m - 1; i >= first + touching; --i) position[i] = next++;
  for (int i = first; i < first + touching; ++i) position[i] = next++;
  std::vector<Eigen::Triplet<double>> t;
  Eigen::VectorXd diag = Eigen::VectorXd::Constant(m, 1e-3);
  for (int i = 0; i + 1 < m; ++i) {
    const double e = w(rng);
    t.emplace_back(position[i], position[i + 1], -e);
    t.emplace_back(position[i + 1], position[i], -e);
    diag[position[i]] += e;
    diag[position[i + 1]] += e;
  }
  for (int i = 0; i < m; ++i) t.emplace_back(i, i, diag[i]);
  Eigen::SparseMatrix<double> S(m, m);
  S.setFromTriplets(t.begin(), t.end());
  LdltBlock::Factor factor(S);
  ASSERT_EQ(factor.info(), Eigen::Success);
  LdltBlock block;
  block.prepare(factor);
  const int n = 30;  // columns with 1 or 2 nonzeros on neighbouring touching rows
  std::uniform_int_distribution<int> node(first, first + touching - 2), two(0, 1);
  std::vector<Eigen::Triplet<double>> bt;
  for (int c = 0; c < n; ++c) {
    const int i = node(rng);
    bt.emplace_back(position[i], c, v(rng));
    if (two(rng) != 0) bt.emplace_back(position[i + 1], c, v(rng));
  }
  Eigen::SparseMatrix<double> B(m, n);
  B.setFromTriplets(bt.begin(), bt.end());
  const Eigen::MatrixXd Sd(S), Bd(B);
  const Eigen::MatrixXd ref = Bd.transpose() * Eigen::LDLT<Eigen::MatrixXd>(Sd).solve(Bd);
  const auto& L = factor.matrixL().nestedExpression();
  const std::int64_t last_entries = L.outerIndexPtr()[m] - L.outerIndexPtr()[m - touching];
  for (auto method : {LdltBlock::Method::Auto, LdltBlock::Method::Reach}) {
    Eigen::MatrixXd C;
    block.product(factor, B, C, method);
    EXPECT_LT((C - ref).lpNorm<Eigen::Infinity>() / ref.lpNorm<Eigen::Infinity>(), 1e-10)
        << "method " << static_cast<int>(method);
    EXPECT_LE(block.visited(), n * last_entries) << "method " << static_cast<int>(method);
  }
}

}  // namespace
}  // namespace mabd::detail
