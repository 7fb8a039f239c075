// The tree solver in the dual: S = sum over bodies of the clique blocks
//   S^(b)_{rs} = G_{r,b} H_b^{-1} G_{s,b}^T   (rows r, s of items at body b),
// eliminated body by body from the leaves to the root (tree_plan.h). At body b with child
// rows c and parent rows p (after the messages of its children have been added), a partial
// Cholesky factorisation of the clique K:
//   K_cc = L L^T,  Y = L^{-1} K_cp,  message to the parent: K_pp - Y^T Y,
//   forward:  y_c = L^{-1} b_c,  b_p -= Y^T y_c;   backward: x_c = L^{-T} (y_c - Y x_p).
// Co-rotated polar bodies: K in the body frame from v = D(R)^T g, Hb^{-1} v (constant
// structured factor) and the body-frame corrections, without per-row H^{-1} G^T vectors.
// Loop items: Schur complement S_LL - S_LT S_TT^{-1} S_TL on their rows.
// The same lambda as the general sparse solver, to round-off. The clique is factored in a
// scratch block; the factors [L; Y^T] and the messages are kept in one array in elimination
// order (no per-node allocation, streamed by the solves).
#include "solvers/tree_dual.h"

#include <algorithm>

#include <Eigen/Dense>

#include "solvers/small_dense.h"

namespace mabd::detail {

bool TreeDual::prepare(const DualTopology& topology) {
  plan_ = plan_trees(topology.movable.size(), topology.movable, topology.items);
  nodes_.resize(plan_.nodes.size());
  is_loop_.assign(topology.items.size(), 0);
  for (const auto& comp : plan_.components) {
    for (std::uint32_t j : comp.loop_joints) is_loop_[j] = 1;
  }
  set_sparse_components({});
  return true;
}

void TreeDual::set_sparse_components(std::vector<char> sparse) {
  sparse_component_ = std::move(sparse);
  mixed_ = std::find(sparse_component_.begin(), sparse_component_.end(), 1) !=
           sparse_component_.end();
}

namespace {

constexpr std::uint32_t kPrefetchNodes = 2;  ///< prefetch distance of the factorisation

/// Active rows of item j, appended to `out`.
void active_rows(const std::vector<std::size_t>& begin, const std::vector<int>& index,
                 std::uint32_t j, std::vector<int>& out) {
  for (std::size_t r = begin[j]; r < begin[j + 1]; ++r) {
    if (index[r] >= 0) out.push_back(static_cast<int>(r));
  }
}

}  // namespace

void TreeDual::solve_factored(const TreeComponent& comp, Eigen::Ref<Eigen::MatrixXd> v) const {
  for (Eigen::Index col = 0; col < v.cols(); ++col) {
    double* x = v.col(col).data();
    for (std::uint32_t k = comp.node_begin; k < comp.node_end; ++k) {  // forward
      const NodeFactor& f = nodes_[k];
      if (f.nc == 0) continue;
      const int n = f.nc + f.np;
      const double* a = factor_.data() + f.at;
      double* c = x + f.c_off;
      small_lower_solve(a, n, f.nc, c);
      double* p = x + f.p_off;
      for (int i = 0; i < f.np; ++i) {  // b_p -= Y^T y_c (Y^T: rows nc.. of the first nc columns)
        double s = 0;
        for (int k2 = 0; k2 < f.nc; ++k2) s += a[f.nc + i + k2 * n] * c[k2];
        p[i] -= s;
      }
    }
    for (std::uint32_t k = comp.node_end; k-- > comp.node_begin;) {  // backward
      const NodeFactor& f = nodes_[k];
      if (f.nc == 0) continue;
      const int n = f.nc + f.np;
      const double* a = factor_.data() + f.at;
      double* c = x + f.c_off;
      const double* p = x + f.p_off;
      for (int i = 0; i < f.nc; ++i) {  // y_c -= Y x_p
        const double* yi = a + f.nc + i * n;
        double s = 0;
        for (int q = 0; q < f.np; ++q) s += yi[q] * p[q];
        c[i] -= s;
      }
      small_lower_transpose_solve(a, n, f.nc, c);
    }
  }
}

bool TreeDual::solve(const RowSet& rows, const BodyOperators& ops, const std::vector<int>& index,
                     int /*m*/, std::uint64_t /*pattern*/, const Eigen::VectorXd& rhs,
                     Eigen::VectorXd& sol) {
  sol.resize(rhs.size());
  const auto& plan = plan_;
  const auto& item_begin = rows.item_begin;
  auto& local = local_rows_;  // local position -> row
  auto& pos = pos_;           // row -> local position (rows of this component)
  pos.resize(rows.rows.size());
  // Co-rotated polar bodies: the clique in the body frame, without the rows' H^{-1} G^T
  // vectors (not computed then). With H^{-1} = D(R) Hb^{-1} D(R)^T - corrections and
  // v = D(R)^T g: g_i . H^{-1} g_l = v_i . Hb^{-1} v_l - (corrections).
  const bool body_frame = ops.body_frame();
  auto& gp = gp_;  // gradient and H^{-1} G^T of the node's rows
  auto& wp = wp_;
  auto& vb = vb_;  // body frame: D(R)^T g and Hb^{-1} D(R)^T g
  auto& zb = zb_;
  auto& work = work_;  // the node's clique, (nc + np)^2 column-major
  for (std::size_t ci = 0; ci < plan.components.size(); ++ci) {
    const auto& comp = plan.components[ci];
    if (mixed_ && sparse_component_[ci]) continue;  // solve_sparse_components
    // Local numbering: the child rows of every node in post-order, then the loop rows. The
    // rows of one item are consecutive, so a node's parent rows start at p_off.
    local.clear();
    std::size_t size = 0, msg_size = 0;  // of the factors and of the messages
    for (std::uint32_t k = comp.node_begin; k < comp.node_end; ++k) {
      const TreeNode& node = plan.nodes[k];
      NodeFactor& f = nodes_[k];
      f.c_off = static_cast<int>(local.size());
      for (std::uint32_t c = node.child_begin; c < node.child_end; ++c) {
        active_rows(item_begin, index, plan.child_joints[c], local);
      }
      f.nc = static_cast<int>(local.size()) - f.c_off;
      f.np = 0;
      if (node.parent_joint >= 0) {
        const std::size_t j = static_cast<std::size_t>(node.parent_joint);
        for (std::size_t r = item_begin[j]; r < item_begin[j + 1]; ++r) f.np += index[r] >= 0;
      }
      f.at = size;
      f.msg_at = msg_size;
      size += static_cast<std::size_t>(f.nc + f.np) * static_cast<std::size_t>(f.nc);
      msg_size += static_cast<std::size_t>(f.np) * static_cast<std::size_t>(f.np);
    }
    for (std::uint32_t k = comp.node_begin; k < comp.node_end; ++k) nodes_[k].msg_at += size;
    const int nt = static_cast<int>(local.size());
    for (std::uint32_t j : comp.loop_joints) active_rows(item_begin, index, j, local);
    const int nl = static_cast<int>(local.size()) - nt;
    for (int i = 0; i < static_cast<int>(local.size()); ++i) pos[local[i]] = i;
    factor_.resize(size + msg_size);

    // Factorisation, leaves to root.
    for (std::uint32_t k = comp.node_begin; k < comp.node_end; ++k) {
      const TreeNode& node = plan.nodes[k];
      NodeFactor& f = nodes_[k];
      // Nodes go in elimination order, bodies and rows are stored in body and item order,
      // and the rows of an item are first read at its child body: fetch a node ahead.
      if (k + kPrefetchNodes < comp.node_end) {
        ops.prefetch(plan.nodes[k + kPrefetchNodes].body);
        const std::int32_t pj = plan.nodes[k + kPrefetchNodes].parent_joint;
        if (pj >= 0) {
          for (std::size_t r = item_begin[pj]; r < item_begin[pj + 1]; ++r) rows.prefetch_row(r);
        }
      }
      const int n = f.nc + f.np;
      f.p_off = 0;
      if (f.np > 0) {
        std::size_t r = item_begin[node.parent_joint];
        while (index[r] < 0) ++r;  // the first active parent row
        f.p_off = pos[r];
      }
      // Lower triangle of the clique K(i, l) = g_i . H^{-1} g_l, column by column.
      work.resize(static_cast<std::size_t>(n) * n);
      double* a = work.data();
      gp.resize(n);
      for (int i = 0; i < n; ++i) {
        const int r = local[i < f.nc ? f.c_off + i : f.p_off + i - f.nc];
        gp[i] = &rows.g_of(r, node.body);
      }
      if (body_frame) {
        vb.resize(n);
        zb.resize(n);
        ops.body_frame_clique(node.body, n, gp.data(), vb.data(), zb.data(), a);
      } else {
        wp.resize(n);
        for (int i = 0; i < n; ++i) {
          const int r = local[i < f.nc ? f.c_off + i : f.p_off + i - f.nc];
          wp[i] = &rows.w_of(r, node.body);
        }
        for (int l = 0; l < n; ++l) {
          for (int i = l; i < n; ++i) a[i + l * n] = gp[i]->dot(*wp[l]);
        }
      }
      // Children's messages (or the compliance of items to the ground).
      int at = 0;
      for (std::uint32_t c = node.child_begin; c < node.child_end; ++c) {
        const std::uint32_t j = plan.child_joints[c];
        const std::int32_t child = plan.child_node_of_joint[j];
        if (child >= 0) {
          const NodeFactor& fc = nodes_[child];
          const double* msg = factor_.data() + fc.msg_at;
          for (int l = 0; l < fc.np; ++l) {
            for (int i = l; i < fc.np; ++i) a[(at + i) + (at + l) * n] += msg[i + l * fc.np];
          }
          at += fc.np;
        } else {
          for (std::size_t r = item_begin[j]; r < item_begin[j + 1]; ++r) {
            if (index[r] >= 0) {
              a[at * (n + 1)] += rows.rows[r].compliance;
              ++at;
            }
          }
        }
      }
      for (int i = 0; i < f.np; ++i) {
        a[(f.nc + i) * (n + 1)] += rows.rows[local[f.p_off + i]].compliance;
      }
      if (!small_partial_cholesky(a, n, f.nc)) return false;
      std::copy(a, a + n * f.nc, factor_.data() + f.at);
      double* msg = factor_.data() + f.msg_at;
      for (int l = 0; l < f.np; ++l) {
        for (int i = l; i < f.np; ++i) msg[i + l * f.np] = a[(f.nc + i) + (f.nc + l) * n];
      }
    }

    Eigen::VectorXd& x = x_;
    x.resize(nt + nl);
    for (int i = 0; i < nt + nl; ++i) x[i] = rhs[index[local[i]]];
    if (nl == 0) {
      solve_factored(comp, x);
    } else {
      // Schur complement on the loop rows: C = S_TL, X = S_TT^{-1} C.
      Eigen::MatrixXd C = Eigen::MatrixXd::Zero(nt, nl);
      Eigen::MatrixXd S_ll = Eigen::MatrixXd::Zero(nl, nl);
      for (int l = 0; l < nl; ++l) {
        const int rl = local[nt + l];
        S_ll(l, l) += rows.rows[rl].compliance;
        for (int body : {rows.row_a[rl], rows.row_b[rl]}) {
          if (!ops.dynamic(body)) continue;
          const auto b = static_cast<std::uint32_t>(body);
          const Vec12 wl = ops.solve_body(b, rows.g_of(rl, b));  // H^{-1} G^T of the loop row
          for (int r : rows.rows_of[b]) {
            if (index[r] < 0) continue;
            const double s = rows.g_of(r, b).dot(wl);
            const int p = pos[r];
            if (is_loop_[rows.row_item[r]]) {
              S_ll(p - nt, l) += s;
            } else {
              C(p, l) += s;
            }
          }
        }
      }
      Eigen::MatrixXd X = C;
      solve_factored(comp, X);
      auto xt = x.head(nt);
      solve_factored(comp, xt);
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
  return !mixed_ || solve_sparse_components(rows, ops, index, rhs, sol);
}

}  // namespace mabd::detail
