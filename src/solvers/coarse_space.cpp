// Aggregates, local eigenvector basis and Galerkin coarse matrix of the two-level dual
// preconditioner (see coarse_space.h).
#include "solvers/coarse_space.h"

#include <algorithm>
#include <cmath>
#include <deque>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/SVD>

namespace mabd::detail {

namespace {

/// Undirected block graph of A (adjacency lists in CSR, no self loops).
void block_graph(const BlockUpperView& A, std::vector<int>& start, std::vector<int>& adj) {
  const int nb = A.blocks();
  start.assign(static_cast<std::size_t>(nb) + 1, 0);
  for (int a = 0; a < nb; ++a)
    for (int k = A.brow_start[a]; k < A.brow_start[a + 1]; ++k)
      if (A.bcol[k] != a) {
        ++start[a + 1];
        ++start[A.bcol[k] + 1];
      }
  for (int a = 0; a < nb; ++a) start[a + 1] += start[a];
  adj.resize(static_cast<std::size_t>(start[nb]));
  std::vector<int> next(start.begin(), start.end() - 1);
  for (int a = 0; a < nb; ++a)
    for (int k = A.brow_start[a]; k < A.brow_start[a + 1]; ++k)
      if (const int b = A.bcol[k]; b != a) {
        adj[next[a]++] = b;
        adj[next[b]++] = a;
      }
}

int block_size(const BlockUpperView& A, int a) { return A.block_begin[a + 1] - A.block_begin[a]; }

}  // namespace

Aggregates aggregate_blocks(const BlockUpperView& A, int target) {
  const int nb = A.blocks();
  target = std::max(target, 1);
  std::vector<int> start, adj;
  block_graph(A, start, adj);
  std::vector<int> of(static_cast<std::size_t>(nb), -1), count;
  // Breadth-first growth from the lowest unaggregated block.
  std::deque<int> queue;
  for (int seed = 0; seed < nb; ++seed) {
    if (of[seed] >= 0) continue;
    const int id = static_cast<int>(count.size());
    int size = 0;
    queue.assign(1, seed);
    of[seed] = id;
    while (!queue.empty() && size < target) {
      const int a = queue.front();
      queue.pop_front();
      ++size;
      for (int e = start[a]; e < start[a + 1] && size + static_cast<int>(queue.size()) < target; ++e)
        if (of[adj[e]] < 0) {
          of[adj[e]] = id;
          queue.push_back(adj[e]);
        }
    }
    size += static_cast<int>(queue.size());
    count.push_back(size);
  }
  // Remainders of fewer than target / 2 blocks join their smallest adjacent aggregate.
  std::vector<int> merged(count.size());
  for (std::size_t i = 0; i < count.size(); ++i) merged[i] = static_cast<int>(i);
  std::vector<std::vector<int>> members(count.size());
  for (int a = 0; a < nb; ++a) members[of[a]].push_back(a);
  for (std::size_t i = 0; i < count.size(); ++i) {
    if (2 * count[i] >= target) continue;
    int best = -1;
    for (const int a : members[i])
      for (int e = start[a]; e < start[a + 1]; ++e) {
        const int j = merged[of[adj[e]]];
        if (j != static_cast<int>(i) && (best < 0 || count[j] < count[best])) best = j;
      }
    if (best < 0) continue;
    count[best] += count[i];
    count[i] = 0;
    for (std::size_t k = 0; k < merged.size(); ++k)
      if (merged[k] == static_cast<int>(i)) merged[k] = best;
  }
  // Compact numbering, blocks grouped by aggregate.
  std::vector<int> number(count.size(), -1);
  Aggregates out;
  out.of.resize(static_cast<std::size_t>(nb));
  int m = 0;
  for (int a = 0; a < nb; ++a) {
    int& id = number[merged[of[a]]];
    if (id < 0) id = m++;
    out.of[a] = id;
  }
  out.begin.assign(static_cast<std::size_t>(m) + 1, 0);
  for (int a = 0; a < nb; ++a) ++out.begin[out.of[a] + 1];
  for (int i = 0; i < m; ++i) out.begin[i + 1] += out.begin[i];
  out.blocks.resize(static_cast<std::size_t>(nb));
  std::vector<int> next(out.begin.begin(), out.begin.end() - 1);
  for (int a = 0; a < nb; ++a) out.blocks[next[out.of[a]]++] = a;
  return out;
}

void CoarseSpace::build(const BlockUpperView& A, const LinePartition& lines, int target,
                        int vectors, double threshold) {
  built_ = false;
  ++builds_;
  target_ = target;
  vectors_ = std::max(vectors, 1);
  threshold_ = threshold;
  row_ = A.block_begin;
  agg_ = aggregate_blocks(A, target);
  build_basis(A, lines);
  build_coarse_pattern(A);
  w_pattern_ = false;
  built_ = true;
}

namespace {

/// Line structure of a partition: block -> line and position (-1: none).
struct LineIndex {
  std::vector<int> line, position;
  LineIndex(const LinePartition& lines, int nb)
      : line(static_cast<std::size_t>(nb), -1), position(static_cast<std::size_t>(nb), -1) {
    if (static_cast<int>(lines.order.size()) != nb) return;
    for (int l = 0; l < lines.lines(); ++l)
      for (int p = lines.line_begin[l]; p < lines.line_begin[l + 1]; ++p) {
        line[lines.order[p]] = l;
        position[lines.order[p]] = p;
      }
  }
  /// Blocks a, b coupled in the line matrix M: a == b or consecutive in one line.
  bool coupled(int a, int b) const {
    return a == b || (line[a] >= 0 && line[a] == line[b] && std::abs(position[a] - position[b]) == 1);
  }
};

/// Eigenpairs of A_PP v = mu M_PP v on the blocks `patch` (local rows in the order of the
/// list, `local`: block -> first local row, set for the patch), ascending; v M-orthonormal.
/// False if M_PP could not be factored.
bool local_modes(const BlockUpperView& A, const LineIndex& lines, const std::vector<int>& patch,
                 const std::vector<int>& local, const std::vector<char>& in_patch, int m,
                 Eigen::VectorXd& mu, Eigen::MatrixXd& V) {
  Eigen::MatrixXd C = Eigen::MatrixXd::Zero(m, m), M = Eigen::MatrixXd::Zero(m, m);
  for (const int a : patch) {
    const int sa = block_size(A, a);
    for (int k = A.brow_start[a]; k < A.brow_start[a + 1]; ++k) {
      const int b = A.bcol[k], sb = block_size(A, b);
      if (!in_patch[b]) continue;
      const double* val = A.val.data() + A.val_start[k];
      const bool line_pair = lines.coupled(a, b);
      for (int i = 0; i < sa; ++i)
        for (int j = 0; j < sb; ++j) {
          C(local[a] + i, local[b] + j) = C(local[b] + j, local[a] + i) = val[i * sb + j];
          if (line_pair) M(local[a] + i, local[b] + j) = M(local[b] + j, local[a] + i) = val[i * sb + j];
        }
    }
  }
  // L^{-1} A_PP L^{-T} u = mu u with M_PP = L L^T (slightly shifted for redundant rows).
  double dmax = 0;
  for (int i = 0; i < m; ++i) dmax = std::max(dmax, std::abs(M(i, i)));
  if (!(dmax > 0) || !std::isfinite(dmax)) return false;
  M.diagonal().array() += 1e-10 * dmax;
  const Eigen::LLT<Eigen::MatrixXd> llt(M);
  if (llt.info() != Eigen::Success) return false;
  Eigen::MatrixXd X = llt.matrixL().solve(C);
  X = llt.matrixL().solve(X.transpose()).eval();
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(X);
  mu = eig.eigenvalues();
  V = llt.matrixU().solve(eig.eigenvectors());
  return true;
}

/// Columns of the local modes with floor < mu < threshold, at most `count`; the floor drops
/// (near) null vectors of A_PP (redundant rows: null in A too, they would make E singular).
std::vector<int> low_modes(const Eigen::VectorXd& mu, double threshold, int count) {
  std::vector<int> cols;
  const double floor = 1e-10 * std::max(mu.cwiseAbs().maxCoeff(), 1e-300);
  for (int j = 0; j < mu.size() && static_cast<int>(cols.size()) < count && mu[j] < threshold; ++j)
    if (mu[j] > floor) cols.push_back(j);
  return cols;
}

}  // namespace

void CoarseSpace::build_basis(const BlockUpperView& A, const LinePartition& partition) {
  const int nb = A.blocks(), na = agg_.count();
  const LineIndex lines(partition, nb);
  std::vector<int> start, adj;
  block_graph(A, start, adj);
  std::vector<int> local(static_cast<std::size_t>(nb), 0);  // block -> first local row
  std::vector<char> in_patch(static_cast<std::size_t>(nb), 0);
  cstart_.assign(static_cast<std::size_t>(na) + 1, 0);
  zstart_.assign(static_cast<std::size_t>(nb) + 1, 0);
  z_.clear();
  std::vector<std::vector<double>> basis(static_cast<std::size_t>(na));  // per aggregate m x k
  std::vector<int> kept(static_cast<std::size_t>(na), 0);
  Eigen::VectorXd mu;
  Eigen::MatrixXd V;
  std::vector<int> patch;
  for (int I = 0; I < na; ++I) {
    // 1. The aggregate alone: does it hold low modes at all?
    patch.assign(agg_.blocks.begin() + agg_.begin[I], agg_.blocks.begin() + agg_.begin[I + 1]);
    int m = 0;
    for (const int a : patch) {
      local[a] = m;
      m += block_size(A, a);
      in_patch[a] = 1;
    }
    const int m_own = m;
    bool ok = local_modes(A, lines, patch, local, in_patch, m, mu, V);
    if (ok && !low_modes(mu, threshold_, vectors_).empty()) {
      // 2. The patch of the aggregate and its neighbouring blocks, so that low modes cut by
      // the aggregate's border are seen whole; their restriction to the aggregate is kept (a
      // partition of unity: the neighbours keep their parts).
      for (std::size_t p = 0, own = patch.size(); p < own; ++p)
        for (int e = start[patch[p]]; e < start[patch[p] + 1]; ++e)
          if (!in_patch[adj[e]]) {
            in_patch[adj[e]] = 1;
            local[adj[e]] = m;
            m += block_size(A, adj[e]);
            patch.push_back(adj[e]);
          }
      ok = local_modes(A, lines, patch, local, in_patch, m, mu, V);
    }
    for (const int a : patch) in_patch[a] = 0;
    const std::vector<int> cols = ok ? low_modes(mu, threshold_, vectors_) : std::vector<int>{};
    // Orthonormal basis of the modes' restrictions to the aggregate (rows 0 .. m_own - 1),
    // without restrictions that are (nearly) dependent or mostly outside.
    Eigen::MatrixXd R(m_own, static_cast<Eigen::Index>(cols.size()));
    for (std::size_t j = 0; j < cols.size(); ++j) {
      R.col(static_cast<Eigen::Index>(j)) = V.col(cols[j]).head(m_own) / V.col(cols[j]).norm();
    }
    int k = 0;
    Eigen::MatrixXd U;
    if (R.cols() > 0) {
      const Eigen::JacobiSVD<Eigen::MatrixXd> svd(R, Eigen::ComputeThinU);
      const Eigen::VectorXd& sv = svd.singularValues();
      while (k < sv.size() && sv[k] > 0.1) ++k;
      U = svd.matrixU().leftCols(k);
    }
    kept[I] = k;
    cstart_[I + 1] = cstart_[I] + k;
    std::vector<double>& Z = basis[I];
    Z.resize(static_cast<std::size_t>(m_own) * k);
    for (int i = 0; i < m_own; ++i)
      for (int j = 0; j < k; ++j) Z[i * k + j] = U(i, j);
  }
  // Local row of every block inside its aggregate.
  for (int I = 0; I < na; ++I) {
    int m = 0;
    for (int p = agg_.begin[I]; p < agg_.begin[I + 1]; ++p) {
      local[agg_.blocks[p]] = m;
      m += block_size(A, agg_.blocks[p]);
    }
  }
  // Per block: its rows of Z (s_a x k_I, row-major).
  for (int a = 0; a < nb; ++a) zstart_[a + 1] = zstart_[a] + block_size(A, a) * kept[agg_.of[a]];
  z_.resize(static_cast<std::size_t>(zstart_[nb]));
  for (int a = 0; a < nb; ++a) {
    const int I = agg_.of[a], k = kept[I], s = block_size(A, a);
    std::copy_n(basis[I].data() + static_cast<std::ptrdiff_t>(local[a]) * k, s * k, z_.data() + zstart_[a]);
  }
  coarse_n_ = cstart_[na];
  active_.clear();
  for (int a = 0; a < nb; ++a)
    if (kept[agg_.of[a]] > 0) active_.push_back(a);
}

void CoarseSpace::build_coarse_pattern(const BlockUpperView& A) {
  const int nb = A.blocks(), na = agg_.count();
  // Aggregate pairs (I <= J) coupled by a stored block.
  std::vector<std::vector<int>> partners(static_cast<std::size_t>(na));
  for (int a = 0; a < nb; ++a)
    for (int k = A.brow_start[a]; k < A.brow_start[a + 1]; ++k) {
      const int I = agg_.of[a], J = agg_.of[A.bcol[k]];
      partners[std::min(I, J)].push_back(std::max(I, J));
    }
  std::vector<int> first(static_cast<std::size_t>(na) + 1, 0);
  for (int I = 0; I < na; ++I) {
    auto& p = partners[I];
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
    first[I + 1] = first[I] + static_cast<int>(p.size());
  }
  auto size_of = [&](int I) { return cstart_[I + 1] - cstart_[I]; };
  pair_start_.assign(static_cast<std::size_t>(first[na]) + 1, 0);
  std::vector<Eigen::Triplet<double>> trip;
  for (int I = 0; I < na; ++I)
    for (std::size_t q = 0; q < partners[I].size(); ++q) {
      const int p = first[I] + static_cast<int>(q), J = partners[I][q];
      const int kI = size_of(I), kJ = size_of(J);
      pair_start_[p + 1] = pair_start_[p] + kI * kJ;
      for (int i = 0; i < kI; ++i)
        for (int j = 0; j < kJ; ++j) {
          const int row = cstart_[J] + j, col = cstart_[I] + i;  // lower triangle: E_JI
          if (row >= col) trip.emplace_back(row, col, pair_start_[p] + i * kJ + j);
        }
    }
  pair_val_.assign(static_cast<std::size_t>(pair_start_.back()), 0.0);
  entry_pair_.assign(A.bcol.size(), -1);
  entry_transposed_.assign(A.bcol.size(), 0);
  for (int a = 0; a < nb; ++a)
    for (int k = A.brow_start[a]; k < A.brow_start[a + 1]; ++k) {
      const int I = agg_.of[a], J = agg_.of[A.bcol[k]];
      const int lo = std::min(I, J), hi = std::max(I, J);
      const auto it = std::lower_bound(partners[lo].begin(), partners[lo].end(), hi);
      entry_pair_[k] = first[lo] + static_cast<int>(it - partners[lo].begin());
      entry_transposed_[k] = I > J;
    }
  // E's lower triangle with the pair value index as value: its value slots.
  E_.resize(coarse_n_, coarse_n_);
  E_.setFromTriplets(trip.begin(), trip.end());
  E_.makeCompressed();
  value_slot_.assign(pair_val_.size(), -1);
  for (Eigen::Index t = 0; t < E_.nonZeros(); ++t)
    value_slot_[static_cast<std::size_t>(E_.valuePtr()[t])] = static_cast<int>(t);
  analysed_ = false;
}

void CoarseSpace::build_w_pattern(const BlockUpperView& A) {
  const int nb = A.blocks();
  // Aggregates with basis vectors seen by every block.
  std::vector<std::vector<int>> near(static_cast<std::size_t>(nb));
  auto vectors_of = [&](int I) { return cstart_[I + 1] - cstart_[I]; };
  for (int a = 0; a < nb; ++a)
    for (int k = A.brow_start[a]; k < A.brow_start[a + 1]; ++k) {
      const int b = A.bcol[k];
      if (vectors_of(agg_.of[b]) > 0) near[a].push_back(agg_.of[b]);
      if (vectors_of(agg_.of[a]) > 0) near[b].push_back(agg_.of[a]);
    }
  w_rows_.clear();
  w_begin_.assign(static_cast<std::size_t>(nb) + 1, 0);
  w_agg_.clear();
  w_start_.assign(1, 0);
  for (int a = 0; a < nb; ++a) {
    auto& v = near[a];
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    if (!v.empty()) w_rows_.push_back(a);
    for (const int J : v) {
      w_agg_.push_back(J);
      w_start_.push_back(w_start_.back() + block_size(A, a) * (cstart_[J + 1] - cstart_[J]));
    }
    w_begin_[a + 1] = static_cast<int>(w_agg_.size());
  }
  w_.assign(static_cast<std::size_t>(w_start_.back()), 0.0);
  w_pattern_ = true;
}

namespace {

/// out (sa x k, row-major) += M (sa x sb) Z (sb x k); transposed: M^T (sb x sa rows of out).
void add_product(const double* M, int sa, int sb, const double* Z, int k, bool transposed, double* out) {
  if (!transposed) {
    for (int i = 0; i < sa; ++i)
      for (int l = 0; l < sb; ++l) {
        const double m = M[i * sb + l];
        for (int j = 0; j < k; ++j) out[i * k + j] += m * Z[l * k + j];
      }
  } else {
    for (int l = 0; l < sb; ++l)
      for (int i = 0; i < sa; ++i) {
        const double m = M[i * sb + l];
        for (int j = 0; j < k; ++j) out[l * k + j] += m * Z[i * k + j];
      }
  }
}

}  // namespace

bool CoarseSpace::factor(const BlockUpperView& A, bool with_w) {
  if (!built_) return false;
  const int nb = A.blocks();
  auto kof = [&](int a) { const int I = agg_.of[a]; return cstart_[I + 1] - cstart_[I]; };
  // E = Z^T A Z block by block: C = Z_a^T (A_ab Z_b) into pair (I, J), C^T for the lower part.
  std::fill(pair_val_.begin(), pair_val_.end(), 0.0);
  std::vector<double> T, Cab;
  for (int a = 0; a < nb; ++a) {
    const int sa = block_size(A, a), ka = kof(a);
    const double* Za = z_.data() + zstart_[a];
    for (int k = A.brow_start[a]; k < A.brow_start[a + 1]; ++k) {
      const int b = A.bcol[k], sb = block_size(A, b), kb = kof(b);
      if (ka == 0 || kb == 0) continue;
      const double* Zb = z_.data() + zstart_[b];
      T.assign(static_cast<std::size_t>(sa) * kb, 0.0);
      add_product(A.val.data() + A.val_start[k], sa, sb, Zb, kb, false, T.data());
      Cab.assign(static_cast<std::size_t>(ka) * kb, 0.0);  // Z_a^T T
      for (int i = 0; i < sa; ++i)
        for (int p = 0; p < ka; ++p) {
          const double z = Za[i * ka + p];
          for (int q = 0; q < kb; ++q) Cab[p * kb + q] += z * T[i * kb + q];
        }
      double* E = pair_val_.data() + pair_start_[entry_pair_[k]];
      const bool same = agg_.of[a] == agg_.of[b];
      if (!entry_transposed_[k]) {
        for (int t = 0; t < ka * kb; ++t) E[t] += Cab[t];
      }
      if (entry_transposed_[k] || (same && a != b)) {  // E_JI += C^T
        for (int p = 0; p < ka; ++p)
          for (int q = 0; q < kb; ++q) E[q * ka + p] += Cab[p * kb + q];
      }
    }
  }
  double* values = E_.valuePtr();
  for (std::size_t t = 0; t < pair_val_.size(); ++t)
    if (value_slot_[t] >= 0) values[value_slot_[t]] = pair_val_[t];
  // A tiny relative shift keeps E definite when Z meets the null space of a semidefinite A.
  double dmax = 0;
  for (int i = 0; i < coarse_n_; ++i) dmax = std::max(dmax, std::abs(E_.coeff(i, i)));
  if (!(dmax > 0) || !std::isfinite(dmax)) return false;
  for (int i = 0; i < coarse_n_; ++i) E_.coeffRef(i, i) += 1e-12 * dmax;
  if (!analysed_) {
    ldlt_.analyzePattern(E_);
    analysed_ = true;
  }
  ldlt_.factorize(E_);
  if (ldlt_.info() != Eigen::Success || !(ldlt_.vectorD().minCoeff() > 0)) return false;
  if (!with_w) return true;
  // W = A Z: row block a gets A_ab Z_b, row block b gets A_ab^T Z_a.
  if (!w_pattern_) build_w_pattern(A);
  std::fill(w_.begin(), w_.end(), 0.0);
  auto slot = [&](int a, int J) {
    const auto first = w_agg_.begin() + w_begin_[a], last = w_agg_.begin() + w_begin_[a + 1];
    return w_start_[static_cast<std::size_t>(std::lower_bound(first, last, J) - w_agg_.begin())];
  };
  for (int a = 0; a < nb; ++a) {
    const int sa = block_size(A, a);
    for (int k = A.brow_start[a]; k < A.brow_start[a + 1]; ++k) {
      const int b = A.bcol[k], sb = block_size(A, b);
      const double* M = A.val.data() + A.val_start[k];
      if (kof(b) > 0)
        add_product(M, sa, sb, z_.data() + zstart_[b], kof(b), false, w_.data() + slot(a, agg_.of[b]));
      if (b != a && kof(a) > 0)
        add_product(M, sa, sb, z_.data() + zstart_[a], kof(a), true, w_.data() + slot(b, agg_.of[a]));
    }
  }
  return true;
}

void CoarseSpace::restrict_to(const Eigen::VectorXd& r, Eigen::VectorXd& rc) const {
  rc.setZero(coarse_n_);
  for (const int a : active_) {
    const int I = agg_.of[a], k = cstart_[I + 1] - cstart_[I], s = row_[a + 1] - row_[a];
    const double* Z = z_.data() + zstart_[a];
    const double* ra = r.data() + row_[a];
    double* out = rc.data() + cstart_[I];
    for (int i = 0; i < s; ++i)
      for (int j = 0; j < k; ++j) out[j] += Z[i * k + j] * ra[i];
  }
}

void CoarseSpace::prolong_add(const Eigen::VectorXd& xc, Eigen::VectorXd& z) const {
  for (const int a : active_) {
    const int I = agg_.of[a], k = cstart_[I + 1] - cstart_[I], s = row_[a + 1] - row_[a];
    const double* Z = z_.data() + zstart_[a];
    const double* in = xc.data() + cstart_[I];
    double* za = z.data() + row_[a];
    for (int i = 0; i < s; ++i) {
      double sum = 0;
      for (int j = 0; j < k; ++j) sum += Z[i * k + j] * in[j];
      za[i] += sum;
    }
  }
}

void CoarseSpace::subtract_wt(const Eigen::VectorXd& y, Eigen::VectorXd& rc) const {
  for (const int a : w_rows_) {
    const int s = row_[a + 1] - row_[a];
    const double* ya = y.data() + row_[a];
    for (int e = w_begin_[a]; e < w_begin_[a + 1]; ++e) {
      const int J = w_agg_[e], k = cstart_[J + 1] - cstart_[J];
      const double* W = w_.data() + w_start_[e];
      double* out = rc.data() + cstart_[J];
      for (int i = 0; i < s; ++i)
        for (int j = 0; j < k; ++j) out[j] -= W[i * k + j] * ya[i];
    }
  }
}

void CoarseSpace::subtract_w(const Eigen::VectorXd& xc, Eigen::VectorXd& u) const {
  for (const int a : w_rows_) {
    const int s = row_[a + 1] - row_[a];
    double* ua = u.data() + row_[a];
    for (int e = w_begin_[a]; e < w_begin_[a + 1]; ++e) {
      const int J = w_agg_[e], k = cstart_[J + 1] - cstart_[J];
      const double* W = w_.data() + w_start_[e];
      const double* in = xc.data() + cstart_[J];
      for (int i = 0; i < s; ++i) {
        double sum = 0;
        for (int j = 0; j < k; ++j) sum += W[i * k + j] * in[j];
        ua[i] -= sum;
      }
    }
  }
}

void CoarseSpace::solve(Eigen::VectorXd& rc) const {
  if (coarse_n_ > 0) rc = ldlt_.solve(rc);
}

Eigen::MatrixXd CoarseSpace::basis_dense() const {
  const int nb = static_cast<int>(row_.size()) - 1;
  Eigen::MatrixXd Z = Eigen::MatrixXd::Zero(row_.empty() ? 0 : row_.back(), coarse_n_);
  for (int a = 0; a < nb; ++a) {
    const int I = agg_.of[a], k = cstart_[I + 1] - cstart_[I];
    for (int i = 0; i < row_[a + 1] - row_[a]; ++i)
      for (int j = 0; j < k; ++j) Z(row_[a] + i, cstart_[I] + j) = z_[zstart_[a] + i * k + j];
  }
  return Z;
}

Eigen::MatrixXd CoarseSpace::coarse_dense() const {
  Eigen::MatrixXd E = Eigen::MatrixXd(E_);
  return E.selfadjointView<Eigen::Lower>();
}

Eigen::MatrixXd CoarseSpace::w_dense() const {
  const int nb = static_cast<int>(row_.size()) - 1;
  Eigen::MatrixXd W = Eigen::MatrixXd::Zero(row_.empty() ? 0 : row_.back(), coarse_n_);
  if (!w_pattern_) return W;
  for (int a = 0; a < nb; ++a)
    for (int e = w_begin_[a]; e < w_begin_[a + 1]; ++e) {
      const int J = w_agg_[e], k = cstart_[J + 1] - cstart_[J];
      for (int i = 0; i < row_[a + 1] - row_[a]; ++i)
        for (int j = 0; j < k; ++j) W(row_[a] + i, cstart_[J] + j) = w_[w_start_[e] + i * k + j];
    }
  return W;
}

}  // namespace mabd::detail
