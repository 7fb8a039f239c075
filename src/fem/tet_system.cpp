// Fixed-pattern assembly and CHOLMOD factorisation of the free-node system (see tet_system.h).
#include "fem/tet_system.h"

#include <algorithm>
#include <cmath>

#if __has_include(<suitesparse/cholmod.h>)
#include <suitesparse/cholmod.h>
#else
#include <cholmod.h>
#endif

namespace mabd::fem {

struct TetSystem::Impl {
  Eigen::SparseMatrix<double> A;  ///< upper triangle, compressed (CSC, sorted rows)
  cholmod_common common;
  cholmod_sparse view;            ///< CHOLMOD's view of A (stype 1: upper triangle)
  cholmod_factor* L = nullptr;    ///< symbolic analysis, then the numeric factor
  cholmod_dense* X = nullptr;     ///< solution and workspaces of cholmod_solve2
  cholmod_dense* Y = nullptr;
  cholmod_dense* E = nullptr;

  Impl() {
    cholmod_start(&common);
    common.print = 0;  // failures are reported through the return values
    common.quick_return_if_not_posdef = 1;
  }
  ~Impl() {
    if (X) cholmod_free_dense(&X, &common);
    if (Y) cholmod_free_dense(&Y, &common);
    if (E) cholmod_free_dense(&E, &common);
    if (L) cholmod_free_factor(&L, &common);
    cholmod_finish(&common);
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  void make_view() {
    view = cholmod_sparse{};
    view.nrow = view.ncol = static_cast<size_t>(A.rows());
    view.nzmax = static_cast<size_t>(A.nonZeros());
    view.p = A.outerIndexPtr();
    view.i = A.innerIndexPtr();
    view.x = A.valuePtr();
    view.stype = 1;
    view.itype = CHOLMOD_INT;
    view.xtype = CHOLMOD_REAL;
    view.dtype = CHOLMOD_DOUBLE;
    view.sorted = 1;
    view.packed = 1;
  }
};

TetSystem::TetSystem(const std::vector<Tet>& tets, const std::vector<int>& dof, int num_dofs)
    : impl_(std::make_unique<Impl>()), n_(num_dofs) {
  // Pattern: every (row <= col) pair of free coordinates of nodes sharing a tet.
  std::vector<Eigen::Triplet<double>> entries;
  entries.reserve(tets.size() * 78);
  for (const Tet& t : tets) {
    for (int a = 0; a < 4; ++a) {
      for (int b = 0; b < 4; ++b) {
        const int da = dof[t[a]], db = dof[t[b]];
        if (da < 0 || db < 0) continue;
        for (int i = 0; i < 3; ++i) {
          for (int j = 0; j < 3; ++j) {
            if (da + i <= db + j) entries.emplace_back(da + i, db + j, 0.0);
          }
        }
      }
    }
  }
  Eigen::SparseMatrix<double>& A = impl_->A;
  A.resize(n_, n_);
  A.setFromTriplets(entries.begin(), entries.end());
  A.makeCompressed();
  impl_->make_view();
  // Slot table: for each entry (r <= c) of the upper triangle of a tet's 12x12 matrix, the
  // value index of its global entry (min, max) (A is symmetric), -1 if it is pinned.
  slot_.assign(tets.size() * 78, -1);
  const int* outer = A.outerIndexPtr();
  const int* inner = A.innerIndexPtr();
  for (size_t e = 0; e < tets.size(); ++e) {
    int k = 0;
    for (int r = 0; r < 12; ++r) {
      for (int c = r; c < 12; ++c, ++k) {
        const int dr = dof[tets[e][r / 3]], dc = dof[tets[e][c / 3]];
        if (dr < 0 || dc < 0) continue;
        const int gr = std::min(dr + r % 3, dc + c % 3), gc = std::max(dr + r % 3, dc + c % 3);
        const int* p = std::lower_bound(inner + outer[gc], inner + outer[gc + 1], gr);
        slot_[e * 78 + k] = static_cast<int>(p - inner);
      }
    }
  }
}

TetSystem::~TetSystem() = default;
TetSystem::TetSystem(TetSystem&&) noexcept = default;
TetSystem& TetSystem::operator=(TetSystem&&) noexcept = default;

Eigen::Map<Eigen::VectorXd> TetSystem::values() {
  return Eigen::Map<Eigen::VectorXd>(impl_->A.valuePtr(), impl_->A.nonZeros());
}

void TetSystem::add_tet(int e, const Mat12& A) {
  double* v = impl_->A.valuePtr();
  const int* s = &slot_[static_cast<size_t>(e) * 78];
  for (int r = 0; r < 12; ++r) {
    for (int c = r; c < 12; ++c, ++s) {
      if (*s >= 0) v[*s] += A(r, c);
    }
  }
}

bool TetSystem::factorize() {
  factored_ = false;
  if (n_ == 0) return factored_ = true;
  Impl& m = *impl_;
  if (!m.L) {
    m.L = cholmod_analyze(&m.view, &m.common);  // fill-reducing ordering + symbolic
    if (!m.L) return false;
    ++analyses_;
  }
  ++factorizations_;
  factored_ = cholmod_factorize(&m.view, m.L, &m.common) && m.common.status == CHOLMOD_OK &&
              m.L->minor == m.L->n;
  return factored_;
}

Eigen::VectorXd TetSystem::solve(const Eigen::VectorXd& r) const {
  if (n_ == 0) return Eigen::VectorXd();
  if (!factored_) return Eigen::VectorXd::Constant(n_, std::nan(""));
  Impl& m = *impl_;
  cholmod_dense B{};
  B.nrow = B.nzmax = B.d = static_cast<size_t>(n_);
  B.ncol = 1;
  B.x = const_cast<double*>(r.data());  // read only
  B.xtype = CHOLMOD_REAL;
  B.dtype = CHOLMOD_DOUBLE;
  if (!m.L || !cholmod_solve2(CHOLMOD_A, m.L, &B, nullptr, &m.X, nullptr, &m.Y, &m.E, &m.common) ||
      !m.X) {
    return Eigen::VectorXd::Constant(n_, std::nan(""));
  }
  return Eigen::Map<const Eigen::VectorXd>(static_cast<const double*>(m.X->x), n_);
}

Eigen::MatrixXd TetSystem::solve_many(const Eigen::MatrixXd& r) const {
  if (n_ == 0 || r.cols() == 0) return Eigen::MatrixXd(n_, r.cols());
  if (!factored_) return Eigen::MatrixXd::Constant(n_, r.cols(), std::nan(""));
  Impl& m = *impl_;
  cholmod_dense B{};
  B.nrow = B.d = static_cast<size_t>(n_);
  B.ncol = static_cast<size_t>(r.cols());
  B.nzmax = B.nrow * B.ncol;
  B.x = const_cast<double*>(r.data());  // read only
  B.xtype = CHOLMOD_REAL;
  B.dtype = CHOLMOD_DOUBLE;
  if (!m.L || !cholmod_solve2(CHOLMOD_A, m.L, &B, nullptr, &m.X, nullptr, &m.Y, &m.E, &m.common) ||
      !m.X) {
    return Eigen::MatrixXd::Constant(n_, r.cols(), std::nan(""));
  }
  return Eigen::Map<const Eigen::MatrixXd>(static_cast<const double*>(m.X->x), n_, r.cols());
}

Eigen::VectorXd TetSystem::multiply(const Eigen::VectorXd& y) const {
  return impl_->A.selfadjointView<Eigen::Upper>() * y;
}

}  // namespace mabd::fem
