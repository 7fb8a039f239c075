// Sparse Cholesky of the dual matrix with pivot checks (see sparse_dual.h).
#include "solvers/sparse_dual.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "solvers/sparse_dual_impl.h"
#include "solvers/triplet_scatter.h"

namespace mabd::detail {

namespace {
/// Factor updates: the largest connected block of changed rows (sparse_dual.h).
constexpr int kUpdateMaxBlock = 96;
}  // namespace

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
      m.update_factor(kUpdateMaxBlock, std::max(32, n / 200))) {
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
  m.mark_factored(regularised_);
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
    m.mark_factored(false);
    factored_ = true;
    stale_ = false;
  }
  return m.solve(b, lambda) && lambda.allFinite();
}

}  // namespace mabd::detail
