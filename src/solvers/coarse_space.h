// Coarse space of the two-level (LinesCoarse) preconditioner of the iterative dual solver
// (iterative_dual.h). The joint blocks of the dual matrix A = S + diag(alpha) are grouped into
// compact aggregates (breadth-first growth on the block graph to a target number of blocks,
// too small remainders merged into a neighbour). Per aggregate I the basis Z_I spans the local
// modes that the line preconditioner handles badly: the eigenvectors of
//   A_PP v = mu M_PP v,   mu < threshold (at most k of them)
// on a patch P (M: the line preconditioner's matrix, A's blocks on the diagonal and between
// consecutive blocks of a line; P: the aggregate, or, if it holds such modes at all, the
// aggregate and its neighbouring blocks so that modes cut by the aggregate's border are seen
// whole), restricted to the aggregate's rows and orthonormalised (restrictions with singular
// value < 0.1 dropped: mostly outside, or dependent). This is sign-agnostic: on a net the
// low-energy fields are near-self-equilibrated joint forces (a link's tension is
// lambda_1 = -lambda_2 on its two joints, with frustrated signs at the nodes), which
// piecewise-constant aggregation cannot represent. Z is block diagonal over aggregates
// (disjoint supports, orthonormal columns), so it has full column rank; aggregates without such
// modes get no columns, and the coarse space lives only where the lines are weak (on the net
// scenes: at the pinned row, K = 63 unknowns on net_50).
//
// An earlier variant took the k lowest eigenvectors of the Jacobi-scaled A_II in every
// aggregate (24 blocks, k = 4): more iterations than Lines on net_50 (94 -> 165 additive,
// 135 balancing / deflation), since the lowest modes of A_II are not the slow modes of M^{-1} A.
//
// Aggregates and basis are computed once per sparsity pattern from the values of that solve
// and kept while the pattern holds (a stale basis only makes the correction less effective;
// the preconditioner stays symmetric positive definite). Per solve only the Galerkin matrix
//   E = Z^T A Z   (size: K = sum of k over aggregates, block sparse over adjacent aggregates)
// is assembled from the upper block triangle of A and factored (sparse LDL^T, AMD ordering,
// symbolic analysis kept), and, for the balancing and deflation forms, W = A Z (n x K,
// stored per block row over the adjacent aggregates with columns). All per-iteration products
// (Z^T r, Z x_c, W^T y, W x_c) touch only the blocks near Z's support.
#pragma once

#include <vector>

#include <Eigen/Core>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>

#include "solvers/line_partition.h"

namespace mabd::detail {

/// The upper block triangle of a symmetric matrix: per block row a, block columns
/// bcol[brow_start[a] ..] >= a, dense row-major blocks at val + val_start[k]; block a holds
/// rows block_begin[a] .. block_begin[a + 1] - 1.
struct BlockUpperView {
  const std::vector<int>& block_begin;
  const std::vector<int>& brow_start;
  const std::vector<int>& bcol;
  const std::vector<int>& val_start;
  const std::vector<double>& val;
  int blocks() const { return static_cast<int>(block_begin.size()) - 1; }
};

/// Aggregates of a block graph: aggregate of every block, blocks of every aggregate.
struct Aggregates {
  std::vector<int> of;                  ///< per block: its aggregate
  std::vector<int> begin, blocks;       ///< aggregate i: blocks[begin[i] .. begin[i + 1] - 1]
  int count() const { return begin.empty() ? 0 : static_cast<int>(begin.size()) - 1; }
};

/// Compact aggregates of about `target` blocks (>= 1) over the block graph of A (blocks
/// coupled by a stored block): breadth-first growth from the lowest unaggregated block,
/// remainders of fewer than target / 2 blocks merged into their smallest adjacent aggregate.
Aggregates aggregate_blocks(const BlockUpperView& A, int target);

class CoarseSpace {
 public:
  /// Aggregates and the basis Z from the current values of A: `target` blocks per aggregate;
  /// per aggregate the local eigenvectors of A v = mu M v (M: the line preconditioner's
  /// matrix of `lines`) with mu < `threshold` (dimensionless), at most `vectors` of them.
  void build(const BlockUpperView& A, const LinePartition& lines, int target, int vectors,
             double threshold);
  /// E = Z^T A Z and its factorisation; with_w: also W = A Z. False if E could not be
  /// factored (then the coarse correction must not be used).
  bool factor(const BlockUpperView& A, bool with_w);

  bool built() const { return built_; }
  void clear() { built_ = false; }
  int size() const { return coarse_n_; }  ///< K: coarse unknowns
  const Aggregates& aggregates() const { return agg_; }
  int builds() const { return builds_; }  ///< times the basis was (re)computed
  int target() const { return target_; }
  int vectors() const { return vectors_; }
  double threshold() const { return threshold_; }

  void restrict_to(const Eigen::VectorXd& r, Eigen::VectorXd& rc) const;  ///< rc = Z^T r
  void prolong_add(const Eigen::VectorXd& xc, Eigen::VectorXd& z) const;  ///< z += Z xc
  /// rc -= W^T y (W = A Z from factor(.., true)).
  void subtract_wt(const Eigen::VectorXd& y, Eigen::VectorXd& rc) const;
  /// u -= W xc.
  void subtract_w(const Eigen::VectorXd& xc, Eigen::VectorXd& u) const;
  void solve(Eigen::VectorXd& rc) const;  ///< rc <- E^{-1} rc

  // Dense copies for tests (small systems only).
  Eigen::MatrixXd basis_dense() const;   ///< Z (n x K)
  Eigen::MatrixXd coarse_dense() const;  ///< E (K x K) as factored (with its tiny shift)
  Eigen::MatrixXd w_dense() const;       ///< W = A Z (n x K), after factor(.., true)

 private:
  void build_basis(const BlockUpperView& A, const LinePartition& lines);
  void build_coarse_pattern(const BlockUpperView& A);
  void build_w_pattern(const BlockUpperView& A);

  Aggregates agg_;
  std::vector<int> row_;          ///< block_begin of the blocks
  std::vector<int> cstart_;       ///< per aggregate: first coarse unknown (K at the end)
  std::vector<int> zstart_;       ///< per block a: offset of Z_a (s_a x k_I, row-major)
  std::vector<int> active_;       ///< blocks of the aggregates with k_I > 0 (Z's support)
  std::vector<int> w_rows_;       ///< blocks with a nonzero row block of W
  std::vector<double> z_;
  // E: per aggregate pair (I <= J) a dense k_I x k_J block (row-major) at pair_start_; per
  // stored block of A its pair and whether it is transposed (agg(a) > agg(b)).
  std::vector<int> pair_start_, entry_pair_;
  std::vector<char> entry_transposed_;
  std::vector<double> pair_val_;
  std::vector<int> value_slot_;  ///< pair_val_ index -> E's valuePtr index (-1: upper part)
  Eigen::SparseMatrix<double> E_;  ///< lower triangle
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>, Eigen::Lower, Eigen::AMDOrdering<int>> ldlt_;
  // W = A Z: per block a, entries w_begin_[a] .. : aggregate w_agg_, values at w_start_
  // (s_a x k_J, row-major).
  std::vector<int> w_begin_, w_agg_, w_start_;
  std::vector<double> w_;
  bool w_pattern_ = false;
  bool analysed_ = false;
  int coarse_n_ = 0;
  int target_ = 0, vectors_ = 0;
  double threshold_ = 0;
  bool built_ = false;
  int builds_ = 0;
};

}  // namespace mabd::detail
