// The symmetric part of a triplet matrix against Eigen's sparse expression, to the bit.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include <Eigen/SparseCore>

#include "solvers/symmetric_assembly.h"

namespace mabd::detail {
namespace {

Eigen::SparseMatrix<double> reference(int n, const std::vector<Eigen::Triplet<double>>& t) {
  Eigen::SparseMatrix<double> D(n, n);
  D.setFromTriplets(t.begin(), t.end());
  return 0.5 * (D + Eigen::SparseMatrix<double>(D.transpose()));
}

/// Same pattern, same values bit for bit (-0 and 0 told apart).
void expect_identical(const Eigen::SparseMatrix<double>& a, const Eigen::SparseMatrix<double>& b) {
  ASSERT_EQ(a.rows(), b.rows());
  ASSERT_EQ(a.nonZeros(), b.nonZeros());
  ASSERT_TRUE(a.isCompressed());
  for (int j = 0; j <= a.cols(); ++j) ASSERT_EQ(a.outerIndexPtr()[j], b.outerIndexPtr()[j]);
  for (Eigen::Index k = 0; k < a.nonZeros(); ++k) {
    ASSERT_EQ(a.innerIndexPtr()[k], b.innerIndexPtr()[k]) << k;
    ASSERT_EQ(std::memcmp(a.valuePtr() + k, b.valuePtr() + k, sizeof(double)), 0)
        << k << ": " << a.valuePtr()[k] << " vs " << b.valuePtr()[k];
  }
}

/// Triplets covering about `fill` of the entries, with duplicates, one-sided entries, zeros of
/// both signs and values of very different sizes (their sums depend on the order).
std::vector<Eigen::Triplet<double>> random_triplets(std::mt19937& rng, int n, double fill) {
  std::uniform_int_distribution<int> index(0, n - 1);
  std::uniform_real_distribution<double> u(-1, 1);
  std::uniform_int_distribution<int> kind(0, 9);
  std::vector<Eigen::Triplet<double>> t;
  const auto count = static_cast<std::size_t>(fill * n * n);
  for (std::size_t e = 0; e < count; ++e) {
    const int i = index(rng), j = index(rng);
    double v = u(rng);
    switch (kind(rng)) {
      case 0: v = 0.0; break;
      case 1: v = -0.0; break;
      case 2: v *= 1e16; break;
      case 3: v *= 1e-16; break;
      default: break;
    }
    t.emplace_back(i, j, v);
    if (kind(rng) < 3) t.emplace_back(i, j, u(rng));  // a duplicate
  }
  return t;
}

TEST(SymmetricAssembly, DensePathMatchesEigenToTheBit) {
  std::mt19937 rng(7);
  SymmetricAssembly assembly;
  int dense = 0;
  for (int n : {1, 3, 30, 150}) {
    for (double fill : {0.3, 0.8, 2.0}) {
      const auto t = random_triplets(rng, n, fill);
      Eigen::SparseMatrix<double> out;
      assembly.assemble(n, t, out);
      EXPECT_EQ(assembly.dense(), 4 * t.size() >= static_cast<std::size_t>(n * n));
      dense += assembly.dense();
      expect_identical(out, reference(n, t));
    }
  }
  EXPECT_GE(dense, 9);
}

TEST(SymmetricAssembly, SparsePathMatchesEigenToTheBit) {
  std::mt19937 rng(11);
  SymmetricAssembly assembly;
  for (int n : {40, SymmetricAssembly::kDenseRows + 1}) {
    const auto t = random_triplets(rng, n, 0.01);
    Eigen::SparseMatrix<double> out;
    assembly.assemble(n, t, out);
    EXPECT_FALSE(assembly.dense());
    expect_identical(out, reference(n, t));
  }
}

/// Dense blocks of `block` rows on the diagonal of an n x n matrix, each with duplicates and
/// zeros of both signs (the contacts of many separate articulations), in an order that visits
/// the blocks in turn.
std::vector<Eigen::Triplet<double>> block_triplets(std::mt19937& rng, int n, int block) {
  auto t = random_triplets(rng, block, 1.5);
  std::vector<Eigen::Triplet<double>> out;
  for (const auto& e : t) {
    for (int first = 0; first + block <= n; first += block) {
      out.emplace_back(first + e.row(), first + e.col(), e.value() * (1 + first));
    }
  }
  return out;
}

TEST(SymmetricAssembly, SparsePathOfManyBlocksMatchesEigenToTheBitAsItsSizeChanges) {
  std::mt19937 rng(5);
  SymmetricAssembly assembly;
  Eigen::SparseMatrix<double> out;
  for (const auto& [n, block] : {std::pair{3000, 150}, std::pair{1200, 40}, std::pair{4500, 90},
                                 std::pair{2000, 1}}) {
    const auto t = block_triplets(rng, n, block);
    assembly.assemble(n, t, out);
    EXPECT_FALSE(assembly.dense());
    expect_identical(out, reference(n, t));
  }
}

TEST(SymmetricAssembly, ReusedScratchKeepsNothingFromTheLastMatrix) {
  std::mt19937 rng(3);
  SymmetricAssembly assembly;
  Eigen::SparseMatrix<double> out;
  assembly.assemble(50, random_triplets(rng, 50, 1.0), out);
  const auto t = random_triplets(rng, 20, 0.5);
  assembly.assemble(20, t, out);
  ASSERT_TRUE(assembly.dense());
  expect_identical(out, reference(20, t));
}

}  // namespace
}  // namespace mabd::detail
