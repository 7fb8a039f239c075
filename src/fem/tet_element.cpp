// Linear tetrahedron kernels (see tet_element.h).
#include "fem/tet_element.h"

namespace mabd::fem {

Mat34 shape_gradients(const Mat3& Dm_inv) {
  Mat34 b;
  b.rightCols<3>() = Dm_inv.transpose();
  b.col(0) = -b.rightCols<3>().rowwise().sum();
  return b;
}

Mat3 deformation_gradient(const TetMesh& mesh, int e, const Eigen::VectorXd& x) {
  const Tet& t = mesh.tets[e];
  const Vec3 x0 = x.segment<3>(3 * t[0]);
  Mat3 Ds;
  for (int k = 0; k < 3; ++k) Ds.col(k) = x.segment<3>(3 * t[k + 1]) - x0;
  return Ds * mesh.Dm_inv[e];
}

Vec12 tet_gradient(const Mat34& b, double V, const Mat3& P) {
  Vec12 g;
  for (int a = 0; a < 4; ++a) g.segment<3>(3 * a) = V * P * b.col(a);
  return g;
}

Mat12 tet_hessian(const Mat34& b, double V, const Mat9& H9) {
  Eigen::Matrix<double, 9, 12> B = Eigen::Matrix<double, 9, 12>::Zero();
  for (int a = 0; a < 4; ++a) {
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) B(i + 3 * j, 3 * a + i) = b(j, a);
    }
  }
  return V * B.transpose() * H9 * B;
}

}  // namespace mabd::fem
