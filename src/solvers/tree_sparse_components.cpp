// Graph components next to trees (paper "Case IV" beside "Case II/III"): the tree solver can
// leave the components with many loop items to the sparse Cholesky. The dual matrix is block
// diagonal over components, so those rows form an independent system
//   S_gg lambda_g = b_g,   S_gg = sum over their bodies of G_{r,b} H_b^{-1} G_{s,b}^T
//                          + diag(compliance),
// assembled here from the rows' H^{-1} G^T per body (the tree solver may not have computed
// them) and solved with the analysis kept while its active rows are unchanged.
#include "solvers/tree_dual.h"

namespace mabd::detail {

bool TreeDual::solve_sparse_components(const RowSet& rows, const BodyOperators& ops,
                                       const std::vector<int>& index, const Eigen::VectorXd& rhs,
                                       Eigen::VectorXd& sol) {
  const auto& plan = plan_;
  auto& rows_g = sparse_rows_;  // local position -> row
  auto& pos = sparse_pos_;      // row -> local position (rows of these components)
  rows_g.clear();
  pos.resize(rows.rows.size());
  std::uint64_t pattern = 0x6a09e667f3bcc909ull;  // FNV-1a over the rows, own seed
  auto add_item_rows = [&](std::uint32_t j) {
    for (std::size_t r = rows.item_begin[j]; r < rows.item_begin[j + 1]; ++r) {
      if (index[r] < 0) continue;
      pos[r] = static_cast<int>(rows_g.size());
      rows_g.push_back(static_cast<int>(r));
      pattern = (pattern ^ r) * 1099511628211ull;
    }
  };
  for (std::size_t ci = 0; ci < plan.components.size(); ++ci) {
    if (!sparse_component_[ci]) continue;
    const auto& comp = plan.components[ci];
    for (std::uint32_t k = comp.node_begin; k < comp.node_end; ++k) {
      const TreeNode& node = plan.nodes[k];
      for (std::uint32_t c = node.child_begin; c < node.child_end; ++c) {
        add_item_rows(plan.child_joints[c]);
      }
    }
    for (std::uint32_t j : comp.loop_joints) add_item_rows(j);
  }
  const int m = static_cast<int>(rows_g.size());
  if (m == 0) return true;

  // S_gg body by body: the clique of the active rows at each body of these components.
  auto& trip = sparse_trip_;
  auto& w = sparse_w_;
  trip.clear();
  for (std::size_t ci = 0; ci < plan.components.size(); ++ci) {
    if (!sparse_component_[ci]) continue;
    const auto& comp = plan.components[ci];
    for (std::uint32_t k = comp.node_begin; k < comp.node_end; ++k) {
      const std::uint32_t b = plan.nodes[k].body;
      w.clear();
      for (int r : rows.rows_of[b]) {
        if (index[r] >= 0) w.push_back(ops.solve_body(b, rows.g_of(r, b)));
      }
      for (int r1 : rows.rows_of[b]) {
        if (index[r1] < 0) continue;
        int i2 = 0;
        for (int r2 : rows.rows_of[b]) {
          if (index[r2] < 0) continue;
          if (pos[r2] <= pos[r1]) trip.emplace_back(pos[r1], pos[r2], rows.g_of(r1, b).dot(w[i2]));
          ++i2;
        }
      }
    }
  }
  for (int i = 0; i < m; ++i) trip.emplace_back(i, i, rows.rows[rows_g[i]].compliance);

  auto& b = sparse_rhs_;
  auto& x = sparse_sol_;
  b.resize(m);
  for (int i = 0; i < m; ++i) b[i] = rhs[index[rows_g[i]]];
  if (!sparse_solver_.solve(m, trip, b, pattern, x)) return false;
  for (int i = 0; i < m; ++i) sol[index[rows_g[i]]] = x[i];
  return true;
}

}  // namespace mabd::detail
