// B^T S^{-1} B through sparse forward solves on the elimination tree, or through whole
// solves where the reaches cover most of the factor (ldlt_block.h).
#include "solvers/ldlt_block.h"

#include <algorithm>

namespace mabd::detail {

namespace {
constexpr int kSolveColumns = 64;  ///< columns per multi-column solve (bounds its memory)
}  // namespace

void LdltBlock::prepare(const Factor& factor) {
  // L holds its strict lower triangle by columns; the parent of column j is its first row.
  const auto& L = factor.matrixL().nestedExpression();
  const int m = static_cast<int>(L.cols());
  parent_.assign(m, -1);
  for (int j = 0; j < m; ++j) {
    for (Eigen::SparseMatrix<double>::InnerIterator it(L, j); it; ++it) {
      const int i = static_cast<int>(it.index());
      if (i > j && (parent_[j] < 0 || i < parent_[j])) parent_[j] = i;
    }
  }
  mark_.assign(m, -1);
  x_.assign(m, 0.0);
}

void LdltBlock::product(const Factor& factor, const Eigen::SparseMatrix<double>& B,
                        Eigen::MatrixXd& C, Method method) {
  const auto& L = factor.matrixL().nestedExpression();
  const auto& perm = factor.permutationP().indices();
  const int m = static_cast<int>(L.cols()), n = static_cast<int>(B.cols());
  visited_ = 0;
  // The reach of each column of P B (the permutation takes row i to perm[i]), the factor
  // entries its forward solve visits, and how many columns reach each row.
  std::fill(mark_.begin(), mark_.end(), -1);
  count_.assign(m, 0);
  reach_.clear();
  reach_begin_.assign(1, 0);
  double visit = 0;
  for (int c = 0; c < n; ++c) {
    for (Eigen::SparseMatrix<double>::InnerIterator it(B, c); it; ++it) {
      const int i0 = perm.size() > 0 ? perm[it.index()] : static_cast<int>(it.index());
      for (int i = i0; i >= 0 && mark_[i] != c; i = parent_[i]) {
        mark_[i] = c;
        reach_.push_back(i);
        ++count_[i];
        visit += static_cast<double>(L.outerIndexPtr()[i + 1] - L.outerIndexPtr()[i]);
      }
    }
    reach_begin_.push_back(reach_.size());
  }
  // Y^T D^{-1} Y: rows of Y under many columns (the separators near the tree's root) as a
  // dense product, the others sparse.
  const int dense_from = std::max(8, n / 8);
  double product = 0;
  int rows_dense = 0;
  for (int i = 0; i < m; ++i) {
    if (count_[i] >= dense_from) {
      ++rows_dense;
    } else {
      product += static_cast<double>(count_[i]) * count_[i];
    }
  }
  // Against whole solves: forward and back over the factor per column, in blocked products
  // (a dense flop about 4 times cheaper than a scattered one).
  product += 0.25 * static_cast<double>(n) * n * rows_dense;
  const double whole = static_cast<double>(n) * (4.0 * static_cast<double>(L.nonZeros()) + 3 * m);
  if (method == Method::Solve || (method == Method::Auto && whole < 2 * visit + product)) {
    whole_solves(factor, B, C);
    return;
  }
  reach_product(factor, B, C, dense_from);
}

void LdltBlock::whole_solves(const Factor& factor, const Eigen::SparseMatrix<double>& B,
                             Eigen::MatrixXd& C) {
  const int n = static_cast<int>(B.cols());
  C.resize(n, n);
  for (int c0 = 0; c0 < n; c0 += kSolveColumns) {
    const int k = std::min(kSolveColumns, n - c0);
    const Eigen::MatrixXd Bk(B.middleCols(c0, k));
    const Eigen::MatrixXd X = factor.solve(Bk);
    C.middleCols(c0, k) = B.transpose() * X;
    visited_ += 2 * k * factor.matrixL().nestedExpression().nonZeros();
  }
}

void LdltBlock::reach_product(const Factor& factor, const Eigen::SparseMatrix<double>& B,
                              Eigen::MatrixXd& C, int dense_from) {
  const auto& L = factor.matrixL().nestedExpression();
  const auto& perm = factor.permutationP().indices();
  const auto& d = factor.vectorD();
  const int m = static_cast<int>(L.cols()), n = static_cast<int>(B.cols());
  // Each reach ascending: a topological order of the tree (sorted only here: whole solves
  // need no order).
  for (int c = 0; c < n; ++c) {
    std::sort(reach_.begin() + static_cast<std::ptrdiff_t>(reach_begin_[c]),
              reach_.begin() + static_cast<std::ptrdiff_t>(reach_begin_[c + 1]));
  }
  dense_row_.assign(m, -1);
  // The sparse rows' entries by row (at most count_ each), in column order.
  sparse_begin_.assign(static_cast<std::size_t>(m) + 1, 0);
  int rows_dense = 0;
  for (int i = 0; i < m; ++i) {
    const bool dense = count_[i] >= dense_from;
    if (dense) dense_row_[i] = rows_dense++;
    sparse_begin_[i + 1] = sparse_begin_[i] + (dense ? 0 : count_[i]);
  }
  sparse_end_.assign(sparse_begin_.begin(), sparse_begin_.end() - 1);
  sparse_col_.resize(sparse_begin_[m]);
  sparse_val_.resize(sparse_begin_[m]);
  // Y = L^{-1} P B column by column over each reach (ascending: a topological order of the
  // tree), split into its dense rows and a sparse remainder.
  Eigen::MatrixXd Yd = Eigen::MatrixXd::Zero(rows_dense, n);
  for (int c = 0; c < n; ++c) {
    for (Eigen::SparseMatrix<double>::InnerIterator it(B, c); it; ++it) {
      x_[perm.size() > 0 ? perm[it.index()] : it.index()] += it.value();
    }
    const auto first = reach_.begin() + static_cast<std::ptrdiff_t>(reach_begin_[c]);
    const auto last = reach_.begin() + static_cast<std::ptrdiff_t>(reach_begin_[c + 1]);
    for (auto j = first; j != last; ++j) {
      const double xj = x_[*j];
      if (xj == 0) continue;
      for (Eigen::SparseMatrix<double>::InnerIterator it(L, *j); it; ++it) {
        x_[it.index()] -= it.value() * xj;
        ++visited_;
      }
    }
    for (auto j = first; j != last; ++j) {
      const double v = x_[*j];
      x_[*j] = 0;
      if (v == 0) continue;
      if (dense_row_[*j] >= 0) {
        Yd(dense_row_[*j], c) = v;
      } else {
        const std::size_t e = sparse_end_[*j]++;
        sparse_col_[e] = c;
        sparse_val_[e] = v;
      }
    }
  }
  // C = Y^T D^{-1} Y is symmetric: its lower triangle, then mirrored. A sparse row j adds
  // Y(j, a) Y(j, b) / d_j for each pair of its columns a >= b.
  C.setZero(n, n);
  for (int j = 0; j < m; ++j) {
    const std::size_t e0 = sparse_begin_[j], e1 = sparse_end_[j];
    for (std::size_t p = e0; p < e1; ++p) {
      const double vp = sparse_val_[p] / d[j];
      const int a = sparse_col_[p];  // >= the columns before it in the row
      for (std::size_t q = e0; q <= p; ++q) C(a, sparse_col_[q]) += vp * sparse_val_[q];
    }
  }
  if (rows_dense > 0) {
    // The dense rows' product for the lower triangle (half the flops of the whole).
    Eigen::MatrixXd DYd(rows_dense, n);
    for (int i = 0; i < m; ++i) {
      if (dense_row_[i] >= 0) DYd.row(dense_row_[i]) = Yd.row(dense_row_[i]) / d[i];
    }
    C.triangularView<Eigen::Lower>() += Yd.transpose() * DYd;
  }
  for (int c = 1; c < n; ++c) {
    for (int r = 0; r < c; ++r) C(r, c) = C(c, r);
  }
}

}  // namespace mabd::detail
