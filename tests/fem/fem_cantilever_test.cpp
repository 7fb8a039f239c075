// Cantilever under its own weight against beam theory. Beam 1 m x 0.1 m x 0.1 m, clamped
// (all nodes of the x = 0 face pinned), E = 1e9 Pa, nu = 0, rho = 1000 kg/m^3, g = 9.81 m/s^2
// along -z, so the tip deflects ~1.5e-3 m (1.5% of the depth: the linear regime).
//   Euler-Bernoulli:  d_EB = q L^4 / (8 E I),  q = rho g b h,  I = b h^3 / 12,
//   Timoshenko:       d_T = d_EB + q L^2 / (2 kappa G A),  kappa = 5/6,  G = E / 2 (nu = 0).
// Linear tets are too stiff in bending (locking), with an error falling like the cell size
// squared, so the test refines the mesh: the finest must be within 5% of d_EB, the error
// must fall at every refinement, and the Richardson extrapolation of the two finest (order 2)
// must be within 1% of d_T (and of d_EB).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "fem/fem_solid.h"

namespace mabd::fem {
namespace {

constexpr double L = 1, b = 0.1, h = 0.1, E = 1e9, rho = 1000, g = 9.81;

/// Mean tip deflection (m, positive down) of a beam with nx x n x n cells (6-tet split).
double tip_deflection(int nx, int n) {
  const auto t0 = std::chrono::steady_clock::now();
  const TetMesh mesh = make_box_mesh(Vec3::Zero(), Vec3(L, b, h), nx, n, n);
  std::vector<int> clamp;
  for (int k = 0; k <= n; ++k) {
    for (int j = 0; j <= n; ++j) clamp.push_back(box_node(0, j, k, nx, n));
  }
  FemSolid solid(FemModel(mesh, {rho, E, 0.0}, MassType::lumped, clamp));
  const NewtonReport r = solid.static_solve(Vec3(0, 0, -g));
  EXPECT_TRUE(r.converged);
  double sum = 0;
  for (int k = 0; k <= n; ++k) {
    for (int j = 0; j <= n; ++j) {
      const int i = box_node(nx, j, k, nx, n);
      sum += mesh.rest[i].z() - solid.position(i).z();
    }
  }
  const double d = sum / ((n + 1) * (n + 1));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("  %3d x %2d x %2d cells, %6d tets: tip %.5e m, Newton %d iterations (last "
              "increment %.1e m), %.2f s\n", nx, n, n, mesh.num_tets(), d, r.iterations,
              r.last_increment, seconds);
  return d;
}

TEST(FemCantilever, SelfWeightTipDeflectionConvergesToBeamTheory) {
  const double I = b * h * h * h / 12, q = rho * g * b * h;
  const double d_eb = q * L * L * L * L / (8 * E * I);
  const double d_t = d_eb + q * L * L / (2 * (5.0 / 6.0) * (E / 2) * (b * h));
  std::printf("Euler-Bernoulli %.5e m, Timoshenko %.5e m\n", d_eb, d_t);
  const int levels[][2] = {{20, 2}, {40, 4}, {80, 8}, {120, 12}};
  std::vector<double> d, cell;
  for (const auto& lv : levels) {
    d.push_back(tip_deflection(lv[0], lv[1]));
    cell.push_back(h / lv[1]);
    std::printf("    error vs Euler-Bernoulli %+.2f%%, vs Timoshenko %+.2f%%\n",
                100 * (d.back() / d_eb - 1), 100 * (d.back() / d_t - 1));
  }
  for (size_t k = 1; k < d.size(); ++k) {
    EXPECT_LT(std::abs(d[k] - d_eb), std::abs(d[k - 1] - d_eb)) << "level " << k;
  }
  EXPECT_LT(std::abs(d.back() / d_eb - 1), 0.05);
  const size_t f = d.size() - 1;
  const double ratio = (cell[f - 1] / cell[f]) * (cell[f - 1] / cell[f]);
  const double extrapolated = d[f] + (d[f] - d[f - 1]) / (ratio - 1);
  std::printf("Richardson (order 2) from the two finest: %.5e m, %+.2f%% vs Euler-Bernoulli, "
              "%+.2f%% vs Timoshenko\n", extrapolated, 100 * (extrapolated / d_eb - 1),
              100 * (extrapolated / d_t - 1));
  EXPECT_LT(std::abs(extrapolated / d_t - 1), 0.01);
  EXPECT_LT(std::abs(extrapolated / d_eb - 1), 0.01);
}

}  // namespace
}  // namespace mabd::fem
