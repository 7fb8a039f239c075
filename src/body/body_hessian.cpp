// Structured factor of the co-rotated body matrix Hb (see body_hessian.h).
#include "body/body_hessian.h"

namespace mabd::detail {
namespace {
constexpr int kPairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
}

BodyHessian BodyHessian::build(const Vec3& sigma, double m, double V, double mu, double lambda,
                               double h) {
  const double ih2 = 1.0 / (h * h);
  BodyHessian f;
  // Diagonal entries A_ii: mass sigma_i/h^2, mu(I + P) gives 2 mu, lambda couples all three.
  Mat3 D = Mat3::Constant(lambda * V);
  for (int i = 0; i < 3; ++i) D(i, i) += sigma[i] * ih2 + 2 * mu * V;
  f.diag_inv = D.inverse();
  // Off-diagonal pair (A_ij, A_ji): A_ij lives in column j (mass sigma_j), A_ji in column i.
  for (int p = 0; p < 3; ++p) {
    const int i = kPairs[p][0], j = kPairs[p][1];
    Eigen::Matrix2d B;
    B << sigma[j] * ih2 + mu * V, mu * V, mu * V, sigma[i] * ih2 + mu * V;
    f.pair_inv[p] = B.inverse();
  }
  f.inv_m_over_h2 = h * h / m;
  for (int c = 0; c < 3; ++c) {
    Vec12 e = Vec12::Zero();
    for (int k = 0; k < 3; ++k) e.segment<3>(3 * k) = Vec3::Unit(c).cross(Vec3::Unit(k));
    f.Z0.col(c) = f.solve(e);
  }
  for (int c = 0; c < 3; ++c) {
    Vec3 t = Vec3::Zero();
    for (int k = 0; k < 3; ++k) t += Vec3::Unit(k).cross(Vec3(f.Z0.col(c).segment<3>(3 * k)));
    f.W0.col(c) = t;
  }
  return f;
}

Mat12 BodyHessian::dense(const Vec3& sigma, double m, double V, double mu, double lambda,
                         double h) {
  const double ih2 = 1.0 / (h * h);
  Mat12 H = Mat12::Zero();
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i) {
      H(qidx(i, j), qidx(i, j)) += sigma[j] * ih2 + mu * V;  // mass + mu I9
      H(qidx(i, j), qidx(j, i)) += mu * V;                    // mu P
    }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) H(qidx(i, i), qidx(j, j)) += lambda * V;
  for (int k = 9; k < 12; ++k) H(k, k) = m * ih2;
  return H;
}

Vec12 BodyHessian::solve(const Vec12& v) const {
  Vec12 x;
  const Vec3 d(v[qidx(0, 0)], v[qidx(1, 1)], v[qidx(2, 2)]);
  const Vec3 xd = diag_inv * d;
  x[qidx(0, 0)] = xd[0];
  x[qidx(1, 1)] = xd[1];
  x[qidx(2, 2)] = xd[2];
  for (int p = 0; p < 3; ++p) {
    const int i = kPairs[p][0], j = kPairs[p][1];
    const Eigen::Vector2d b(v[qidx(i, j)], v[qidx(j, i)]);
    const Eigen::Vector2d y = pair_inv[p] * b;
    x[qidx(i, j)] = y[0];
    x[qidx(j, i)] = y[1];
  }
  x.tail<3>() = v.tail<3>() * inv_m_over_h2;
  return x;
}

std::uint32_t HessianCache::get(const Vec3& sigma, double m, double V, double mu, double lambda,
                                double h) {
  const std::array<double, 8> key{sigma[0], sigma[1], sigma[2], m, V, mu, lambda, h};
  auto it = index_.find(key);
  if (it != index_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(factors_.size());
  factors_.push_back(BodyHessian::build(sigma, m, V, mu, lambda, h));
  index_.emplace(key, id);
  return id;
}

}  // namespace mabd::detail
