// General sparse solver for the dual system (S + diag(alpha)) lambda = b (DESIGN section 3),
// S = G H^{-1} G^T block-sparse (blocks of joints sharing a body). Sparse Cholesky: supernodal
// CHOLMOD for large systems, Eigen's simplicial LDL^T for small ones (it has less overhead
// there; see cholmod_min_rows). The fill-reducing ordering and symbolic analysis are computed
// once per sparsity pattern, and while the pattern is unchanged the values are scattered into
// the cached upper triangle (a triplet -> slot map, no sorting) and only the numeric
// factorisation is redone, or, when only a few small blocks changed, the last factor is
// updated (see reuse_iterations). Redundant rows (a singular S) are detected from the pivots
// and regularised.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <Eigen/Core>
#include <Eigen/SparseCore>

namespace mabd::detail {

class SparseDualSolver {
 public:
  SparseDualSolver();
  ~SparseDualSolver();
  SparseDualSolver(SparseDualSolver&&) noexcept;
  SparseDualSolver& operator=(SparseDualSolver&&) noexcept;
  /// A copy starts without cached analyses (the same solutions: the ordering depends on the
  /// pattern only).
  SparseDualSolver(const SparseDualSolver& other);
  SparseDualSolver& operator=(const SparseDualSolver&) = delete;

  /// Solves the system given as triplets (both triangles, duplicates summed) of size n.
  /// `pattern` identifies the sparsity pattern: an unchanged value reuses the analysis. The
  /// triplets of calls with the same pattern are expected in the same order (then their
  /// values are scattered straight into the cached matrix); a different order is detected
  /// and handled by rebuilding the structure (the analysis is kept if the structure is the
  /// same). Only the lower triangle (row >= col) of the triplets is read.
  /// Returns false if the system could not be factored even after regularisation.
  bool solve(int n, const std::vector<Eigen::Triplet<double>>& triplets, const Eigen::VectorXd& b,
             std::uint64_t pattern, Eigen::VectorXd& lambda);

  /// Solves with the factor of the last successful solve (b of its size). Returns false if
  /// there is none.
  bool resolve(const Eigen::VectorXd& b, Eigen::VectorXd& lambda);

  /// True if the last solve had to regularise redundant rows: a pivot d_k <= 1e-11 A_kk (or
  /// a failed factorisation) makes the solver factor A + diag(1e-9 A_kk + 1e-12 max A_kk)
  /// instead (a larger shift if that still fails).
  bool regularised() const { return regularised_; }

  /// Number of symbolic analyses (orderings) done so far.
  int analyses() const { return analyses_; }
  /// Number of numeric factorisations done so far (regularising retries included).
  int factorizations() const { return factorizations_; }

  /// Conjugate-gradient iterations of the last solve's factor reuse (0: none tried).
  int reuse_last_iterations() const { return reuse_last_; }

  /// Systems of at least this many rows use CHOLMOD, smaller ones Eigen (a change applies
  /// from the next new pattern). On the nets of bench/dual_solver_bench.cpp Eigen is faster
  /// up to a few thousand rows; at 120K rows CHOLMOD is about 2x faster than Eigen with an
  /// optimised BLAS (OpenBLAS) but not with the reference BLAS.
  int cholmod_min_rows = 20000;

  /// Factor updates (CHOLMOD back end only). A contact pass changes a few bodies' operators:
  /// the dual changes in a few small blocks, and re-factoring all of it costs about ten solves.
  /// With this on, a system with the pattern of the last one whose change touches few rows
  /// (each connected block of changed rows at most 96, the eigenvectors of the blocks at most
  /// max(32, n / 200)) updates and downdates the last factor by those eigenvectors
  /// (cholmod_updown) and solves by conjugate gradients preconditioned with it, up to this
  /// many iterations (one, with an exact update), to a relative residual of reuse_tolerance
  /// on the true residual. Otherwise, or if that fails, it factors in full. 0 turns it off.
  int reuse_iterations = 0;
  /// Relative residual |b - A x| / |b| at which a reuse solve is accepted.
  double reuse_tolerance = 1e-12;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool regularised_ = false;
  bool factored_ = false;  ///< the last solve left a factor to resolve with
  bool stale_ = false;     ///< that factor is of an earlier matrix (a reuse solve)
  int analyses_ = 0;
  int factorizations_ = 0;
  int reuse_last_ = 0;
};

}  // namespace mabd::detail
