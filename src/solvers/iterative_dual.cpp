// Block-Jacobi preconditioned conjugate gradient for the dual system (see iterative_dual.h).
#include "solvers/iterative_dual.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "solvers/triplet_scatter.h"

namespace mabd::detail {

bool IterativeDualSolver::build(int n, const std::vector<Eigen::Triplet<double>>& triplets,
                                const std::vector<int>& block_begin) {
  valid_ = false;
  ++rebuilds_;
  const auto un = static_cast<std::size_t>(n);
  // Blocks: 0 = b_0 < b_1 < ... < b_m = n.
  if (block_begin.size() < 2 || block_begin.front() != 0 || block_begin.back() != n) return false;
  for (std::size_t k = 0; k + 1 < block_begin.size(); ++k) {
    if (block_begin[k + 1] <= block_begin[k]) return false;
  }
  block_begin_ = block_begin;
  inv_start_.resize(block_begin.size());
  inv_start_[0] = 0;
  for (std::size_t k = 0; k + 1 < block_begin.size(); ++k) {
    const int s = block_begin[k + 1] - block_begin[k];
    inv_start_[k + 1] = inv_start_[k] + s * s;
  }
  inv_.assign(static_cast<std::size_t>(inv_start_.back()), 0.0);

  // CSR of the summed triplets, plus every diagonal entry.
  const std::size_t nt = triplets.size();
  coord_.resize(nt);
  slot_.assign(nt, -1);
  std::vector<int> start(un + 1, 0);
  for (std::size_t k = 0; k < nt; ++k) {
    const auto& t = triplets[k];
    const int r = t.row(), c = t.col();
    if (r < 0 || c < 0 || r >= n || c >= n) return false;
    coord_[k] = pack_coordinate(r, c);
    ++start[r + 1];
  }
  for (std::size_t i = 0; i < un; ++i) start[i + 1] += start[i] + 1;
  std::vector<std::pair<int, int>> entries(static_cast<std::size_t>(start[un]));  // (col, k)
  std::vector<int> next(start.begin(), start.end() - 1);
  for (std::size_t i = 0; i < un; ++i) entries[next[i]++] = {static_cast<int>(i), -1};
  for (std::size_t k = 0; k < nt; ++k) {
    entries[next[triplets[k].row()]++] = {triplets[k].col(), static_cast<int>(k)};
  }
  row_start_.assign(un + 1, 0);
  col_.clear();
  col_.reserve(entries.size());
  diag_begin_.resize(un);
  diag_end_.resize(un);
  std::size_t block = 0;
  for (std::size_t i = 0; i < un; ++i) {
    while (block_begin_[block + 1] <= static_cast<int>(i)) ++block;
    const int b0 = block_begin_[block], b1 = block_begin_[block + 1];
    auto first = entries.begin() + start[i], last = entries.begin() + start[i + 1];
    std::sort(first, last);
    int prev = -1;
    diag_begin_[i] = -1;
    for (auto it = first; it != last; ++it) {
      if (it->first != prev) {
        if (it->first >= b0 && diag_begin_[i] < 0) diag_begin_[i] = static_cast<int>(col_.size());
        if (it->first < b1) diag_end_[i] = static_cast<int>(col_.size()) + 1;
        col_.push_back(it->first);
        prev = it->first;
      }
      if (it->second >= 0) slot_[static_cast<std::size_t>(it->second)] = static_cast<int>(col_.size()) - 1;
    }
    row_start_[i + 1] = static_cast<int>(col_.size());
  }
  val_.assign(col_.size(), 0.0);
  n_ = n;
  valid_ = true;
  return true;
}

bool IterativeDualSolver::fill(const std::vector<Eigen::Triplet<double>>& triplets) {
  std::fill(val_.begin(), val_.end(), 0.0);
  return scatter_triplets(triplets, coord_, slot_, val_.data());
}

namespace {

/// Inverse of the symmetric positive definite s x s matrix `a` (row-major, overwritten) into
/// `inv` through a Cholesky factorisation; false if a pivot is not safely positive.
bool spd_inverse(double* a, int s, double pivot_floor, double* inv) {
  for (int j = 0; j < s; ++j) {  // a = L L^T, L in the lower triangle of a
    double d = a[j * s + j];
    for (int k = 0; k < j; ++k) d -= a[j * s + k] * a[j * s + k];
    if (!(d > pivot_floor)) return false;
    d = std::sqrt(d);
    a[j * s + j] = d;
    for (int i = j + 1; i < s; ++i) {
      double v = a[i * s + j];
      for (int k = 0; k < j; ++k) v -= a[i * s + k] * a[j * s + k];
      a[i * s + j] = v / d;
    }
  }
  for (int c = 0; c < s; ++c) {  // column c of inv: L L^T x = e_c
    double* x = inv + c * s;
    for (int i = 0; i < s; ++i) {
      double v = i == c ? 1.0 : 0.0;
      for (int k = 0; k < i; ++k) v -= a[i * s + k] * x[k];
      x[i] = v / a[i * s + i];
    }
    for (int i = s - 1; i >= 0; --i) {
      double v = x[i];
      for (int k = i + 1; k < s; ++k) v -= a[k * s + i] * x[k];
      x[i] = v / a[i * s + i];
    }
  }
  return true;
}

}  // namespace

void IterativeDualSolver::factor_blocks() {
  const std::size_t nb = block_begin_.size() - 1;
  std::vector<double> block, work;
  for (std::size_t k = 0; k < nb; ++k) {
    const int b0 = block_begin_[k], s = block_begin_[k + 1] - b0;
    double* inv = inv_.data() + inv_start_[k];  // symmetric: row- and column-major alike
    block.assign(static_cast<std::size_t>(s) * s, 0.0);
    for (int i = 0; i < s; ++i) {
      const int row = b0 + i;
      for (int e = diag_begin_[row]; e < diag_end_[row]; ++e) block[i * s + (col_[e] - b0)] = val_[e];
    }
    double scale = 0;
    for (int i = 0; i < s; ++i) scale = std::max(scale, std::abs(block[i * s + i]));
    if (!(scale > 0) || !std::isfinite(scale)) {  // zero or invalid rows: left alone
      std::fill(inv, inv + s * s, 0.0);
      continue;
    }
    // Redundant rows inside a joint: shift the block until the pivots are safe.
    bool ok = false;
    double shift = 0;
    for (int attempt = 0; attempt < 8 && !ok; ++attempt) {
      work = block;
      for (int i = 0; i < s; ++i) work[i * s + i] += shift;
      ok = spd_inverse(work.data(), s, 1e-14 * scale, inv);
      shift = shift == 0 ? 1e-12 * scale : 100 * shift;
    }
    if (!ok) {
      std::fill(inv, inv + s * s, 0.0);
      for (int i = 0; i < s; ++i) inv[i * s + i] = 1 / scale;
    }
  }
}

void IterativeDualSolver::multiply(const Eigen::VectorXd& v, Eigen::VectorXd& out) const {
  const int* rs = row_start_.data();
  const int* col = col_.data();
  const double* val = val_.data();
  const double* x = v.data();
  double* y = out.data();
  for (int i = 0; i < n_; ++i) {
    double sum = 0;
    for (int e = rs[i]; e < rs[i + 1]; ++e) sum += val[e] * x[col[e]];
    y[i] = sum;
  }
}

void IterativeDualSolver::precondition(const Eigen::VectorXd& r, Eigen::VectorXd& z) const {
  const std::size_t nb = block_begin_.size() - 1;
  const double* rr = r.data();
  double* zz = z.data();
  for (std::size_t k = 0; k < nb; ++k) {
    const int b0 = block_begin_[k], s = block_begin_[k + 1] - b0;
    const double* inv = inv_.data() + inv_start_[k];
    for (int i = 0; i < s; ++i) {
      double sum = 0;
      for (int j = 0; j < s; ++j) sum += inv[i * s + j] * rr[b0 + j];
      zz[b0 + i] = sum;
    }
  }
}

IterativeDualResult IterativeDualSolver::solve(int n,
                                               const std::vector<Eigen::Triplet<double>>& triplets,
                                               const std::vector<int>& block_begin,
                                               const Eigen::VectorXd& b, std::uint64_t pattern,
                                               Eigen::VectorXd& x) {
  IterativeDualResult result;
  if (n < 0 || b.size() != n) {
    result.iterations = -1;
    return result;
  }
  if (x.size() != n) x = Eigen::VectorXd::Zero(n);
  const double bnorm = b.norm();
  if (n == 0 || bnorm == 0) {
    x.setZero();
    result.converged = true;
    return result;
  }
  const bool same = valid_ && n == n_ && pattern == pattern_ && triplets.size() == coord_.size() &&
                    block_begin == block_begin_;
  if (!same || !fill(triplets)) {
    if (!build(n, triplets, block_begin)) {
      result.iterations = -1;
      return result;
    }
    pattern_ = pattern;
    fill(triplets);
  }
  factor_blocks();

  r_.resize(n);
  z_.resize(n);
  p_.resize(n);
  q_.resize(n);
  const double tol = settings.tolerance * bnorm;
  auto true_residual = [&] {
    multiply(x, q_);
    r_ = b - q_;
    return r_.norm();
  };
  double rnorm = true_residual();
  double rz = 0;
  auto restart = [&] {
    precondition(r_, z_);
    p_ = z_;
    rz = r_.dot(z_);
  };
  if (rnorm > tol) restart();
  int it = 0;
  while (rnorm > tol && it < settings.max_iterations) {
    multiply(p_, q_);
    const double pq = p_.dot(q_);
    if (!(pq > 0) || !std::isfinite(pq)) break;  // breakdown: A not positive on p
    const double alpha = rz / pq;
    x += alpha * p_;
    r_ -= alpha * q_;
    rnorm = r_.norm();
    ++it;
    if (rnorm <= tol) {
      // The recurrence drifts from b - A x: confirm, and restart from the true residual.
      rnorm = true_residual();
      if (rnorm > tol) restart();
      continue;
    }
    precondition(r_, z_);
    const double rz_new = r_.dot(z_);
    p_ = z_ + (rz_new / rz) * p_;
    rz = rz_new;
  }
  if (it > 0 && rnorm > tol) rnorm = true_residual();
  result.iterations = it;
  result.residual = rnorm / bnorm;
  result.converged = rnorm <= tol;
  return result;
}

}  // namespace mabd::detail
