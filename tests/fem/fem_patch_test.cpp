// Patch test: boundary nodes of an irregular box mesh held on an affine map x = F X + c; the
// static solve must put every interior node on the same map and give every tet the
// homogeneous stress P(F) (linear tets represent affine fields exactly).
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "fem/fem_solid.h"

namespace mabd::fem {
namespace {

void patch_test(BoxSplit split, double nu, HessianProjection projection) {
  const int n = 4;
  const double size = 0.5;  // m
  TetMesh box = make_box_mesh(Vec3::Zero(), Vec3::Constant(size), n, n, n, split);
  // Jitter the interior nodes by up to 0.2 cell so no tet is a regular one.
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-0.2 * size / n, 0.2 * size / n);
  std::vector<Vec3> nodes = box.rest;
  std::vector<int> boundary;
  for (int k = 0; k <= n; ++k) {
    for (int j = 0; j <= n; ++j) {
      for (int i = 0; i <= n; ++i) {
        const int id = box_node(i, j, k, n, n);
        if (i == 0 || j == 0 || k == 0 || i == n || j == n || k == n) {
          boundary.push_back(id);
        } else {
          nodes[id] += Vec3(u(rng), u(rng), u(rng));
        }
      }
    }
  }
  TetMesh mesh = make_tet_mesh(nodes, box.tets, {"jittered box", {}});
  Mat3 F;
  F << 1.10, 0.05, -0.03,
       0.02, 0.93, 0.04,
      -0.05, 0.06, 1.04;
  const Vec3 c(0.03, -0.02, 0.05);
  FemSolid solid(FemModel(mesh, {1000, 1e6, nu}, MassType::lumped, boundary));
  solid.settings().newton_tol = 1e-12;
  solid.settings().projection = projection;
  for (int i : boundary) solid.set_pin_target(i, F * mesh.rest[i] + c);
  const NewtonReport r = solid.static_solve(Vec3::Zero());
  EXPECT_TRUE(r.converged);
  double err = 0, disp = 0;
  for (int i = 0; i < mesh.num_nodes(); ++i) {
    const Vec3 expected = F * mesh.rest[i] + c;
    err = std::max(err, (solid.position(i) - expected).norm());
    disp = std::max(disp, (expected - mesh.rest[i]).norm());
  }
  const Mat3 P = solid.model().neo_hookean().stress(F);
  double stress_err = 0;
  for (int e = 0; e < mesh.num_tets(); ++e) {
    const Mat3 Pe =
        solid.model().neo_hookean().stress(deformation_gradient(mesh, e, solid.positions()));
    stress_err = std::max(stress_err, (Pe - P).norm() / P.norm());
  }
  std::printf("patch (%s split, nu %.2f, %d tets, projection %s): Newton %d iterations (%d "
              "projected), %d halvings; max node error %.2e m = %.2e of the max displacement; "
              "max stress error %.2e relative\n",
              split == BoxSplit::six ? "6-tet" : "5-tet", nu, mesh.num_tets(),
              projection == HessianProjection::always ? "always" : "when indefinite",
              r.iterations, r.projected, r.line_search_halvings, err, err / disp, stress_err);
  EXPECT_LT(err / disp, 1e-8);
  EXPECT_LT(stress_err, 1e-8);
}

TEST(FemPatch, AffineBoundaryGivesAffineInteriorSixTetSplit) {
  patch_test(BoxSplit::six, 0.3, HessianProjection::when_indefinite);
  patch_test(BoxSplit::six, 0.3, HessianProjection::always);
}
TEST(FemPatch, AffineBoundaryGivesAffineInteriorFiveTetSplit) {
  patch_test(BoxSplit::five, 0.3, HessianProjection::when_indefinite);
  patch_test(BoxSplit::five, 0.3, HessianProjection::always);
}
TEST(FemPatch, AffineBoundaryNearlyIncompressible) {
  patch_test(BoxSplit::six, 0.45, HessianProjection::when_indefinite);
  patch_test(BoxSplit::six, 0.45, HessianProjection::always);
}

}  // namespace
}  // namespace mabd::fem
