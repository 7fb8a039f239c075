// Backward Euler / static Newton solves of a tet FEM solid (see fem_solid.h).
#include "fem/fem_solid.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "mabd/error.h"

namespace mabd::fem {
namespace {

/// First free coordinate of each node (-1 if pinned), free nodes in node order.
std::vector<int> free_dofs(const FemModel& model, int* count) {
  std::vector<int> dof(model.num_nodes(), -1);
  int n = 0;
  for (int i = 0; i < model.num_nodes(); ++i) {
    if (!model.pinned(i)) {
      dof[i] = n;
      n += 3;
    }
  }
  *count = n;
  return dof;
}

int count_free(const FemModel& model) {
  int n = 0;
  free_dofs(model, &n);
  return n;
}

}  // namespace

FemSolid::FemSolid(FemModel model, const FemSettings& settings)
    : model_(std::move(model)),
      settings_(settings),
      state_(rest_state(model_)),
      pin_target_(model_.mesh().rest),
      node_forces_(Eigen::VectorXd::Zero(3 * model_.num_nodes())),
      dof_([this] {
        int n = 0;
        return free_dofs(model_, &n);
      }()),
      system_(model_.mesh().tets, dof_, count_free(model_)),
      gradient_(Eigen::VectorXd::Zero(3 * model_.num_nodes())) {
  // M on the free coordinates, in the system's value layout.
  auto v = system_.values();
  v.setZero();
  for (int e = 0; e < model_.mesh().num_tets(); ++e) system_.add_tet(e, model_.tet_mass(e));
  mass_values_ = v;
}

void FemSolid::set_state(const FemState& state) {
  const int n = 3 * model_.num_nodes();
  if (state.x.size() != n || state.v.size() != n) {
    throw InvalidArgument("FemSolid::set_state: x and v need " + std::to_string(n) + " entries");
  }
  if (!state.x.allFinite() || !state.v.allFinite()) {
    throw InvalidArgument("FemSolid::set_state: non-finite position or velocity");
  }
  state_ = state;
}

void FemSolid::set_pin_target(int i, const Vec3& target) {
  if (i < 0 || i >= model_.num_nodes() || !model_.pinned(i)) {
    throw InvalidArgument("FemSolid::set_pin_target: node " + std::to_string(i) +
                          " is not a pinned node");
  }
  if (!target.allFinite()) throw InvalidArgument("FemSolid::set_pin_target: non-finite target");
  pin_target_[i] = target;
}

double FemSolid::energy(const Problem& p, const Eigen::VectorXd& x, double* scale) const {
  double inertia = 0;
  if (p.inv_h2 > 0) {
    const Eigen::VectorXd d = x - p.x_pred;
    inertia = 0.5 * p.inv_h2 * d.dot(model_.mass_times(d));
  }
  const double elastic = fem::elastic_energy(model_, x);
  const double work = -p.f_ext.dot(x - p.x_ref);
  // Round-off scale of E: the elastic sum adds terms of size ~(mu + lambda) V_e each, much
  // larger than their total near the rest shape.
  const StableNeoHookean& snh = model_.neo_hookean();
  if (scale) {
    *scale = std::abs(inertia) + std::abs(work) +
             4 * (snh.mu() + snh.lambda()) * model_.mesh().total_volume();
  }
  return inertia + elastic + work;
}

void FemSolid::assemble(const Problem& p, const Eigen::VectorXd& x, Eigen::VectorXd& g,
                        bool hessian, bool project) {
  // g = M (x - x_pred)/h^2 + dPsi/dx - f_ext;  H = M/h^2 + sum_e V_e B^T d2Psi/dF2 B.
  g = -p.f_ext;
  if (p.inv_h2 > 0) g += p.inv_h2 * model_.mass_times(x - p.x_pred);
  auto values = system_.values();
  if (hessian) values = p.inv_h2 * mass_values_;
  const TetMesh& mesh = model_.mesh();
  const StableNeoHookean& snh = model_.neo_hookean();
  for (int e = 0; e < mesh.num_tets(); ++e) {
    const Mat3 F = deformation_gradient(mesh, e, x);
    const Vec12 ge = tet_gradient(model_.shape_gradients(e), mesh.volume[e], snh.stress(F));
    const Tet& t = mesh.tets[e];
    for (int a = 0; a < 4; ++a) g.segment<3>(3 * t[a]) += ge.segment<3>(3 * a);
    if (hessian) {
      const Mat9 H9 = project ? snh.projected_hessian(F) : snh.hessian(F);
      system_.add_tet(e, tet_hessian(model_.shape_gradients(e), mesh.volume[e], H9));
    }
  }
}

bool FemSolid::factor_at(const Problem& p, const Eigen::VectorXd& x, Eigen::VectorXd& g,
                         bool* projected) {
  bool project = settings_.projection == HessianProjection::always;
  assemble(p, x, g, true, project);
  bool factored = system_.factorize();
  if (!factored && settings_.projection == HessianProjection::when_indefinite) {
    project = true;
    assemble(p, x, g, true, true);
    factored = system_.factorize();
  }
  *projected = project;
  return factored;
}

NewtonReport FemSolid::newton(const Problem& p, Eigen::VectorXd& x) {
  NewtonReport rep;
  const int n = model_.num_nodes();
  Eigen::VectorXd g, gf(system_.size()), dx = Eigen::VectorXd::Zero(3 * n);
  for (int it = 1; it <= settings_.max_newton_iterations; ++it) {
    bool project = false;
    const bool factored = factor_at(p, x, g, &project);
    for (int i = 0; i < n; ++i) {
      if (dof_[i] >= 0) gf.segment<3>(dof_[i]) = g.segment<3>(3 * i);
    }
    if (!factored) {
      throw SimulationError("FemSolid: Newton iteration " + std::to_string(it) +
                            ": the Hessian is not positive definite (a static solve needs "
                            "pins that remove rigid motion)");
    }
    rep.projected += project;
    const Eigen::VectorXd dxf = -system_.solve(gf);
    if (!dxf.allFinite()) {
      throw SimulationError("FemSolid: Newton iteration " + std::to_string(it) +
                            ": non-finite increment");
    }
    for (int i = 0; i < n; ++i) {
      if (dof_[i] >= 0) dx.segment<3>(3 * i) = dxf.segment<3>(dof_[i]);
    }
    rep.iterations = it;
    rep.last_increment = dxf.size() ? dxf.cwiseAbs().maxCoeff() : 0.0;
    if (rep.last_increment <= settings_.newton_tol) {
      x += dx;
      rep.converged = true;
      break;
    }
    // Backtracking line search with sufficient decrease; the slack (1e-12 of E's round-off
    // scale) covers the round-off of E, so a step whose change is below it is accepted.
    double scale = 0;
    const double E0 = energy(p, x, &scale);
    const double slope = gf.dot(dxf);
    double alpha = 1;
    bool accepted = false;
    Eigen::VectorXd xt;
    for (int ls = 0; ls <= settings_.max_line_search; ++ls) {
      xt = x + alpha * dx;
      if (energy(p, xt, nullptr) <= E0 + settings_.armijo * alpha * slope + 1e-12 * scale) {
        accepted = true;
        break;
      }
      alpha *= 0.5;
      ++rep.line_search_halvings;
    }
    if (!accepted) break;
    x = xt;
  }
  assemble(p, x, g, false, false);
  gradient_ = g;
  rep.gradient_norm = 0;
  for (int i = 0; i < n; ++i) {
    if (dof_[i] < 0) continue;
    rep.gradient_norm = std::max(rep.gradient_norm, g.segment<3>(3 * i).cwiseAbs().maxCoeff());
  }
  return rep;
}

FemSolid::Problem FemSolid::step_problem(double h, const Vec3& gravity) const {
  if (!(h > 0) || !std::isfinite(h)) {
    throw InvalidArgument("FemSolid::step: time step " + std::to_string(h) + " s must be positive");
  }
  const int n = model_.num_nodes();
  Problem p;
  p.inv_h2 = 1 / (h * h);
  p.x_pred = state_.x + h * state_.v;
  p.f_ext = node_forces_;
  for (int i = 0; i < n; ++i) p.f_ext.segment<3>(3 * i) += model_.node_mass()[i] * gravity;
  p.x_ref = state_.x;
  return p;
}

NewtonReport FemSolid::step(double h, const Vec3& gravity) {
  const int n = model_.num_nodes();
  const Problem p = step_problem(h, gravity);
  Eigen::VectorXd x = p.x_pred;  // inertial initial guess
  for (int i = 0; i < n; ++i) {
    if (model_.pinned(i)) x.segment<3>(3 * i) = pin_target_[i];
  }
  report_ = newton(p, x);
  if (!x.allFinite()) throw SimulationError("FemSolid::step: non-finite positions");
  state_.v = (x - state_.x) / h;
  state_.x = x;
  return report_;
}

void FemSolid::begin_step(double h, const Vec3& gravity) {
  lock_ = step_problem(h, gravity);
  lock_h_ = h;
  iterate_ = lock_.x_pred;
  for (int i = 0; i < model_.num_nodes(); ++i) {
    if (model_.pinned(i)) iterate_.segment<3>(3 * i) = pin_target_[i];
  }
}

Eigen::VectorXd FemSolid::newton_increment() {
  const int n = model_.num_nodes();
  bool projected = false;
  if (!factor_at(lock_, iterate_, gradient_, &projected)) {
    throw SimulationError("the Hessian is not positive definite");
  }
  Eigen::VectorXd gf(system_.size());
  for (int i = 0; i < n; ++i) {
    if (dof_[i] >= 0) gf.segment<3>(dof_[i]) = gradient_.segment<3>(3 * i);
  }
  const Eigen::VectorXd dxf = -system_.solve(gf);
  Eigen::VectorXd dx = Eigen::VectorXd::Zero(3 * n);
  for (int i = 0; i < n; ++i) {
    if (dof_[i] >= 0) dx.segment<3>(3 * i) = dxf.segment<3>(dof_[i]);
  }
  return dx;
}

void FemSolid::add_to_iterate(const Eigen::VectorXd& dx) {
  for (int i = 0; i < model_.num_nodes(); ++i) {
    if (dof_[i] >= 0) iterate_.segment<3>(3 * i) += dx.segment<3>(3 * i);
  }
}

void FemSolid::end_step() {
  state_.v = (iterate_ - state_.x) / lock_h_;
  state_.x = iterate_;
}

NewtonReport FemSolid::static_solve(const Vec3& gravity) {
  const int n = model_.num_nodes();
  Problem p;
  p.f_ext = node_forces_;
  for (int i = 0; i < n; ++i) p.f_ext.segment<3>(3 * i) += model_.node_mass()[i] * gravity;
  p.x_ref = state_.x;
  p.x_pred = state_.x;
  Eigen::VectorXd x = state_.x;
  for (int i = 0; i < n; ++i) {
    if (model_.pinned(i)) x.segment<3>(3 * i) = pin_target_[i];
  }
  report_ = newton(p, x);
  if (!x.allFinite()) throw SimulationError("FemSolid::static_solve: non-finite positions");
  state_.x = x;
  state_.v.setZero();
  return report_;
}

void FemSolid::factor_hessian(double h) {
  Problem p;
  p.inv_h2 = h > 0 ? 1 / (h * h) : 0;
  p.x_pred = state_.x;
  p.x_ref = state_.x;
  p.f_ext = Eigen::VectorXd::Zero(state_.x.size());
  Eigen::VectorXd g;
  bool projected = false;
  if (!factor_at(p, state_.x, g, &projected)) {
    throw SimulationError("FemSolid::factor_hessian: the Hessian is not positive definite");
  }
}

Eigen::VectorXd FemSolid::solve_hessian(const Eigen::VectorXd& r) const {
  const int n = model_.num_nodes();
  if (r.size() != 3 * n) {
    throw InvalidArgument("FemSolid::solve_hessian: r needs " + std::to_string(3 * n) +
                          " entries");
  }
  if (!system_.factored()) {
    throw InvalidArgument("FemSolid::solve_hessian: no valid factor (call factor_hessian, step "
                          "or static_solve first)");
  }
  Eigen::VectorXd rf(system_.size());
  for (int i = 0; i < n; ++i) {
    if (dof_[i] >= 0) rf.segment<3>(dof_[i]) = r.segment<3>(3 * i);
  }
  const Eigen::VectorXd yf = system_.solve(rf);
  Eigen::VectorXd y = Eigen::VectorXd::Zero(3 * n);
  for (int i = 0; i < n; ++i) {
    if (dof_[i] >= 0) y.segment<3>(3 * i) = yf.segment<3>(dof_[i]);
  }
  return y;
}

Eigen::MatrixXd FemSolid::hessian_columns(const std::vector<int>& coords) const {
  const int n = model_.num_nodes();
  if (!system_.factored()) {
    throw InvalidArgument("FemSolid::hessian_columns: no valid factor (call factor_hessian, "
                          "step or static_solve first)");
  }
  const int k = static_cast<int>(coords.size());
  Eigen::MatrixXd rf = Eigen::MatrixXd::Zero(system_.size(), k);
  for (int j = 0; j < k; ++j) {
    const int c = coords[j];
    if (c < 0 || c >= 3 * n || dof_[c / 3] < 0) {
      throw InvalidArgument("FemSolid::hessian_columns: coordinate " + std::to_string(c) +
                            " is not a free node's");
    }
    rf(dof_[c / 3] + c % 3, j) = 1;
  }
  const Eigen::MatrixXd yf = system_.solve_many(rf);
  Eigen::MatrixXd y = Eigen::MatrixXd::Zero(3 * n, k);
  for (int i = 0; i < n; ++i) {
    if (dof_[i] >= 0) y.middleRows<3>(3 * i) = yf.middleRows<3>(dof_[i]);
  }
  return y;
}

}  // namespace mabd::fem
