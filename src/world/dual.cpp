// The dual (KKT) solve of one Newton iteration (paper Eqs. kkt, primal, dual; DESIGN 3):
//   (S + diag(alpha)) lambda = G H^{-1} f + C(q),   S = G H^{-1} G^T,
//   dq = H^{-1} (f - G^T lambda).
// H^{-1} is applied body by body with the pre-factored Hb (never a 12M x 12M matrix). Limit
// rows enter only while violated and pushing; drive rows whose force exceeds their limit are
// held at the limit (an active-set loop of a few passes). With limits active, generalized-
// alpha also needs the step without them (limit_smooth): one more solve with those rows
// released, once per active set and step.
#include <cmath>

#include "body/affine.h"
#include "mabd/error.h"
#include "world/world_impl.h"

namespace mabd {

using detail::Row;
using detail::RowKind;

Vec12 World::Impl::joint_q(int body) const {
  if (body >= 0) return q[body];
  return detail::make_q(Mat3::Identity(), Vec3::Zero());
}

namespace {

std::uint64_t fnv(std::uint64_t h, std::uint64_t v) { return (h ^ v) * 1099511628211ull; }

}  // namespace

void World::Impl::note_regularised() {
  if (dual_solver.regularised() && !redundancy_reported) {
    warnings.push_back("redundant joint rows (an over-constrained loop?) were regularised; "
                       "give the joints a compliance to make this explicit");
    redundancy_reported = true;
  }
}

void World::Impl::dual_solve() {
  closed_form_dual = false;
  if (dual_method() == DualMethod::Chain && ball_chain.ready && solve_ball_chains()) {
    closed_form_dual = true;
    rows.clear();
    row_joint.clear();
    stats.solver = "chain";
    stats.dual_iterations = 0;
    stats.dual_residual = 0;
    return;
  }
  // Rows of every joint at the current iterate (phase 4).
  rows.clear();
  row_joint.clear();
  bool inequalities = false;  // any limit or bounded row: the active-set loop is needed
  auto dynamic = [&](int body) { return body >= 0 && bodies[body].dynamic(); };
  // G y + C of a row (y = H^{-1} f): the side with the lower body index first, then C (the
  // order of a pass over the bodies' rows followed by one adding C).
  auto row_g_y = [&](const Row& row, int a, int b, const std::vector<Vec12>& yv) {
    const bool da = dynamic(a), db = dynamic(b);
    double s = 0;
    if (da && (!db || a < b)) {
      s += row.ga.dot(yv[a]);
      if (db) s += row.gb.dot(yv[b]);
    } else if (db) {
      s += row.gb.dot(yv[b]);
      if (da) s += row.ga.dot(yv[a]);
    }
    return s + row.c;
  };
  row_rhs.clear();
  for (std::uint32_t ji = 0; ji < joints.size(); ++ji) {
    const auto& j = joints[ji];
    const Vec12 qa = joint_q(j.a), qb = joint_q(j.b);
    const std::size_t first = rows.size();
    joint_row_begin.resize(joints.size() + 1);
    joint_row_begin[ji] = first;
    detail::type_rows(j, qa, qb, rows);
    for (std::size_t r = first; r < rows.size(); ++r) rows[r].compliance += j.compliance;
    detail::extra_rows(j, qa, qb, settings.dt, rows);
    for (std::size_t r = first; r < rows.size(); ++r) {
      inequalities |= rows[r].kind != RowKind::Equality;
      row_rhs.push_back(row_g_y(rows[r], j.a, j.b, y));
    }
    row_joint.resize(rows.size(), ji);
  }
  const int n = static_cast<int>(rows.size());
  row_a.resize(n);
  row_b.resize(n);
  for (int r = 0; r < n; ++r) {
    row_a[r] = joints[row_joint[r]].a;
    row_b[r] = joints[row_joint[r]].b;
  }
  joint_row_begin.resize(joints.size() + 1);
  joint_row_begin[joints.size()] = rows.size();
  const DualMethod method = dual_method();
  stats.dual_iterations = 0;
  stats.dual_residual = 0;

  // Body -> rows incidence; W = H^{-1} G^T, per row and dynamic side, unless the tree solver
  // assembles its cliques in the body frame (tree_dual.cpp): then W is computed only if the
  // sparse fallback needs it, and the increment is applied body by body.
  rows_of.resize(bodies.size());
  for (auto& list : rows_of) list.clear();
  for (int r = 0; r < n; ++r) {
    if (dynamic(row_a[r])) rows_of[row_a[r]].push_back(r);
    if (dynamic(row_b[r])) rows_of[row_b[r]].push_back(r);
  }
  bool have_w = false;
  auto compute_w = [&] {
    // (Resized, not refilled: every entry is written, zero on a side that cannot move.)
    wa.resize(n);
    wb.resize(n);
    for (int r = 0; r < n; ++r) {
      if (dynamic(row_a[r])) {
        wa[r] = solve_body(row_a[r], rows[r].ga);
      } else {
        wa[r].setZero();
      }
      if (dynamic(row_b[r])) {
        wb[r] = solve_body(row_b[r], rows[r].gb);
      } else {
        wb[r].setZero();
      }
    }
    have_w = true;
  };
  if (!(method == DualMethod::Tree && geo_body_frame())) compute_w();
  auto g_of = [&](int r, std::size_t body) -> const Vec12& {
    return row_a[r] == static_cast<int>(body) ? rows[r].ga : rows[r].gb;
  };
  auto w_of = [&](int r, std::size_t body) -> const Vec12& {
    return row_a[r] == static_cast<int>(body) ? wa[r] : wb[r];
  };

  // Active set: equality and bounded rows start active, limit rows only when violated.
  // Scratch kept between solves (fresh large allocations cost page faults every step).
  using State = DualRowState;
  auto& state = dual_scratch.state;
  state.assign(n, State::Active);
  for (int r = 0; inequalities && r < n; ++r) {
    if (rows[r].kind == RowKind::Lower && rows[r].c >= 0) state[r] = State::Inactive;
  }
  if (method == DualMethod::Iterative) lambda_warm = lambda;  // the last solve's multipliers
  lambda.assign(n, 0.0);
  auto& y0 = dual_scratch.y0;  // H^{-1} (f - forces of saturated drives)
  y0 = y;
  bool y0_changed = false;  // row_rhs holds G y0 + C until then
  auto& index = dual_scratch.index;
  index.resize(n);
  Eigen::VectorXd& sol = dual_scratch.sol;
  // Multipliers and increment y for the rows of the current active set.
  auto solve_active_set = [&] {
    int m = 0;
    std::uint64_t pattern = 1469598103934665603ull;
    for (int r = 0; r < n; ++r) {
      index[r] = state[r] == State::Active ? m++ : -1;
      if (index[r] >= 0) pattern = fnv(pattern, r);
    }
    Eigen::VectorXd& rhs = dual_scratch.rhs;
    // G y0 + C: as computed with the rows until a saturated drive changes y0.
    rhs.resize(m);
    for (int r = 0; r < n; ++r) {
      if (index[r] < 0) continue;
      rhs[index[r]] = y0_changed ? row_g_y(rows[r], row_a[r], row_b[r], y0) : row_rhs[r];
    }
    bool solved = method == DualMethod::Chain  ? solve_chains(index, rhs, wa, wb, sol)
                  : method == DualMethod::Tree ? solve_trees(index, rhs, sol)
                                               : false;
    bool used_sparse = false;
    if (!solved) {
      used_sparse = true;
      if (!have_w) compute_w();
      trip.clear();
      for (std::size_t i = 0; i < bodies.size(); ++i) {
        for (int r1 : rows_of[i]) {
          if (index[r1] < 0) continue;
          for (int r2 : rows_of[i]) {
            if (index[r2] >= 0) trip.emplace_back(index[r1], index[r2], g_of(r1, i).dot(w_of(r2, i)));
          }
        }
      }
      for (int r = 0; r < n; ++r) {
        if (index[r] >= 0) trip.emplace_back(index[r], index[r], rows[r].compliance);
      }
      if (method == DualMethod::Iterative) {
        solved = solve_iterative(m, index, rhs, pattern, sol);
        used_sparse = !solved;
      }
      if (!solved) solved = dual_solver.solve(m, trip, rhs, pattern, sol);
    }
    if (!solved) {
      throw SimulationError("step " + std::to_string(steps + 1) +
                            ": the joint system could not be solved (dual matrix singular)");
    }
    stats.solver = used_sparse                      ? "sparse"
                   : method == DualMethod::Chain     ? "chain"
                   : method == DualMethod::Iterative ? "iterative"
                   : tree.mixed                      ? "tree+sparse"
                                                     : "tree";
    if (used_sparse) note_regularised();
    for (int r = 0; r < n; ++r) {
      if (index[r] >= 0) lambda[r] = sol[index[r]];
    }
    // Increment with these multipliers, to test inactive limits.
    y = y0;
    if (have_w) {
      for (std::size_t i = 0; i < bodies.size(); ++i) {
        for (int r : rows_of[i]) {
          if (index[r] >= 0) y[i] -= w_of(r, i) * lambda[r];
        }
      }
    } else {
      for (std::size_t i = 0; i < bodies.size(); ++i) {  // dq = y - H^{-1} G^T lambda
        if (i + 2 < bodies.size()) {
          for (int r : rows_of[i + 2]) prefetch_row(r);  // rows in joint order, read by body
        }
        if (rows_of[i].empty()) continue;
        Vec12 f = Vec12::Zero();
        for (int r : rows_of[i]) {
          if (index[r] >= 0) f.noalias() += g_of(r, i) * lambda[r];
        }
        y[i] -= solve_body(i, f);
      }
    }
  };
  for (int pass = 0; pass < 6; ++pass) {
    solve_active_set();
    if (!inequalities) break;  // equality rows only: nothing to test
    bool changed = false;
    for (int r = 0; r < n; ++r) {
      const Row& row = rows[r];
      if (row.kind == RowKind::Equality) continue;
      const auto& j = joints[row_joint[r]];
      if (row.kind == RowKind::Lower) {
        if (state[r] == State::Active && lambda[r] > 0) {  // pulling: release
          state[r] = State::Inactive;
          lambda[r] = 0;
          changed = true;
        } else if (state[r] == State::Inactive) {
          double c_new = row.c;
          if (dynamic(j.a)) c_new += row.ga.dot(y[j.a]);
          if (dynamic(j.b)) c_new += row.gb.dot(y[j.b]);
          if (c_new < 0) {
            state[r] = State::Active;
            changed = true;
          }
        }
      } else if (row.kind == RowKind::Bounded && state[r] == State::Active &&
                 std::abs(lambda[r]) > row.bound) {
        lambda[r] = std::copysign(row.bound, lambda[r]);
        state[r] = State::Saturated;
        if (dynamic(j.a)) y0[j.a] -= (have_w ? wa[r] : solve_body(j.a, row.ga)) * lambda[r];
        if (dynamic(j.b)) y0[j.b] -= (have_w ? wb[r] : solve_body(j.b, row.gb)) * lambda[r];
        y0_changed = true;
        changed = true;
      }
    }
    if (!changed) break;
  }
  impact.assign(bodies.size(), 0);
  std::vector<int> limits_on;
  std::uint64_t limit_set = 1469598103934665603ull;
  for (int r = 0; inequalities && r < n; ++r) {
    if (!(rows[r].kind == RowKind::Lower && state[r] == State::Active)) continue;
    const auto& j = joints[row_joint[r]];
    if (j.a >= 0) impact[j.a] = 1;
    if (j.b >= 0) impact[j.b] = 1;
    limits_on.push_back(r);
    limit_set = fnv(limit_set, r);
  }
  if (limits_on.empty()) {  // no limit holds (any more)
    limit_smooth.clear();
    return;
  }
  // The step without the limits (nonsmooth generalized-alpha, finish_step): this iterate plus
  // the increment of the same solve with the limit rows released, every other row as it
  // ended (the joint forces that carry the limit's push through the component drop out with
  // it). Taken in the first iteration that has this active set, from an iterate the limits
  // have not moved yet: later iterates carry the limits' push, its stress (whose geometric
  // stiffness would shrink a released increment from there) and the corrections of its
  // linearised rotation.
  if (settings.time_integration == TimeIntegration::ImplicitEuler) return;  // inelastic as is
  if (!limit_smooth.empty() && limit_set == limit_smooth_set) return;
  const std::vector<double> lambda_limits = lambda;
  std::vector<Vec12> y_limits = y;
  for (int r : limits_on) state[r] = State::Inactive;
  const StepStats kept = stats;  // the step reports the solve that moved it
  solve_active_set();
  stats = kept;
  for (int r : limits_on) state[r] = State::Active;  // the active set of the step
  limit_smooth.resize(bodies.size());
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (bodies[i].dynamic()) limit_smooth[i] = u[i] + y[i];
  }
  limit_smooth_set = limit_set;
  y.swap(y_limits);
  lambda = lambda_limits;
}

}  // namespace mabd
