// Factor updates of the sparse dual solver (sparse_dual.h, reuse_iterations): the change of
// the matrix since the factor, as update and downdate columns for cholmod_updown, and conjugate
// gradients preconditioned with the updated factor.
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include <Eigen/Eigenvalues>

#include "solvers/sparse_dual_impl.h"

namespace mabd::detail {

void SparseDualSolver::Impl::multiply(const Eigen::VectorXd& x, Eigen::VectorXd& y) const {
  y.setZero(n);
  for (int j = 0; j < n; ++j) {
    const int last = colptr[j + 1] - 1;  // the diagonal
    double yj = values[last] * x[j];
    const double xj = x[j];
    for (int k = colptr[j]; k < last; ++k) {
      const int i = rowind[k];
      y[i] += values[k] * xj;
      yj += values[k] * x[i];
    }
    y[j] += yj;
  }
}

bool SparseDualSolver::Impl::update_factor(int max_block, int max_columns) {
  if (!use_cholmod || !L) return false;
  const int nnz = colptr[n];
  // Rows touched by the change, joined into components (union-find with path halving).
  std::vector<int> parent(static_cast<std::size_t>(n), -1);
  auto find = [&](int i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  std::vector<std::pair<int, int>> changed;  // (entry, column)
  int touched = 0;
  for (int j = 0; j < n; ++j) {
    for (int k = colptr[j]; k < colptr[j + 1]; ++k) {
      if (values[k] == factored[k]) continue;
      changed.emplace_back(k, j);
      for (int i : {rowind[k], j}) {
        if (parent[i] < 0) {
          parent[i] = i;
          ++touched;
        }
      }
      const int a = find(rowind[k]), b = find(j);
      if (a != b) parent[a] = b;
    }
  }
  if (changed.empty()) return true;
  if (touched > 16 * max_columns) return false;
  // Rows of each component, in local order.
  std::vector<int> local(static_cast<std::size_t>(n), -1);
  std::vector<std::vector<int>> comps;
  std::vector<int> comp_index(static_cast<std::size_t>(n), -1);
  for (int i = 0; i < n; ++i) {
    if (parent[i] < 0) continue;
    const int root = find(i);
    if (comp_index[root] < 0) {
      comp_index[root] = static_cast<int>(comps.size());
      comps.emplace_back();
    }
    auto& c = comps[comp_index[root]];
    local[i] = static_cast<int>(c.size());
    c.push_back(i);
    if (static_cast<int>(c.size()) > max_block) return false;
  }
  std::vector<Eigen::MatrixXd> delta(comps.size());
  for (std::size_t c = 0; c < comps.size(); ++c) {
    delta[c].setZero(comps[c].size(), comps[c].size());
  }
  for (const auto& [k, j] : changed) {
    const int i = rowind[k];
    const double d = values[k] - factored[k];
    auto& D = delta[comp_index[find(i)]];
    D(local[i], local[j]) += d;
    if (i != j) D(local[j], local[i]) += d;
  }
  // Columns sqrt|mu| v of the eigenpairs, in the factor's (permuted) row order.
  std::vector<int> pinv(static_cast<std::size_t>(n));
  const auto* perm = static_cast<const int*>(L->Perm);
  for (int k = 0; k < n; ++k) pinv[perm ? perm[k] : k] = k;
  std::vector<std::vector<std::pair<int, double>>> cols[2];  // [0] update, [1] downdate
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig;
  for (std::size_t c = 0; c < comps.size(); ++c) {
    eig.compute(delta[c]);
    const auto& mu = eig.eigenvalues();
    double scale = 0;
    for (int i : comps[c]) scale = std::max(scale, std::abs(values[colptr[i + 1] - 1]));
    for (int e = 0; e < mu.size(); ++e) {
      if (!(std::abs(mu[e]) > 1e-15 * scale)) continue;
      std::vector<std::pair<int, double>> col;
      const double w = std::sqrt(std::abs(mu[e]));
      for (std::size_t r = 0; r < comps[c].size(); ++r)
        col.emplace_back(pinv[comps[c][r]], w * eig.eigenvectors()(static_cast<int>(r), e));
      std::sort(col.begin(), col.end());
      cols[mu[e] > 0 ? 0 : 1].push_back(std::move(col));
    }
  }
  if (static_cast<int>(cols[0].size() + cols[1].size()) > max_columns) return false;
  for (int sign = 0; sign < 2; ++sign) {
    const auto& cs = cols[sign];
    if (cs.empty()) continue;
    std::size_t total = 0;
    for (const auto& col : cs) total += col.size();
    cholmod_sparse* C = cholmod_allocate_sparse(static_cast<std::size_t>(n), cs.size(), total,
                                                /*sorted=*/1, /*packed=*/1, /*stype=*/0,
                                                CHOLMOD_REAL, &common);
    if (!C) return false;
    auto* Cp = static_cast<int*>(C->p);
    auto* Ci = static_cast<int*>(C->i);
    auto* Cx = static_cast<double*>(C->x);
    int at = 0;
    for (std::size_t c = 0; c < cs.size(); ++c) {
      Cp[c] = at;
      for (const auto& [row, v] : cs[c]) {
        Ci[at] = row;
        Cx[at++] = v;
      }
    }
    Cp[cs.size()] = at;
    const int ok = cholmod_updown(sign == 0, C, L, &common);
    cholmod_free_sparse(&C, &common);
    if (!ok || common.status != CHOLMOD_OK) return false;
  }
  std::copy(values, values + nnz, factored.begin());
  return true;
}

int SparseDualSolver::Impl::pcg(const Eigen::VectorXd& b, Eigen::VectorXd& x, int max_it,
                                double tol) {
  const double bound = tol * b.norm();
  if (!(bound > 0)) return -1;
  x.setZero(n);
  r = b;
  double rz = 0;
  for (int it = 1; it <= max_it; ++it) {
    if (!solve(r, z)) return -1;
    const double rz_new = r.dot(z);
    if (it == 1) {
      d = z;
    } else {
      d = z + (rz_new / rz) * d;
    }
    rz = rz_new;
    multiply(d, q);
    const double dq = d.dot(q);
    if (!(dq > 0)) return -1;
    const double a = rz / dq;
    x += a * d;
    r -= a * q;
    if (r.norm() <= bound) {
      multiply(x, q);  // the recurrence's residual drifts: accept on the true one
      r = b - q;
      if (r.norm() <= bound) return it;
    }
  }
  return -1;
}

}  // namespace mabd::detail
