// A projection of the step's end configuration onto the joints' own rows and their limits
// (DESIGN section 2: hinge, universal, prismatic and fixed rows, and limit rows, are nonlinear
// in q). The Newton loop leaves them open where its last iteration turned a body (by about
// the square of the turn) and the loop stopped iterating: contacts switching between
// iterations, or its cap; with contacts between dynamic bodies it leaves them to this alone
// (advance, step.cpp). The projection is the dual solve with no force, at the current iterate:
//   (S + diag(alpha)) lambda = C(q),   dq = -H^{-1} G^T lambda,
// solved by a sparse Cholesky of its own (projection_dual), with H^{-1} the last iteration's
// body operators (collider contacts folded in, so the correction does not push into them),
// the rows rebuilt at q (a violated limit row active), and the right-hand side of compliant
// and force-bounded rows zero: springs and drives resist the correction, they do not act.
// Joints with a compliance are soft by design and left as they are. Only q moves; the
// velocities keep the step's increment u, so no kinetic energy is added. Repeated while each
// projection at least halves the residual (Gauss-Newton on C(q) = 0 converges quadratically
// from a small residual).
#include <algorithm>

#include "world/world_impl.h"

namespace mabd {

void World::Impl::project_joints() {
  if ((rigid_nonlinear_joints.empty() && limited_joints.empty()) || !soft_bodies.empty()) return;
  const double hold = std::max(settings.tolerance, kJointHold);
  double open = projection_residual();
  if (!(open > hold)) return;
  // What the step reports from its last iteration stays: multipliers (joint forces), the
  // increment y (contact statistics), the rows, the limit state and the solver's figures.
  const std::vector<double> lambda_kept = lambda;
  const std::vector<Vec12> y_kept = y;
  const std::vector<char> impact_kept = impact;
  const std::vector<Vec12> smooth_kept = limit_smooth;
  const std::uint64_t smooth_set_kept = limit_smooth_set;
  const StepStats stats_kept = stats;
  const bool closed_kept = closed_form_dual;
  detail::RowSet rows_kept;
  std::swap(rows_kept, row_set);
  std::vector<Vec12> q_before;
  projecting = true;
  for (int k = 0; k < kJointProjections && open > hold; ++k) {
    for (auto& v : y) v.setZero();
    rows_stamp = ~0ull;  // rows at this q
    resolvable.solver = nullptr;
    stale_operators.bodies.clear();
    dual_solve();
    q_before = q;
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      if (bodies[i].dynamic()) q[i] += y[i];
    }
    const double next = projection_residual();
    if (!(next <= 0.5 * open)) {  // not converging (regularised redundant rows): undo
      q.swap(q_before);
      break;
    }
    open = next;
  }
  projecting = false;
  std::swap(rows_kept, row_set);
  rows_stamp = ~0ull;
  resolvable.solver = nullptr;
  ++response_stamp;
  lambda = lambda_kept;
  y = y_kept;
  impact = impact_kept;
  limit_smooth = smooth_kept;
  limit_smooth_set = smooth_set_kept;
  stats = stats_kept;
  closed_form_dual = closed_kept;
}

}  // namespace mabd
