// Preconditioned conjugate gradient for the dual system, block-Jacobi or line (block
// tridiagonal, paper Case IV) preconditioner (see iterative_dual.h).
#include "solvers/iterative_dual.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "solvers/small_dense.h"
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
  max_block_ = 0;
  for (std::size_t k = 0; k + 1 < block_begin.size(); ++k)
    max_block_ = std::max(max_block_, block_begin[k + 1] - block_begin[k]);
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
  direct_slot_.clear();  // composed again from the new slots
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
  if (!small_cholesky_rowmajor(a, s, 0.0, pivot_floor)) return false;  // a = L L^T
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

/// Inverse of the symmetric s x s matrix `block` (row-major) into `inv`; a matrix with
/// redundant rows is shifted by a small multiple of the identity until its pivots are safe, a
/// hopeless one gets I / scale. `scale` > 0 is the size of its diagonal; `work` holds s x s.
inline void robust_inverse(const double* block, int s, double scale, double pivot_floor,
                           double first_shift, double* work, double* inv) {
  bool ok = false;
  double shift = 0;
  for (int attempt = 0; attempt < 8 && !ok; ++attempt) {
    std::copy(block, block + s * s, work);
    for (int i = 0; i < s; ++i) work[i * s + i] += shift;
    ok = spd_inverse(work, s, pivot_floor * scale, inv);
    shift = shift == 0 ? first_shift * scale : 100 * shift;
  }
  if (!ok) {
    std::fill(inv, inv + s * s, 0.0);
    for (int i = 0; i < s; ++i) inv[i * s + i] = 1 / scale;
  }
}

/// A line of m blocks of 3 rows: first rows `row`, inverse pivots `pivot` and couplings E_p
/// `coupling` (9 values each, consecutive).
struct Line3 {
  const int* row;
  int m;
  const double* pivot;
  const double* coupling;
};

/// solve_line on K lines of 3-row blocks at once (disjoint rows): each line's operations as
/// alone, the K recurrences interleaved so that one's arithmetic fills the others' latency.
template <int K>
void solve_line3_group(const Line3 (&line)[K], double* v) {
  int longest = 0;
  for (const Line3& l : line) longest = std::max(longest, l.m);
  for (int p = 1; p < longest; ++p) {  // y_p = v_p - E_{p-1}^T y_{p-1}
    for (const Line3& l : line) {
      if (p >= l.m) continue;
      const double* e = l.coupling + 9 * (p - 1);
      const double* yp = v + l.row[p - 1];
      double* y = v + l.row[p];
      y[0] -= e[0] * yp[0] + e[3] * yp[1] + e[6] * yp[2];
      y[1] -= e[1] * yp[0] + e[4] * yp[1] + e[7] * yp[2];
      y[2] -= e[2] * yp[0] + e[5] * yp[1] + e[8] * yp[2];
    }
  }
  double next[K][3] = {};  // v_{p+1} of each line
  for (int i = 0; i < longest; ++i) {  // v_p = P_p^{-1} y_p - E_p v_{p+1}, p = m - 1 - i
    for (int k = 0; k < K; ++k) {
      const Line3& l = line[k];
      if (i >= l.m) continue;
      const int p = l.m - 1 - i;
      const double* inv = l.pivot + 9 * p;
      double* y = v + l.row[p];
      double* n = next[k];
      double t0 = inv[0] * y[0] + inv[1] * y[1] + inv[2] * y[2];
      double t1 = inv[3] * y[0] + inv[4] * y[1] + inv[5] * y[2];
      double t2 = inv[6] * y[0] + inv[7] * y[1] + inv[8] * y[2];
      if (p + 1 < l.m) {
        const double* e = l.coupling + 9 * p;
        t0 -= e[0] * n[0] + e[1] * n[1] + e[2] * n[2];
        t1 -= e[3] * n[0] + e[4] * n[1] + e[5] * n[2];
        t2 -= e[6] * n[0] + e[7] * n[1] + e[8] * n[2];
      }
      y[0] = n[0] = t0;
      y[1] = n[1] = t1;
      y[2] = n[2] = t2;
    }
  }
}

}  // namespace

double IterativeDualSolver::diagonal_block(int b0, int s, std::vector<double>& block) const {
  block.assign(static_cast<std::size_t>(s) * s, 0.0);
  for (int i = 0; i < s; ++i) {
    const int row = b0 + i;
    for (int e = diag_begin_[row]; e < diag_end_[row]; ++e) block[i * s + (col_[e] - b0)] = val_[e];
  }
  double scale = 0;
  for (int i = 0; i < s; ++i) scale = std::max(scale, std::abs(block[i * s + i]));
  return scale;
}

void IterativeDualSolver::factor_blocks() {
  const std::size_t nb = block_begin_.size() - 1;
  std::vector<double> block, work;
  for (std::size_t k = 0; k < nb; ++k) {
    const int b0 = block_begin_[k], s = block_begin_[k + 1] - b0;
    double* inv = inv_.data() + inv_start_[k];  // symmetric: row- and column-major alike
    const double scale = diagonal_block(b0, s, block);
    if (!(scale > 0) || !std::isfinite(scale)) {  // zero or invalid rows: left alone
      std::fill(inv, inv + s * s, 0.0);
      continue;
    }
    // Redundant rows inside a joint: shift the block until the pivots are safe.
    work.resize(block.size());
    robust_inverse(block.data(), s, scale, 1e-14, 1e-12, work.data(), inv);
  }
}

void IterativeDualSolver::build_lines() {
  Lines& L = lines_;
  const int nb = static_cast<int>(block_begin_.size()) - 1;
  L.partition = partition_lines(nb, block_couplings(row_start_, col_, val_, block_begin_));
  const std::vector<int>& order = L.partition.order;
  const std::size_t np = order.size();
  L.row.resize(np);
  L.size.resize(np);
  L.pivot_start.assign(np + 1, 0);
  L.coupling_start.assign(np + 1, 0);
  L.gather_start.assign(np + 1, 0);
  L.gather_slot.clear();
  L.gather_index.clear();
  for (std::size_t p = 0; p < np; ++p) {
    L.row[p] = block_begin_[order[p]];
    L.size[p] = block_begin_[order[p] + 1] - L.row[p];
  }
  std::size_t line = 0;
  for (std::size_t p = 0; p < np; ++p) {
    while (L.partition.line_begin[line + 1] <= static_cast<int>(p)) ++line;
    const int s = L.size[p];
    const bool last = static_cast<int>(p) + 1 == L.partition.line_begin[line + 1];
    L.pivot_start[p + 1] = L.pivot_start[p] + s * s;
    L.coupling_start[p + 1] = L.coupling_start[p] + (last ? 0 : s * L.size[p + 1]);
    if (!last) {  // entries of A(block p, block p + 1), columns sorted within each row
      const int c0 = L.row[p + 1], sc = L.size[p + 1];
      for (int i = 0; i < s; ++i) {
        const int r = L.row[p] + i;
        auto first = col_.begin() + row_start_[r], end = col_.begin() + row_start_[r + 1];
        for (auto it = std::lower_bound(first, end, c0); it != end && *it < c0 + sc; ++it) {
          L.gather_slot.push_back(static_cast<int>(it - col_.begin()));
          L.gather_index.push_back(i * sc + (*it - c0));
        }
      }
    }
    L.gather_start[p + 1] = static_cast<int>(L.gather_slot.size());
  }
  L.uniform3.assign(static_cast<std::size_t>(L.partition.lines()), 1);
  for (int l = 0; l < L.partition.lines(); ++l)
    for (int p = L.partition.line_begin[l]; p < L.partition.line_begin[l + 1]; ++p)
      if (L.size[p] != 3) L.uniform3[static_cast<std::size_t>(l)] = 0;
  // Where the 3-row lines' blocks lie in the block rows (the upper triangle, diagonal blocks
  // included: block (a, b) with a <= b in row a).
  const auto block_at = [&](int a, int b) {
    const auto first = bcol_.begin() + brow_start_[a], end = bcol_.begin() + brow_start_[a + 1];
    const auto it = std::lower_bound(first, end, b);
    return it != end && *it == b ? bval_start_[static_cast<std::size_t>(it - bcol_.begin())] : -1;
  };
  L.diag_at.assign(np, -1);
  L.coupling_at.assign(np, -1);
  L.coupling_t.assign(np, 0);
  for (int l = 0; l < L.partition.lines(); ++l) {
    if (!L.uniform3[static_cast<std::size_t>(l)]) continue;
    for (int p = L.partition.line_begin[l]; p < L.partition.line_begin[l + 1]; ++p) {
      const int a = order[static_cast<std::size_t>(p)];
      L.diag_at[p] = block_at(a, a);
      if (p + 1 < L.partition.line_begin[l + 1]) {
        const int b = order[static_cast<std::size_t>(p) + 1];
        L.coupling_at[p] = block_at(std::min(a, b), std::max(a, b));
        L.coupling_t[p] = a > b;
      }
    }
  }
  L.pivot.assign(static_cast<std::size_t>(L.pivot_start[np]), 0.0);
  L.coupling.assign(static_cast<std::size_t>(L.coupling_start[np]), 0.0);
  L.built = true;
}

void IterativeDualSolver::factor_line3(int l) {
  Lines& L = lines_;
  const int p0 = L.partition.line_begin[l], p1 = L.partition.line_begin[l + 1];
  const double* val = bval_.data();
  double c_prev[9] = {}, c_next[9], block[9];
  for (int p = p0; p < p1; ++p) {
    double* inv = L.pivot.data() + L.pivot_start[p];
    std::copy(val + L.diag_at[p], val + L.diag_at[p] + 9, block);
    const double scale =
        std::max({std::abs(block[0]), std::abs(block[4]), std::abs(block[8])});
    if (p > p0) {  // P_p = D_p - C_{p-1}^T E_{p-1}
      const double* e = L.coupling.data() + L.coupling_start[p - 1];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          double sum = 0;
          for (int k = 0; k < 3; ++k) sum += c_prev[k * 3 + i] * e[k * 3 + j];
          block[i * 3 + j] -= sum;
        }
    }
    if (!(scale > 0) || !std::isfinite(scale)) {  // zero or invalid rows: left alone
      std::fill(inv, inv + 9, 0.0);
    } else {
      double work[9];
      robust_inverse(block, 3, scale, 1e-14, 1e-12, work, inv);
    }
    if (p + 1 == p1) break;
    // E_p = P_p^{-1} C_p, C_p = A(block p, block p + 1) from its stored block.
    const double* m = val + L.coupling_at[p];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) c_next[i * 3 + j] = L.coupling_t[p] ? m[j * 3 + i] : m[i * 3 + j];
    double* e = L.coupling.data() + L.coupling_start[p];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        double sum = 0;
        for (int k = 0; k < 3; ++k) sum += inv[i * 3 + k] * c_next[k * 3 + j];
        e[i * 3 + j] = sum;
      }
    std::copy(c_next, c_next + 9, c_prev);
  }
}

void IterativeDualSolver::factor_lines() {
  const std::size_t lines = static_cast<std::size_t>(lines_.partition.lines());
  if (pool_ == nullptr || pool_->threads() <= 1 || n_ < kParallelRows) {
    factor_line_range(0, lines);
    return;
  }
  // Each line is factored on its own (its pivots and couplings only): ranges on the threads.
  pool_->run(lines, [&](int, std::size_t b, std::size_t e) { factor_line_range(b, e); });
}

void IterativeDualSolver::factor_line_range(std::size_t first, std::size_t last) {
  Lines& L = lines_;
  const std::vector<int>& begin = L.partition.line_begin;
  std::vector<double> block, work, c_prev, c_next;
  for (std::size_t l = first; l < last; ++l) {
    if (L.uniform3[l]) {
      factor_line3(static_cast<int>(l));
      continue;
    }
    for (int p = begin[l]; p < begin[l + 1]; ++p) {
      const int s = L.size[p], b0 = L.row[p];
      double* inv = L.pivot.data() + L.pivot_start[p];
      const double scale = diagonal_block(b0, s, block);
      if (p > begin[l]) {  // P_p = D_p - C_{p-1}^T E_{p-1}
        const int sp = L.size[p - 1];
        const double* e = L.coupling.data() + L.coupling_start[p - 1];
        for (int i = 0; i < s; ++i)
          for (int j = 0; j < s; ++j) {
            double sum = 0;
            for (int k = 0; k < sp; ++k) sum += c_prev[k * s + i] * e[k * s + j];
            block[i * s + j] -= sum;
          }
      }
      const bool last = p + 1 == begin[l + 1];
      if (!(scale > 0) || !std::isfinite(scale)) {  // zero or invalid rows: left alone
        std::fill(inv, inv + s * s, 0.0);
      } else {
        work.resize(block.size());
        robust_inverse(block.data(), s, scale, 1e-14, 1e-12, work.data(), inv);
      }
      if (last) continue;
      // E_p = P_p^{-1} C_p.
      const int sn = L.size[p + 1];
      c_next.assign(static_cast<std::size_t>(s) * sn, 0.0);
      for (int g = L.gather_start[p]; g < L.gather_start[p + 1]; ++g)
        c_next[L.gather_index[g]] = val_[L.gather_slot[g]];
      double* e = L.coupling.data() + L.coupling_start[p];
      for (int i = 0; i < s; ++i)
        for (int j = 0; j < sn; ++j) {
          double sum = 0;
          for (int k = 0; k < s; ++k) sum += inv[i * s + k] * c_next[k * sn + j];
          e[i * sn + j] = sum;
        }
      std::swap(c_prev, c_next);
    }
  }
}

void IterativeDualSolver::build_block_rows() {
  const int nb = static_cast<int>(block_begin_.size()) - 1;
  std::vector<int> block_of(static_cast<std::size_t>(n_));
  for (int k = 0; k < nb; ++k)
    for (int r = block_begin_[k]; r < block_begin_[k + 1]; ++r) block_of[r] = k;
  uniform3_ = true;
  for (int k = 0; k < nb; ++k) uniform3_ = uniform3_ && block_begin_[k + 1] - block_begin_[k] == 3;
  brow_start_.assign(static_cast<std::size_t>(nb) + 1, 0);
  bcol_.clear();
  bval_start_.assign(1, 0);
  bsr_slot_.assign(col_.size(), -1);
  std::vector<int> local(static_cast<std::size_t>(nb), -1);  // block column -> entry of this row
  for (int a = 0; a < nb; ++a) {
    const int a0 = block_begin_[a], sa = block_begin_[a + 1] - a0;
    const std::size_t first = bcol_.size();
    for (int i = a0; i < a0 + sa; ++i)
      for (int e = row_start_[i]; e < row_start_[i + 1]; ++e) {
        const int b = block_of[col_[e]];
        if (b >= a && local[b] < 0) {
          local[b] = 0;
          bcol_.push_back(b);
        }
      }
    std::sort(bcol_.begin() + static_cast<std::ptrdiff_t>(first), bcol_.end());
    for (std::size_t k = first; k < bcol_.size(); ++k) {
      const int b = bcol_[k], sb = block_begin_[b + 1] - block_begin_[b];
      local[b] = bval_start_.back();
      bval_start_.push_back(bval_start_.back() + sa * sb);
    }
    for (int i = a0; i < a0 + sa; ++i)
      for (int e = row_start_[i]; e < row_start_[i + 1]; ++e) {
        const int b = block_of[col_[e]], sb = block_begin_[b + 1] - block_begin_[b];
        if (b >= a) bsr_slot_[e] = local[b] + (i - a0) * sb + (col_[e] - block_begin_[b]);
      }
    for (std::size_t k = first; k < bcol_.size(); ++k) local[bcol_[k]] = -1;
    brow_start_[a + 1] = static_cast<int>(bcol_.size());
  }
  bval_.assign(static_cast<std::size_t>(bval_start_.back()), 0.0);
  // The transposed blocks by their row (a counting sort over the columns keeps rows in order).
  tcol_start_.assign(static_cast<std::size_t>(nb) + 1, 0);
  for (int a = 0; a < nb; ++a)
    for (int k = brow_start_[a]; k < brow_start_[a + 1]; ++k)
      if (bcol_[k] != a) ++tcol_start_[bcol_[k] + 1];
  for (int b = 0; b < nb; ++b) tcol_start_[b + 1] += tcol_start_[b];
  tsrc_.resize(static_cast<std::size_t>(tcol_start_[nb]));
  tblock_.resize(tsrc_.size());
  std::vector<int> fill(tcol_start_.begin(), tcol_start_.end() - 1);
  for (int a = 0; a < nb; ++a)
    for (int k = brow_start_[a]; k < brow_start_[a + 1]; ++k) {
      const int b = bcol_[k];
      if (b == a) continue;
      tsrc_[fill[b]] = a;
      tblock_[fill[b]++] = k;
    }
}

void IterativeDualSolver::fill_block_rows() {
  std::fill(bval_.begin(), bval_.end(), 0.0);
  for (std::size_t e = 0; e < val_.size(); ++e)
    if (bsr_slot_[e] >= 0) bval_[bsr_slot_[e]] = val_[e];
}

void IterativeDualSolver::multiply(const Eigen::VectorXd& v, Eigen::VectorXd& out) const {
  // Upper triangle by blocks: A_ab x_b into row a and, below the diagonal, A_ab^T x_a into b.
  const int nb = static_cast<int>(block_begin_.size()) - 1;
  const double* x = v.data();
  double* y = out.data();
  const double* val = bval_.data();
  if (uniform3_) {  // every block 3 x 3: the ball joints
    // Block row by block row, gathering: the transposed blocks of the rows above (in their
    // order), then the row's own blocks. Each row on its own: ranges of rows on the threads
    // give the same bits as one.
    const auto rows = [&](int, std::size_t first, std::size_t last) {
      for (auto a = static_cast<int>(first); a < static_cast<int>(last); ++a) {
        double t0 = 0, t1 = 0, t2 = 0;
        for (int t = tcol_start_[a]; t < tcol_start_[a + 1]; ++t) {
          const double* m = val + 9 * static_cast<std::ptrdiff_t>(tblock_[t]);
          const double* xs = x + 3 * tsrc_[t];
          t0 += m[0] * xs[0] + m[3] * xs[1] + m[6] * xs[2];
          t1 += m[1] * xs[0] + m[4] * xs[1] + m[7] * xs[2];
          t2 += m[2] * xs[0] + m[5] * xs[1] + m[8] * xs[2];
        }
        double y0 = 0, y1 = 0, y2 = 0;
        for (int k = brow_start_[a]; k < brow_start_[a + 1]; ++k) {
          const double* m = val + 9 * static_cast<std::ptrdiff_t>(k);
          const double* xb = x + 3 * bcol_[k];
          y0 += m[0] * xb[0] + m[1] * xb[1] + m[2] * xb[2];
          y1 += m[3] * xb[0] + m[4] * xb[1] + m[5] * xb[2];
          y2 += m[6] * xb[0] + m[7] * xb[1] + m[8] * xb[2];
        }
        y[3 * a] = t0 + y0;
        y[3 * a + 1] = t1 + y1;
        y[3 * a + 2] = t2 + y2;
      }
    };
    if (pool_ != nullptr && pool_->threads() > 1 && n_ >= kParallelRows) {
      pool_->run(static_cast<std::size_t>(nb), rows);
    } else {
      rows(0, 0, static_cast<std::size_t>(nb));
    }
    return;
  }
  std::fill(y, y + n_, 0.0);
  for (int a = 0; a < nb; ++a) {
    const int a0 = block_begin_[a], sa = block_begin_[a + 1] - a0;
    for (int k = brow_start_[a]; k < brow_start_[a + 1]; ++k) {
      const int b = bcol_[k], b0 = block_begin_[b], sb = block_begin_[b + 1] - b0;
      const double* m = val + bval_start_[k];
      for (int i = 0; i < sa; ++i) {
        double sum = 0;
        for (int j = 0; j < sb; ++j) sum += m[i * sb + j] * x[b0 + j];
        y[a0 + i] += sum;
      }
      if (b == a) continue;
      for (int j = 0; j < sb; ++j) {
        double sum = 0;
        for (int i = 0; i < sa; ++i) sum += m[i * sb + j] * x[a0 + i];
        y[b0 + j] += sum;
      }
    }
  }
}

void IterativeDualSolver::precondition(const Eigen::VectorXd& r, Eigen::VectorXd& z) {
  switch (active_) {
    case DualPreconditioner::Blocks: precondition_blocks(r, z); break;
    case DualPreconditioner::Lines: precondition_lines(r, z); break;
    case DualPreconditioner::LinesCoarse: precondition_coarse(r, z); break;
  }
}

BlockUpperView IterativeDualSolver::upper_view() const {
  return {block_begin_, brow_start_, bcol_, bval_start_, bval_};
}

bool IterativeDualSolver::prepare_coarse() {
  const int target = std::max(settings.coarse_aggregate_blocks, 1);
  const int k = std::max(settings.coarse_vectors, 1);
  if (!coarse_.built() || coarse_.target() != target || coarse_.vectors() != k ||
      coarse_.threshold() != settings.coarse_threshold)
    coarse_.build(upper_view(), lines_.partition, target, k, settings.coarse_threshold);
  coarse_mode_ = settings.coarse_mode;
  return coarse_.size() > 0 && coarse_.factor(upper_view(), coarse_mode_ != DualCoarseMode::Additive);
}

void IterativeDualSolver::precondition_coarse(const Eigen::VectorXd& r, Eigen::VectorXd& z) {
  switch (coarse_mode_) {
    case DualCoarseMode::Additive:  // z = L^{-1} r + Z E^{-1} Z^T r
      precondition_lines(r, z);
      coarse_.restrict_to(r, rc_);
      coarse_.solve(rc_);
      coarse_.prolong_add(rc_, z);
      break;
    case DualCoarseMode::Balancing:  // x_c = E^{-1} Z^T r, y = L^{-1} (r - W x_c)
      coarse_.restrict_to(r, rc_);  // z = y + Z (x_c - E^{-1} W^T y)
      coarse_.solve(rc_);
      u_ = r;
      coarse_.subtract_w(rc_, u_);
      precondition_lines(u_, z);
      yc_.setZero(coarse_.size());
      coarse_.subtract_wt(z, yc_);
      coarse_.solve(yc_);
      rc_ += yc_;
      coarse_.prolong_add(rc_, z);
      break;
    case DualCoarseMode::Deflation:  // y = L^{-1} r, z = y + Z E^{-1} (Z^T r - W^T y)
      precondition_lines(r, z);
      coarse_.restrict_to(r, rc_);
      coarse_.subtract_wt(z, rc_);
      coarse_.solve(rc_);
      coarse_.prolong_add(rc_, z);
      break;
  }
}

void IterativeDualSolver::precondition_blocks(const Eigen::VectorXd& r, Eigen::VectorXd& z) const {
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

void IterativeDualSolver::solve_line(int l, double* v) const {
  const Lines& L = lines_;
  const int p0 = L.partition.line_begin[l], p1 = L.partition.line_begin[l + 1];
  if (L.uniform3[static_cast<std::size_t>(l)]) {
    solve_line3_group<1>({Line3{L.row.data() + p0, p1 - p0, L.pivot.data() + L.pivot_start[p0],
                                L.coupling.data() + L.coupling_start[p0]}},
                         v);
    return;
  }
  // Forward: y_p = v_p - E_{p-1}^T y_{p-1}.
  for (int p = p0 + 1; p < p1; ++p) {
    const int s = L.size[p], sp = L.size[p - 1];
    double* y = v + L.row[p];
    const double* yp = v + L.row[p - 1];
    const double* e = L.coupling.data() + L.coupling_start[p - 1];
    for (int i = 0; i < s; ++i) {
      double sum = y[i];
      for (int k = 0; k < sp; ++k) sum -= e[k * s + i] * yp[k];
      y[i] = sum;
    }
  }
  // Backward: v_p = P_p^{-1} y_p - E_p v_{p+1}.
  double t[kMaxLineBlock];
  for (int p = p1 - 1; p >= p0; --p) {
    const int s = L.size[p];
    double* vp = v + L.row[p];
    const double* inv = L.pivot.data() + L.pivot_start[p];
    for (int i = 0; i < s; ++i) {
      double sum = 0;
      for (int k = 0; k < s; ++k) sum += inv[i * s + k] * vp[k];
      t[i] = sum;
    }
    if (p + 1 < p1) {
      const int sn = L.size[p + 1];
      const double* vn = v + L.row[p + 1];
      const double* e = L.coupling.data() + L.coupling_start[p];
      for (int i = 0; i < s; ++i)
        for (int k = 0; k < sn; ++k) t[i] -= e[i * sn + k] * vn[k];
    }
    for (int i = 0; i < s; ++i) vp[i] = t[i];
  }
}

void IterativeDualSolver::solve_lines(int first, int last, double* v) const {
  const Lines& L = lines_;
  const auto line3 = [&](int l) {
    const int p0 = L.partition.line_begin[l], p1 = L.partition.line_begin[l + 1];
    return Line3{L.row.data() + p0, p1 - p0, L.pivot.data() + L.pivot_start[p0],
                 L.coupling.data() + L.coupling_start[p0]};
  };
  // Two at a time (four measured slower on net_100 than two).
  for (int l = first; l < last;) {
    if (l + 1 < last && L.uniform3[static_cast<std::size_t>(l)] &&
        L.uniform3[static_cast<std::size_t>(l) + 1]) {
      solve_line3_group<2>({line3(l), line3(l + 1)}, v);
      l += 2;
    } else {
      solve_line(l++, v);
    }
  }
}

void IterativeDualSolver::precondition_lines(const Eigen::VectorXd& r, Eigen::VectorXd& z) const {
  z = r;
  const int lines = lines_.partition.lines();
  if (pool_ == nullptr || pool_->threads() <= 1 || n_ < kParallelRows) {
    solve_lines(0, lines, z.data());
    return;
  }
  // The lines are independent (block Jacobi over lines): ranges of them on the threads.
  pool_->run(static_cast<std::size_t>(lines), [&](int, std::size_t b, std::size_t e) {
    solve_lines(static_cast<int>(b), static_cast<int>(e), z.data());
  });
}

IterativeDualResult IterativeDualSolver::solve(int n,
                                               const std::vector<Eigen::Triplet<double>>& triplets,
                                               const std::vector<int>& block_begin,
                                               const Eigen::VectorXd& b, std::uint64_t pattern,
                                               Eigen::VectorXd& x) {
  IterativeDualResult result;
  prepared_ = false;
  if (n < 0 || b.size() != n) {
    result.iterations = -1;
    return result;
  }
  if (x.size() != n) x = Eigen::VectorXd::Zero(n);
  if (n == 0 || b.norm() == 0) {
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
    build_block_rows();
    lines_.built = false;
    coarse_.clear();
  }
  fill_block_rows();
  return prepare_and_iterate(b, x);
}

std::optional<IterativeDualSolver::DirectFill> IterativeDualSolver::direct_fill(
    int n, const std::vector<int>& block_begin, std::uint64_t pattern) {
  if (!valid_ || chosen_preconditioner() == DualPreconditioner::Blocks || !lines_.built ||
      n != n_ || pattern != pattern_ || block_begin != block_begin_ ||
      std::find(lines_.uniform3.begin(), lines_.uniform3.end(), 0) != lines_.uniform3.end())
    return std::nullopt;
  if (direct_slot_.size() != slot_.size()) {
    direct_slot_.resize(slot_.size());
    for (std::size_t k = 0; k < slot_.size(); ++k)
      direct_slot_[k] = slot_[k] >= 0 ? bsr_slot_[static_cast<std::size_t>(slot_[k])] : -1;
  }
  prepared_ = false;
  std::fill(bval_.begin(), bval_.end(), 0.0);
  return DirectFill{&coord_, &direct_slot_, bval_.data()};
}

std::optional<IterativeDualResult> IterativeDualSolver::zero_rhs(const Eigen::VectorXd& b,
                                                                 Eigen::VectorXd& x) const {
  if (x.size() != n_) x = Eigen::VectorXd::Zero(n_);
  if (b.norm() != 0) return std::nullopt;
  x.setZero();
  IterativeDualResult result;
  result.converged = true;
  return result;
}

IterativeDualResult IterativeDualSolver::solve_filled(const Eigen::VectorXd& b,
                                                      Eigen::VectorXd& x) {
  if (auto done = zero_rhs(b, x)) return *done;
  return prepare_and_iterate(b, x);
}

IterativeDualResult IterativeDualSolver::prepare_and_iterate(const Eigen::VectorXd& b,
                                                             Eigen::VectorXd& x) {
  active_ = chosen_preconditioner();
  if (active_ == DualPreconditioner::Blocks) {
    factor_blocks();
  } else {
    if (!lines_.built) build_lines();
    factor_lines();
  }
  if (active_ == DualPreconditioner::LinesCoarse && !prepare_coarse())
    active_ = DualPreconditioner::Lines;
  prepared_ = true;
  return iterate(b, x);
}

IterativeDualResult IterativeDualSolver::resolve(const Eigen::VectorXd& b, Eigen::VectorXd& x) {
  if (!prepared_ || b.size() != n_) {
    IterativeDualResult result;
    result.iterations = -1;
    return result;
  }
  if (auto done = zero_rhs(b, x)) return *done;
  return iterate(b, x);
}

IterativeDualResult IterativeDualSolver::iterate(const Eigen::VectorXd& b, Eigen::VectorXd& x) {
  IterativeDualResult result;
  const int n = n_;
  const double bnorm = b.norm();
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
  if (active_ == DualPreconditioner::LinesCoarse && coarse_mode_ != DualCoarseMode::Additive &&
      rnorm > tol) {  // x += Q r: Z^T (b - A x) = 0, the start of the deflated iteration
    coarse_.restrict_to(r_, rc_);
    coarse_.solve(rc_);
    coarse_.prolong_add(rc_, x);
    rnorm = true_residual();
  }
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
