// The tree solver of the dual system (paper "Case II: Joint tree (ABD-ABA)" and "Case III:
// Joint loop"): S eliminated body by body from the leaves to the root along the plan of
// tree_plan.h, loop items by a Schur complement (Eq. loop), in O(K) small dense operations
// (see tree_dual.cpp). Components with many loop items (graphs) can be left to a sparse
// Cholesky of their own rows (tree_sparse_components.cpp): "tree+sparse".
#pragma once

#include "solvers/dual_solver.h"
#include "solvers/sparse_dual.h"
#include "solvers/thread_pool.h"
#include "solvers/tree_plan.h"

namespace mabd::detail {

class TreeDual : public DualSolver {
 public:
  const char* name() const override { return mixed_ ? "tree+sparse" : "tree"; }
  /// Plans the elimination (every component to this solver).
  bool prepare(const DualTopology& topology) override;
  /// Co-rotated polar bodies: the cliques in the body frame, without the rows' H^{-1} G^T.
  bool needs_w(const BodyOperators& ops) const override { return !ops.body_frame(); }
  bool solve(const RowSet& rows, const BodyOperators& ops, const std::vector<int>& index, int m,
             std::uint64_t pattern, const Eigen::VectorXd& rhs, Eigen::VectorXd& sol) override;
  bool regularised() const override { return mixed_ && sparse_solver_.regularised(); }

  const TreePlan& plan() const { return plan_; }
  /// Per component of the plan: 1 to solve it by the sparse Cholesky instead (empty: none).
  void set_sparse_components(std::vector<char> sparse);
  bool mixed() const { return mixed_; }
  /// Threads for independent subtrees (null or one thread: the calling thread alone). Every
  /// node is factored and solved by the same operations whatever the count, so the result is
  /// the same to the bit.
  void set_pool(ThreadPool* pool) { pool_ = pool; }
  /// Plans with fewer nodes than this are solved on the calling thread.
  static constexpr std::size_t kParallelNodes = 2048;

 private:
  /// Per-thread scratch of the factorisation of one node.
  struct NodeScratch {
    std::vector<double> work;  ///< the node's clique, (nc + np)^2 column-major
    std::vector<const Vec12*> gp, wp;
    std::vector<Vec12> vb, zb;
  };
  /// Factors node k (its children's messages ready). False on a singular pivot.
  bool factor_node(std::uint32_t k, const RowSet& rows, const BodyOperators& ops,
                   const std::vector<int>& index, NodeScratch& s);
  /// Forward (y_c = L^{-1} b_c, b_p -= Y^T y_c) and backward steps of node k on x, the local
  /// positions shifted by `base`.
  void forward_node(std::uint32_t k, double* x, int base) const;
  void backward_node(std::uint32_t k, double* x, int base) const;
  /// Runs fn(k) for every node of the plan's parallel part in elimination order: the nodes
  /// whose subtree lies in the thread's range of nodes on the threads, then the others
  /// (the ancestors of the ranges' boundaries) on the calling thread. Reverse order for
  /// the backward solve: the others first.
  template <class Fn>
  void for_nodes(bool reverse, Fn&& fn);
  void solve_factored(const TreeComponent& comp, int base, Eigen::Ref<Eigen::MatrixXd> v) const;
  /// The rows of the sparse components, by the sparse Cholesky.
  bool solve_sparse_components(const RowSet& rows, const BodyOperators& ops,
                               const std::vector<int>& index, const Eigen::VectorXd& rhs,
                               Eigen::VectorXd& sol);

  struct NodeFactor {
    int c_off = 0, nc = 0;  ///< child rows: local positions [c_off, c_off + nc)
    int p_off = 0, np = 0;  ///< parent rows
    /// Offsets in factor_ of the node's factor [L; Y^T] (the first nc columns, column-major
    /// with nc + np rows; K_cc = L L^T, Y = L^{-1} K_cp) and of its message K_pp - Y^T Y
    /// (np x np, lower triangle).
    std::size_t at = 0, msg_at = 0;
  };
  TreePlan plan_;
  std::vector<NodeFactor> nodes_;
  std::vector<char> is_loop_;  ///< per item
  std::vector<char> sparse_component_;
  bool mixed_ = false;
  ThreadPool* pool_ = nullptr;
  std::vector<std::uint32_t> subtree_begin_;  ///< per node: the first node of its subtree
  std::vector<char> skip_;  ///< per node: of a sparse component (not factored here)
  std::vector<std::size_t> range_begin_;      ///< per thread: its range of nodes (last solve)
  // Scratch, kept between solves.
  std::vector<int> local_rows_, pos_;
  std::vector<int> comp_base_;  ///< per component: its first local position
  /// Every node's factor in node order, then the messages, for all components at once.
  std::vector<double> factor_;
  Eigen::VectorXd x_;
  std::vector<NodeScratch> scratch_;
  // Sparse components: their rows, their local index, the system, the solver.
  SparseDualSolver sparse_solver_;
  std::vector<int> sparse_rows_, sparse_pos_;
  std::vector<Vec12> sparse_w_;
  std::vector<Eigen::Triplet<double>> sparse_trip_;
  Eigen::VectorXd sparse_rhs_, sparse_sol_;
};

}  // namespace mabd::detail
