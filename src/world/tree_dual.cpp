// The tree solver of the dual system (paper "Case II: Joint tree (ABD-ABA)" and "Case III:
// Joint loop"), in the dual: S = sum over bodies of the clique blocks
//   S^(b)_{rs} = G_{r,b} H_b^{-1} G_{s,b}^T   (rows r, s of joints at body b),
// eliminated body by body from the leaves to the root (tree_plan.h). At body b with child
// rows c and parent rows p (after the messages of its children have been added):
//   K_cc = L L^T,  Z = K_cc^{-1} K_cp,  message to the parent: K_pp - K_pc Z,
//   forward:  b_p -= Z^T b_c,  x_c = K_cc^{-1} b_c;   backward: x_c -= Z x_p.
// Loop joints: Schur complement S_LL - S_LT S_TT^{-1} S_TL on their rows.
// The same lambda as the general sparse solver, to round-off, in O(K) small dense operations.
#include <algorithm>

#include "solvers/small_dense.h"
#include "world/world_impl.h"

namespace mabd {

void World::Impl::update_tree_plan() {
  std::vector<char> movable(bodies.size());
  for (std::size_t i = 0; i < bodies.size(); ++i) movable[i] = bodies[i].dynamic();
  std::vector<detail::Edge> edges;
  edges.reserve(joints.size());
  for (const auto& j : joints) edges.push_back({j.a, j.b});
  tree_plan = detail::plan_trees(bodies.size(), movable, edges);
  tree.nodes.resize(tree_plan.nodes.size());
  tree.is_loop.assign(joints.size(), 0);
  for (const auto& comp : tree_plan.components) {
    for (std::uint32_t j : comp.loop_joints) tree.is_loop[j] = 1;
  }
}

namespace {

/// Active rows of joint j, appended to `out`.
void active_rows(const std::vector<std::size_t>& begin, const std::vector<int>& index,
                 std::uint32_t j, std::vector<int>& out) {
  for (std::size_t r = begin[j]; r < begin[j + 1]; ++r) {
    if (index[r] >= 0) out.push_back(static_cast<int>(r));
  }
}

}  // namespace

void World::Impl::tree_solve(const detail::TreeComponent& comp, Eigen::Ref<Eigen::MatrixXd> v) const {
  for (std::uint32_t k = comp.node_begin; k < comp.node_end; ++k) {
    const TreeNodeFactor& f = tree.nodes[k];
    if (f.nc == 0) continue;
    auto c = v.middleRows(f.c_off, f.nc);
    if (f.np > 0) v.middleRows(f.p_off, f.np).noalias() -= f.Z.transpose().lazyProduct(c);
    detail::small_cholesky_solve(f.L, c);
  }
  for (std::uint32_t k = comp.node_end; k-- > comp.node_begin;) {
    const TreeNodeFactor& f = tree.nodes[k];
    if (f.nc == 0 || f.np == 0) continue;
    v.middleRows(f.c_off, f.nc).noalias() -= f.Z.lazyProduct(v.middleRows(f.p_off, f.np));
  }
}

bool World::Impl::solve_trees(const std::vector<int>& index, const Eigen::VectorXd& rhs,
                              Eigen::VectorXd& sol) {
  sol.resize(rhs.size());
  const auto& plan = tree_plan;
  auto g_of = [&](int r, std::uint32_t body) -> const Vec12& {
    return row_a[r] == static_cast<int>(body) ? rows[r].ga : rows[r].gb;
  };
  auto w_of = [&](int r, std::uint32_t body) -> const Vec12& {
    return row_a[r] == static_cast<int>(body) ? wa[r] : wb[r];
  };
  auto& local = tree.local_rows;  // local position -> row
  auto& pos = tree.pos;           // row -> local position (rows of this component)
  pos.resize(rows.size());
  std::vector<int> cr, pr;
  std::vector<const Vec12*> gp, wp;  // gradient and H^{-1} G^T of the node's rows
  for (const auto& comp : plan.components) {
    // Local numbering: the child rows of every node in post-order, then the loop rows.
    local.clear();
    for (std::uint32_t k = comp.node_begin; k < comp.node_end; ++k) {
      const detail::TreeNode& node = plan.nodes[k];
      TreeNodeFactor& f = tree.nodes[k];
      f.c_off = static_cast<int>(local.size());
      for (std::uint32_t c = node.child_begin; c < node.child_end; ++c) {
        active_rows(joint_row_begin, index, plan.child_joints[c], local);
      }
      f.nc = static_cast<int>(local.size()) - f.c_off;
    }
    const int nt = static_cast<int>(local.size());
    for (std::uint32_t j : comp.loop_joints) active_rows(joint_row_begin, index, j, local);
    const int nl = static_cast<int>(local.size()) - nt;
    for (int i = 0; i < static_cast<int>(local.size()); ++i) pos[local[i]] = i;

    // Factorisation, leaves to root.
    for (std::uint32_t k = comp.node_begin; k < comp.node_end; ++k) {
      const detail::TreeNode& node = plan.nodes[k];
      TreeNodeFactor& f = tree.nodes[k];
      cr.assign(local.begin() + f.c_off, local.begin() + f.c_off + f.nc);
      pr.clear();
      if (node.parent_joint >= 0) active_rows(joint_row_begin, index, node.parent_joint, pr);
      f.np = static_cast<int>(pr.size());
      f.p_off = f.np > 0 ? pos[pr.front()] : 0;
      const int n = f.nc + f.np;
      Eigen::MatrixXd& K = f.K;
      K.resize(n, n);
      gp.resize(n);
      wp.resize(n);
      for (int i = 0; i < n; ++i) {
        const int r = i < f.nc ? cr[i] : pr[i - f.nc];
        gp[i] = &g_of(r, node.body);
        wp[i] = &w_of(r, node.body);
      }
      for (int i = 0; i < n; ++i) {
        for (int l = 0; l <= i; ++l) K(i, l) = K(l, i) = gp[i]->dot(*wp[l]);
      }
      // Children's messages (or the compliance of joints to the ground).
      int at = 0;
      for (std::uint32_t c = node.child_begin; c < node.child_end; ++c) {
        const std::uint32_t j = plan.child_joints[c];
        const std::int32_t child = plan.child_node_of_joint[j];
        if (child >= 0) {
          const Eigen::MatrixXd& msg = tree.nodes[child].msg;
          K.block(at, at, msg.rows(), msg.cols()) += msg;
          at += static_cast<int>(msg.rows());
        } else {
          for (std::size_t r = joint_row_begin[j]; r < joint_row_begin[j + 1]; ++r) {
            if (index[r] >= 0) {
              K(at, at) += rows[r].compliance;
              ++at;
            }
          }
        }
      }
      for (int i = 0; i < f.np; ++i) K(f.nc + i, f.nc + i) += rows[pr[i]].compliance;
      if (f.nc > 0) {
        f.L = K.topLeftCorner(f.nc, f.nc);
        if (!detail::small_cholesky(f.L)) return false;
        f.Z = K.topRightCorner(f.nc, f.np);
        detail::small_cholesky_solve(f.L, f.Z);
        f.msg = K.bottomRightCorner(f.np, f.np);
        f.msg.noalias() -= K.bottomLeftCorner(f.np, f.nc).lazyProduct(f.Z);
      } else {
        f.Z.resize(0, f.np);
        f.msg = K.bottomRightCorner(f.np, f.np);
      }
    }

    Eigen::VectorXd& x = tree.x;
    x.resize(nt + nl);
    for (int i = 0; i < nt + nl; ++i) x[i] = rhs[index[local[i]]];
    if (nl == 0) {
      tree_solve(comp, x);
    } else {
      // Schur complement on the loop rows: C = S_TL, X = S_TT^{-1} C.
      Eigen::MatrixXd C = Eigen::MatrixXd::Zero(nt, nl);
      Eigen::MatrixXd S_ll = Eigen::MatrixXd::Zero(nl, nl);
      for (int l = 0; l < nl; ++l) {
        const int rl = local[nt + l];
        const auto& jl = joints[row_joint[rl]];
        S_ll(l, l) += rows[rl].compliance;
        for (int body : {jl.a, jl.b}) {
          const auto b = static_cast<std::uint32_t>(body);
          for (int r : rows_of[b]) {
            if (index[r] < 0) continue;
            const double s = g_of(r, b).dot(w_of(rl, b));
            const int p = pos[r];
            if (tree.is_loop[row_joint[r]]) {
              S_ll(p - nt, l) += s;
            } else {
              C(p, l) += s;
            }
          }
        }
      }
      Eigen::MatrixXd X = C;
      tree_solve(comp, X);
      auto xt = x.head(nt);
      tree_solve(comp, xt);
      S_ll.noalias() -= C.transpose() * X;
      Eigen::LDLT<Eigen::MatrixXd> schur(S_ll);
      if (schur.info() != Eigen::Success || !schur.isPositive()) return false;
      Eigen::VectorXd xl = x.tail(nl) - C.transpose() * x.head(nt);
      xl = schur.solve(xl);
      if (!xl.allFinite()) return false;
      x.head(nt).noalias() -= X * xl;
      x.tail(nl) = xl;
    }
    for (int i = 0; i < nt + nl; ++i) sol[index[local[i]]] = x[i];
  }
  return true;
}

}  // namespace mabd
