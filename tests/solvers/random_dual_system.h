// Random block-sparse systems built like the dual matrix of the joints, shared by the dual
// solver tests: S = G H^{-1} G^T + compliance, assembled body by body (both triangles,
// duplicates summed) like assemble_dual (solvers/dual_solver.h), with a dense copy as the
// reference.
#pragma once

#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include <Eigen/Dense>
#include <Eigen/SparseCore>

namespace mabd::detail::test {

using Triplets = std::vector<Eigen::Triplet<double>>;

struct Side {
  int body = -1;      ///< -1: the world
  Eigen::MatrixXd g;  ///< rows x 12
};

struct Joint {
  Side a, b;
  int rows = 3;
  double compliance = 0;
};

struct Model {
  std::vector<Eigen::MatrixXd> hinv;
  std::vector<Joint> joints;
};

struct System {
  int n = 0;
  Triplets triplets;
  Eigen::MatrixXd dense;
  std::vector<int> block_begin;
};

/// Random bodies (H^{-1} SPD 12 x 12) and joints of `min_rows`-6 rows between random pairs
/// (or a body and the world).
inline Model random_model(std::mt19937& rng, int bodies, int joints, int min_rows = 3) {
  std::uniform_real_distribution<double> u(-1, 1), pos(0, 1);
  Model m;
  for (int i = 0; i < bodies; ++i) {
    const Eigen::MatrixXd q = Eigen::MatrixXd::NullaryExpr(12, 12, [&] { return u(rng); });
    const double scale = std::pow(10.0, u(rng));  // bodies of different mass
    m.hinv.push_back(scale * (q * q.transpose() / 12 + 0.2 * Eigen::MatrixXd::Identity(12, 12)));
  }
  std::uniform_int_distribution<int> body(0, bodies - 1), rows(min_rows, 6);
  for (int k = 0; k < joints; ++k) {
    Joint j;
    j.rows = rows(rng);
    j.a.body = body(rng);
    if (pos(rng) < 0.85) {
      do j.b.body = body(rng);
      while (j.b.body == j.a.body);
    }
    j.a.g = Eigen::MatrixXd::NullaryExpr(j.rows, 12, [&] { return u(rng); });
    j.b.g = Eigen::MatrixXd::NullaryExpr(j.rows, 12, [&] { return u(rng); });
    if (pos(rng) < 0.3) j.compliance = 1e-3 * pos(rng);
    m.joints.push_back(j);
  }
  return m;
}

/// Assembles the model like assemble_dual (body by body, both triangles, then the
/// compliance diagonal); the blocks are the joints' rows.
inline System assemble(const Model& m) {
  System s;
  std::vector<int> first;
  for (const Joint& j : m.joints) {
    first.push_back(s.n);
    s.block_begin.push_back(s.n);
    s.n += j.rows;
  }
  s.block_begin.push_back(s.n);
  s.dense = Eigen::MatrixXd::Zero(s.n, s.n);
  for (std::size_t i = 0; i < m.hinv.size(); ++i) {
    std::vector<std::pair<int, const Eigen::MatrixXd*>> inc;
    for (std::size_t k = 0; k < m.joints.size(); ++k) {
      const Joint& j = m.joints[k];
      if (j.a.body == static_cast<int>(i)) inc.push_back({first[k], &j.a.g});
      if (j.b.body == static_cast<int>(i)) inc.push_back({first[k], &j.b.g});
    }
    for (const auto& [r1, g1] : inc) {
      for (const auto& [r2, g2] : inc) {
        const Eigen::MatrixXd block = *g1 * m.hinv[i] * g2->transpose();
        s.dense.block(r1, r2, block.rows(), block.cols()) += block;
        for (int r = 0; r < block.rows(); ++r)
          for (int c = 0; c < block.cols(); ++c) s.triplets.emplace_back(r1 + r, r2 + c, block(r, c));
      }
    }
  }
  for (std::size_t k = 0; k < m.joints.size(); ++k) {
    for (int r = 0; r < m.joints[k].rows; ++r) {
      s.triplets.emplace_back(first[k] + r, first[k] + r, m.joints[k].compliance);
      s.dense(first[k] + r, first[k] + r) += m.joints[k].compliance;
    }
  }
  return s;
}

inline Eigen::VectorXd random_vector(std::mt19937& rng, int n) {
  std::uniform_real_distribution<double> u(-1, 1);
  return Eigen::VectorXd::NullaryExpr(n, [&] { return u(rng); });
}

}  // namespace mabd::detail::test
