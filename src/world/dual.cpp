// The dual (KKT) solve of one Newton iteration (paper Eqs. kkt, primal, dual; DESIGN 3):
//   (S + diag(alpha)) lambda = G H^{-1} f + C(q),   S = G H^{-1} G^T,
//   dq = H^{-1} (f - G^T lambda).
// H^{-1} is applied body by body with the pre-factored Hb (never a 12M x 12M matrix). Limit
// rows enter only while violated and pushing; drive rows whose force exceeds their limit are
// held at the limit (an active-set loop of a few passes). With limits active, generalized-
// alpha also needs the step without them (limit_smooth): one more solve with those rows
// released, once per active set and step.
// The rows come from the row sources (row_source.h) into one RowSet; the loop reads each
// row's kind and bodies there, and the chosen DualSolver (src/solvers, solver_choice.cpp)
// solves each pass, with the sparse Cholesky as its fallback.
#include <chrono>
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

void World::Impl::note_regularised(const detail::DualSolver& solver) {
  if (solver.regularised() && !redundancy_reported) {
    warnings.push_back("redundant joint rows (an over-constrained loop?) were regularised; "
                       "give the joints a compliance to make this explicit");
    redundancy_reported = true;
  }
}

void World::Impl::build_rows() {
  row_set.begin(*this, y);
  for_each_row_source([&](const detail::RowSource& source) { source.append_rows(q, row_set); });
  row_set.finish();
  if (!projecting) return;
  for (int r = 0; r < row_set.size(); ++r) {  // (y = 0: rhs = C)
    auto& row = row_set.rows[r];
    if (row.compliance > 0 || row.kind == RowKind::Bounded) row.c = row_set.rhs[r] = 0;
  }
}

void World::Impl::dual_solve() {
  closed_form_dual = false;
  detail::DualSolver& chosen = projecting ? projection_dual : dual_method();
  detail::DualSolver& method =
      &chosen == &iterative_dual && iterative_stalled ? sparse_dual : chosen;
  dual_used = nullptr;
  tree_dual.set_pool(pool.workers.get());  // independent subtrees on the step's threads
  iterative_dual.set_pool(pool.workers.get());  // and the preconditioner's lines
  // The closed form keeps no row set: contact and attachment responses need one. Its general
  // items (joints other than plain ball joints) build their rows from the joints, the only
  // source that has such items.
  const detail::JointRows joint_rows(joints, settings.dt);
  const detail::ItemRows item_rows = [&](std::uint32_t k, std::vector<Row>& out) {
    joint_rows.item_rows(k, q, out);
  };
  if (&method == &chain_dual && ball_chain_dual.ready() && !pairs_on_joints && soft_links == 0 &&
      !soft_touch_dynamic &&
      ball_chain_dual.solve(*this, q, y, lambda, item_rows, pool.workers.get())) {
    closed_form_dual = true;
    row_set.begin(*this, y);  // no rows (lambda: 3 per item)
    rows_stamp = ~0ull;
    ++response_stamp;  // the articulations' response factors (joint_response.cpp) go stale
    stats.solver = "chain";
    stats.dual_iterations = 0;
    stats.dual_residual = 0;
    return;
  }
  // Rows of every source at the current iterate (phase 4), with G y + C.
  auto t_rows = std::chrono::steady_clock::now();
  if (rows_stamp == operator_stamp && (resolvable.solver != nullptr || stale_operators.valid)) {
    row_set.update_rhs(y);  // the rows of this iterate stand, and W if computed
    if (row_set.have_w && !stale_operators.bodies.empty()) {
      // A contact pass changed some bodies' operators: their rows' W, if the method reads W.
      if (wants_w(method)) {
        row_set.update_w(*this, stale_operators.bodies);
      } else {
        row_set.have_w = false;
      }
    }
  } else {
    build_rows();
    rows_stamp = operator_stamp;
  }
  stale_operators.valid = true;
  stale_operators.bodies.clear();
  stats.rows_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                             t_rows).count();
  auto& rs = row_set;
  const auto& rows = rs.rows;
  const bool inequalities = rs.inequalities;  // any limit or bounded row: the active-set loop
  const int n = rs.size();
  if (&method == &chosen) {  // (after a stall the step reports the stalled attempt)
    stats.dual_iterations = 0;
    stats.dual_residual = 0;
  }

  // W = H^{-1} G^T per row and dynamic side, computed by the first full solve that reads it.
  // Without W (the tree solver on co-rotated polar bodies, a repeated solve) the increment is
  // applied body by body.

  // Active set: equality and bounded rows start active, limit rows only when violated.
  // Scratch kept between solves (fresh large allocations cost page faults every step).
  using State = DualRowState;
  auto& state = dual_scratch.state;
  state.assign(n, State::Active);
  for (int r = 0; inequalities && r < n; ++r) {
    if (rows[r].kind == RowKind::Lower && rows[r].c >= 0) state[r] = State::Inactive;
  }
  if (&method == &iterative_dual) {
    iterative_dual.warm_start(lambda);  // the last solve's multipliers
    iterative_dual.set_limits(settings.dual_tolerance, settings.dual_max_iterations);
  }
  lambda.assign(n, 0.0);
  auto& y0 = dual_scratch.y0;  // H^{-1} (f - forces of saturated drives)
  y0 = y;
  bool y0_changed = false;  // rs.rhs holds G y0 + C until then
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
      rhs[index[r]] = y0_changed ? rs.g_y(r, y0) : rs.rhs[r];
    }
    // The rows and body operators of the last full solve: its solver solves again.
    detail::DualSolver* used = resolvable.solver;
    bool solved = used != nullptr && resolvable.pattern == pattern && resolvable.rows == m &&
                  used->resolve(index, rhs, sol);
    if (!solved) {
      // A new system: the articulations' response factors (joint_response.cpp), built on the
      // same rows, active set and operators, go stale with it.
      ++response_stamp;
      used = &method;
      if (wants_w(method) && !rs.have_w) rs.compute_w(*this);
      solved = method.solve(rs, *this, index, m, pattern, rhs, sol);
    }
    if (used == &method && &method == &iterative_dual) {
      const auto& result = iterative_dual.result();
      stats.dual_iterations = result.iterations;
      stats.dual_residual = result.residual;
      iterative_stalled |= !solved;
      if (!solved && !iterative_fallback_reported) {
        warnings.push_back("step " + std::to_string(steps + 1) +
                           ": the iterative dual solver stopped at relative residual " +
                           std::to_string(result.residual) + " after " +
                           std::to_string(result.iterations) +
                           " iterations; solved by sparse Cholesky instead (raise "
                           "dual_max_iterations or dual_tolerance)");
        iterative_fallback_reported = true;
      }
    }
    if (!solved && &method != &sparse_dual) {  // fall back to the sparse Cholesky
      used = &sparse_dual;
      if (!rs.have_w) rs.compute_w(*this);
      solved = sparse_dual.solve(rs, *this, index, m, pattern, rhs, sol);
    }
    if (!solved) {
      throw SimulationError("step " + std::to_string(steps + 1) +
                            ": the joint system could not be solved (dual matrix singular)");
    }
    if (used != resolvable.solver || resolvable.pattern != pattern || resolvable.rows != m) {
      resolvable.solver = used;
      resolvable.pattern = pattern;
      resolvable.rows = m;
    }
    stats.solver = used->name();
    note_regularised(*used);
    dual_used = used;
    dual_active = m;
    dual_pattern = pattern;
    for (int r = 0; r < n; ++r) {
      if (index[r] >= 0) lambda[r] = sol[index[r]];
    }
    // Increment with these multipliers, to test inactive limits (body by body, each body on
    // its own: the same bits on any number of threads).
    const std::size_t nb = bodies.size();
    for_ranges(nb, range_count(nb), [&](int, std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) {
        y[i] = y0[i];
        if (rs.have_w) {
          for (int r : rs.rows_of[i]) {
            if (index[r] >= 0) y[i] -= rs.w_of(r, i) * lambda[r];
          }
          continue;
        }
        if (i + 2 < end) {
          for (int r : rs.rows_of[i + 2]) rs.prefetch_row(r);  // rows in item order, read by body
        }
        if (rs.rows_of[i].empty()) continue;
        Vec12 f = Vec12::Zero();  // dq = y - H^{-1} G^T lambda
        for (int r : rs.rows_of[i]) {
          if (index[r] >= 0) f.noalias() += rs.g_of(r, i) * lambda[r];
        }
        y[i] -= solve_body(i, f);
      }
    });
  };
  for (int pass = 0; pass < 6; ++pass) {
    solve_active_set();
    if (!inequalities) break;  // equality rows only: nothing to test
    bool changed = false;
    for (int r = 0; r < n; ++r) {
      const Row& row = rows[r];
      if (row.kind == RowKind::Equality) continue;
      const int a = rs.row_a[r], b = rs.row_b[r];
      if (row.kind == RowKind::Lower) {
        if (state[r] == State::Active && lambda[r] > 0) {  // pulling: release
          state[r] = State::Inactive;
          lambda[r] = 0;
          changed = true;
        } else if (state[r] == State::Inactive) {
          double c_new = row.c;
          if (dynamic(a)) c_new += row.ga.dot(y[a]);
          if (dynamic(b)) c_new += row.gb.dot(y[b]);
          if (c_new < 0) {
            state[r] = State::Active;
            changed = true;
          }
        }
      } else if (row.kind == RowKind::Bounded && state[r] == State::Active &&
                 std::abs(lambda[r]) > row.bound) {
        lambda[r] = std::copysign(row.bound, lambda[r]);
        state[r] = State::Saturated;
        if (dynamic(a)) y0[a] -= (rs.have_w ? rs.wa[r] : solve_body(a, row.ga)) * lambda[r];
        if (dynamic(b)) y0[b] -= (rs.have_w ? rs.wb[r] : solve_body(b, row.gb)) * lambda[r];
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
    if (rs.row_a[r] >= 0) impact[rs.row_a[r]] = 1;
    if (rs.row_b[r] >= 0) impact[rs.row_b[r]] = 1;
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
  // joint_response works on the active set of the step, not this one.
  const std::vector<int> index_kept = index;
  const int active_kept = dual_active;
  const std::uint64_t pattern_kept = dual_pattern;
  detail::DualSolver* used_kept = dual_used;
  solve_active_set();
  stats = kept;
  index = index_kept;
  dual_active = active_kept;
  dual_pattern = pattern_kept;
  dual_used = used_kept;
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
