// The structured co-rotated factor equals the dense Hb, and the polar rotation is exact.
#include <gtest/gtest.h>

#include <random>

#include "body/body_hessian.h"
#include "body/elasticity.h"
#include "body/rotation.h"

namespace mabd::detail {
namespace {

TEST(BodyHessian, StructuredSolveMatchesDenseSolve) {
  const Vec3 sigma(0.3, 0.02, 0.001);
  const double m = 5, V = 0.005, h = 1e-3;
  const double mu = lame_mu(1e8, 0.3), lambda = lame_lambda(1e8, 0.3);
  const BodyHessian f = BodyHessian::build(sigma, m, V, mu, lambda, h);
  const Mat12 H = BodyHessian::dense(sigma, m, V, mu, lambda, h);
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int trial = 0; trial < 10; ++trial) {
    Vec12 v;
    for (int i = 0; i < 12; ++i) v[i] = u(rng);
    const Vec12 x = f.solve(v);
    EXPECT_LT((H * x - v).norm(), 1e-10 * v.norm());
  }
}

TEST(BodyHessian, RestHessianIsTheElasticEnergyHessian) {
  // Finite differences of the co-rotated gradient at A = I + small symmetric strain.
  const double mu = 2.0, lambda = 3.0, e = 1e-6;
  Mat3 A = Mat3::Identity();
  Mat12 H = BodyHessian::dense(Vec3::Zero(), 1.0, 1.0, mu, lambda, 1.0);
  for (int c = 0; c < 9; ++c) {
    Mat3 dA = Mat3::Zero();
    dA(c % 3, c / 3) = e;
    const Mat3 gp = corotated_stress(A + dA, Mat3::Identity(), mu, lambda);
    const Mat3 gm = corotated_stress(A - dA, Mat3::Identity(), mu, lambda);
    const Mat3 col = (gp - gm) / (2 * e);
    for (int r = 0; r < 9; ++r) EXPECT_NEAR(H(r, c), col(r % 3, r / 3), 1e-6);
  }
}

// Z0 = Hb^{-1} E(I) gives the geometric-stiffness directions of any rotated body:
// H^{-1} E(R) = D(R) Hb^{-1} D(R)^T E(R) = D(R) Z0 R^T, and E(R)^T H^{-1} E(R) = R W0 R^T.
TEST(BodyHessian, RotationDirectionsRotateWithTheBody) {
  const Vec3 sigma(0.3, 0.02, 0.001);
  const double m = 5, V = 0.005, h = 1e-2;
  const double mu = lame_mu(1e8, 0.3), lambda = lame_lambda(1e8, 0.3);
  const BodyHessian f = BodyHessian::build(sigma, m, V, mu, lambda, h);
  const Mat12 Hinv = BodyHessian::dense(sigma, m, V, mu, lambda, h).inverse();
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int trial = 0; trial < 10; ++trial) {
    const Mat3 R = Eigen::Quaterniond(u(rng), u(rng), u(rng), u(rng)).normalized().toRotationMatrix();
    Mat12 D = Mat12::Zero();  // D(R): R on every column of A, identity on t
    for (int k = 0; k < 3; ++k) D.block<3, 3>(3 * k, 3 * k) = R;
    D.bottomRightCorner<3, 3>().setIdentity();
    Eigen::Matrix<double, 12, 3> E = Eigen::Matrix<double, 12, 3>::Zero();  // E(R)
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 3; ++k) E.block<3, 1>(3 * k, c) = Vec3::Unit(c).cross(R.col(k));
    const Eigen::Matrix<double, 12, 3> Z = D * Hinv * D.transpose() * E;
    const Eigen::Matrix<double, 12, 3> Zr = D * f.Z0 * R.transpose();
    EXPECT_LT((Z - Zr).norm(), 1e-12 * Z.norm());
    const Mat3 W = E.transpose() * Z, Wr = R * f.W0 * R.transpose();
    EXPECT_LT((W - Wr).norm(), 1e-12 * W.norm());
  }
}

// The exact Hessian of the co-rotated energy is the rotated rest Hessian plus the twist term:
// finite differences of the stress at a stretched, sheared and rotated A against
// D(R) Kb D(R)^T + E(R) R K R^T E(R)^T (rest Hessian Kb of a unit volume, h -> infinity).
TEST(BodyHessian, TwistTermCompletesTheCorotatedHessian) {
  const double mu = lame_mu(1e6, 0.3), lambda = lame_lambda(1e6, 0.3), e = 1e-7;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  const Mat12 Kb = BodyHessian::dense(Vec3::Zero(), 1.0, 1.0, mu, lambda, 1e30);
  for (int trial = 0; trial < 10; ++trial) {
    const Mat3 Rq = Eigen::Quaterniond(u(rng), u(rng), u(rng), u(rng)).normalized().toRotationMatrix();
    Mat3 S;  // symmetric stretch, in tension so that no twist curvature is clamped
    S << 1.05 + 0.05 * u(rng), 0.03 * u(rng), 0.03 * u(rng), 0, 1.03 + 0.03 * u(rng),
        0.03 * u(rng), 0, 0, 1.01 + 0.01 * u(rng);
    S = Mat3(S.triangularView<Eigen::Upper>()) + Mat3(S.triangularView<Eigen::StrictlyUpper>()).transpose();
    const Mat3 A = Rq * S;
    Mat3 R;
    ASSERT_TRUE(polar_rotation(A, R));
    Eigen::Matrix<double, 9, 9> H;  // finite differences of dPsi/dA
    for (int c = 0; c < 9; ++c) {
      Mat3 dA = Mat3::Zero();
      dA(c % 3, c / 3) = e;
      Mat3 Rp, Rm;
      ASSERT_TRUE(polar_rotation(A + dA, Rp));
      ASSERT_TRUE(polar_rotation(A - dA, Rm));
      const Mat3 col = (corotated_stress(A + dA, Rp, mu, lambda) -
                        corotated_stress(A - dA, Rm, mu, lambda)) / (2 * e);
      H.col(c) = Eigen::Map<const Eigen::Matrix<double, 9, 1>>(col.data());
    }
    Eigen::Matrix<double, 9, 9> D = Eigen::Matrix<double, 9, 9>::Zero();
    for (int k = 0; k < 3; ++k) D.block<3, 3>(3 * k, 3 * k) = R;
    Eigen::Matrix<double, 9, 3> E;  // E(R)
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 3; ++k) E.block<3, 1>(3 * k, c) = Vec3::Unit(c).cross(R.col(k));
    const Mat3 K = corotated_twist_stiffness(A, R, mu, lambda);
    const Eigen::Matrix<double, 9, 9> rotated = D * Kb.topLeftCorner<9, 9>() * D.transpose();
    const Eigen::Matrix<double, 9, 9> model = rotated + E * R * K * R.transpose() * E.transpose();
    EXPECT_LT((H - model).norm(), 1e-6 * H.norm()) << "trial " << trial;
    // Without the twist term the rotated rest Hessian misses it by the stress (~3% here).
    EXPECT_GT((H - rotated).norm(), 1e-3 * H.norm()) << "trial " << trial;
  }
}

// Under compression the twist curvature is negative and clamped: the term vanishes.
TEST(BodyHessian, CompressedTwistTermIsClampedToZero) {
  const double mu = lame_mu(1e6, 0.3), lambda = lame_lambda(1e6, 0.3);
  const Mat3 A = 0.97 * Mat3::Identity();
  EXPECT_EQ(corotated_twist_stiffness(A, Mat3::Identity(), mu, lambda).norm(), 0.0);
  const Mat3 T = 1.02 * Mat3::Identity();  // uniform tension: kappa = s / sigma on every axis
  const double s = 2 * mu * 0.02 + lambda * 0.06;
  EXPECT_NEAR((corotated_twist_stiffness(T, Mat3::Identity(), mu, lambda) -
               s / 1.02 / 2 * Mat3::Identity()).norm(), 0.0, 1e-9 * s);
}

TEST(Rotation, PolarDecompositionIsExact) {
  std::mt19937 rng(2);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int trial = 0; trial < 20; ++trial) {
    const Mat3 R0 = Eigen::Quaterniond(u(rng), u(rng), u(rng), u(rng)).normalized().toRotationMatrix();
    Mat3 S = Mat3::Identity();
    for (int i = 0; i < 3; ++i)
      for (int j = i; j < 3; ++j) S(i, j) = S(j, i) = S(i, j) + 0.2 * u(rng);
    Mat3 R;
    ASSERT_TRUE(polar_rotation(R0 * S, R));
    // R0 S with S not necessarily positive definite; compare with the SVD polar factor.
    Eigen::JacobiSVD<Mat3> svd(R0 * S, Eigen::ComputeFullU | Eigen::ComputeFullV);
    const Mat3 Rs = svd.matrixU() * svd.matrixV().transpose();
    EXPECT_LT((R - Rs).norm(), 1e-12);
    EXPECT_LT((R.transpose() * R - Mat3::Identity()).norm(), 1e-13);
  }
  // Near-rigid matrices (the affine bodies' case) to round-off.
  for (const double strain : {1e-9, 1e-6, 1e-4, 1e-2}) {
    for (int trial = 0; trial < 20; ++trial) {
      const Mat3 R0 =
          Eigen::Quaterniond(u(rng), u(rng), u(rng), u(rng)).normalized().toRotationMatrix();
      Mat3 S = Mat3::Identity();
      for (int i = 0; i < 3; ++i)
        for (int j = i; j < 3; ++j) S(i, j) = S(j, i) = S(i, j) + strain * u(rng);
      Mat3 R;
      ASSERT_TRUE(polar_rotation(R0 * S, R));
      EXPECT_LT((R - R0).norm(), 1e-15 * 20) << "strain " << strain;
      EXPECT_LT((R.transpose() * R - Mat3::Identity()).norm(), 1e-15 * 10) << "strain " << strain;
    }
  }
  // Shears of unit volume, far from any rotation: the first iteration goes unscaled there
  // (the volume is not off), and the iteration still ends on the polar factor.
  for (const double shear : {0.3, 1.0, 3.0}) {
    const Mat3 R0 =
        Eigen::Quaterniond(u(rng), u(rng), u(rng), u(rng)).normalized().toRotationMatrix();
    Mat3 S = Mat3::Identity();
    S(0, 1) = shear;
    const Mat3 A = R0 * S;
    ASSERT_NEAR(A.determinant(), 1.0, 1e-12);
    Mat3 R;
    ASSERT_TRUE(polar_rotation(A, R));
    Eigen::JacobiSVD<Mat3> svd(A, Eigen::ComputeFullU | Eigen::ComputeFullV);
    EXPECT_LT((R - svd.matrixU() * svd.matrixV().transpose()).norm(), 1e-12) << "shear " << shear;
    EXPECT_LT((R.transpose() * R - Mat3::Identity()).norm(), 1e-13) << "shear " << shear;
  }
  Mat3 R;
  Mat3 inverted = Mat3::Identity();
  inverted(0, 0) = -1;
  EXPECT_FALSE(polar_rotation(inverted, R));
}

}  // namespace
}  // namespace mabd::detail
