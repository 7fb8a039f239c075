// The chain solver of the dual system (paper "Case I: Joint chain"): with the joints of a
// chain numbered along it, S is block-tridiagonal (joints k and k+1 share one body):
//   D_k = sum over the bodies of joint k of G_k H^{-1} G_k^T (+ compliance),
//   B_k = G_k H_s^{-1} G_{k+1}^T for the body s shared by joints k and k+1,
// solved by block Thomas in O(K). The same lambda as the sparse solver, to round-off.
#include <algorithm>

#include "mabd/error.h"
#include "solvers/block_thomas.h"
#include "solvers/topology.h"
#include "world/world_impl.h"

namespace mabd {

void World::Impl::update_chains() {
  topology_dirty = false;
  chains.clear();
  std::vector<char> movable(bodies.size());
  for (std::size_t i = 0; i < bodies.size(); ++i) movable[i] = bodies[i].dynamic();
  std::vector<detail::Edge> edges;
  for (const auto& j : joints) edges.push_back({j.a, j.b});
  auto moving = [&](int b) { return b >= 0 && movable[b]; };
  std::vector<std::vector<std::uint32_t>> joints_of(bodies.size());
  for (std::uint32_t j = 0; j < joints.size(); ++j) {
    for (int b : {joints[j].a, joints[j].b}) {
      if (moving(b)) joints_of[b].push_back(j);
    }
  }
  all_chains = true;
  for (const auto& comp : detail::analyse_topology(bodies.size(), movable, edges)) {
    if (comp.joints.empty()) continue;
    if (comp.kind != detail::Topology::Chain) {
      all_chains = false;
      chains.clear();
      prepare_ball_chains();
      return;
    }
    // Joints are adjacent when they share a dynamic body; walk the path from an end.
    auto neighbours = [&](std::uint32_t j) {
      std::vector<std::uint32_t> out;
      for (int b : {joints[j].a, joints[j].b}) {
        if (!moving(b)) continue;
        for (std::uint32_t k : joints_of[b]) {
          if (k != j) out.push_back(k);
        }
      }
      return out;
    };
    std::uint32_t start = comp.joints.front();
    for (std::uint32_t j : comp.joints) {
      if (neighbours(j).size() <= 1) {
        start = j;
        break;
      }
    }
    std::vector<std::uint32_t> order{start};
    std::int64_t prev = -1;
    std::uint32_t cur = start;
    while (order.size() < comp.joints.size()) {
      std::int64_t next = -1;
      for (std::uint32_t k : neighbours(cur)) {
        if (static_cast<std::int64_t>(k) != prev) next = k;
      }
      if (next < 0) break;
      prev = cur;
      cur = static_cast<std::uint32_t>(next);
      order.push_back(cur);
    }
    chains.push_back(std::move(order));
  }
  prepare_ball_chains();
}

bool World::Impl::solve_chains(const std::vector<int>& index, const Eigen::VectorXd& rhs,
                               const std::vector<Vec12>& w_a, const std::vector<Vec12>& w_b,
                               Eigen::VectorXd& sol) {
  sol.resize(rhs.size());
  auto dynamic = [&](int b) { return b >= 0 && bodies[b].dynamic(); };
  auto& act = chain_active;
  auto& sys = chain_system;
  auto& x = chain_x;
  for (const auto& chain : chains) {
    const std::size_t K = chain.size();
    act.resize(K);
    for (std::size_t k = 0; k < K; ++k) {
      act[k].clear();
      for (std::size_t r = joint_row_begin[chain[k]]; r < joint_row_begin[chain[k] + 1]; ++r) {
        if (index[r] >= 0) act[k].push_back(static_cast<int>(r));
      }
    }
    sys.D.resize(K);
    sys.b.resize(K);
    sys.B.resize(K > 0 ? K - 1 : 0);
    for (std::size_t k = 0; k < K; ++k) {
      const auto& j = joints[chain[k]];
      const auto& rk = act[k];
      const int nk = static_cast<int>(rk.size());
      Eigen::MatrixXd& D = sys.D[k];
      D.setZero(nk, nk);
      sys.b[k].resize(nk);
      for (int p = 0; p < nk; ++p) {
        const auto& row = rows[rk[p]];
        sys.b[k][p] = rhs[index[rk[p]]];
        D(p, p) += row.compliance;
        for (int q = 0; q < nk; ++q) {
          if (dynamic(j.a)) D(p, q) += row.ga.dot(w_a[rk[q]]);
          if (dynamic(j.b)) D(p, q) += row.gb.dot(w_b[rk[q]]);
        }
      }
      if (k + 1 == K) continue;
      // Coupling through the body shared with the next joint.
      const auto& jn = joints[chain[k + 1]];
      const int s = (dynamic(j.a) && (j.a == jn.a || j.a == jn.b)) ? j.a : j.b;
      const auto& rn = act[k + 1];
      Eigen::MatrixXd& B = sys.B[k];
      B.setZero(nk, static_cast<int>(rn.size()));
      for (int p = 0; p < nk; ++p) {
        const Vec12& g = j.a == s ? rows[rk[p]].ga : rows[rk[p]].gb;
        for (int q = 0; q < static_cast<int>(rn.size()); ++q) {
          B(p, q) = g.dot(jn.a == s ? w_a[rn[q]] : w_b[rn[q]]);
        }
      }
    }
    if (!detail::block_thomas_solve(sys, x)) return false;
    for (std::size_t k = 0; k < K; ++k) {
      for (std::size_t p = 0; p < act[k].size(); ++p) sol[index[act[k][p]]] = x[k][p];
    }
  }
  return true;
}

}  // namespace mabd
