// Sparse Cholesky of the dual matrix with pivot checks (see sparse_dual.h).
#include "solvers/sparse_dual.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <Eigen/Eigenvalues>
#include <Eigen/SparseCholesky>

#include "solvers/triplet_scatter.h"

#if __has_include(<suitesparse/cholmod.h>)
#include <suitesparse/cholmod.h>
#else
#include <cholmod.h>
#endif

namespace mabd::detail {

struct SparseDualSolver::Impl {
  // Upper triangle in CSC (sorted rows, the diagonal always present: it is the last entry of
  // its column), shared by both back ends: the values live in A->x or in S.
  std::vector<int> colptr, rowind;
  double* values = nullptr;
  bool use_cholmod = false;

  // CHOLMOD back end.
  cholmod_common common;
  cholmod_sparse* A = nullptr;
  cholmod_factor* L = nullptr;  ///< analysis (and factor) for A's structure
  cholmod_factor* Lsym = nullptr;  ///< a copy of the analysis (L turns simplicial on updates)
  cholmod_dense* X = nullptr;   ///< solution and workspaces of cholmod_solve2
  cholmod_dense* Y = nullptr;
  cholmod_dense* E = nullptr;

  // Eigen back end (small systems).
  Eigen::SparseMatrix<double> S;
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>, Eigen::Upper> ldlt;

  // Cached pattern: coordinates of every triplet (to check the order) and its value slot
  // (-1 for the lower triangle).
  std::vector<std::uint64_t> coord;
  std::vector<int> slot;
  std::uint64_t pattern = 0;
  int n = -1;
  bool valid = false;
  bool analysed = false;

  Impl() {
    cholmod_start(&common);
    common.print = 0;  // status is checked here; no messages on stderr
    common.supernodal = CHOLMOD_SUPERNODAL;
    common.quick_return_if_not_posdef = 1;
  }
  ~Impl() {
    free_cholmod();
    cholmod_finish(&common);
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  void free_cholmod() {
    if (X) cholmod_free_dense(&X, &common);
    if (Y) cholmod_free_dense(&Y, &common);
    if (E) cholmod_free_dense(&E, &common);
    if (L) cholmod_free_factor(&L, &common);
    if (Lsym) cholmod_free_factor(&Lsym, &common);
    if (A) cholmod_free_sparse(&A, &common);
  }

  /// Builds the structure and the slot map from the triplets and, if the structure changed,
  /// the matrix of the chosen back end (then `analysed` is false). False on indices out of
  /// range or allocation failure.
  bool build(int size, const std::vector<Eigen::Triplet<double>>& triplets, int cholmod_min_rows);
  /// Scatters the values; false if a triplet's coordinates differ from the cache.
  bool fill(const std::vector<Eigen::Triplet<double>>& triplets);
  bool analyse();
  /// Numeric factorisation; `ok` false if it failed, `tiny` true if a pivot is at round-off
  /// level relative to its diagonal entry.
  void factorize(bool& ok, bool& tiny);
  bool solve(const Eigen::VectorXd& b, Eigen::VectorXd& x);
  /// y = A x, A held as its upper triangle.
  void multiply(const Eigen::VectorXd& x, Eigen::VectorXd& y) const;
  /// Conjugate gradients on the current values, preconditioned by the factor (of an earlier
  /// matrix). Returns the iterations (factor solves) taken to |b - A x| <= tol |b|, checked on
  /// the true residual, or -1 if max_it were not enough.
  int pcg(const Eigen::VectorXd& b, Eigen::VectorXd& x, int max_it, double tol);

  /// Updates (CHOLMOD's L) from the matrix it factors, `factored`, to the current values:
  /// the difference, split into the connected components of its rows, each eigendecomposed
  /// into update and downdate columns. False if a component exceeds max_block rows or the
  /// update fails (L is then unusable).
  bool update_factor(int max_block, int max_columns);

  std::vector<double> factored;  ///< the values the factor represents
  bool has_factor = false;      ///< L holds a numeric factor of the current structure
  bool factor_shifted = false;  ///< that factor is of a regularised (shifted) matrix
  Eigen::VectorXd r, z, d, q;   ///< conjugate-gradient scratch
};

bool SparseDualSolver::Impl::build(int size, const std::vector<Eigen::Triplet<double>>& triplets,
                                   int cholmod_min_rows) {
  const std::size_t nt = triplets.size();
  const auto un = static_cast<std::size_t>(size);
  coord.resize(nt);
  slot.assign(nt, -1);
  // The lower triangle of the triplets (row >= col), stored as the upper triangle of the
  // symmetric matrix: bucket by row, with the diagonal of every column.
  std::vector<int> start(un + 1, 0);
  for (std::size_t k = 0; k < nt; ++k) {
    const auto& t = triplets[k];
    const int r = t.row(), c = t.col();
    if (r < 0 || c < 0 || r >= size || c >= size) return false;
    coord[k] = pack_coordinate(r, c);
    if (r >= c) ++start[r + 1];
  }
  for (std::size_t j = 0; j < un; ++j) start[j + 1] += start[j] + 1;
  std::vector<std::pair<int, int>> entries(static_cast<std::size_t>(start[un]));  // (row, k)
  std::vector<int> next(start.begin(), start.end() - 1);
  for (std::size_t j = 0; j < un; ++j) entries[next[j]++] = {static_cast<int>(j), -1};
  for (std::size_t k = 0; k < nt; ++k) {
    const auto& t = triplets[k];
    if (t.row() >= t.col()) entries[next[t.row()]++] = {t.col(), static_cast<int>(k)};
  }
  // Sort each column by row, merge duplicates, assign slots.
  std::vector<int> p(un + 1, 0), rows;
  rows.reserve(entries.size());
  for (std::size_t j = 0; j < un; ++j) {
    auto first = entries.begin() + start[j], last = entries.begin() + start[j + 1];
    std::sort(first, last);
    int prev = -1;
    for (auto it = first; it != last; ++it) {
      if (it->first != prev) {
        rows.push_back(it->first);
        prev = it->first;
      }
      if (it->second >= 0) slot[static_cast<std::size_t>(it->second)] = static_cast<int>(rows.size()) - 1;
    }
    p[j + 1] = static_cast<int>(rows.size());
  }
  n = size;
  // Same structure and back end: keep the analysis.
  if (analysed && p == colptr && rows == rowind && use_cholmod == (size >= cholmod_min_rows))
    return true;

  colptr = std::move(p);
  rowind = std::move(rows);
  analysed = false;
  free_cholmod();
  S = Eigen::SparseMatrix<double>();
  use_cholmod = size >= cholmod_min_rows;
  const std::size_t nnz = rowind.size();
  if (use_cholmod) {
    A = cholmod_allocate_sparse(un, un, nnz, /*sorted=*/1, /*packed=*/1, /*stype=*/1,
                                CHOLMOD_REAL, &common);
    if (!A) return false;
    std::copy(colptr.begin(), colptr.end(), static_cast<int*>(A->p));
    std::copy(rowind.begin(), rowind.end(), static_cast<int*>(A->i));
    values = static_cast<double*>(A->x);
  } else {
    S = Eigen::Map<const Eigen::SparseMatrix<double>>(size, size, static_cast<int>(nnz),
                                                       colptr.data(), rowind.data(),
                                                       std::vector<double>(nnz, 0.0).data());
    values = S.valuePtr();
  }
  return true;
}

bool SparseDualSolver::Impl::fill(const std::vector<Eigen::Triplet<double>>& triplets) {
  std::fill(values, values + colptr[n], 0.0);
  return scatter_triplets(triplets, coord, slot, values);
}

bool SparseDualSolver::Impl::analyse() {
  if (use_cholmod) {
    if (L) cholmod_free_factor(&L, &common);
    if (Lsym) cholmod_free_factor(&Lsym, &common);
    L = cholmod_analyze(A, &common);
    analysed = L != nullptr && common.status >= CHOLMOD_OK;
    if (analysed) Lsym = cholmod_copy_factor(L, &common);
  } else {
    ldlt.analyzePattern(S);
    analysed = true;
  }
  return analysed;
}

void SparseDualSolver::Impl::factorize(bool& ok, bool& tiny) {
  // Pivots d_k (L_kk^2 or D_kk) against the diagonal entry of the same row: the ratio is the
  // part of the row independent of the rows eliminated before it, at round-off level for a
  // redundant row.
  tiny = false;
  auto check = [&](int original, double d) {
    const double a = values[colptr[original + 1] - 1];
    if (!(d > 1e-11 * a)) tiny = true;
  };
  if (!use_cholmod) {
    ldlt.factorize(S);
    ok = ldlt.info() == Eigen::Success;
    if (!ok) return;
    const auto& d = ldlt.vectorD();
    const auto& pinv = ldlt.permutationPinv().indices();
    for (int k = 0; k < n; ++k) check(pinv.size() ? pinv[k] : k, d[k]);
    return;
  }
  if (!L->is_super && Lsym) {  // an update left L simplicial: factor supernodally again
    cholmod_free_factor(&L, &common);
    L = cholmod_copy_factor(Lsym, &common);
    if (!L) {
      ok = false;
      return;
    }
  }
  ok = cholmod_factorize(A, L, &common) && common.status == CHOLMOD_OK &&
       L->minor == static_cast<std::size_t>(n);
  if (!ok) return;
  const auto* perm = static_cast<const int*>(L->Perm);
  const auto* Lx = static_cast<const double*>(L->x);
  if (L->is_super) {
    const auto* super = static_cast<const int*>(L->super);
    const auto* pi = static_cast<const int*>(L->pi);
    const auto* px = static_cast<const int*>(L->px);
    for (std::size_t s = 0; s < L->nsuper; ++s) {
      const int k1 = super[s], k2 = super[s + 1];
      const int nsrow = pi[s + 1] - pi[s];
      for (int k = k1; k < k2; ++k) {
        const double l = Lx[px[s] + (k - k1) * (nsrow + 1)];
        check(perm ? perm[k] : k, l * l);
      }
    }
  } else {
    const auto* Lp = static_cast<const int*>(L->p);
    for (int k = 0; k < n; ++k) {
      const double l = Lx[Lp[k]];
      check(perm ? perm[k] : k, L->is_ll ? l * l : l);
    }
  }
}

bool SparseDualSolver::Impl::solve(const Eigen::VectorXd& b, Eigen::VectorXd& x) {
  if (!use_cholmod) {
    x = ldlt.solve(b);
    return true;
  }
  cholmod_dense B;
  B.nrow = static_cast<std::size_t>(n);
  B.ncol = 1;
  B.nzmax = B.nrow;
  B.d = B.nrow;
  B.x = const_cast<double*>(b.data());  // read only
  B.z = nullptr;
  B.xtype = CHOLMOD_REAL;
  B.dtype = CHOLMOD_DOUBLE;
  if (!cholmod_solve2(CHOLMOD_A, L, &B, nullptr, &X, nullptr, &Y, &E, &common) || !X) return false;
  x = Eigen::Map<const Eigen::VectorXd>(static_cast<const double*>(X->x), n);
  return true;
}

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
  std::vector<int> changed;
  for (int j = 0; j < n; ++j) {
    for (int k = colptr[j]; k < colptr[j + 1]; ++k) {
      if (values[k] == factored[k]) continue;
      changed.push_back(k);
      for (int i : {rowind[k], j}) {
        if (parent[i] < 0) parent[i] = i;
      }
      const int a = find(rowind[k]), b = find(j);
      if (a != b) parent[a] = b;
    }
  }
  if (changed.empty()) return true;
  int touched = 0;
  for (int i = 0; i < n; ++i) touched += parent[i] >= 0;
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
  for (std::size_t c = 0; c < comps.size(); ++c) delta[c].setZero(comps[c].size(), comps[c].size());
  for (int k : changed) {
    // column j of k: search colptr (k is in increasing column order, so binary search)
    const int j = static_cast<int>(std::upper_bound(colptr.begin(), colptr.end(), k) - colptr.begin()) - 1;
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

SparseDualSolver::SparseDualSolver() = default;
SparseDualSolver::~SparseDualSolver() = default;
SparseDualSolver::SparseDualSolver(SparseDualSolver&&) noexcept = default;
SparseDualSolver& SparseDualSolver::operator=(SparseDualSolver&&) noexcept = default;
SparseDualSolver::SparseDualSolver(const SparseDualSolver& other)
    : cholmod_min_rows(other.cholmod_min_rows),
      reuse_iterations(other.reuse_iterations),
      reuse_tolerance(other.reuse_tolerance) {}

bool SparseDualSolver::solve(int n, const std::vector<Eigen::Triplet<double>>& triplets,
                             const Eigen::VectorXd& b, std::uint64_t pattern,
                             Eigen::VectorXd& lambda) {
  regularised_ = false;
  factored_ = false;
  if (n <= 0 || b.size() != n) {
    lambda.resize(0);
    return n == 0;
  }
  if (!impl_) impl_ = std::make_unique<Impl>();
  Impl& m = *impl_;
  reuse_last_ = 0;
  const bool same = m.valid && n == m.n && pattern == m.pattern && triplets.size() == m.coord.size();
  const bool refilled = same && m.fill(triplets);
  if (!refilled) {
    m.valid = false;
    m.has_factor = false;
    if (!m.build(n, triplets, cholmod_min_rows)) {
      m.analysed = false;
      return false;
    }
    if (!m.analysed) {
      ++analyses_;
      if (!m.analyse()) return false;
    }
    m.pattern = pattern;
    m.valid = true;
    m.fill(triplets);
  }

  if (reuse_iterations > 0 && refilled && m.use_cholmod && m.has_factor && !m.factor_shifted &&
      m.update_factor(96, std::max(32, n / 200))) {
    const int it = m.pcg(b, lambda, reuse_iterations, reuse_tolerance);
    reuse_last_ = it < 0 ? reuse_iterations : it;
    if (it >= 0 && lambda.allFinite()) {
      factored_ = true;
      stale_ = true;
      return true;
    }
  }
  m.has_factor = false;
  stale_ = false;
  bool ok = false, tiny = false;
  ++factorizations_;
  m.factorize(ok, tiny);
  if (!ok || tiny) {
    // A redundant row leaves a pivot at round-off level (or the factorisation fails): shift
    // the diagonal by a small multiple of itself and factor again. The regularised solution
    // keeps the redundant rows consistent instead of producing NaN.
    regularised_ = true;
    double* x = m.values;
    const int* p = m.colptr.data();
    std::vector<double> diag(static_cast<std::size_t>(n));
    double scale = 0;
    for (int j = 0; j < n; ++j) {
      diag[j] = x[p[j + 1] - 1];
      scale = std::max(scale, std::abs(diag[j]));
    }
    if (!(scale > 0) || !std::isfinite(scale)) return false;
    ok = false;
    double eps = 1e-9;
    for (int attempt = 0; attempt < 4 && !ok; ++attempt, eps *= 100) {
      for (int j = 0; j < n; ++j) x[p[j + 1] - 1] = diag[j] + eps * (std::abs(diag[j]) + 1e-3 * scale);
      ++factorizations_;
      m.factorize(ok, tiny);
    }
    if (!ok) return false;
  }
  m.has_factor = true;
  m.factor_shifted = regularised_;
  if (m.use_cholmod) m.factored.assign(m.values, m.values + m.colptr[n]);
  factored_ = true;
  if (!m.solve(b, lambda)) return false;
  return lambda.allFinite();
}

bool SparseDualSolver::resolve(const Eigen::VectorXd& b, Eigen::VectorXd& lambda) {
  if (!factored_ || !impl_ || b.size() != impl_->n) return false;
  Impl& m = *impl_;
  if (stale_) {
    // The factor is of an earlier matrix: iterate with it on the current one, or factor it.
    const int it = m.pcg(b, lambda, reuse_iterations, reuse_tolerance);
    reuse_last_ = it < 0 ? reuse_iterations : it;
    if (it >= 0) return lambda.allFinite();
    m.has_factor = false;
    factored_ = false;
    bool ok = false, tiny = false;
    ++factorizations_;
    m.factorize(ok, tiny);
    if (!ok || tiny) return false;  // the caller solves in full (and regularises)
    m.has_factor = true;
    m.factor_shifted = false;
    m.factored.assign(m.values, m.values + m.colptr[m.n]);
    factored_ = true;
    stale_ = false;
  }
  return m.solve(b, lambda) && lambda.allFinite();
}

}  // namespace mabd::detail
