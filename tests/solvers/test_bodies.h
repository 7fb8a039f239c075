// Random co-rotated polar bodies supplied through BodyOperators, shared by the solver tests
// that build row sets directly (no world).
#pragma once

#include <random>
#include <vector>

#include "body/affine.h"
#include "body/body_hessian.h"
#include "solvers/body_operators.h"

namespace mabd::detail {

/// Co-rotated polar bodies without corrections: H_i^{-1} v = D(R_i) Hb^{-1} D(R_i)^T v.
class TestBodies : public BodyOperators {
 public:
  TestBodies(int n, std::mt19937& rng) {
    std::uniform_real_distribution<double> u(-1, 1);
    // Two kinds of body (factors shared as in a world with identical bodies).
    factors_.push_back(BodyHessian::build(Vec3(0.02, 0.03, 0.05), 2.0, 0.002, 1e6, 4e6, 0.01));
    factors_.push_back(BodyHessian::build(Vec3(0.1, 0.1, 0.4), 5.0, 0.005, 3e5, 1e6, 0.01));
    for (int i = 0; i < n; ++i) {
      R_.push_back(Eigen::Quaterniond(Eigen::Vector4d(u(rng), u(rng), u(rng), u(rng)).normalized())
                       .toRotationMatrix());
      q_.push_back(make_q(R_.back(), Vec3(u(rng), u(rng), u(rng))));
      kind_.push_back(i % 2);
    }
    flags_.assign(n, 1);
    set_dynamic_flags(flags_);
  }
  Vec12 solve_body(std::size_t i, const Vec12& v) const override {
    Vec12 x;
    x.tail<3>() = v.tail<3>();
    for (int k = 0; k < 3; ++k) x.segment<3>(3 * k) = R_[i].transpose() * v.segment<3>(3 * k);
    const Vec12 z = factor(i).solve(x);
    Vec12 out;
    out.tail<3>() = z.tail<3>();
    for (int k = 0; k < 3; ++k) out.segment<3>(3 * k) = R_[i] * z.segment<3>(3 * k);
    return out;
  }
  bool body_frame() const override { return true; }
  const Mat3& rotation(std::size_t i) const override { return R_[i]; }
  const BodyHessian& factor(std::size_t i) const override { return factors_[kind_[i]]; }
  bool corrected(std::size_t) const override { return false; }
  Mat3 correction_body_block(std::size_t, const Vec3&, const Vec3&) const override {
    return Mat3::Zero();
  }
  void subtract_clique_correction(std::size_t, int, const Vec12*, const Vec12* const*,
                                  double*) const override {}
  const std::vector<Vec12>& q() const { return q_; }

 private:
  std::vector<BodyHessian> factors_;
  std::vector<Mat3> R_;
  std::vector<Vec12> q_;
  std::vector<int> kind_;
  std::vector<char> flags_;  ///< every body dynamic
};

}  // namespace mabd::detail
