// A tetrahedral FEM solid stepped by backward (implicit) Euler written as an incremental
// potential over the node positions x (m, world frame, 3N):
//   E(x) = 1/(2h^2) (x - x_pred)^T M (x - x_pred) + sum_e V_e Psi(F_e(x)) - f_ext . x,
//   x_pred = x^n + h v^n,  f_ext = M (1 (x) g) + f_nodes,
// minimised by Newton: H dx = -g with H = M/h^2 + K(x), K assembled from the per-tet
// d2Psi/dF2 (projected to PSD by eigen-clamp; see HessianProjection for when) and factored
// by sparse Cholesky on the free nodes (pattern and symbolic analysis kept for the life of
// the solid), then a backtracking (Armijo) line search on E. Newton stops when the largest
// coordinate of the increment dx is at most `newton_tol` (that last increment is applied),
// after `max_newton_iterations`, or if the line search finds no decrease. Then
// v^{n+1} = (x^{n+1} - x^n)/h. Pinned (Dirichlet) nodes are not unknowns: they are placed at
// their targets and kept there. The static solve minimises the same E without inertia.
// Backward Euler conserves linear momentum but only dissipates energy and angular momentum
// (L^{n+1} - L^n = h sum_ij M_ij v^{n+1}_i x v^n_j, first order in h over a fixed time).
#pragma once

#include <vector>

#include "fem/fem_model.h"
#include "fem/tet_system.h"

namespace mabd::fem {

/// When the per-tet 9x9 Hessians d2Psi/dF2 are projected to PSD (eigenvalues clamped at 0).
enum class HessianProjection {
  always,           ///< every Newton iteration (robust; convergence only linear once
                    ///< stressed tets have clamped modes)
  when_indefinite,  ///< exact Hessian; an iteration whose Cholesky fails (H not positive
                    ///< definite) is redone with the projected one (quadratic convergence
                    ///< near the solution, usually far fewer iterations)
  never,            ///< exact Hessian; SimulationError if it is not positive definite
};

/// Newton settings.
struct FemSettings {
  double newton_tol = 1e-9;      ///< stop when max_i |dx_i| <= this (m)
  int max_newton_iterations = 50;
  double armijo = 1e-4;          ///< sufficient decrease factor c: E(x + a dx) <= E + c a g.dx
  int max_line_search = 30;      ///< halvings of the step before giving up
  /// when_indefinite by default: on models/soft_blob standing on its soles (h = 10 ms) it
  /// takes 3.0 / 3.8 / 5.7 Newton iterations per step at E = 1e6 / 1e5 / 1e4 Pa where
  /// `always` takes 4.0 / 6.6 / 50 (hitting a 100-iteration cap on some steps at 1e4 Pa),
  /// and 7 vs 21 iterations for the static solve at 1e6 Pa.
  HessianProjection projection = HessianProjection::when_indefinite;
};

/// What the last Newton solve did.
struct NewtonReport {
  int iterations = 0;          ///< Newton iterations (linear solves)
  int line_search_halvings = 0;  ///< total step halvings
  double last_increment = 0;   ///< max |dx_i| of the last Newton step (m)
  double gradient_norm = 0;    ///< max |g_i| over free coordinates at the result (N)
  int projected = 0;           ///< iterations that used the PSD-projected Hessian
  bool converged = false;      ///< the increment reached newton_tol (false: iteration cap
                               ///< or no decrease found by the line search)
};

class FemSolid {
 public:
  /// Starts at the rest state; pinned nodes are held at their rest positions.
  explicit FemSolid(FemModel model, const FemSettings& settings = {});

  const FemModel& model() const { return model_; }
  FemSettings& settings() { return settings_; }
  const FemSettings& settings() const { return settings_; }
  const FemState& state() const { return state_; }
  /// Sets x (m) and v (m/s), 3N each; pinned nodes' targets are left as they are. Throws
  /// mabd::InvalidArgument on a wrong size or a non-finite value.
  void set_state(const FemState& state);

  /// Node positions x (m, world frame, 3N).
  const Eigen::VectorXd& positions() const { return state_.x; }
  Vec3 position(int i) const { return state_.x.segment<3>(3 * i); }

  /// Target position (m) of pinned node i for the next step or static solve (it moves there
  /// in one step, with velocity (target - x)/h). Throws InvalidArgument if i is not pinned.
  void set_pin_target(int i, const Vec3& target);
  const Vec3& pin_target(int i) const { return pin_target_[i]; }

  /// Extra external node forces f_nodes (N, 3N vector, zero by default), added to gravity.
  Eigen::VectorXd& node_forces() { return node_forces_; }

  /// One backward Euler step of h (s) under gravitational acceleration g (m/s^2). Throws
  /// InvalidArgument if h <= 0, mabd::SimulationError if the Hessian cannot be factored or
  /// the state becomes non-finite (the state is then left unchanged).
  NewtonReport step(double h, const Vec3& gravity);

  /// Static equilibrium under gravity g (m/s^2) and node_forces(): minimises sum V Psi -
  /// f_ext . x from the current positions (pinned nodes at their targets); velocities are
  /// set to zero. Needs enough pins to remove rigid motion (else SimulationError).
  NewtonReport static_solve(const Vec3& gravity);

  const NewtonReport& last_report() const { return report_; }

  // --- Lockstep stepping (the World's Newton loop drives one iteration at a time) ----------
  /// Starts a backward Euler step of h (s) under gravity g (m/s^2): the iterate becomes the
  /// inertial prediction x^n + h v^n, pinned nodes at their targets. Throws InvalidArgument
  /// if h <= 0.
  void begin_step(double h, const Vec3& gravity);
  /// The step's current iterate x (m, 3N).
  const Eigen::VectorXd& iterate() const { return iterate_; }
  /// Assembles the gradient and Hessian at the iterate, factors the Hessian (projected as
  /// settings().projection says) and returns the Newton increment -H^{-1} g (m, 3N, zero on
  /// pinned nodes); solve_hessian() then uses this factor. Throws SimulationError if the
  /// Hessian cannot be factored.
  Eigen::VectorXd newton_increment();
  /// Adds dx (m, 3N; pinned entries ignored) to the iterate.
  void add_to_iterate(const Eigen::VectorXd& dx);
  /// Ends the step: x^{n+1} = iterate, v^{n+1} = (x^{n+1} - x^n)/h.
  void end_step();

  // --- Queries (J, kg m/s, kg m^2/s) ------------------------------------------------------
  double kinetic_energy() const { return fem::kinetic_energy(model_, state_); }
  double elastic_energy() const { return fem::elastic_energy(model_, state_.x); }
  double gravitational_energy(const Vec3& g) const {
    return fem::gravitational_energy(model_, state_, g);
  }
  Vec3 linear_momentum() const { return fem::linear_momentum(model_, state_); }
  Vec3 angular_momentum() const { return fem::angular_momentum(model_, state_); }

  // --- For coupling (e.g. to affine bodies) -----------------------------------------------
  /// First free coordinate of node i in the reduced system, -1 if pinned.
  int free_dof(int i) const { return dof_[i]; }
  int num_free_dofs() const { return system_.size(); }
  /// Gradient dE/dx (N, 3N) of the last solve's potential at the current positions. On free
  /// coordinates it is the Newton residual (about zero after a converged solve); on pinned
  /// ones it is the force the pin exerts on the node.
  const Eigen::VectorXd& gradient() const { return gradient_; }
  /// Assembles and factors the free-node Hessian M/h^2 + K(x) at the current positions
  /// (h in s; h = 0 means the static Hessian K), projected as settings().projection says.
  /// step() and static_solve() leave the factor of their last Newton iterate, which differs
  /// from this by the last increment. Throws SimulationError if it cannot be factored.
  void factor_hessian(double h);
  /// H^-1 r with the current factor, on the free coordinates: r is a 3N force (N) whose
  /// pinned entries are ignored; returns a 3N displacement (m), zero on pinned nodes. Throws
  /// InvalidArgument on a wrong size or if there is no valid factor (none yet, or the last
  /// factorisation failed).
  Eigen::VectorXd solve_hessian(const Eigen::VectorXd& r) const;
  /// Columns of H^{-1} with the current factor: column k is H^{-1} e_c for c = coords[k], a
  /// coordinate of a free node (3 i + axis); 3N rows (m/N), zero on pinned nodes. Throws
  /// InvalidArgument as solve_hessian does, or for a pinned or out-of-range coordinate.
  Eigen::MatrixXd hessian_columns(const std::vector<int>& coords) const;
  /// Symbolic analyses and numeric factorisations done so far (the first stays 1).
  int analyses() const { return system_.analyses(); }
  int factorizations() const { return system_.factorizations(); }

 private:
  /// The potential being minimised: inertia (inv_h2 = 1/h^2, 0 for a static solve),
  /// elasticity and the work of f_ext measured from x_ref (a constant shift, to keep E small
  /// near the solution and its round-off with it).
  struct Problem {
    double inv_h2 = 0;        ///< 1/h^2 (1/s^2)
    Eigen::VectorXd x_pred;   ///< x^n + h v^n (m)
    Eigen::VectorXd f_ext;    ///< external node forces (N)
    Eigen::VectorXd x_ref;    ///< positions the work is measured from (m)
  };
  Problem step_problem(double h, const Vec3& gravity) const;
  /// Factors H at x (after assembling g and H there); false if not positive definite.
  bool factor_at(const Problem& p, const Eigen::VectorXd& x, Eigen::VectorXd& g, bool* projected);
  NewtonReport newton(const Problem& p, Eigen::VectorXd& x);
  double energy(const Problem& p, const Eigen::VectorXd& x, double* scale) const;
  /// Gradient g (3N) at x and, if `hessian`, the free-node Hessian into system_ (per-tet
  /// 9x9 blocks projected to PSD if `project`).
  void assemble(const Problem& p, const Eigen::VectorXd& x, Eigen::VectorXd& g, bool hessian,
                bool project);

  FemModel model_;
  FemSettings settings_;
  FemState state_;
  std::vector<Vec3> pin_target_;
  Eigen::VectorXd node_forces_;
  std::vector<int> dof_;
  TetSystem system_;
  Eigen::VectorXd mass_values_;  ///< M restricted to free coordinates, in system_'s layout
  Eigen::VectorXd gradient_;
  NewtonReport report_;
  Problem lock_;               ///< the lockstep step's problem (begin_step)
  double lock_h_ = 0;          ///< its time step (s)
  Eigen::VectorXd iterate_;    ///< its iterate (m)
};

}  // namespace mabd::fem
