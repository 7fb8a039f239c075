// The contact complementarity problem on the Schur complement of the contact rows over the
// joint solve (DESIGN section 7): with D = G_c M_J^{-1} G_c^T (M_J^{-1}: the joint-constrained
// inverse) and b = C + G_c y (y: the increment with the joints alone), the row values at the
// end of the step are
//   w = b - K lambda,   K = D + diag(alpha),
// in blocks of three rows per contact point (normal n, tangents t1, t2; w in m, lambda in N):
//   normal:   lambda_n <= 0 (pushes only), w_n >= 0 (no penetration), lambda_n w_n = 0;
//   friction: the pyramid aligned with t1 (the sliding direction at detection), each tangent
//             row bounded by mu |lambda_n| with lambda_n lagged: |lambda_t| <= B, w_t = 0
//             inside (no slip over the step), lambda_t = +-B with w_t of the same sign on a
//             bound (the force opposes the slip).
// With the bounds fixed the problem is the convex box-constrained QP
//   min 1/2 lambda^T K lambda - b^T lambda,  lo <= lambda <= hi,
// solved by projected Gauss-Seidel (warm-started) to find the sets, then exactly by an
// active-set loop (the free rows' equalities, dense or sparse LDLT). The friction bounds then
// follow the new normal forces, a few rounds (the normal force of the last iterate).
// Rows after the points' have fixed bounds (the joints' limits and force-limited drives of the
// articulations the contacts touch, solved with them).
#pragma once

#include <vector>

#include <Eigen/Core>
#include <Eigen/SparseCore>

namespace mabd::detail {

struct ContactLcp {
  /// Symmetric positive semi-definite (both triangles stored), 3 rows per point (m/N).
  Eigen::SparseMatrix<double> D;
  Eigen::VectorXd alpha;   ///< compliance per row (m/N), > 0
  Eigen::VectorXd b;       ///< row values with lambda = 0 (m)
  std::vector<double> mu;  ///< friction coefficient per point (0: no friction force)
  /// Bounds of the rows after the 3 per point (N): a limit [-inf, 0], a drive [-F, F].
  std::vector<double> extra_lo, extra_hi;
  int points() const { return static_cast<int>(mu.size()); }
  int size() const { return 3 * points() + static_cast<int>(extra_lo.size()); }
};

struct LcpOptions {
  int max_sweeps = 100;       ///< projected Gauss-Seidel sweeps at most, per round
  double tolerance = 1e-8;    ///< relative change of lambda that ends the sweeps
  int max_pivots = 30;        ///< active-set solves at most, per round
  int max_rounds = 8;         ///< friction-bound updates (lagged normal force) at most
  double bound_tolerance = 1e-6;  ///< relative change of the bounds that ends the rounds
  /// Large groups: those of more rows than this whose active-set loop fails keep to the
  /// sweeps in their later rounds (a settled pile of boxes, 12,000 rows, where every loop
  /// failed after several factorisations). Smaller groups try the loop in every round: the
  /// ragdolls on their net (groups of about 700 rows) sink twice as deep and run slower
  /// when theirs keep to the sweeps.
  int large_group_rows = 2000;
  /// Large groups try the active-set loop (false: they keep to the sweeps, as after a failed
  /// loop; for the later solves of a step where one failed).
  bool pivot_large_groups = true;
  /// Large groups without pivots: projected Gauss-Seidel sweeps at most, all rounds in one
  /// (the friction bounds follow each point's normal force within the sweeps).
  int follow_sweeps = 200;
  /// Sweeps without pivots after them (large groups without pivots, or max_pivots = 0) also
  /// end on a full sweep whose largest change of a row's value, K_rr times the change of its
  /// multiplier, is at most this (m; 0: only the relative tolerance ends them).
  double gap_tolerance = 0;
};

struct LcpResult {
  // Groups of rows that D does not couple are solved one after the other, each with its own
  // sweeps, pivots and rounds: the counts add over the groups, rounds is the most of any.
  int sweeps = 0;      ///< Gauss-Seidel sweeps taken, all rounds
  int pivots = 0;      ///< active-set solves taken, all rounds
  int rounds = 0;      ///< friction-bound rounds taken
  /// The last round's active-set loop converged: lambda solves the QP of its bounds to
  /// round-off (else lambda is the better of the sweeps and the last active-set solve).
  bool exact = false;
  /// Largest violation of the QP's optimality conditions at its bounds, as a force (N): w
  /// scaled by the row's stiffness 1 / K_rr where it should vanish or has the wrong sign.
  double residual = 0;
  /// Largest relative change of a friction bound in the last round (0: the bounds follow the
  /// final normal forces).
  double bound_change = 0;
  /// A large group (LcpOptions::large_group_rows) ended its active-set loop failed (kept the
  /// sweeps').
  bool large_failed = false;
  /// The largest change of a row's value (m) in the last full sweep of a group whose sweeps
  /// were its solve, with no pivots after them (the most over such groups; 0 if none): how
  /// far its multipliers were from a fixed point of the sweeps.
  double sweep_gap = 0;
};

struct LcpWorkspace;  // solvers/lcp_workspace.h

/// Solves the problem; lambda holds a warm start on entry (resized to zero if its size
/// differs) and the solution on return. `work` (optional): scratch kept between calls.
LcpResult solve_contact_lcp(const ContactLcp& problem, Eigen::VectorXd& lambda,
                            const LcpOptions& options = {}, LcpWorkspace* work = nullptr);

}  // namespace mabd::detail
