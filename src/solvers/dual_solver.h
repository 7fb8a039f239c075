// The interface of the dual solvers (paper Eq. dual, DESIGN section 3): each solves
//   (S + diag(alpha)) lambda = b,   S = G H^{-1} G^T,
// on the active rows of a RowSet, with H^{-1} applied through BodyOperators. One class per
// solver, each owning its scratch: chain (chain_dual.h), tree (tree_dual.h), sparse Cholesky
// (cholesky_dual.h), iterative (cg_dual.h). The closed-form ball chains bypass the rows
// (ball_chain_dual.h).
#pragma once

#include <cstdint>
#include <vector>

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include "solvers/body_operators.h"
#include "solvers/row_set.h"

namespace mabd::detail {

class ThreadPool;

class DualSolver {
 public:
  virtual ~DualSolver() = default;
  /// The name the step statistics report ("chain", "tree", ...).
  virtual const char* name() const = 0;
  /// Plans for a topology (called when it changes). Returns false if this solver cannot
  /// solve systems of that topology.
  virtual bool prepare(const DualTopology& /*topology*/) { return true; }
  /// True if solve reads rows.wa and rows.wb (the caller computes them first).
  virtual bool needs_w(const BodyOperators& /*ops*/) const { return true; }
  /// Solves for the active rows: index[r] is row r's position in rhs and sol (-1: inactive),
  /// m the number of active rows, pattern a hash of the active set (equal sets, equal
  /// hashes). Returns false if it could not (a singular pivot, no convergence): the caller
  /// falls back to the sparse Cholesky.
  virtual bool solve(const RowSet& rows, const BodyOperators& ops, const std::vector<int>& index,
                     int m, std::uint64_t pattern, const Eigen::VectorXd& rhs,
                     Eigen::VectorXd& sol) = 0;
  /// Solves again with the matrix of its last successful solve, for a new right-hand side.
  /// The caller guarantees that nothing else changed: the same active rows (index) and the
  /// same body operators (a contact pass that only moved a friction anchor, say). Returns
  /// false if the solver kept nothing to solve with (or could not): the caller solves in full.
  virtual bool resolve(const std::vector<int>& /*index*/, const Eigen::VectorXd& /*rhs*/,
                       Eigen::VectorXd& /*sol*/) {
    return false;
  }
  /// True if the last solve regularised redundant rows (an over-constrained loop).
  virtual bool regularised() const { return false; }
};

/// Triplets of S + diag(compliance) on the active rows (both triangles; compliances last),
/// body by body: S_rs += g_r . W_s for the rows r, s at each dynamic body, with r the later of
/// the two in the system, the same value for (r, s) and (s, r). Reads rows.wa, wb.
/// With `body_begin`, also where each body's triplets start (one entry per body, then the
/// compliances' start), for patch_dual. With `clique` (co-rotated polar bodies,
/// BodyOperators::body_frame()), the values come from each body's body-frame clique instead:
/// the same entries to round-off, without W.
void assemble_dual(const RowSet& rows, const std::vector<int>& index,
                   std::vector<Eigen::Triplet<double>>& trip,
                   std::vector<std::size_t>* body_begin = nullptr,
                   const BodyOperators* clique = nullptr);
/// The same triplets as assemble_dual, each added into values[slots[k]] (slots < 0: dropped)
/// as it is computed, without storing them. Returns false, values partly filled, as soon as a
/// triplet's coordinate differs from coords[k] or their count from coords' (the structure
/// changed: the caller assembles again with assemble_dual). With a pool of several threads
/// and a `sequence` scratch, the bodies' values are computed on the threads and added in the
/// same order: the same sums to the bit.
bool assemble_dual_into(const RowSet& rows, const std::vector<int>& index,
                        const std::vector<std::uint64_t>& coords, const std::vector<int>& slots,
                        double* values, const BodyOperators* clique = nullptr,
                        ThreadPool* pool = nullptr, std::vector<double>* sequence = nullptr);
/// Recomputes in place the triplets of `bodies` (their W changed, rows and active set the
/// same as when assemble_dual wrote `trip` and `body_begin`): the same triplets a full
/// assembly would write.
void patch_dual(const RowSet& rows, const std::vector<int>& index,
                const std::vector<std::uint32_t>& bodies,
                const std::vector<std::size_t>& body_begin,
                std::vector<Eigen::Triplet<double>>& trip);

}  // namespace mabd::detail
