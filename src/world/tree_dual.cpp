// The tree solver of the dual system (paper "Case II: Joint tree (ABD-ABA)" and "Case III:
// Joint loop"), in the dual: S = sum over bodies of the clique blocks
//   S^(b)_{rs} = G_{r,b} H_b^{-1} G_{s,b}^T   (rows r, s of joints at body b),
// eliminated body by body from the leaves to the root (tree_plan.h). At body b with child
// rows c and parent rows p (after the messages of its children have been added), a partial
// Cholesky factorisation of the clique K:
//   K_cc = L L^T,  Y = L^{-1} K_cp,  message to the parent: K_pp - Y^T Y,
//   forward:  y_c = L^{-1} b_c,  b_p -= Y^T y_c;   backward: x_c = L^{-T} (y_c - Y x_p).
// Co-rotated polar bodies: K in the body frame from v = D(R)^T g, Hb^{-1} v (constant
// structured factor) and the body-frame geometric term, without per-row H^{-1} G^T vectors.
// Loop joints: Schur complement S_LL - S_LT S_TT^{-1} S_TL on their rows.
// The same lambda as the general sparse solver, to round-off, in O(K) small dense operations.
// The clique is factored in a scratch block; the factors [L; Y^T] and the messages are kept
// in one array in elimination order (no per-node allocation, streamed by the solves).
// Components with many loop joints (graphs) are left to the sparse solver under Auto
// (component_sparse_dual.cpp).
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
  tree_plan_valid = true;  // until the joints change (dual_method)
}

namespace {

constexpr std::uint32_t kPrefetchNodes = 2;  ///< prefetch distance of the factorisation

/// Active rows of joint j, appended to `out`.
void active_rows(const std::vector<std::size_t>& begin, const std::vector<int>& index,
                 std::uint32_t j, std::vector<int>& out) {
  for (std::size_t r = begin[j]; r < begin[j + 1]; ++r) {
    if (index[r] >= 0) out.push_back(static_cast<int>(r));
  }
}

}  // namespace

void World::Impl::tree_solve(const detail::TreeComponent& comp, Eigen::Ref<Eigen::MatrixXd> v) const {
  for (Eigen::Index col = 0; col < v.cols(); ++col) {
    double* x = v.col(col).data();
    for (std::uint32_t k = comp.node_begin; k < comp.node_end; ++k) {  // forward
      const TreeNodeFactor& f = tree.nodes[k];
      if (f.nc == 0) continue;
      const int n = f.nc + f.np;
      const double* a = tree.factor.data() + f.at;
      double* c = x + f.c_off;
      detail::small_lower_solve(a, n, f.nc, c);
      double* p = x + f.p_off;
      for (int i = 0; i < f.np; ++i) {  // b_p -= Y^T y_c (Y^T: rows nc.. of the first nc columns)
        double s = 0;
        for (int k2 = 0; k2 < f.nc; ++k2) s += a[f.nc + i + k2 * n] * c[k2];
        p[i] -= s;
      }
    }
    for (std::uint32_t k = comp.node_end; k-- > comp.node_begin;) {  // backward
      const TreeNodeFactor& f = tree.nodes[k];
      if (f.nc == 0) continue;
      const int n = f.nc + f.np;
      const double* a = tree.factor.data() + f.at;
      double* c = x + f.c_off;
      const double* p = x + f.p_off;
      for (int i = 0; i < f.nc; ++i) {  // y_c -= Y x_p
        const double* yi = a + f.nc + i * n;
        double s = 0;
        for (int q = 0; q < f.np; ++q) s += yi[q] * p[q];
        c[i] -= s;
      }
      detail::small_lower_transpose_solve(a, n, f.nc, c);
    }
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
  // Co-rotated polar bodies: the clique in the body frame, without the rows' H^{-1} G^T
  // vectors (dual_solve does not compute them then). With H^{-1} = D(R) Hb^{-1} D(R)^T -
  // D(R) Z0 C_b Z0^T D(R)^T (geometric term, body frame) and v = D(R)^T g:
  //   g_i . H^{-1} g_l = v_i . Hb^{-1} v_l - (Z0^T v_i) . C_b (Z0^T v_l).
  const bool body_frame = geo_body_frame();
  std::vector<const Vec12*> gp, wp;  // gradient and H^{-1} G^T of the node's rows
  std::vector<Vec12> vb, zb;         // body frame: D(R)^T g and Hb^{-1} D(R)^T g
  std::vector<Vec3> sb, csb;         // body frame, geometric term: Z0^T v and C_b Z0^T v
  std::vector<double> work;          // the node's clique, (nc + np)^2 column-major
  for (std::size_t ci = 0; ci < plan.components.size(); ++ci) {
    const auto& comp = plan.components[ci];
    if (tree.mixed && tree.sparse_component[ci]) continue;  // solve_sparse_components
    // Local numbering: the child rows of every node in post-order, then the loop rows. The
    // rows of one joint are consecutive, so a node's parent rows start at p_off.
    local.clear();
    std::size_t size = 0, msg_size = 0;  // of the factors and of the messages
    for (std::uint32_t k = comp.node_begin; k < comp.node_end; ++k) {
      const detail::TreeNode& node = plan.nodes[k];
      TreeNodeFactor& f = tree.nodes[k];
      f.c_off = static_cast<int>(local.size());
      for (std::uint32_t c = node.child_begin; c < node.child_end; ++c) {
        active_rows(joint_row_begin, index, plan.child_joints[c], local);
      }
      f.nc = static_cast<int>(local.size()) - f.c_off;
      f.np = 0;
      if (node.parent_joint >= 0) {
        const std::size_t j = static_cast<std::size_t>(node.parent_joint);
        for (std::size_t r = joint_row_begin[j]; r < joint_row_begin[j + 1]; ++r) f.np += index[r] >= 0;
      }
      f.at = size;
      f.msg_at = msg_size;
      size += static_cast<std::size_t>(f.nc + f.np) * static_cast<std::size_t>(f.nc);
      msg_size += static_cast<std::size_t>(f.np) * static_cast<std::size_t>(f.np);
    }
    for (std::uint32_t k = comp.node_begin; k < comp.node_end; ++k) tree.nodes[k].msg_at += size;
    const int nt = static_cast<int>(local.size());
    for (std::uint32_t j : comp.loop_joints) active_rows(joint_row_begin, index, j, local);
    const int nl = static_cast<int>(local.size()) - nt;
    for (int i = 0; i < static_cast<int>(local.size()); ++i) pos[local[i]] = i;
    tree.factor.resize(size + msg_size);

    // Factorisation, leaves to root.
    for (std::uint32_t k = comp.node_begin; k < comp.node_end; ++k) {
      const detail::TreeNode& node = plan.nodes[k];
      TreeNodeFactor& f = tree.nodes[k];
      // Nodes go in elimination order, bodies and rows are stored in body and joint order,
      // and the rows of a joint are first read at its child body: fetch a node ahead.
      if (k + kPrefetchNodes < comp.node_end) {
        const std::uint32_t nb = plan.nodes[k + kPrefetchNodes].body;
        __builtin_prefetch(&bodies[nb].factor);
        __builtin_prefetch(&rot[nb]);
        __builtin_prefetch(&geo[nb]);
        const std::int32_t pj = plan.nodes[k + kPrefetchNodes].parent_joint;
        if (pj >= 0) {
          for (std::size_t r = joint_row_begin[pj]; r < joint_row_begin[pj + 1]; ++r) prefetch_row(r);
        }
      }
      const int n = f.nc + f.np;
      f.p_off = 0;
      if (f.np > 0) {
        std::size_t r = joint_row_begin[node.parent_joint];
        while (index[r] < 0) ++r;  // the first active parent row
        f.p_off = pos[r];
      }
      // Lower triangle of the clique K(i, l) = g_i . H^{-1} g_l, column by column.
      work.resize(static_cast<std::size_t>(n) * n);
      double* a = work.data();
      if (body_frame) {
        const std::uint32_t b = node.body;
        const Mat3& R = rot[b];
        const auto& F = factors[bodies[b].factor];
        vb.resize(n);
        zb.resize(n);
        for (int i = 0; i < n; ++i) {
          const int r = local[i < f.nc ? f.c_off + i : f.p_off + i - f.nc];
          const Vec12& g = g_of(r, b);
          Vec12& v = vb[i];
          for (int k = 0; k < 3; ++k) {
            v.segment<3>(3 * k).noalias() = R.transpose() * g.segment<3>(3 * k);
          }
          v.tail<3>() = g.tail<3>();
          zb[i] = F.solve(v);
        }
        for (int l = 0; l < n; ++l) {
          for (int i = l; i < n; ++i) a[i + l * n] = vb[i].dot(zb[l]);
        }
        if (geo[b] >= 0) {
          const Mat3& C = geo_C[geo[b]];
          sb.resize(n);
          csb.resize(n);
          for (int i = 0; i < n; ++i) {
            Vec3 t = Vec3::Zero();
            for (int k2 = 0; k2 < 3; ++k2) {
              t.noalias() += F.Z0.block<3, 3>(3 * k2, 0).transpose() * vb[i].segment<3>(3 * k2);
            }
            sb[i] = t;
            csb[i].noalias() = C * sb[i];
          }
          for (int l = 0; l < n; ++l) {
            for (int i = l; i < n; ++i) a[i + l * n] -= sb[i].dot(csb[l]);
          }
        }
        if (!contact_of.empty() && contact_of[b] >= 0 && contact_bodies[contact_of[b]].rows > 0) {
          // Contact rows (world frame): - (V^T g_i) . S_c^{-1} (V^T g_l).
          const ContactBody& cb = contact_bodies[contact_of[b]];
          Eigen::MatrixXd Vg(cb.rows, n);
          for (int i = 0; i < n; ++i) {
            const int r = local[i < f.nc ? f.c_off + i : f.p_off + i - f.nc];
            Vg.col(i) = cb.V.transpose() * g_of(r, b);
          }
          const Eigen::MatrixXd SVg = cb.S_inv * Vg;
          for (int l = 0; l < n; ++l) {
            for (int i = l; i < n; ++i) a[i + l * n] -= Vg.col(i).dot(SVg.col(l));
          }
        }
      } else {
        gp.resize(n);
        wp.resize(n);
        for (int i = 0; i < n; ++i) {
          const int r = local[i < f.nc ? f.c_off + i : f.p_off + i - f.nc];
          gp[i] = &g_of(r, node.body);
          wp[i] = &w_of(r, node.body);
        }
        for (int l = 0; l < n; ++l) {
          for (int i = l; i < n; ++i) a[i + l * n] = gp[i]->dot(*wp[l]);
        }
      }
      // Children's messages (or the compliance of joints to the ground).
      int at = 0;
      for (std::uint32_t c = node.child_begin; c < node.child_end; ++c) {
        const std::uint32_t j = plan.child_joints[c];
        const std::int32_t child = plan.child_node_of_joint[j];
        if (child >= 0) {
          const TreeNodeFactor& fc = tree.nodes[child];
          const double* msg = tree.factor.data() + fc.msg_at;
          for (int l = 0; l < fc.np; ++l) {
            for (int i = l; i < fc.np; ++i) a[(at + i) + (at + l) * n] += msg[i + l * fc.np];
          }
          at += fc.np;
        } else {
          for (std::size_t r = joint_row_begin[j]; r < joint_row_begin[j + 1]; ++r) {
            if (index[r] >= 0) {
              a[at * (n + 1)] += rows[r].compliance;
              ++at;
            }
          }
        }
      }
      for (int i = 0; i < f.np; ++i) a[(f.nc + i) * (n + 1)] += rows[local[f.p_off + i]].compliance;
      if (!detail::small_partial_cholesky(a, n, f.nc)) return false;
      std::copy(a, a + n * f.nc, tree.factor.data() + f.at);
      double* msg = tree.factor.data() + f.msg_at;
      for (int l = 0; l < f.np; ++l) {
        for (int i = l; i < f.np; ++i) msg[i + l * f.np] = a[(f.nc + i) + (f.nc + l) * n];
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
          if (body < 0 || !bodies[body].dynamic()) continue;
          const auto b = static_cast<std::uint32_t>(body);
          const Vec12 wl = solve_body(b, g_of(rl, b));  // H^{-1} G^T of the loop row
          for (int r : rows_of[b]) {
            if (index[r] < 0) continue;
            const double s = g_of(r, b).dot(wl);
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
  return !tree.mixed || solve_sparse_components(index, rhs, sol);
}

}  // namespace mabd
