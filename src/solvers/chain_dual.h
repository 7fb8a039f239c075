// The chain solver of the dual system (paper "Case I: Joint chain", Eq. chain-btd): with the
// items of a chain numbered along it, S is block-tridiagonal (items k and k+1 share one body):
//   D_k = sum over the bodies of item k of G_k H^{-1} G_k^T (+ compliance),
//   B_k = G_k H_s^{-1} G_{k+1}^T for the body s shared by items k and k+1,
// solved by block Thomas in O(K). The same lambda as the sparse solver, to round-off.
#pragma once

#include "solvers/block_thomas.h"
#include "solvers/dual_solver.h"

namespace mabd::detail {

class ChainDual : public DualSolver {
 public:
  const char* name() const override { return "chain"; }
  /// Orders the items of every chain component along its path; false (and no chains) if
  /// some component is not a chain.
  bool prepare(const DualTopology& topology) override;
  /// Co-rotated polar bodies: the blocks in the body frame, without the rows' H^{-1} G^T
  /// (which it reads instead when the world computed them anyway).
  bool needs_w(const BodyOperators& ops) const override { return !ops.body_frame(); }
  bool solve(const RowSet& rows, const BodyOperators& ops, const std::vector<int>& index, int m,
             std::uint64_t pattern, const Eigen::VectorXd& rhs, Eigen::VectorXd& sol) override;
  /// Items of every chain in path order (after a successful prepare).
  const std::vector<std::vector<std::uint32_t>>& chains() const { return chains_; }

 private:
  /// D_k and B_k of one chain from the rows' H^{-1} G^T (W).
  void fill_from_w(const RowSet& rows, const BodyOperators& ops,
                   const std::vector<std::uint32_t>& chain);
  /// The same from each body's clique in the body frame (as tree_dual.cpp).
  void fill_body_frame(const RowSet& rows, const BodyOperators& ops,
                       const std::vector<std::uint32_t>& chain);

  std::vector<std::vector<std::uint32_t>> chains_;
  std::vector<Edge> items_;  ///< bodies of each item
  // Scratch, kept between solves.
  std::vector<std::vector<int>> active_;
  std::vector<int> sizes_;
  BlockThomas system_;
  std::vector<double> x_;
  std::vector<const Vec12*> gp_;
  std::vector<Vec12> vb_, zb_;
  std::vector<double> work_;
};

}  // namespace mabd::detail
