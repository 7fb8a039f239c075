// Stable Neo-Hookean: derivatives against finite differences, the stress-free rest and
// rotated states, and the small-strain limit against linear elasticity with (E, nu).
// GCC 12 reports a false -Wmaybe-uninitialized inside Eigen's 9x9 eigensolver.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include <Eigen/Eigenvalues>

#include "fem/neo_hookean.h"
#include "fem/tet_element.h"

namespace mabd::fem {
namespace {

Mat3 random_F(std::mt19937& rng, double spread) {
  std::uniform_real_distribution<double> u(-spread, spread);
  Mat3 F = Mat3::Identity();
  for (int i = 0; i < 9; ++i) F(i % 3, i / 3) += u(rng);
  return F;
}

Mat3 random_rotation(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  return Quat(u(rng), u(rng), u(rng), u(rng)).normalized().toRotationMatrix();
}

const StableNeoHookean kMat = StableNeoHookean::from_young_poisson(1e6, 0.3);

TEST(StableNeoHookean, StressIsTheGradientOfTheEnergy) {
  std::mt19937 rng(1);
  const double e = 1e-6;
  for (int trial = 0; trial < 20; ++trial) {
    // Includes large and inverted (J < 0) deformations: the energy is defined for all F.
    Mat3 F = random_F(rng, 0.6);
    if (trial % 5 == 0) F.col(0) = -F.col(0);
    const Mat3 P = kMat.stress(F);
    for (int c = 0; c < 9; ++c) {
      Mat3 dF = Mat3::Zero();
      dF(c % 3, c / 3) = e;
      const double fd = (kMat.energy_density(F + dF) - kMat.energy_density(F - dF)) / (2 * e);
      EXPECT_NEAR(P(c % 3, c / 3), fd, 1e-6 * P.norm()) << "trial " << trial << " entry " << c;
    }
  }
}

TEST(StableNeoHookean, HessianIsTheGradientOfTheStress) {
  std::mt19937 rng(2);
  const double e = 1e-6;
  for (int trial = 0; trial < 20; ++trial) {
    Mat3 F = random_F(rng, 0.6);
    if (trial % 5 == 0) F.col(1) = -F.col(1);
    const Mat9 H = kMat.hessian(F);
    EXPECT_LT((H - H.transpose()).norm(), 1e-12 * H.norm());
    for (int c = 0; c < 9; ++c) {
      Mat3 dF = Mat3::Zero();
      dF(c % 3, c / 3) = e;
      const Vec9 fd = vec(kMat.stress(F + dF) - kMat.stress(F - dF)) / (2 * e);
      EXPECT_LT((H.col(c) - fd).norm(), 1e-6 * H.norm()) << "trial " << trial << " column " << c;
    }
  }
}

// Zero to round-off: 1e-14 E (E = 1e6 Pa) is a few ulps of the terms (~mu).
TEST(StableNeoHookean, RestAndRotationsAreStressFree) {
  const double tol = 1e-14 * 1e6;
  EXPECT_NEAR(kMat.energy_density(Mat3::Identity()), 0, tol);
  EXPECT_LT(kMat.stress(Mat3::Identity()).norm(), tol);
  std::mt19937 rng(3);
  for (int trial = 0; trial < 10; ++trial) {
    const Mat3 R = random_rotation(rng);
    EXPECT_NEAR(kMat.energy_density(R), 0, tol);
    EXPECT_LT(kMat.stress(R).norm(), tol);
  }
}

TEST(StableNeoHookean, ProjectedHessianIsPsdAndKeepsPositiveDefiniteOnes) {
  std::mt19937 rng(4);
  int indefinite = 0;
  for (int trial = 0; trial < 50; ++trial) {
    Mat3 F = random_F(rng, 0.8);
    if (trial % 3 == 0) F.col(2) = -F.col(2);
    const Mat9 H = kMat.hessian(F);
    const Mat9 Hp = kMat.projected_hessian(F);
    const Eigen::SelfAdjointEigenSolver<Mat9> e(H), ep(Hp);
    EXPECT_GE(ep.eigenvalues().minCoeff(), -1e-9 * H.norm());
    if (e.eigenvalues().minCoeff() < 0) {
      ++indefinite;
    } else {
      EXPECT_LT((Hp - H).norm(), 1e-12 * H.norm());
    }
  }
  EXPECT_GT(indefinite, 0);  // the test does exercise the clamp
}

// At F = I the Hessian is the linear-elastic tensor mu_L (I9 + T) + lambda_L vec(I) vec(I)^T
// (T the transpose permutation) with the Lame parameters of (E, nu).
TEST(StableNeoHookean, RestHessianIsLinearElasticity) {
  for (const auto& [E, nu] : {std::pair{1e6, 0.3}, {1e9, 0.0}, {5e4, 0.45}, {2e7, -0.2}}) {
    const StableNeoHookean m = StableNeoHookean::from_young_poisson(E, nu);
    const double mu = E / (2 * (1 + nu)), lambda = E * nu / ((1 + nu) * (1 - 2 * nu));
    Mat9 C = mu * Mat9::Identity();
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) C(i + 3 * j, j + 3 * i) += mu;
    }
    const Vec9 I = vec(Mat3::Identity());
    C += lambda * I * I.transpose();
    EXPECT_LT((m.hessian(Mat3::Identity()) - C).norm(), 1e-12 * C.norm())
        << "E " << E << " nu " << nu;
  }
}

// Uniaxial stress: stretch x by eps, find the lateral stretch s with P_yy = P_zz = 0, then
// E = P_xx / eps and nu = -(s - 1)/eps must match the inputs.
TEST(StableNeoHookean, UniaxialStretchRecoversYoungAndPoisson) {
  const double eps = 1e-5;
  for (const auto& [E, nu] : {std::pair{1e6, 0.3}, {1e9, 0.0}, {5e4, 0.45}, {2e7, -0.2}}) {
    const StableNeoHookean m = StableNeoHookean::from_young_poisson(E, nu);
    auto lateral = [&](double s) {
      return m.stress(Eigen::Vector3d(1 + eps, s, s).asDiagonal().toDenseMatrix())(1, 1);
    };
    double s = 1;  // Newton on s (lateral stress is monotone in s)
    for (int it = 0; it < 20; ++it) {
      const double d = 1e-7;
      s -= lateral(s) / ((lateral(s + d) - lateral(s - d)) / (2 * d));
    }
    ASSERT_LT(std::abs(lateral(s)), 1e-9 * E);
    const double Pxx = m.stress(Eigen::Vector3d(1 + eps, s, s).asDiagonal().toDenseMatrix())(0, 0);
    const double E_fit = Pxx / eps, nu_fit = -(s - 1) / eps;
    EXPECT_LT(std::abs(E_fit - E), 1e-3 * E) << "E " << E << " nu " << nu;
    EXPECT_LT(std::abs(nu_fit - nu), 1e-3 * std::max(std::abs(nu), 0.1))
        << "E " << E << " nu " << nu;
    std::printf("E %.3g nu %.2f: fitted E %.6g (rel err %.1e), nu %.6f\n", E, nu, E_fit,
                std::abs(E_fit - E) / E, nu_fit);
  }
}

TEST(StableNeoHookean, RejectsBadParameters) {
  EXPECT_THROW(StableNeoHookean::from_young_poisson(-1, 0.3), std::exception);
  EXPECT_THROW(StableNeoHookean::from_young_poisson(1e6, 0.5), std::exception);
  EXPECT_THROW(StableNeoHookean::from_young_poisson(1e6, -1), std::exception);
}

// The 12x12 element gradient and Hessian are the derivatives of V Psi(F(x)) on node
// positions, and the element forces have zero sum and zero moment.
TEST(TetElement, GradientAndHessianMatchFiniteDifferences) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-0.3, 0.3);
  TetMesh mesh = make_tet_mesh({Vec3(0, 0, 0), Vec3(0.1, 0.01, 0), Vec3(0.02, 0.09, 0.01),
                                Vec3(0.01, 0.02, 0.12)},
                               {Tet{0, 1, 2, 3}});
  const Mat34 b = shape_gradients(mesh.Dm_inv[0]);
  const double V = mesh.volume[0];
  Eigen::VectorXd x(12);
  for (int a = 0; a < 4; ++a) x.segment<3>(3 * a) = mesh.rest[a];
  for (int i = 0; i < 12; ++i) x[i] += 0.05 * u(rng);
  auto energy = [&](const Eigen::VectorXd& y) {
    return V * kMat.energy_density(deformation_gradient(mesh, 0, y));
  };
  auto gradient = [&](const Eigen::VectorXd& y) {
    return Vec12(tet_gradient(b, V, kMat.stress(deformation_gradient(mesh, 0, y))));
  };
  const Vec12 g = gradient(x);
  const Mat12 H = tet_hessian(b, V, kMat.hessian(deformation_gradient(mesh, 0, x)));
  const double e = 1e-8;
  for (int c = 0; c < 12; ++c) {
    Eigen::VectorXd dx = Eigen::VectorXd::Zero(12);
    dx[c] = e;
    EXPECT_NEAR(g[c], (energy(x + dx) - energy(x - dx)) / (2 * e), 1e-6 * g.norm());
    EXPECT_LT((H.col(c) - (gradient(x + dx) - gradient(x - dx)) / (2 * e)).norm(), 1e-6 * H.norm());
  }
  Vec3 sum = Vec3::Zero(), moment = Vec3::Zero();
  for (int a = 0; a < 4; ++a) {
    sum += g.segment<3>(3 * a);
    moment += Vec3(x.segment<3>(3 * a)).cross(Vec3(g.segment<3>(3 * a)));
  }
  EXPECT_LT(sum.norm(), 1e-12 * g.norm());
  EXPECT_LT(moment.norm(), 1e-12 * g.norm() * 0.1);
}

}  // namespace
}  // namespace mabd::fem
