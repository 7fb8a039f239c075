#include "solvers/chain_dual.h"

#include "solvers/topology.h"

namespace mabd::detail {

bool ChainDual::prepare(const DualTopology& topology) {
  chains_.clear();
  items_ = topology.items;
  const auto& movable = topology.movable;
  const auto& edges = topology.items;
  const std::size_t n = movable.size();
  auto moving = [&](int b) { return b >= 0 && movable[b]; };
  std::vector<std::vector<std::uint32_t>> items_of(n);
  for (std::uint32_t j = 0; j < edges.size(); ++j) {
    for (int b : {edges[j].a, edges[j].b}) {
      if (moving(b)) items_of[b].push_back(j);
    }
  }
  for (const auto& comp : analyse_topology(n, movable, edges)) {
    if (comp.joints.empty()) continue;
    if (comp.kind != Topology::Chain) {
      chains_.clear();
      return false;
    }
    // Items are adjacent when they share a dynamic body; walk the path from an end.
    auto neighbours = [&](std::uint32_t j) {
      std::vector<std::uint32_t> out;
      for (int b : {edges[j].a, edges[j].b}) {
        if (!moving(b)) continue;
        for (std::uint32_t k : items_of[b]) {
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
    chains_.push_back(std::move(order));
  }
  return true;
}

void ChainDual::fill_from_w(const RowSet& rows, const BodyOperators& ops,
                            const std::vector<std::uint32_t>& chain) {
  const auto& w_a = rows.wa;
  const auto& w_b = rows.wb;
  const auto& act = active_;
  auto& sys = system_;
  const std::size_t K = chain.size();
  for (std::size_t k = 0; k < K; ++k) {
    const Edge& j = items_[chain[k]];
    const auto& rk = act[k];
    const int nk = static_cast<int>(rk.size());
    const bool da = ops.dynamic(j.a), db = ops.dynamic(j.b);
    for (int p = 0; p < nk; ++p) {  // D_k, lower triangle
      const auto& row = rows.rows[rk[p]];
      for (int q = 0; q <= p; ++q) {
        double v = p == q ? row.compliance : 0.0;
        if (da) v += row.ga.dot(w_a[rk[q]]);
        if (db) v += row.gb.dot(w_b[rk[q]]);
        sys.D(k, p, q) = v;
      }
    }
    if (k + 1 == K) continue;
    // Coupling through the body shared with the next item.
    const Edge& jn = items_[chain[k + 1]];
    const int s = (da && (j.a == jn.a || j.a == jn.b)) ? j.a : j.b;
    const auto& rn = act[k + 1];
    for (int p = 0; p < nk; ++p) {
      const Vec12& g = j.a == s ? rows.rows[rk[p]].ga : rows.rows[rk[p]].gb;
      for (int q = 0; q < static_cast<int>(rn.size()); ++q) {
        sys.B(k, p, q) = g.dot(jn.a == s ? w_a[rn[q]] : w_b[rn[q]]);
      }
    }
  }
}

void ChainDual::fill_body_frame(const RowSet& rows, const BodyOperators& ops,
                                const std::vector<std::uint32_t>& chain) {
  const auto& act = active_;
  auto& sys = system_;
  const std::size_t K = chain.size();
  auto touches = [&](std::size_t k, int body) {
    const Edge& e = items_[chain[k]];
    return e.a == body || e.b == body;
  };
  for (std::size_t k = 0; k < K; ++k) {
    const auto& rk = act[k];
    const int nk = static_cast<int>(rk.size());
    for (int p = 0; p < nk; ++p) sys.D(k, p, p) += rows.rows[rk[p]].compliance;
    const Edge& j = items_[chain[k]];
    for (int body : {j.a, j.b}) {
      // Each dynamic body once: at the first item on it, with the next item's rows if it
      // carries that item too.
      if (!ops.dynamic(body) || (k > 0 && touches(k - 1, body))) continue;
      const bool next = k + 1 < K && touches(k + 1, body);
      const int nn = next ? static_cast<int>(act[k + 1].size()) : 0;
      const int n = nk + nn;
      if (n == 0) continue;
      const auto b = static_cast<std::size_t>(body);
      gp_.resize(n);
      for (int i = 0; i < n; ++i) {
        gp_[i] = &rows.g_of(i < nk ? rk[i] : act[k + 1][i - nk], b);
      }
      vb_.resize(n);
      zb_.resize(n);
      work_.resize(static_cast<std::size_t>(n) * n);
      double* a = work_.data();
      ops.body_frame_clique(b, n, gp_.data(), vb_.data(), zb_.data(), a);
      for (int l = 0; l < n; ++l) {
        for (int i = l; i < n; ++i) {
          const double v = a[i + l * n];
          if (i < nk) {
            sys.D(k, i, l) += v;
          } else if (l >= nk) {
            sys.D(k + 1, i - nk, l - nk) += v;
          } else {
            sys.B(k, l, i - nk) += v;
          }
        }
      }
    }
  }
}

bool ChainDual::solve(const RowSet& rows, const BodyOperators& ops, const std::vector<int>& index,
                      int /*m*/, std::uint64_t /*pattern*/, const Eigen::VectorXd& rhs,
                      Eigen::VectorXd& sol) {
  sol.resize(rhs.size());
  auto& act = active_;
  auto& sys = system_;
  for (const auto& chain : chains_) {
    const std::size_t K = chain.size();
    act.resize(K);
    for (std::size_t k = 0; k < K; ++k) {
      act[k].clear();
      for (std::size_t r = rows.item_begin[chain[k]]; r < rows.item_begin[chain[k] + 1]; ++r) {
        if (index[r] >= 0) act[k].push_back(static_cast<int>(r));
      }
    }
    sizes_.resize(K);
    for (std::size_t k = 0; k < K; ++k) sizes_[k] = static_cast<int>(act[k].size());
    sys.reset(sizes_);
    x_.clear();
    for (std::size_t k = 0; k < K; ++k) {
      for (int r : act[k]) x_.push_back(rhs[index[r]]);
    }
    if (rows.have_w) {
      fill_from_w(rows, ops, chain);
    } else {
      fill_body_frame(rows, ops, chain);
    }
    if (!sys.factor()) return false;
    sys.solve(x_.data());
    std::size_t at = 0;
    for (std::size_t k = 0; k < K; ++k) {
      for (int r : act[k]) sol[index[r]] = x_[at++];
    }
  }
  return true;
}

}  // namespace mabd::detail
