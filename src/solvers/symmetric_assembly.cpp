// The symmetric part of a matrix given as triplets (symmetric_assembly.h).
#include "solvers/symmetric_assembly.h"

#include <algorithm>
#include <cassert>

namespace mabd::detail {

void SymmetricAssembly::assemble(int n, const std::vector<Eigen::Triplet<double>>& triplets,
                                 Eigen::SparseMatrix<double>& out) {
  const auto un = static_cast<std::size_t>(n);
  dense_ = n <= kDenseRows && 4 * triplets.size() >= un * un;
  if (!dense_) {
    sparse(n, triplets, out);
    return;
  }
  // D and D^T entry by entry, each duplicate added in the triplets' order (as
  // setFromTriplets sums them: the first value, then each next one added).
  const std::size_t entries = un * un;
  d_.resize(entries);
  t_.resize(entries);
  has_d_.assign(entries, 0);
  has_t_.assign(entries, 0);
  for (const auto& e : triplets) {
    assert(e.row() >= 0 && e.row() < n && e.col() >= 0 && e.col() < n);
    const std::size_t at = static_cast<std::size_t>(e.row()) + un * e.col();
    const std::size_t at_t = static_cast<std::size_t>(e.col()) + un * e.row();
    if (has_d_[at]) {
      d_[at] += e.value();
    } else {
      d_[at] = e.value();
      has_d_[at] = 1;
    }
    if (has_t_[at_t]) {
      t_[at_t] += e.value();
    } else {
      t_[at_t] = e.value();
      has_t_[at_t] = 1;
    }
  }
  // The pattern is the union of D's and D^T's; an entry of one alone adds a zero (as
  // Eigen's sparse sum does).
  count_.assign(un + 1, 0);
  for (std::size_t j = 0; j < un; ++j) {
    const char* hd = has_d_.data() + un * j;
    const char* ht = has_t_.data() + un * j;
    int c = 0;
    for (std::size_t i = 0; i < un; ++i) c += (hd[i] | ht[i]) != 0;
    count_[j + 1] = count_[j] + c;
  }
  out.resize(n, n);
  out.resizeNonZeros(count_[un]);
  int* outer = out.outerIndexPtr();
  int* inner = out.innerIndexPtr();
  double* value = out.valuePtr();
  std::copy(count_.begin(), count_.end(), outer);
  for (std::size_t j = 0; j < un; ++j) {
    const std::size_t col = un * j;
    int at = count_[j];
    for (std::size_t i = 0; i < un; ++i) {
      const bool hd = has_d_[col + i] != 0, ht = has_t_[col + i] != 0;
      if (!hd && !ht) continue;
      const double a = hd ? d_[col + i] : 0.0;
      const double b = ht ? t_[col + i] : 0.0;
      inner[at] = static_cast<int>(i);
      value[at] = 0.5 * (a + b);
      ++at;
    }
  }
}

void SymmetricAssembly::sparse(int n, const std::vector<Eigen::Triplet<double>>& triplets,
                               Eigen::SparseMatrix<double>& out) {
  const auto un = static_cast<std::size_t>(n);
  const std::size_t m = triplets.size();
  // The triplets by column, each column's in their order (a stable counting sort).
  d_start_.assign(un + 1, 0);
  for (const auto& e : triplets) {
    assert(e.row() >= 0 && e.row() < n && e.col() >= 0 && e.col() < n);
    ++d_start_[e.col() + 1];
  }
  for (std::size_t j = 0; j < un; ++j) d_start_[j + 1] += d_start_[j];
  by_col_.resize(m);
  count_.assign(d_start_.begin(), d_start_.end() - 1);  // next free place per column
  for (std::size_t k = 0; k < m; ++k) by_col_[count_[triplets[k].col()]++] = static_cast<int>(k);
  // D: each column's duplicates summed in the triplets' order (the first value, then each next
  // one added, as setFromTriplets does), rows ascending.
  slot_.resize(un);
  slot_col_.assign(un, -1);
  d_row_.resize(m);
  d_val_.resize(m);
  int nnz = 0;
  for (std::size_t j = 0; j < un; ++j) {
    column_.clear();
    for (int p = d_start_[j]; p < d_start_[j + 1]; ++p) {
      const auto& e = triplets[by_col_[p]];
      const int i = e.row();
      if (slot_col_[i] == static_cast<int>(j)) {
        column_[slot_[i]].second += e.value();
      } else {
        slot_col_[i] = static_cast<int>(j);
        slot_[i] = static_cast<int>(column_.size());
        column_.emplace_back(i, e.value());
      }
    }
    std::sort(column_.begin(), column_.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
    d_start_[j] = nnz;
    for (const auto& [i, v] : column_) {
      d_row_[nnz] = i;
      d_val_[nnz] = v;
      ++nnz;
    }
  }
  d_start_[un] = nnz;
  // D^T by a transposing pass over D's columns in order (its rows come out ascending).
  t_start_.assign(un + 1, 0);
  for (int k = 0; k < nnz; ++k) ++t_start_[d_row_[k] + 1];
  for (std::size_t j = 0; j < un; ++j) t_start_[j + 1] += t_start_[j];
  t_row_.resize(nnz);
  t_val_.resize(nnz);
  count_.assign(t_start_.begin(), t_start_.end() - 1);
  for (std::size_t j = 0; j < un; ++j) {
    for (int k = d_start_[j]; k < d_start_[j + 1]; ++k) {
      const int at = count_[d_row_[k]]++;
      t_row_[at] = static_cast<int>(j);
      t_val_[at] = d_val_[k];
    }
  }
  // Their union, halved: 0.5 (a + b), a side without the entry adding a zero (as Eigen's
  // sparse sum does).
  std::size_t total = 0;
  for (std::size_t j = 0; j < un; ++j) {
    int p = d_start_[j], q = t_start_[j];
    const int pe = d_start_[j + 1], qe = t_start_[j + 1];
    while (p < pe || q < qe) {
      if (q == qe || (p < pe && d_row_[p] < t_row_[q])) {
        ++p;
      } else if (p == pe || t_row_[q] < d_row_[p]) {
        ++q;
      } else {
        ++p;
        ++q;
      }
      ++total;
    }
  }
  out.resize(n, n);
  out.resizeNonZeros(static_cast<Eigen::Index>(total));
  int* outer = out.outerIndexPtr();
  int* inner = out.innerIndexPtr();
  double* value = out.valuePtr();
  int at = 0;
  for (std::size_t j = 0; j < un; ++j) {
    outer[j] = at;
    int p = d_start_[j], q = t_start_[j];
    const int pe = d_start_[j + 1], qe = t_start_[j + 1];
    while (p < pe || q < qe) {
      double a = 0.0, b = 0.0;
      int i;
      if (q == qe || (p < pe && d_row_[p] < t_row_[q])) {
        i = d_row_[p];
        a = d_val_[p++];
      } else if (p == pe || t_row_[q] < d_row_[p]) {
        i = t_row_[q];
        b = t_val_[q++];
      } else {
        i = d_row_[p];
        a = d_val_[p++];
        b = t_val_[q++];
      }
      inner[at] = i;
      value[at] = 0.5 * (a + b);
      ++at;
    }
  }
  outer[un] = at;
}

}  // namespace mabd::detail
