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
// Threads: the nodes are split into contiguous ranges, one per thread. A node whose whole
// subtree lies in its range depends on nothing outside it and is factored and solved there;
// the others (the ancestors of the ranges' boundaries, a few paths to the roots) follow on the
// calling thread. Every node writes only its own factor, message and rows, in the same
// operations as on one thread: the same result to the bit.
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
  // Post-order: a node's children precede it, so its subtree begins where its first
  // descendant's does.
  subtree_begin_.resize(plan_.nodes.size());
  for (std::uint32_t k = 0; k < plan_.nodes.size(); ++k) subtree_begin_[k] = k;
  for (std::uint32_t k = 0; k < plan_.nodes.size(); ++k) {
    const std::int32_t p = plan_.nodes[k].parent_node;
    if (p >= 0) subtree_begin_[p] = std::min(subtree_begin_[p], subtree_begin_[k]);
  }
  set_sparse_components({});
  return true;
}

void TreeDual::set_sparse_components(std::vector<char> sparse) {
  sparse_component_ = std::move(sparse);
  mixed_ = std::find(sparse_component_.begin(), sparse_component_.end(), 1) !=
           sparse_component_.end();
  skip_.assign(plan_.nodes.size(), 0);
  for (std::size_t ci = 0; mixed_ && ci < plan_.components.size(); ++ci) {
    if (!sparse_component_[ci]) continue;
    const auto& comp = plan_.components[ci];
    std::fill(skip_.begin() + comp.node_begin, skip_.begin() + comp.node_end, 1);
  }
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

template <class Fn>
void TreeDual::for_nodes(bool reverse, Fn&& fn) {
  const std::size_t n = plan_.nodes.size();
  const int threads = pool_ != nullptr && n >= kParallelNodes ? pool_->threads() : 1;
  if (threads <= 1) {
    for (std::size_t i = 0; i < n; ++i) {
      const auto k = static_cast<std::uint32_t>(reverse ? n - 1 - i : i);
      if (!skip_[k]) fn(k, 0);
    }
    return;
  }
  // The pool's ranges: range t is [n t / T, n (t + 1) / T).
  range_begin_.resize(static_cast<std::size_t>(threads) + 1);
  for (int t = 0; t <= threads; ++t) {
    range_begin_[t] = n * static_cast<std::size_t>(t) / static_cast<std::size_t>(threads);
  }
  const auto own = [&](std::uint32_t k, std::size_t b) { return subtree_begin_[k] >= b; };
  const auto parallel = [&] {
    pool_->run(n, [&](int t, std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) {
        const auto k = static_cast<std::uint32_t>(reverse ? e - 1 - (i - b) : i);
        if (!skip_[k] && own(k, b)) fn(k, t);
      }
    });
  };
  const auto rest = [&] {
    for (int t0 = 0; t0 < threads; ++t0) {
      const int t = reverse ? threads - 1 - t0 : t0;
      const std::size_t b = range_begin_[t], e = range_begin_[t + 1];
      for (std::size_t i = b; i < e; ++i) {
        const auto k = static_cast<std::uint32_t>(reverse ? e - 1 - (i - b) : i);
        if (!skip_[k] && !own(k, b)) fn(k, 0);
      }
    }
  };
  if (reverse) {
    rest();
    parallel();
  } else {
    parallel();
    rest();
  }
}

void TreeDual::forward_node(std::uint32_t k, double* x, int base) const {
  const NodeFactor& f = nodes_[k];
  if (f.nc == 0) return;
  const int n = f.nc + f.np;
  const double* a = factor_.data() + f.at;
  double* c = x + (f.c_off - base);
  small_lower_solve(a, n, f.nc, c);
  double* p = x + (f.p_off - base);
  for (int i = 0; i < f.np; ++i) {  // b_p -= Y^T y_c (Y^T: rows nc.. of the first nc columns)
    double s = 0;
    for (int k2 = 0; k2 < f.nc; ++k2) s += a[f.nc + i + k2 * n] * c[k2];
    p[i] -= s;
  }
}

void TreeDual::backward_node(std::uint32_t k, double* x, int base) const {
  const NodeFactor& f = nodes_[k];
  if (f.nc == 0) return;
  const int n = f.nc + f.np;
  const double* a = factor_.data() + f.at;
  double* c = x + (f.c_off - base);
  const double* p = x + (f.p_off - base);
  for (int i = 0; i < f.nc; ++i) {  // y_c -= Y x_p
    const double* yi = a + f.nc + i * n;
    double s = 0;
    for (int q = 0; q < f.np; ++q) s += yi[q] * p[q];
    c[i] -= s;
  }
  small_lower_transpose_solve(a, n, f.nc, c);
}

void TreeDual::solve_factored(const TreeComponent& comp, int base,
                              Eigen::Ref<Eigen::MatrixXd> v) const {
  for (Eigen::Index col = 0; col < v.cols(); ++col) {
    double* x = v.col(col).data();
    for (std::uint32_t k = comp.node_begin; k < comp.node_end; ++k) forward_node(k, x, base);
    for (std::uint32_t k = comp.node_end; k-- > comp.node_begin;) backward_node(k, x, base);
  }
}

bool TreeDual::factor_node(std::uint32_t k, const RowSet& rows, const BodyOperators& ops,
                           const std::vector<int>& index, NodeScratch& s) {
  const auto& plan = plan_;
  const auto& item_begin = rows.item_begin;
  const auto& local = local_rows_;
  const TreeNode& node = plan.nodes[k];
  const NodeFactor& f = nodes_[k];
  // Nodes go in elimination order, bodies and rows are stored in body and item order, and
  // the rows of an item are first read at its child body: fetch a node ahead.
  if (k + kPrefetchNodes < plan.nodes.size()) {
    ops.prefetch(plan.nodes[k + kPrefetchNodes].body);
    const std::int32_t pj = plan.nodes[k + kPrefetchNodes].parent_joint;
    if (pj >= 0) {
      for (std::size_t r = item_begin[pj]; r < item_begin[pj + 1]; ++r) rows.prefetch_row(r);
    }
  }
  const int n = f.nc + f.np;
  // Lower triangle of the clique K(i, l) = g_i . H^{-1} g_l, column by column.
  s.work.resize(static_cast<std::size_t>(n) * n);
  double* a = s.work.data();
  s.gp.resize(n);
  auto row_at = [&](int i) { return local[i < f.nc ? f.c_off + i : f.p_off + i - f.nc]; };
  for (int i = 0; i < n; ++i) s.gp[i] = &rows.g_of(row_at(i), node.body);
  // Co-rotated polar bodies: the clique in the body frame, without the rows' H^{-1} G^T
  // vectors (not computed then). With H^{-1} = D(R) Hb^{-1} D(R)^T - corrections and
  // v = D(R)^T g: g_i . H^{-1} g_l = v_i . Hb^{-1} v_l - (corrections).
  if (ops.body_frame()) {
    s.vb.resize(n);
    s.zb.resize(n);
    ops.body_frame_clique(node.body, n, s.gp.data(), s.vb.data(), s.zb.data(), a);
  } else {
    s.wp.resize(n);
    for (int i = 0; i < n; ++i) s.wp[i] = &rows.w_of(row_at(i), node.body);
    for (int l = 0; l < n; ++l) {
      for (int i = l; i < n; ++i) a[i + l * n] = s.gp[i]->dot(*s.wp[l]);
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
  return true;
}

bool TreeDual::solve(const RowSet& rows, const BodyOperators& ops, const std::vector<int>& index,
                     int /*m*/, std::uint64_t /*pattern*/, const Eigen::VectorXd& rhs,
                     Eigen::VectorXd& sol) {
  sol.resize(rhs.size());
  const auto& plan = plan_;
  const auto& item_begin = rows.item_begin;
  auto& local = local_rows_;  // local position -> row
  auto& pos = pos_;           // row -> local position
  pos.resize(rows.rows.size());
  // Local numbering, component after component: the child rows of every node in post-order,
  // then the component's loop rows. The rows of one item are consecutive, so a node's parent
  // rows start at p_off. The factors and messages of all components share factor_.
  local.clear();
  comp_base_.assign(plan.components.size(), 0);
  std::size_t size = 0, msg_size = 0;  // of the factors and of the messages
  bool loops = false;
  for (std::size_t ci = 0; ci < plan.components.size(); ++ci) {
    const auto& comp = plan.components[ci];
    if (mixed_ && sparse_component_[ci]) continue;  // solve_sparse_components
    comp_base_[ci] = static_cast<int>(local.size());
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
    const std::size_t before = local.size();
    for (std::uint32_t j : comp.loop_joints) active_rows(item_begin, index, j, local);
    loops = loops || local.size() > before;
  }
  for (int i = 0; i < static_cast<int>(local.size()); ++i) pos[local[i]] = i;
  for (std::uint32_t k = 0; k < plan.nodes.size(); ++k) {
    if (skip_[k]) continue;
    NodeFactor& f = nodes_[k];
    f.msg_at += size;
    f.p_off = 0;
    if (f.np > 0) {
      std::size_t r = item_begin[plan.nodes[k].parent_joint];
      while (index[r] < 0) ++r;  // the first active parent row
      f.p_off = pos[r];
    }
  }
  factor_.resize(size + msg_size);

  // Factorisation, leaves to root.
  const int threads = pool_ != nullptr ? pool_->threads() : 1;
  scratch_.resize(static_cast<std::size_t>(threads));
  std::vector<char> singular(static_cast<std::size_t>(threads), 0);
  for_nodes(false, [&](std::uint32_t k, int t) {
    if (!singular[t] && !factor_node(k, rows, ops, index, scratch_[t])) singular[t] = 1;
  });
  if (std::find(singular.begin(), singular.end(), 1) != singular.end()) return false;

  Eigen::VectorXd& x = x_;
  x.resize(static_cast<Eigen::Index>(local.size()));
  for (std::size_t i = 0; i < local.size(); ++i) x[i] = rhs[index[local[i]]];
  if (!loops) {
    double* px = x.data();
    for_nodes(false, [&](std::uint32_t k, int) { forward_node(k, px, 0); });
    for_nodes(true, [&](std::uint32_t k, int) { backward_node(k, px, 0); });
  }
  for (std::size_t ci = 0; loops && ci < plan.components.size(); ++ci) {
    const auto& comp = plan.components[ci];
    if (mixed_ && sparse_component_[ci]) continue;
    const int base = comp_base_[ci];
    int nt = 0;
    for (std::uint32_t k = comp.node_begin; k < comp.node_end; ++k) nt += nodes_[k].nc;
    int nl = 0;
    for (std::uint32_t j : comp.loop_joints) {
      for (std::size_t r = item_begin[j]; r < item_begin[j + 1]; ++r) nl += index[r] >= 0;
    }
    auto xc = x.segment(base, nt + nl);
    if (nl == 0) {
      solve_factored(comp, base, xc);
      continue;
    }
    // Schur complement on the loop rows: C = S_TL, X = S_TT^{-1} C.
    Eigen::MatrixXd C = Eigen::MatrixXd::Zero(nt, nl);
    Eigen::MatrixXd S_ll = Eigen::MatrixXd::Zero(nl, nl);
    for (int l = 0; l < nl; ++l) {
      const int rl = local[base + nt + l];
      S_ll(l, l) += rows.rows[rl].compliance;
      for (int body : {rows.row_a[rl], rows.row_b[rl]}) {
        if (!ops.dynamic(body)) continue;
        const auto b = static_cast<std::uint32_t>(body);
        const Vec12 wl = ops.solve_body(b, rows.g_of(rl, b));  // H^{-1} G^T of the loop row
        for (int r : rows.rows_of[b]) {
          if (index[r] < 0) continue;
          const double v = rows.g_of(r, b).dot(wl);
          const int p = pos[r] - base;
          if (is_loop_[rows.row_item[r]]) {
            S_ll(p - nt, l) += v;
          } else {
            C(p, l) += v;
          }
        }
      }
    }
    Eigen::MatrixXd X = C;
    solve_factored(comp, base, X);
    auto xt = xc.head(nt);
    solve_factored(comp, base, xt);
    S_ll.noalias() -= C.transpose() * X;
    Eigen::LDLT<Eigen::MatrixXd> schur(S_ll);
    if (schur.info() != Eigen::Success || !schur.isPositive()) return false;
    Eigen::VectorXd xl = xc.tail(nl) - C.transpose() * xc.head(nt);
    xl = schur.solve(xl);
    if (!xl.allFinite()) return false;
    xc.head(nt).noalias() -= X * xl;
    xc.tail(nl) = xl;
  }
  for (std::size_t i = 0; i < local.size(); ++i) sol[index[local[i]]] = x[i];
  return !mixed_ || solve_sparse_components(rows, ops, index, rhs, sol);
}

}  // namespace mabd::detail
