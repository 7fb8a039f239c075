// The shipped armadillo-like soft body (models/soft_blob.node/.ele, made by
// models/tools/soft_blob.py with TetGen) loads, is a valid mesh of fair quality, stands on its
// soles under gravity and runs backward Euler steps.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "fem/fem_solid.h"
#include "fem/tet_io.h"

namespace mabd::fem {
namespace {

const std::string kBlob = std::string(MABD_SOURCE_DIR) + "/models/soft_blob";

TEST(SoftBlob, LoadsAsAValidMesh) {
  const TetMesh mesh = read_tetgen(kBlob);
  Vec3 lo = mesh.rest[0], hi = mesh.rest[0];
  for (const Vec3& p : mesh.rest) {
    lo = lo.cwiseMin(p);
    hi = hi.cwiseMax(p);
  }
  // Quality: the smallest ratio of tet volume to that of the regular tet with the same
  // longest edge (1 = regular, slivers -> 0).
  double worst = 1;
  for (int e = 0; e < mesh.num_tets(); ++e) {
    double l = 0;
    for (int a = 0; a < 4; ++a) {
      for (int b = 0; b < a; ++b) {
        l = std::max(l, (mesh.rest[mesh.tets[e][a]] - mesh.rest[mesh.tets[e][b]]).norm());
      }
    }
    worst = std::min(worst, mesh.volume[e] / (l * l * l / (6 * std::sqrt(2.0))));
  }
  std::printf("soft_blob: %d nodes, %d tets, volume %.4e m^3, box [%.3f %.3f %.3f] - [%.3f "
              "%.3f %.3f] m, worst volume ratio %.3f\n", mesh.num_nodes(), mesh.num_tets(),
              mesh.total_volume(), lo.x(), lo.y(), lo.z(), hi.x(), hi.y(), hi.z(), worst);
  EXPECT_GT(mesh.num_tets(), 2000);
  EXPECT_LT(mesh.num_tets(), 20000);
  EXPECT_GT(worst, 0.01);
  EXPECT_GT(hi.z() - lo.z(), 0.5);
}

TEST(SoftBlob, StandsOnItsSolesAndSteps) {
  TetMesh mesh = read_tetgen(kBlob);
  std::vector<int> soles;
  for (int i = 0; i < mesh.num_nodes(); ++i) {
    if (mesh.rest[i].z() < 0.005) soles.push_back(i);
  }
  ASSERT_GT(soles.size(), 10u);
  const Vec3 g(0, 0, -9.81);
  FemSolid solid(FemModel(std::move(mesh), {1000, 1e6, 0.4}, MassType::lumped, soles));
  auto t0 = std::chrono::steady_clock::now();
  const NewtonReport s = solid.static_solve(g);
  const double t_static =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(s.converged);
  double sag = 0;
  for (int i = 0; i < solid.model().num_nodes(); ++i) {
    sag = std::max(sag, solid.model().mesh().rest[i].z() - solid.position(i).z());
  }
  std::printf("static: %d Newton iterations, %d halvings, max sag %.4f m, %.2f s\n",
              s.iterations, s.line_search_halvings, sag, t_static);
  EXPECT_GT(sag, 0);
  EXPECT_LT(sag, 0.1);
  // From rest, 20 steps of 10 ms (the paper's Armadillo step).
  FemSolid dyn(FemModel(read_tetgen(kBlob), {1000, 1e6, 0.4}, MassType::lumped, soles));
  int iters = 0;
  t0 = std::chrono::steady_clock::now();
  for (int n = 0; n < 20; ++n) {
    const NewtonReport r = dyn.step(1e-2, g);
    EXPECT_TRUE(r.converged);
    iters += r.iterations;
  }
  const double t_dyn = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("dynamic: 20 steps of 10 ms, %.1f Newton iterations/step, %.1f ms/step\n",
              iters / 20.0, 1e3 * t_dyn / 20);
}

}  // namespace
}  // namespace mabd::fem
