// Lines of joint blocks for the line preconditioner of the iterative dual solver (paper
// "Case IV: Joint graph": the joint graph viewed as a union of joint chains). The blocks of
// the symmetric dual matrix S (one per joint) are partitioned into paths: every block lies in
// exactly one path, and consecutive blocks of a path are coupled in S (a nonzero off-diagonal
// block, i.e. the two joints share a body). Each path's block-tridiagonal part of S is then
// solved exactly (block Thomas), so long paths along strong couplings are preferred.
//
// The partition is computed from the matrix alone: couplings are weighted by their scaled
// strength |L_a^{-1} S_ab L_b^{-T}|_F (S_aa = L_a L_a^T), the coupling as seen after block-
// diagonal scaling, and linked greedily from the strongest down (a maximum-weight path forest:
// a coupling is taken if both blocks have fewer than two path neighbours and no cycle forms).
// The scaling matters: on a net the joints of one link body are coupled more weakly than
// those meeting at a node, but at a node the straight continuation (same link direction) is
// the stronger one. All joints at one body are pairwise coupled, so a path may not contain
// three pairwise coupled consecutive blocks; it then follows chains of bodies (on the net:
// straight rows and columns) instead of circling nodes. Cost O(E log E) for E couplings.
#pragma once

#include <vector>

namespace mabd::detail {

/// A coupling between blocks a < b of a symmetric block matrix.
struct BlockCoupling {
  int a = 0, b = 0;
  double strength = 0;  ///< scaled coupling strength (dimensionless, >= 0)
};

/// Blocks grouped into paths: path l holds blocks order[line_begin[l]] ..
/// order[line_begin[l + 1] - 1], consecutive ones coupled.
struct LinePartition {
  std::vector<int> order;       ///< every block once, path after path
  std::vector<int> line_begin;  ///< first position of every path, order.size() at the end

  int lines() const { return line_begin.empty() ? 0 : static_cast<int>(line_begin.size()) - 1; }
  /// position[block] = index of the block in `order`.
  std::vector<int> positions() const;
};

/// Couplings between the blocks of a symmetric matrix given in CSR (both triangles, columns
/// sorted within each row), blocks of rows block_begin[k] .. block_begin[k + 1] - 1. Blocks
/// with a zero or invalid diagonal get no couplings.
std::vector<BlockCoupling> block_couplings(const std::vector<int>& row_start,
                                           const std::vector<int>& col,
                                           const std::vector<double>& val,
                                           const std::vector<int>& block_begin);

/// Greedy maximum-weight path cover of blocks 0 .. blocks - 1 over `couplings` (couplings
/// with zero strength or out of range are never linked; blocks without couplings form paths
/// of one block). Besides the degree and cycle rules, a coupling is not taken if it would
/// make three consecutive blocks pairwise coupled (a path circling the joints of one body
/// instead of following a chain of bodies), and paths are cut where two non-consecutive
/// blocks are coupled, so that each path's submatrix is exactly block tridiagonal.
LinePartition partition_lines(int blocks, const std::vector<BlockCoupling>& couplings);

}  // namespace mabd::detail
