// Contact complementarity problem: rounds of a box-constrained QP (projected Gauss-Seidel,
// then an exact active-set loop) with the friction bounds from the normal forces
// (contact_lcp.h).
#include "solvers/contact_lcp.h"
#include "solvers/lcp_blocks.h"
#include "solvers/lcp_workspace.h"
#include "solvers/updatable_llt.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/SparseCholesky>

namespace mabd::detail {
namespace {

using SpMat = Eigen::SparseMatrix<double>;
constexpr double kInf = std::numeric_limits<double>::infinity();

/// (K lambda)_r with K = D + diag(alpha) (D symmetric: its column r is its row r).
double row_times(const ContactLcp& p, const Eigen::VectorXd& lambda, int r) {
  double s = p.alpha[r] * lambda[r];
  for (SpMat::InnerIterator it(p.D, r); it; ++it) s += it.value() * lambda[it.row()];
  return s;
}

enum class Bound : char { Free, Lo, Hi, Fixed };

/// KKT violation of the QP at its bounds (N).
double qp_residual(const ContactLcp& p, const Eigen::VectorXd& lambda, const Eigen::VectorXd& lo,
                   const Eigen::VectorXd& hi, const Eigen::VectorXd& stiff) {
  double worst = 0;
  for (int r = 0; r < lambda.size(); ++r) {
    const double w = (p.b[r] - row_times(p, lambda, r)) * stiff[r];
    worst = std::max({worst, lambda[r] - hi[r], lo[r] - lambda[r]});
    if (lo[r] == hi[r]) continue;
    const double room_hi = hi[r] - lambda[r], room_lo = lambda[r] - lo[r];
    // w > 0 asks lambda up (allowed while below hi), w < 0 down (while above lo).
    if (w > 0) worst = std::max(worst, std::min(w, room_hi));
    if (w < 0) worst = std::max(worst, std::min(-w, room_lo));
  }
  return worst;
}

/// Objective of the QP, 1/2 lambda^T K lambda - b^T lambda (N m).
double qp_objective(const ContactLcp& p, const Eigen::VectorXd& lambda) {
  double f = 0;
  for (int r = 0; r < lambda.size(); ++r) {
    if (lambda[r] != 0) f += lambda[r] * (0.5 * row_times(p, lambda, r) - p.b[r]);
  }
  return f;
}

/// Solves K_FF x = b_F - K_FB lambda_B for the rows of `free_rows` (free_of: row -> its
/// position or -1), the others held at `at` (sparse or dense). False if singular. One
/// FreeSolve serves one problem (p fixed): the factor of the last free set is kept, so a set
/// met again (the next friction round's, whose bounds moved but not its sets) costs only the
/// right-hand side and the triangular solves.
///
/// Sparse free sets factor in one fill-reducing order: the minimum-degree ordering of the
/// whole problem's pattern, computed once and restricted to the free rows. On a pile of
/// boxes (thousands of coupled rows, tens of pivots per round) ordering each free set anew
/// cost as much as its factorisation.
///
/// A dense free set that differs from the last dense one by a few rows updates its factor
/// (UpdatableLlt: the rows that left removed, those that came appended) instead of factoring
/// anew: block pivoting moves a few rows a pivot, and the ragdolls' nets (about 430 free
/// rows) spent 44% of their step in these factorisations.
class FreeSolve {
 public:
  bool solve(const ContactLcp& p, const std::vector<int>& free_rows,
             const std::vector<int>& free_of, const Eigen::VectorXd& at, Eigen::VectorXd& x) {
    const int m = static_cast<int>(free_rows.size());
    Eigen::VectorXd rhs;
    const std::size_t entries = free_rhs(p, free_rows, free_of, at, rhs);
    if (factored_ && free_rows == rows_) {
      if (dense_used_) {
        dense_solve(free_rows, rhs, x);
      } else {
        sparse_solve(rhs, x);
      }
      return x.allFinite();
    }
    const bool had_dense = factored_ && dense_used_;
    factored_ = false;
    // A block filled beyond kDenseShare (the contacts of one articulation, all coupled through
    // its joints) factors dense.
    const bool dense = m >= kDenseFrom && static_cast<double>(entries + m) >
                                              kDenseShare * static_cast<double>(m) * m;
    const bool update = dense && had_dense && update_dense(p, free_rows);
    if (dense && !update) {
      dense_.setZero(m, m);
      for (int e = 0; e < m; ++e) {
        const int r = free_rows[e];
        dense_(e, e) += p.alpha[r];
        for (SpMat::InnerIterator it(p.D, r); it; ++it) {
          const int c = static_cast<int>(it.row());
          if (free_of[c] >= 0) dense_(free_of[c], e) += it.value();
        }
      }
    } else if (!dense) {
      order_free_rows(p, free_rows);
      trip_.clear();
      for (int e = 0; e < m; ++e) {
        const int r = free_rows[e];
        trip_.emplace_back(local_[e], local_[e], p.alpha[r]);
        for (SpMat::InnerIterator it(p.D, r); it; ++it) {
          const int c = static_cast<int>(it.row());
          // The lower triangle, which ldlt_ reads.
          if (free_of[c] >= 0 && local_[free_of[c]] >= local_[e]) {
            trip_.emplace_back(local_[free_of[c]], local_[e], it.value());
          }
        }
      }
    }
    dense_used_ = dense;
    if (dense) {
      if (!update) {
        // K_FF = D_FF + diag(alpha): symmetric positive definite; its rows in free-set order.
        order_ = free_rows;
        changes_ = 0;
        pos_.assign(p.size(), -1);
        for (int e = 0; e < m; ++e) pos_[free_rows[e]] = e;
        if (!llt_.factor(dense_)) return false;
      }
      dense_solve(free_rows, rhs, x);
    } else {
      SpMat K(m, m);
      K.setFromTriplets(trip_.begin(), trip_.end());
      ldlt_.compute(K);
      if (ldlt_.info() != Eigen::Success) return false;
      sparse_solve(rhs, x);
    }
    rows_ = free_rows;
    factored_ = true;
    return x.allFinite();
  }

 private:
  /// local_[e]: free row e's place in the order (rank_ restricted to the free rows), with
  /// rank_ the minimum-degree order of the whole pattern, made at the first sparse set.
  void order_free_rows(const ContactLcp& p, const std::vector<int>& free_rows) {
    const int n = p.size();
    if (static_cast<int>(rank_.size()) != n) {
      SpMat pattern = p.D;  // both triangles
      for (int r = 0; r < n; ++r) pattern.coeffRef(r, r) += 1.0;  // every diagonal entry
      Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> order;
      Eigen::AMDOrdering<int>()(pattern, order);  // order.indices(): rows in elimination order
      rank_.resize(n);
      for (int k = 0; k < n; ++k) rank_[order.indices()[k]] = k;
    }
    const int m = static_cast<int>(free_rows.size());
    by_rank_.resize(m);
    for (int e = 0; e < m; ++e) by_rank_[e] = e;
    std::sort(by_rank_.begin(), by_rank_.end(),
              [&](int x, int y) { return rank_[free_rows[x]] < rank_[free_rows[y]]; });
    local_.resize(m);
    for (int k = 0; k < m; ++k) local_[by_rank_[k]] = k;
  }
  /// rhs = b_F - K_FB at_B over the free rows. Returns the count of D's entries that couple
  /// two free rows.
  static std::size_t free_rhs(const ContactLcp& p, const std::vector<int>& free_rows,
                              const std::vector<int>& free_of, const Eigen::VectorXd& at,
                              Eigen::VectorXd& rhs) {
    const int m = static_cast<int>(free_rows.size());
    std::size_t entries = 0;
    rhs.resize(m);
    for (int e = 0; e < m; ++e) {
      const int r = free_rows[e];
      double v = p.b[r];
      for (SpMat::InnerIterator it(p.D, r); it; ++it) {
        const int c = static_cast<int>(it.row());
        if (free_of[c] < 0) {
          v -= it.value() * at[c];
        } else {
          ++entries;
        }
      }
      rhs[e] = v;
    }
    return entries;
  }
  /// Brings the dense factor from the last dense free set (order_) to `free_rows`: removes the
  /// rows that left, appends those that came. False (the factor then made anew) when more rows
  /// changed than an update saves on (each costs about two full passes over the factor, a new
  /// factor m / 3 passes at a higher rate), when the changes since the last new factor reach
  /// the size of the set (bounding the round-off the updates gather), or when an append finds
  /// the bordered matrix not positive definite to working precision.
  bool update_dense(const ContactLcp& p, const std::vector<int>& free_rows) {
    const int n = p.size();
    const int m = static_cast<int>(free_rows.size());
    in_set_.assign(n, 0);
    for (int r : free_rows) in_set_[r] = 1;
    int kept = 0;
    for (int r : order_) kept += in_set_[r];
    const int changes = static_cast<int>(order_.size()) - kept + (m - kept);
    if (changes > m / kUpdateShare || changes_ + changes > m) return false;
    changes_ += changes;
    for (int k = static_cast<int>(order_.size()) - 1; k >= 0; --k) {  // later rows first
      if (in_set_[order_[k]]) continue;
      llt_.remove(k);
      order_.erase(order_.begin() + k);
    }
    pos_.assign(n, -1);
    for (int k = 0; k < static_cast<int>(order_.size()); ++k) pos_[order_[k]] = k;
    Eigen::VectorXd c;
    for (int r : free_rows) {
      if (pos_[r] >= 0) continue;
      c.setZero(llt_.size());
      double d = p.alpha[r];
      for (SpMat::InnerIterator it(p.D, r); it; ++it) {
        const int row = static_cast<int>(it.row());
        if (row == r) {
          d += it.value();
        } else if (pos_[row] >= 0) {
          c[pos_[row]] += it.value();
        }
      }
      if (!llt_.append(c, d)) return false;
      pos_[r] = static_cast<int>(order_.size());
      order_.push_back(r);
    }
    return true;
  }
  /// x = K_FF^{-1} rhs on the dense factor (rhs and x in free-set order; the factor's rows in
  /// order_).
  void dense_solve(const std::vector<int>& free_rows, const Eigen::VectorXd& rhs,
                   Eigen::VectorXd& x) const {
    const int m = static_cast<int>(free_rows.size());
    Eigen::VectorXd ordered(m);
    for (int e = 0; e < m; ++e) ordered[pos_[free_rows[e]]] = rhs[e];
    llt_.solve_in_place(ordered);
    x.resize(m);
    for (int e = 0; e < m; ++e) x[e] = ordered[pos_[free_rows[e]]];
  }
  /// x = K_FF^{-1} rhs on the sparse factor (rows in free-set order).
  void sparse_solve(const Eigen::VectorXd& rhs, Eigen::VectorXd& x) {
    const int m = static_cast<int>(rhs.size());
    Eigen::VectorXd ordered(m);
    for (int e = 0; e < m; ++e) ordered[local_[e]] = rhs[e];
    ordered = ldlt_.solve(ordered);
    x.resize(m);
    for (int e = 0; e < m; ++e) x[e] = ordered[local_[e]];
  }

  static constexpr int kDenseFrom = 24;         ///< free rows below this factor sparse
  static constexpr double kDenseShare = 0.2;    ///< nonzero share above which they factor dense
  std::vector<Eigen::Triplet<double>> trip_;
  Eigen::MatrixXd dense_;
  static constexpr int kUpdateShare = 16;  ///< an update for at most m / kUpdateShare changes
  UpdatableLlt llt_;
  std::vector<int> order_;   ///< the dense factor's rows, in its order
  std::vector<int> pos_;     ///< row -> its place in order_, or -1
  std::vector<char> in_set_;
  int changes_ = 0;          ///< rows removed and appended since the dense factor was made
  Eigen::SimplicialLDLT<SpMat, Eigen::Lower, Eigen::NaturalOrdering<int>> ldlt_;
  std::vector<int> rank_, by_rank_, local_;  ///< the order (order_free_rows)
  std::vector<int> rows_;  ///< the free set factored last
  bool factored_ = false;
  bool dense_used_ = false;
};

/// A primal active-set method from a feasible lambda, for when block pivoting cycles. The held
/// rows sit on a bound; the others solve their face. A face solution inside the box is taken
/// whole, then the held rows whose gradient asks them off their bound are released (none: the
/// QP's solution). Else the step to it is projected on the box, if that lowers the objective
/// (many rows reach their bounds at once), or cut at the first bound it reaches (that row is
/// held). The objective falls at every step, so no state repeats. Returns true if exact.
bool primal_active_set(const ContactLcp& p, const Eigen::VectorXd& lo, const Eigen::VectorXd& hi,
                       int max_solves, FreeSolve& solver, Eigen::VectorXd& lambda,
                       LcpResult& result) {
  const int n = static_cast<int>(lambda.size());
  std::vector<int> free_rows, free_of(n);
  std::vector<char> held(n, 0);
  Eigen::VectorXd x, trial(n);
  auto w_of = [&](int r) { return p.b[r] - row_times(p, lambda, r); };  // w > 0 asks up
  for (int r = 0; r < n; ++r) {
    if (lo[r] == hi[r]) {
      held[r] = 1;
    } else if (lambda[r] <= lo[r] || lambda[r] >= hi[r]) {
      const double w = w_of(r);
      held[r] = lambda[r] <= lo[r] ? w <= 0 : w >= 0;
    }
  }
  double f = qp_objective(p, lambda);
  for (int it = 0; it < max_solves; ++it) {
    free_rows.clear();
    for (int r = 0; r < n; ++r) {
      free_of[r] = -1;
      if (held[r]) continue;
      free_of[r] = static_cast<int>(free_rows.size());
      free_rows.push_back(r);
    }
    if (!free_rows.empty()) {
      ++result.pivots;
      if (!solver.solve(p, free_rows, free_of, lambda, x)) return false;
    }
    double t_cut = 1;  // the ratio test: the largest step that stays in the box
    int cut = -1;
    for (std::size_t e = 0; e < free_rows.size(); ++e) {
      const int r = free_rows[e];
      const double dr = x[e] - lambda[r];
      double t = 1;
      if (x[e] > hi[r]) t = (hi[r] - lambda[r]) / dr;
      if (x[e] < lo[r]) t = (lo[r] - lambda[r]) / dr;
      if (t < t_cut) {
        t_cut = std::max(t, 0.0);
        cut = r;
      }
    }
    if (cut < 0) {
      // The face's solution: release the held rows asked off their bounds.
      for (std::size_t e = 0; e < free_rows.size(); ++e) lambda[free_rows[e]] = x[e];
      f = qp_objective(p, lambda);
      bool released = false;
      for (int r = 0; r < n; ++r) {
        if (!held[r] || lo[r] == hi[r]) continue;
        const double w = w_of(r);
        if (lambda[r] <= lo[r] ? w > 0 : w < 0) {
          held[r] = 0;
          released = true;
        }
      }
      if (!released) return true;
      continue;
    }
    // Along the step projected on the box: the best of its halvings down to the cut, where
    // the objective still falls (it is convex on the segment up to the cut). Every free row
    // that lands on a bound is held.
    if (t_cut == 0) {
      // Free rows on their bounds that the step would take out of the box at once: hold them.
      for (std::size_t e = 0; e < free_rows.size(); ++e) {
        const int r = free_rows[e];
        if ((x[e] > hi[r] && lambda[r] >= hi[r]) || (x[e] < lo[r] && lambda[r] <= lo[r])) {
          held[r] = 1;
        }
      }
      continue;
    }
    double best_f = f;
    double best_t = 0;
    for (double t = 1;; t *= 0.5) {
      if (t < 1e-6) t = t_cut;  // (at most 20 halvings)
      const double tt = std::max(t, t_cut);
      for (std::size_t e = 0; e < free_rows.size(); ++e) {
        const int r = free_rows[e];
        trial[r] = std::clamp(lambda[r] + tt * (x[e] - lambda[r]), lo[r], hi[r]);
      }
      for (int r = 0; r < n; ++r) {
        if (held[r]) trial[r] = lambda[r];
      }
      if (tt == t_cut) trial[cut] = x[free_of[cut]] > hi[cut] ? hi[cut] : lo[cut];
      const double ft = qp_objective(p, trial);
      if (ft < best_f) {
        best_f = ft;
        best_t = tt;
      }
      if (tt == t_cut) break;
    }
    if (best_t == 0) return false;  // no progress left at round-off
    for (std::size_t e = 0; e < free_rows.size(); ++e) {
      const int r = free_rows[e];
      lambda[r] = std::clamp(lambda[r] + best_t * (x[e] - lambda[r]), lo[r], hi[r]);
    }
    if (best_t == t_cut) lambda[cut] = x[free_of[cut]] > hi[cut] ? hi[cut] : lo[cut];
    for (int r : free_rows) held[r] = lambda[r] <= lo[r] || lambda[r] >= hi[r];
    f = best_f;
  }
  return false;
}

/// Projected Gauss-Seidel sweeps on lambda (within its bounds on entry), at most `budget`.
/// With `until_stable`, they also end once kStableSweeps full sweeps in a row leave every
/// row's set (free, on lo, on hi) as it was. Returns the sweeps taken; `converged` tells
/// whether lambda's change fell to the tolerance. With `follow` (the points' friction
/// coefficients), a point's tangent bounds +-mu |lambda_n| follow its normal force as each
/// sweep updates it: the sweeps then solve the friction problem itself, not one round of it.
int sweep_qp(const ContactLcp& p, const LcpBlocks& K, Eigen::VectorXd& lo, Eigen::VectorXd& hi,
             const Eigen::VectorXd& stiff, const LcpOptions& o, int budget, bool until_stable,
             Eigen::VectorXd& lambda, LcpResult& result, bool& converged,
             const std::vector<double>* follow = nullptr) {
  const int n = static_cast<int>(lambda.size());
  // Rows held at a bound that their product pushes further out (candidate points that stay
  // apart) are idle: only every kFullSweep-th sweep updates them, and only a full sweep can
  // end the sweeps. Rows pinned by their bounds (a tangent row of a point without normal
  // force) need no product at all.
  constexpr int kFullSweep = 4;
  constexpr int kStableSweeps = 3;
  std::vector<char> idle(n, 0), last_set(until_stable ? n : 0, 3);
  int stable = 0;
  converged = false;
  // The sweeps are the solve (no active-set loop follows them): a large group without pivots.
  const bool sole = follow != nullptr || o.max_pivots == 0;
  int sweep = 0;
  while (sweep < budget) {
    const bool full = sweep % kFullSweep == 0 || sweep + 1 == budget;
    double change = 0, scale = 0, gap = 0;
    auto update = [&](int r, double K_lambda) {
      const double step = (p.b[r] - K_lambda) * stiff[r];
      lambda[r] = std::clamp(lambda[r] + step, lo[r], hi[r]);
      idle[r] = (lambda[r] == hi[r] && step > 0) || (lambda[r] == lo[r] && step < 0);
    };
    // A point's three rows in order, from one block product at the point's multipliers
    // before its sweep: row t adds the change of rows s < t through the point's own block.
    for (int k = 0; k < K.points; ++k) {
      const int r0 = 3 * k;
      bool any = false;
      for (int t = 0; t < 3; ++t) any |= lo[r0 + t] != hi[r0 + t] && (full || !idle[r0 + t]);
      const Eigen::Vector3d v = any ? K.point_times(k, lambda) : Eigen::Vector3d::Zero();
      double moved[3] = {0, 0, 0};
      for (int t = 0; t < 3; ++t) {
        const int r = r0 + t;
        const double old = lambda[r];
        if (follow && t > 0) {
          // The normal row (t = 0) is updated: its bound for the tangent rows.
          const double B = (*follow)[k] * std::max(-lambda[r0], 0.0);
          lo[r] = -B;
          hi[r] = B;
        }
        if (lo[r] == hi[r]) {
          lambda[r] = lo[r];
        } else if (full || !idle[r]) {
          double K_lambda = v[t];
          for (int s = 0; s < t; ++s) K_lambda += K.own(k, t, s) * moved[s];
          update(r, K_lambda);
        } else if (follow) {
          lambda[r] = std::clamp(lambda[r], lo[r], hi[r]);  // an idle row on a moved bound
        }
        moved[t] = lambda[r] - old;
        if (stiff[r] > 0) gap = std::max(gap, std::abs(moved[t]) / stiff[r]);
        change = std::max(change, std::abs(moved[t]));
        scale = std::max(scale, std::abs(lambda[r]));
      }
    }
    for (int r = 3 * K.points; r < n; ++r) {
      const double old = lambda[r];
      if (lo[r] == hi[r]) {
        lambda[r] = lo[r];
      } else if (full || !idle[r]) {
        update(r, K.scalar_times(r, lambda));
      }
      change = std::max(change, std::abs(lambda[r] - old));
      if (stiff[r] > 0) gap = std::max(gap, std::abs(lambda[r] - old) / stiff[r]);
      scale = std::max(scale, std::abs(lambda[r]));
    }
    ++result.sweeps;
    ++sweep;
    if (full && sole) result.sweep_gap = gap;
    if (full && (change <= o.tolerance * scale || (sole && gap <= o.gap_tolerance))) {
      converged = true;
      break;
    }
    if (full && until_stable) {
      bool same = true;
      for (int r = 0; r < n; ++r) {
        const char now = lambda[r] >= hi[r] ? 2 : lambda[r] <= lo[r] ? 1 : 0;
        same &= now == last_set[r];
        last_set[r] = now;
      }
      stable = same ? stable + 1 : 0;
      if (stable >= kStableSweeps) break;
    }
  }
  return sweep;
}

/// The active-set loop from lambda's sets, at most max_pivots solves. On success (returns
/// true) lambda is the QP's solution to round-off; else lambda is kept and result.residual is
/// set to `best`, its residual.
bool active_set_qp(const ContactLcp& p, const Eigen::VectorXd& lo, const Eigen::VectorXd& hi,
                   const Eigen::VectorXd& stiff, int max_pivots, double best,
                   FreeSolve& solver, Eigen::VectorXd& lambda, LcpResult& result) {
  const int n = static_cast<int>(lambda.size());
  std::vector<Bound> set(n);
  for (int r = 0; r < n; ++r) {
    if (lo[r] == hi[r]) {
      set[r] = Bound::Fixed;
    } else if (lambda[r] >= hi[r]) {
      set[r] = Bound::Hi;
    } else if (lambda[r] <= lo[r]) {
      set[r] = Bound::Lo;
    } else {
      set[r] = Bound::Free;
    }
  }
  Eigen::VectorXd trial(n);
  std::vector<int> free_of(n);
  std::vector<int> free_rows;
  Eigen::VectorXd x;
  // Block principal pivoting (Judice and Pires): every row that breaks its conditions
  // changes set at once while the count of such rows falls below its least within kStrikes
  // pivots; else one row at a time.
  constexpr int kStrikes = 3;
  std::vector<std::pair<int, Bound>> infeasible;
  int least_changes = n + 1, strikes = 0;
  for (int pivot = 0; pivot < max_pivots; ++pivot) {
    ++result.pivots;
    free_rows.clear();
    for (int r = 0; r < n; ++r) {
      free_of[r] = -1;
      if (set[r] == Bound::Free) {
        free_of[r] = static_cast<int>(free_rows.size());
        free_rows.push_back(r);
      } else {
        trial[r] = set[r] == Bound::Lo ? lo[r] : hi[r];
      }
    }
    const int m = static_cast<int>(free_rows.size());
    if (m > 0) {
      // K_FF lambda_F = b_F - K_FB lambda_B.
      if (!solver.solve(p, free_rows, free_of, trial, x)) break;
      for (int e = 0; e < m; ++e) trial[free_rows[e]] = x[e];
    }
    // Rows breaking their conditions, with the set each moves to.
    infeasible.clear();
    for (int r = 0; r < n; ++r) {
      switch (set[r]) {
        case Bound::Free:
          if (trial[r] > hi[r]) {
            infeasible.emplace_back(r, Bound::Hi);
          } else if (trial[r] < lo[r]) {
            infeasible.emplace_back(r, Bound::Lo);
          }
          break;
        case Bound::Hi:
        case Bound::Lo: {
          const double w = p.b[r] - row_times(p, trial, r);
          // On hi, w < 0 asks lambda down: release; on lo, w > 0 asks it up.
          if (set[r] == Bound::Hi ? w < 0 : w > 0) infeasible.emplace_back(r, Bound::Free);
          break;
        }
        case Bound::Fixed:
          break;
      }
    }
    const int changes = static_cast<int>(infeasible.size());
    if (changes == 0) {
      for (int r = 0; r < n; ++r) trial[r] = std::clamp(trial[r], lo[r], hi[r]);
      const double res = qp_residual(p, trial, lo, hi, stiff);
      if (res <= best || res <= 1e-9 * (trial.cwiseAbs().maxCoeff() + 1e-300)) {
        lambda = trial;
        result.residual = res;
        return true;
      }
      break;
    }
    if (changes < least_changes) {
      least_changes = changes;
      strikes = 0;
    } else {
      ++strikes;
    }
    if (strikes < kStrikes) {
      for (const auto& [r, to] : infeasible) set[r] = to;
    } else {
      // Murty's single pivot (the last such row), which ends on a P-matrix; one row a pivot
      // cannot end within the pivots left when more rows than that are wrong.
      if (least_changes > max_pivots - pivot - 1) break;
      set[infeasible.back().first] = infeasible.back().second;
    }
  }
  result.residual = best;
  return false;
}

/// Groups of more rows than this (a pile of boxes) skip the early try from steady sets and
/// the primal fallback, whose factorisations of the whole group would outweigh their gain.
constexpr int kSmallRows = 600;

/// One box-constrained QP. Returns true if exact. The sweeps only find the sets for the
/// active-set loop: once the sets hold still over a few full sweeps, a few pivots from them
/// try to end it; if they cannot, the sweeps go on to their budget and the active-set loop
/// then starts from their sets with all its pivots. (Without pivots the sweeps are the
/// solve, and run to their tolerance.) The QP's minimiser is unique in K lambda, so either
/// path ends at the same forces. `exact_start`: lambda solved this QP exactly with bounds
/// that have moved little since (the last friction round); its sets then try first, before
/// any sweep, on the factor that solved it.
bool solve_qp(const ContactLcp& p, const LcpBlocks& K, Eigen::VectorXd& lo, Eigen::VectorXd& hi,
              const Eigen::VectorXd& stiff, const LcpOptions& o,
              bool exact_start, FreeSolve& solver, Eigen::VectorXd& lambda, LcpResult& result) {
  constexpr int kTryPivots = 3;
  const int n = static_cast<int>(lambda.size());
  for (int r = 0; r < n; ++r) lambda[r] = std::clamp(lambda[r], lo[r], hi[r]);
  const bool pivots = o.max_pivots > 0;
  if (pivots && exact_start) {
    // Accepted as exact when no worse than the start: round-off, the bounds' move aside.
    const double start = qp_residual(p, lambda, lo, hi, stiff);
    if (active_set_qp(p, lo, hi, stiff, std::min(kTryPivots, o.max_pivots), start, solver,
                      lambda, result)) {
      return true;
    }
  }
  // On a large group a failed try costs kTryPivots factorisations of thousands of rows per
  // round: it sweeps its whole budget first.
  const bool try_early = pivots && n <= kSmallRows;
  bool converged = false;
  int left = o.max_sweeps;
  left -= sweep_qp(p, K, lo, hi, stiff, o, left, try_early, lambda, result, converged);
  if (try_early && left > 0 && !converged) {
    if (active_set_qp(p, lo, hi, stiff, std::min(kTryPivots, o.max_pivots), 0.0, solver,
                      lambda, result)) {
      return true;
    }
    sweep_qp(p, K, lo, hi, stiff, o, left, false, lambda, result, converged);
  }
  const double best = qp_residual(p, lambda, lo, hi, stiff);
  if (active_set_qp(p, lo, hi, stiff, o.max_pivots, best, solver, lambda, result)) return true;
  // Block pivoting cycled or stalled (redundant contacts: a stack's four points per face):
  // the primal active-set loop from the sweeps' multipliers, within the box. It moves one row
  // onto a bound per solve, so a group of thousands of rows (a pile of boxes) would take
  // thousands of factorisations: those keep the better of the sweeps and the pivots.
  if (!pivots || n > kSmallRows) return false;
  const bool exact = primal_active_set(p, lo, hi, 2 * o.max_pivots, solver, lambda, result);
  result.residual = qp_residual(p, lambda, lo, hi, stiff);
  return exact;
}

/// Rounds of the QP with the friction bounds following the normal forces (one coupled
/// group of rows).
LcpResult solve_rounds(const ContactLcp& p, Eigen::VectorXd& lambda, const LcpOptions& options,
                       LcpBlocks& K) {
  LcpResult result;
  const int points = p.points();
  const int n = p.size();
  Eigen::VectorXd stiff(n), lo(n), hi(n);
  for (int r = 0; r < n; ++r) {
    const double d = p.D.coeff(r, r) + p.alpha[r];
    stiff[r] = d > 0 ? 1 / d : 0;
  }
  // Friction bounds from the normal forces of the warm start, then of each round.
  auto set_bounds = [&] {
    for (int e = 0; e < n - 3 * points; ++e) {
      lo[3 * points + e] = p.extra_lo[e];
      hi[3 * points + e] = p.extra_hi[e];
    }
    double change = 0, scale = 0;
    for (int k = 0; k < points; ++k) {
      lo[3 * k] = -kInf;
      hi[3 * k] = 0;
      const double B = p.mu[k] * std::max(-lambda[3 * k], 0.0);
      change = std::max(change, std::abs(B - hi[3 * k + 1]));
      scale = std::max(scale, B);
      for (int t = 1; t <= 2; ++t) {
        lo[3 * k + t] = -B;
        hi[3 * k + t] = B;
      }
    }
    return scale > 0 ? change / scale : 0.0;
  };
  hi.setConstant(-1);  // no bounds yet: the first change is measured against nothing
  set_bounds();
  FreeSolve solver;
  K.build(p);
  std::vector<signed char> on_bound(n, 0);
  // A large group whose active-set loop failed keeps to the sweeps in the later rounds: its
  // block pivoting cycles on much the same sets as the bounds move (a settled pile of boxes,
  // 12,000 rows: every round of every step failed, each after several factorisations, and a
  // failed loop leaves the sweeps' multipliers, so the pile's results are the same to the
  // bit). A later round whose loop would have succeeded now ends on its sweeps instead.
  LcpOptions round_options = options;
  const bool large = n > options.large_group_rows;
  if (!options.pivot_large_groups && large) round_options.max_pivots = 0;
  bool any_mu = false;
  for (double m : p.mu) any_mu |= m > 0;
  // A first round with frictionless bounds when nothing pushes yet: the normal forces first.
  for (int round = 0; round < options.max_rounds; ++round) {
    ++result.rounds;
    if (large && round_options.max_pivots == 0 && any_mu) {
      // Without pivots, rounds of sweeps on bounds lagged a round behind the normal forces
      // ended tens of newtons from the friction problem's conditions after 8 x 100 sweeps (a
      // pile of boxes, 10,000 rows); sweeps whose bounds follow the normal forces end within
      // a newton in fewer.
      for (int r = 0; r < n; ++r) lambda[r] = std::clamp(lambda[r], lo[r], hi[r]);
      bool converged = false;
      sweep_qp(p, K, lo, hi, stiff, options, options.follow_sweeps, false, lambda, result,
               converged, &p.mu);
      result.exact = false;
      result.residual = qp_residual(p, lambda, lo, hi, stiff);
      result.bound_change = 0;
      break;
    }
    result.exact = solve_qp(p, K, lo, hi, stiff, round_options, round > 0 && result.exact,
                            solver, lambda, result);
    if (!result.exact && large && round_options.max_pivots > 0) {
      result.large_failed = true;
      round_options.max_pivots = 0;
    }
    if (!any_mu) break;
    // The rows on a friction bound stay on it as it moves: their sets carry to the next round.
    for (int k = 0; k < points; ++k) {
      for (int t = 1; t <= 2; ++t) {
        const int r = 3 * k + t;
        on_bound[r] = lambda[r] >= hi[r] ? 1 : lambda[r] <= lo[r] ? -1 : 0;
      }
    }
    result.bound_change = set_bounds();
    if (result.bound_change <= options.bound_tolerance) {
      result.bound_change = 0;
      break;
    }
    if (round + 1 == options.max_rounds) break;  // lambda stays the last round's solution
    for (int k = 0; k < points; ++k) {
      for (int t = 1; t <= 2; ++t) {
        const int r = 3 * k + t;
        if (on_bound[r] != 0) lambda[r] = on_bound[r] > 0 ? hi[r] : lo[r];
      }
    }
  }
  return result;
}

/// Groups of rows that D couples (a point's three rows together): per row its group, and the
/// number of groups.
int coupled_groups(const ContactLcp& p, std::vector<int>& group) {
  const int n = p.size();
  std::vector<int> parent(n);
  for (int r = 0; r < n; ++r) parent[r] = r;
  auto find = [&](int r) {
    while (parent[r] != r) r = parent[r] = parent[parent[r]];
    return r;
  };
  auto join = [&](int a, int b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  };
  for (int k = 0; k < p.points(); ++k) {
    join(3 * k, 3 * k + 1);
    join(3 * k, 3 * k + 2);
  }
  for (int c = 0; c < n; ++c) {
    for (SpMat::InnerIterator it(p.D, c); it; ++it) join(static_cast<int>(it.row()), c);
  }
  group.assign(n, -1);
  int groups = 0;
  for (int r = 0; r < n; ++r) {
    const int root = find(r);
    group[r] = root == r ? groups++ : group[root];
  }
  return groups;
}

}  // namespace

LcpResult solve_contact_lcp(const ContactLcp& p, Eigen::VectorXd& lambda,
                            const LcpOptions& options, LcpWorkspace* work) {
  LcpWorkspace own;
  LcpWorkspace& ws = work ? *work : own;
  const int points = p.points();
  const int n = p.size();
  if (lambda.size() != n) lambda = Eigen::VectorXd::Zero(n);
  if (n == 0) {
    LcpResult result;
    result.exact = true;
    return result;
  }
  // Groups of rows that share no body or articulation are independent problems: each takes
  // its own sweeps, pivots and rounds (one far-off contact does not hold the others' rounds,
  // and the active-set solves stay the size of a group).
  std::vector<int>& group = ws.group;
  const int groups = coupled_groups(p, group);
  if (groups == 1) return solve_rounds(p, lambda, options, ws.blocks);
  std::vector<std::vector<int>> rows_of(groups);
  for (int r = 0; r < n; ++r) rows_of[group[r]].push_back(r);
  std::vector<int>& local = ws.local;
  local.resize(n);
  LcpResult total;
  total.exact = true;
  ContactLcp& sub = ws.sub;
  for (const std::vector<int>& rows : rows_of) {
    const int m = static_cast<int>(rows.size());
    for (int e = 0; e < m; ++e) local[rows[e]] = e;
    // The group's points (rows in threes, in order) and then its extra rows.
    sub.mu.clear();
    sub.extra_lo.clear();
    sub.extra_hi.clear();
    sub.alpha.resize(m);
    sub.b.resize(m);
    Eigen::VectorXd sub_lambda(m);
    // The group's columns of D, their rows renumbered: a group's rows are ascending, so each
    // column's rows stay ascending and the columns copy straight into compressed form.
    int nnz = 0;
    for (int e = 0; e < m; ++e) nnz += static_cast<int>(p.D.innerVector(rows[e]).nonZeros());
    sub.D.resize(m, m);
    sub.D.resizeNonZeros(nnz);
    int at = 0;
    for (int e = 0; e < m; ++e) {
      const int r = rows[e];
      if (r < 3 * points) {
        if (r % 3 == 0) sub.mu.push_back(p.mu[r / 3]);
      } else {
        sub.extra_lo.push_back(p.extra_lo[r - 3 * points]);
        sub.extra_hi.push_back(p.extra_hi[r - 3 * points]);
      }
      sub.alpha[e] = p.alpha[r];
      sub.b[e] = p.b[r];
      sub_lambda[e] = lambda[r];
      sub.D.outerIndexPtr()[e] = at;
      for (SpMat::InnerIterator it(p.D, r); it; ++it) {
        sub.D.innerIndexPtr()[at] = local[it.row()];
        sub.D.valuePtr()[at++] = it.value();
      }
    }
    sub.D.outerIndexPtr()[m] = at;
    const LcpResult r = solve_rounds(sub, sub_lambda, options, ws.blocks);
    for (int e = 0; e < m; ++e) lambda[rows[e]] = sub_lambda[e];
    total.sweeps += r.sweeps;
    total.pivots += r.pivots;
    total.rounds = std::max(total.rounds, r.rounds);
    total.exact = total.exact && r.exact;
    total.large_failed = total.large_failed || r.large_failed;
    total.residual = std::max(total.residual, r.residual);
    total.bound_change = std::max(total.bound_change, r.bound_change);
    total.sweep_gap = std::max(total.sweep_gap, r.sweep_gap);
  }
  return total;
}

}  // namespace mabd::detail
