// FemSolid API: the Hessian solve offered for coupling, pins and their reaction forces, the
// single symbolic analysis, dynamics settling on the static solution, and input errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "fem/fem_solid.h"
#include "mabd/error.h"

namespace mabd::fem {
namespace {

/// 0.1 m cube, 3 x 3 x 3 cells, E = 1e5 Pa, nu = 0.3; the nodes of the top face (z = 0.1)
/// pinned if `hang`.
FemModel cube(bool hang, MassType mass = MassType::lumped) {
  TetMesh mesh = make_box_mesh(Vec3::Zero(), Vec3::Constant(0.1), 3, 3, 3);
  std::vector<int> top;
  if (hang) {
    for (int j = 0; j <= 3; ++j) {
      for (int i = 0; i <= 3; ++i) top.push_back(box_node(i, j, 3, 3, 3));
    }
  }
  return FemModel(std::move(mesh), {1000, 1e5, 0.3}, mass, top);
}

// With the unprojected Hessian, H y for y = solve_hessian(r) must equal r on the free
// coordinates: H y = M y / h^2 + K y, K y from central differences of the elastic gradient.
TEST(FemSolid, HessianSolveInvertsTheNewtonHessian) {
  for (const double h : {1e-2, 0.0}) {
    const FemModel model = cube(true, MassType::consistent);
    FemSolid solid(model);
    solid.settings().projection = HessianProjection::never;
    solid.static_solve(Vec3(0, 0, -9.81));  // a deformed state
    solid.factor_hessian(h);
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> u(-1, 1);
    Eigen::VectorXd r(3 * model.num_nodes());
    for (int i = 0; i < r.size(); ++i) r[i] = u(rng);
    const Eigen::VectorXd y = solid.solve_hessian(r);
    const double d = 1e-6 / y.cwiseAbs().maxCoeff();
    const Eigen::VectorXd& x = solid.positions();
    Eigen::VectorXd Hy =
        (elastic_gradient(model, x + d * y) - elastic_gradient(model, x - d * y)) / (2 * d);
    if (h > 0) Hy += model.mass_times(y) / (h * h);
    double err = 0, scale = 0;
    for (int i = 0; i < model.num_nodes(); ++i) {
      if (model.pinned(i)) {
        EXPECT_EQ(Vec3(y.segment<3>(3 * i)), Vec3::Zero());
        continue;
      }
      err = std::max(err, (Hy - r).segment<3>(3 * i).cwiseAbs().maxCoeff());
      scale = std::max(scale, r.segment<3>(3 * i).cwiseAbs().maxCoeff());
    }
    std::printf("h %.0e s: max |H y - r| = %.2e of max |r|\n", h, err / scale);
    EXPECT_LT(err, 1e-6 * scale);
  }
}

// Pinned nodes stay at their targets; the gradient there is the pin force, and the pin forces
// balance the weight and the applied node forces.
TEST(FemSolid, PinForcesBalanceTheLoads) {
  const FemModel model = cube(true);
  FemSolid solid(model);
  const Vec3 g(0, 0, -9.81), tip(0.2, -0.1, -0.5);
  solid.node_forces().segment<3>(3 * box_node(0, 0, 0, 3, 3)) = tip;
  const NewtonReport r = solid.static_solve(g);
  ASSERT_TRUE(r.converged);
  Vec3 pins = Vec3::Zero();
  for (int i = 0; i < model.num_nodes(); ++i) {
    if (model.pinned(i)) {
      EXPECT_EQ(solid.position(i), model.mesh().rest[i]);
      pins += solid.gradient().segment<3>(3 * i);
    }
  }
  const Vec3 loads = model.total_mass() * g + tip;
  EXPECT_LT((pins + loads).norm(), 1e-9 * loads.norm());
  EXPECT_LT(r.gradient_norm, 1e-9 * loads.norm());
}

// A driven pin moves to its target within one step and gets the velocity of that move.
TEST(FemSolid, DrivenPinMovesToItsTarget) {
  const FemModel model = cube(true);
  FemSolid solid(model);
  const int pin = box_node(1, 2, 3, 3, 3);
  const Vec3 target = model.mesh().rest[pin] + Vec3(0.002, 0, 0.001);
  solid.set_pin_target(pin, target);
  const double h = 1e-3;
  solid.step(h, Vec3::Zero());
  EXPECT_EQ(solid.position(pin), target);
  EXPECT_LT((Vec3(solid.state().v.segment<3>(3 * pin)) - Vec3(2, 0, 1)).norm(), 1e-12);
  solid.step(h, Vec3::Zero());
  EXPECT_EQ(solid.position(pin), target);
  EXPECT_LT(Vec3(solid.state().v.segment<3>(3 * pin)).norm(), 1e-12);
}

// Backward Euler damps the hanging cube onto its static equilibrium; the symbolic analysis
// is done once for all the steps and solves.
TEST(FemSolid, DynamicsSettleOnTheStaticSolution) {
  const FemModel model = cube(true);
  const Vec3 g(0, 0, -9.81);
  FemSolid stat(model);
  stat.settings().newton_tol = 1e-12;
  stat.static_solve(g);
  FemSolid dyn(model);
  dyn.settings().newton_tol = 1e-12;
  int iters = 0;
  const int steps = 300;
  for (int n = 0; n < steps; ++n) iters += dyn.step(1e-2, g).iterations;
  double err = 0, sag = 0;
  for (int i = 0; i < model.num_nodes(); ++i) {
    err = std::max(err, (dyn.position(i) - stat.position(i)).norm());
    sag = std::max(sag, (stat.position(i) - model.mesh().rest[i]).norm());
  }
  std::printf("max sag %.3e m; dynamic - static after %d steps: %.2e m; Newton %.2f "
              "iterations/step; analyses %d, factorisations %d\n", sag, steps, err,
              double(iters) / steps, dyn.analyses(), dyn.factorizations());
  EXPECT_LT(err, 1e-8 * sag);
  EXPECT_EQ(dyn.analyses(), 1);
  EXPECT_EQ(dyn.factorizations(), iters);
}

TEST(FemSolid, InputErrors) {
  FemSolid free_cube(cube(false));
  EXPECT_THROW(free_cube.step(0.0, Vec3::Zero()), InvalidArgument);
  EXPECT_THROW(free_cube.static_solve(Vec3(0, 0, -9.81)), SimulationError);  // rigid motion free
  EXPECT_THROW(free_cube.set_pin_target(0, Vec3::Zero()), InvalidArgument);
  EXPECT_THROW(free_cube.set_state(FemState{}), InvalidArgument);
  EXPECT_THROW(free_cube.solve_hessian(Eigen::VectorXd::Zero(3 * 64)), InvalidArgument);
  const TetMesh mesh = make_box_mesh(Vec3::Zero(), Vec3::Ones(), 1, 1, 1);
  EXPECT_THROW(FemModel(mesh, {-1, 1e6, 0.3}), InvalidArgument);
  EXPECT_THROW(FemModel(mesh, {1000, 1e6, 0.5}), InvalidArgument);
  EXPECT_THROW(FemModel(mesh, {1000, 1e6, 0.3}, MassType::lumped, {8}), InvalidArgument);
}

}  // namespace
}  // namespace mabd::fem
