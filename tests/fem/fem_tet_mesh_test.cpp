// Tet mesh: rest quantities, the structured box generator (conforming, positive, exact
// volume) and the validation errors of make_tet_mesh.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

#include "test_util.h"

#include "fem/tet_element.h"
#include "fem/tet_mesh.h"

namespace mabd::fem {
namespace {

/// what() of the std::runtime_error thrown by f, "" if none.
template <class Fn>
std::string error_of(Fn f) {
  return test::error_of<std::runtime_error>(f);
}

void check_box(BoxSplit split, int nx, int ny, int nz) {
  const Vec3 lo(-0.1, 0.2, 0.0), hi(0.3, 0.5, 0.9);
  const TetMesh m = make_box_mesh(lo, hi, nx, ny, nz, split);
  const int per = split == BoxSplit::six ? 6 : 5;
  EXPECT_EQ(m.num_nodes(), (nx + 1) * (ny + 1) * (nz + 1));
  EXPECT_EQ(m.num_tets(), per * nx * ny * nz);
  const Vec3 d = hi - lo;
  EXPECT_NEAR(m.total_volume(), d.prod(), 1e-14 * d.prod());
  for (double v : m.volume) EXPECT_GT(v, 0);
  // Conforming: each triangle is a face of two tets (interior) or one (boundary), with
  // opposite orientations when shared. Key = sorted nodes, value = orientation sum.
  std::map<std::array<int, 3>, std::pair<int, int>> faces;  // count, parity sum
  static constexpr int kFace[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};  // one sense
  for (const Tet& t : m.tets) {
    for (const auto& f : kFace) {
      std::array<int, 3> tri{t[f[0]], t[f[1]], t[f[2]]};
      std::array<int, 3> key = tri;
      std::sort(key.begin(), key.end());
      // Parity of the permutation from key to tri: +1 even, -1 odd.
      int inversions = (tri[0] > tri[1]) + (tri[0] > tri[2]) + (tri[1] > tri[2]);
      auto& e = faces[key];
      ++e.first;
      e.second += inversions % 2 ? -1 : 1;
    }
  }
  int boundary = 0;
  for (const auto& [key, e] : faces) {
    ASSERT_LE(e.first, 2);
    if (e.first == 1) ++boundary;
    if (e.first == 2) {
      EXPECT_EQ(e.second, 0) << "a shared face with equal orientations";
    }
  }
  EXPECT_EQ(boundary, 4 * (nx * ny + ny * nz + nx * nz));
  // Dm^-1 is exact: an affine map gives F everywhere.
  Mat3 F;
  F << 1.2, 0.1, 0, -0.3, 0.9, 0.2, 0.05, 0, 1.1;
  Eigen::VectorXd x(3 * m.num_nodes());
  for (int i = 0; i < m.num_nodes(); ++i) x.segment<3>(3 * i) = F * m.rest[i] + Vec3(1, 2, 3);
  for (int e = 0; e < m.num_tets(); ++e) {
    EXPECT_LT((deformation_gradient(m, e, x) - F).norm(), 1e-13);
  }
}

TEST(TetMesh, BoxSixSplitIsConformingAndExact) { check_box(BoxSplit::six, 3, 2, 4); }
TEST(TetMesh, BoxFiveSplitIsConformingAndExact) { check_box(BoxSplit::five, 3, 2, 4); }

TEST(TetMesh, RestQuantitiesOfOneTet) {
  const TetMesh m = make_tet_mesh({Vec3(0, 0, 0), Vec3(2, 0, 0), Vec3(0, 3, 0), Vec3(0, 0, 4)},
                                  {Tet{0, 1, 2, 3}});
  EXPECT_NEAR(m.volume[0], 2.0 * 3 * 4 / 6, 1e-15);
  EXPECT_LT((m.Dm_inv[0] - Vec3(0.5, 1.0 / 3, 0.25).asDiagonal().toDenseMatrix()).norm(), 1e-15);
}

TEST(TetMesh, RejectsInvertedTet) {
  EXPECT_EQ(error_of([] {
              make_tet_mesh({Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)},
                            {Tet{0, 2, 1, 3}}, {"cube.ele", {7}});
            }),
            "cube.ele: line 7: inverted tetrahedron (signed volume -0.166667 m^3; swap two nodes)");
}

TEST(TetMesh, RejectsDegenerateTet) {
  EXPECT_EQ(error_of([] {
              make_tet_mesh({Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(1, 1, 0)},
                            {Tet{0, 1, 2, 3}});
            }),
            "mesh: tet 0: degenerate tetrahedron (volume 0 m^3, longest edge 1.41421 m)");
}

TEST(TetMesh, RejectsBadIndices) {
  const std::vector<Vec3> p{Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)};
  EXPECT_EQ(error_of([&] { make_tet_mesh(p, {Tet{0, 1, 2, 4}}); }),
            "mesh: tet 0: node index 4 out of range [0, 4)");
  EXPECT_EQ(error_of([&] { make_tet_mesh(p, {Tet{0, 1, 2, 2}}); }),
            "mesh: tet 0: node 2 appears twice");
  std::vector<Vec3> q = p;
  q.push_back(Vec3(5, 5, 5));
  EXPECT_EQ(error_of([&] { make_tet_mesh(q, {Tet{0, 1, 2, 3}}); }),
            "mesh: node 4 belongs to no tetrahedron");
  EXPECT_EQ(error_of([&] { make_tet_mesh(p, {}); }), "mesh: no tetrahedra");
}

}  // namespace
}  // namespace mabd::fem
