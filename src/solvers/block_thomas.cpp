// Block Thomas elimination in flat storage (see block_thomas.h).
#include "solvers/block_thomas.h"

#include <algorithm>
#include <cmath>

#include "solvers/small_dense.h"

namespace mabd::detail {

void BlockThomas::reset(const std::vector<int>& sizes) {
  const std::size_t K = sizes.size();
  size_.assign(sizes.begin(), sizes.end());
  size_.push_back(0);
  at_.resize(K + 1);
  off_.resize(K + 1);
  std::size_t at = 0, off = 0;
  for (std::size_t k = 0; k < K; ++k) {
    at_[k] = at;
    off_[k] = off;
    const auto n = static_cast<std::size_t>(lda(k));
    at += n * n;
    off += static_cast<std::size_t>(size_[k]);
  }
  at_[K] = at;
  off_[K] = off;
  a_.assign(at, 0.0);
}

bool BlockThomas::factor() {
  const std::size_t K = blocks();
  for (std::size_t k = 0; k < K; ++k) {
    const int r = size_[k], n = lda(k);
    double* a = a_.data() + at_[k];
    if (k > 0) {  // D'_k = D_k - Y_{k-1}^T Y_{k-1}: the trailing block of block k - 1
      const int rp = size_[k - 1], np = lda(k - 1);
      const double* t = a_.data() + at_[k - 1] + rp + rp * np;
      for (int q = 0; q < r; ++q) {
        for (int p = q; p < r; ++p) a[p + q * n] += t[p + q * np];
      }
    }
    if (r == 0) continue;
    if (!small_partial_cholesky(a, n, r)) return false;
    // Reject near-singular pivots (redundant rows) as well.
    double dmin = a[0], dmax = a[0];
    for (int p = 1; p < r; ++p) {
      dmin = std::min(dmin, a[p + p * n]);
      dmax = std::max(dmax, a[p + p * n]);
    }
    if (!(dmin > 1e-7 * dmax)) return false;
  }
  return true;
}

void BlockThomas::solve(double* x) const {
  const std::size_t K = blocks();
  for (std::size_t k = 0; k < K; ++k) {  // forward
    const int r = size_[k], n = lda(k), rn = size_[k + 1];
    if (r == 0) continue;
    const double* a = a_.data() + at_[k];
    double* c = x + off_[k];
    small_lower_solve(a, n, r, c);
    double* next = x + off_[k + 1];
    for (int p = 0; p < r; ++p) {  // b_{k+1} -= Y_k^T y_k
      const double* yt = a + r + p * n;
      for (int i = 0; i < rn; ++i) next[i] -= yt[i] * c[p];
    }
  }
  for (std::size_t k = K; k-- > 0;) {  // backward
    const int r = size_[k], n = lda(k), rn = size_[k + 1];
    if (r == 0) continue;
    const double* a = a_.data() + at_[k];
    double* c = x + off_[k];
    const double* next = x + off_[k + 1];
    for (int p = 0; p < r; ++p) {  // y_k -= Y_k x_{k+1}
      const double* yt = a + r + p * n;
      double s = 0;
      for (int i = 0; i < rn; ++i) s += yt[i] * next[i];
      c[p] -= s;
    }
    small_lower_transpose_solve(a, n, r, c);
  }
}

}  // namespace mabd::detail
