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
    Eigen::SparseMatrix<double> D(n, n);
    D.setFromTriplets(triplets.begin(), triplets.end());
    out = 0.5 * (D + Eigen::SparseMatrix<double>(D.transpose()));
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

}  // namespace mabd::detail
