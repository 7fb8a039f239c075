// Iterative solver for the dual system (S + diag(alpha)) lambda = b (DESIGN section 3; paper
// "Case IV: Joint graph"): the preconditioned conjugate gradient method, preconditioned by
//   Lines: the joint graph viewed as a union of joint chains. The joints' blocks are
//     partitioned once per sparsity pattern into lines (paths of coupled blocks following
//     chains of bodies, line_partition.h); every line's block-tridiagonal submatrix of A is
//     factored by block LDL^T (block Thomas) at each solve and applied exactly, i.e. block
//     Jacobi over lines, symmetric positive definite, so plain CG stays valid.
//   Blocks: block Jacobi over the row groups of the joints (1-6 rows each, factored densely).
//   LinesCoarse (default): Lines plus a coarse-space correction (deflation, coarse_space.h;
//     see below). Systems without local modes below the threshold get no coarse space and
//     are solved with Lines, as are those whose coarse matrix cannot be factored.
// Meant for large jointed graphs, warm-started from the multipliers of the previous step or
// Newton iteration.
//
// Intended use, once per dual solve:
//
//   IterativeDualSolver solver;            // kept between steps, like SparseDualSolver
//   solver.settings.tolerance = 1e-10;     // on |b - A x| / |b|
//   Eigen::VectorXd x = previous_lambda;   // warm start (size n), or empty for x = 0
//   const IterativeDualResult r = solver.solve(n, triplets, block_begin, b, pattern, x);
//   if (!r.converged) { /* fall back to SparseDualSolver, or accept r.residual */ }
//
// `triplets` and `pattern` are exactly those given to SparseDualSolver::solve (both
// triangles, duplicates summed; the same pattern value for the same sparsity pattern, and then
// the same triplet order). `block_begin` holds the first row of every block and n at the end
// (block_begin = {0, 3, 6, ..., n}): the active rows of one joint, in the index space of the
// system. Blocks (and line pivots) with redundant (linearly dependent) rows are factored with
// a small diagonal shift; a singular but consistent system converges in its range, an
// inconsistent one stops at max_iterations with converged == false.
//
// The matrix is kept twice: by rows (CSR, from the triplets) and by 3x3-or-larger blocks of
// the upper triangle (the products and the lines of 3-row blocks read these). Once the
// structure is known, a system whose lines are all of 3-row blocks can have its values
// assembled straight into the blocks (direct_fill, solve_filled; CgDual does so): no
// triplets, no rows. The lines of 3-row blocks are factored from the blocks at a fixed size.
//
// Cost per iteration: one block-sparse matrix-vector product (upper block triangle) and one
// preconditioner solve (Lines: about 1.3 times the time of a Blocks iteration). The lines are
// computed from the values of the first solve of a pattern (50-65% on top of the
// structure set-up) and kept while the pattern is unchanged. On the n x n net of
// bench/dual_solver_bench.cpp (the lines are the rows and columns of links) at 1e-10 from
// x = 0 the iterations are 183 / 398 / 697 / 1069 with Lines against 1029 / 2854 / 5857 / 7233
// with Blocks for n = 10 / 20 / 50 / 100, 4-6 times faster. They still grow with the size of
// the net (no preconditioner of this kind removes the long-range, Laplacian-like part of S),
// and the sparse Cholesky (SparseDualSolver) stays the faster exact solver on nets; at 1e-6
// with a warm start the two are about even up to n = 20 (1.7 / 11 ms), Cholesky is 1.5-3 times
// faster above. A symmetric Gauss-Seidel sweep over the lines (forward and backward) as the
// preconditioner halves the iterations again but costs three products per iteration, no
// faster, so it is not offered; neither is the symmetric block Gauss-Seidel over joints (half
// the iterations of Blocks at twice the cost per iteration).
//
// LinesCoarse: Lines plus a coarse-space correction, A-DEF2 deflation by default
// (z = (I - Q A) L^{-1} r + Q r, Q = Z E^{-1} Z^T, E = Z^T A Z, started from x + Q r so that
// Z^T r = 0; coarse_space.h): per aggregate of about 12 joint blocks the local eigenvectors of
// A v = mu M v with mu < 0.1 (M: the line matrix), computed once per pattern; per solve E and
// W = A Z are assembled and E factored (sparse LDL^T). The stopping test stays on the true
// relative residual |b - A x| / |b|. On the net scenes (warm start, 1e-7) the spectrum of
// M^{-1} A under Lines is a bulk in [0.16, 2], about 6 outliers near 0.003 (at the pinned row)
// and, once the net moves, a band of about 10 values in [0.025, 0.15]; the coarse space (K = 63
// unknowns on net_50, all near the pinned row) removes part of them: 94 -> 74 PCG iterations
// per step on net_50, 104 -> 78 on net_100 (about 290-305 -> 250 ms/step, medians, noisy
// host), 90 -> 72 over 200 steps of net_50. On the synthetic nets of the benchmark (rest
// configuration, no compliance) 1069 -> 440 iterations at 1e-10 from x = 0 and 417 -> 213 at
// 1e-6 warm for n = 100 (2.4 / 1.45 times faster). The additive form (z = L^{-1} r + Q r) is
// weaker (net_50: 102 iterations), balancing (Neumann-Neumann) equals deflation in iterations
// with two coarse solves per iteration. Caveats: the counts are erratic in the constants (on
// net_50 aggregates of 8 or 16 blocks give 105-131 iterations, worse than Lines; a threshold of
// 0.05 gives 122), and a basis recomputed at every step is worse than the one kept from the
// first solve (105 on net_50): the local modes only approximate the global slow ones, and
// deflating approximations brings new small eigenvalues. The iterations still grow with the
// net (the band is not removed). The first solve of a pattern costs about 0.5 s more on
// net_100 (the local eigenproblems; BM_PcgSetup 141 -> 635 ms).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include "solvers/coarse_space.h"
#include "solvers/line_partition.h"
#include "solvers/thread_pool.h"

namespace mabd::detail {

/// Preconditioner of the conjugate gradient iteration.
enum class DualPreconditioner {
  Blocks,  ///< block Jacobi: the dense inverse of every joint's diagonal block
  Lines,   ///< line Jacobi: every line's block-tridiagonal part of A, factored exactly
  LinesCoarse,  ///< Lines plus a coarse-space correction (coarse_space.h, DualCoarseMode)
};

/// How LinesCoarse combines the line solve L^{-1} with the coarse solve Q = Z E^{-1} Z^T
/// (E = Z^T A Z); all symmetric positive definite for CG.
enum class DualCoarseMode {
  Additive,   ///< z = L^{-1} r + Q r
  Balancing,  ///< z = Q r + (I - Q A) L^{-1} (I - A Q) r (balancing Neumann-Neumann)
  Deflation,  ///< z = (I - Q A) L^{-1} r + Q r (A-DEF2), started from a projected x
};

/// Largest block (rows of one joint) handled by the line preconditioners; a system with a
/// larger block is preconditioned by Blocks instead.
inline constexpr int kMaxLineBlock = 12;

struct IterativeDualSettings {
  double tolerance = 1e-10;   ///< stop at |b - A x| <= tolerance |b|
  int max_iterations = 1000;  ///< matrix-vector products in the iteration
  DualPreconditioner preconditioner = DualPreconditioner::LinesCoarse;
  // LinesCoarse only (coarse_space.h). The defaults are the best of a small sweep on the net
  // scenes (aggregates of 8 / 12 / 16 / 24 / 40 blocks, k 4 / 8 / 12, threshold 0.05-0.3);
  // the iteration counts are erratic in these constants (see the comment at the top).
  DualCoarseMode coarse_mode = DualCoarseMode::Deflation;
  int coarse_aggregate_blocks = 12;  ///< joint blocks per aggregate (target of the growth)
  int coarse_vectors = 8;            ///< at most k local eigenvectors per aggregate
  double coarse_threshold = 0.1;     ///< keep local eigenvalues mu < threshold (of M^{-1} A)
};

struct IterativeDualResult {
  int iterations = 0;      ///< PCG iterations (0: the initial guess was good enough)
  double residual = 0;     ///< true relative residual |b - A x| / |b| of the returned x
  bool converged = false;  ///< residual <= tolerance
};

class IterativeDualSolver {
 public:
  IterativeDualSettings settings;

  IterativeDualSolver() = default;
  /// A copy has the same settings and no cached structure or preconditioner (built again at
  /// its first solve, from that solve's values).
  IterativeDualSolver(const IterativeDualSolver& other) : settings(other.settings) {}

  /// Solves A x = b, A of size n given as triplets; x is the initial guess on entry (size n;
  /// any other size starts from zero) and the solution on exit. Invalid input (indices or
  /// blocks out of range, sizes) returns iterations = -1 and converged = false.
  IterativeDualResult solve(int n, const std::vector<Eigen::Triplet<double>>& triplets,
                            const std::vector<int>& block_begin, const Eigen::VectorXd& b,
                            std::uint64_t pattern, Eigen::VectorXd& x);

  /// The values of A straight into the block rows, for a matrix of the last solve's structure
  /// (no triplets, no row-wise copy): direct_fill returns where triplet k's value adds (-1:
  /// dropped, the lower triangle) and the coordinates each must have, or null when the
  /// structure or the preconditioner needs the row-wise values (another pattern or size, a
  /// line of blocks other than 3 rows, the block preconditioner). direct_fill zeroes the
  /// values; solve_filled then solves as solve would with the same triplets, to the bit.
  struct DirectFill {
    const std::vector<std::uint64_t>* coords;
    const std::vector<int>* slots;
    double* values;
  };
  std::optional<DirectFill> direct_fill(int n, const std::vector<int>& block_begin,
                                        std::uint64_t pattern);
  IterativeDualResult solve_filled(const Eigen::VectorXd& b, Eigen::VectorXd& x);

  /// Solves A x = b again with the matrix and preconditioner of the last solve that reached
  /// its iteration (b of its size; x the initial guess, as in solve). Returns iterations = -1
  /// and converged = false if there is none.
  IterativeDualResult resolve(const Eigen::VectorXd& b, Eigen::VectorXd& x);

  /// Threads for the lines of the preconditioner (null: the calling thread). Each line is
  /// solved by the same operations on any thread: the same iterates to the bit.
  void set_pool(ThreadPool* pool) { pool_ = pool; }
  /// Systems with fewer rows than this are preconditioned on the calling thread.
  static constexpr int kParallelRows = 12288;

  /// Number of times the matrix structure was rebuilt (a new pattern or triplet order).
  int rebuilds() const { return rebuilds_; }

  /// The lines of the last solve with the Lines preconditioner (computed with the structure,
  /// from the values of that first solve, and kept while the pattern is unchanged).
  const LinePartition& lines() const { return lines_.partition; }

  /// The coarse space of the last LinesCoarse solve (computed with the lines, kept while the
  /// pattern and the coarse settings are unchanged).
  const CoarseSpace& coarse() const { return coarse_; }

 private:
  bool build(int n, const std::vector<Eigen::Triplet<double>>& triplets,
             const std::vector<int>& block_begin);
  bool fill(const std::vector<Eigen::Triplet<double>>& triplets);
  /// The preconditioned conjugate gradient iteration on the prepared matrix (x: start, n_).
  IterativeDualResult iterate(const Eigen::VectorXd& b, Eigen::VectorXd& x);
  void build_block_rows();
  void fill_block_rows();
  /// The s x s diagonal block of A at row b0 (row-major) into `block`; returns its largest
  /// diagonal magnitude.
  double diagonal_block(int b0, int s, std::vector<double>& block) const;
  void factor_blocks();
  void build_lines();
  void factor_lines();
  void factor_line_range(std::size_t first, std::size_t last);  ///< lines first .. last - 1
  void factor_line3(int l);  ///< factor_lines on a line of 3-row blocks, fixed-size
  /// The preconditioner a solve uses: the settings', or Blocks for blocks beyond the lines'.
  DualPreconditioner chosen_preconditioner() const {
    return max_block_ <= kMaxLineBlock ? settings.preconditioner : DualPreconditioner::Blocks;
  }
  /// x sized to the system; for b = 0, x = 0 and a converged result (nothing to iterate).
  std::optional<IterativeDualResult> zero_rhs(const Eigen::VectorXd& b, Eigen::VectorXd& x) const;
  /// The preconditioner's factors on the filled values, then the iteration from x.
  IterativeDualResult prepare_and_iterate(const Eigen::VectorXd& b, Eigen::VectorXd& x);
  /// out = A v from the upper block triangle (A symmetric).
  void multiply(const Eigen::VectorXd& v, Eigen::VectorXd& out) const;
  void precondition(const Eigen::VectorXd& r, Eigen::VectorXd& z);  ///< z = M^{-1} r
  void precondition_blocks(const Eigen::VectorXd& r, Eigen::VectorXd& z) const;
  void precondition_lines(const Eigen::VectorXd& r, Eigen::VectorXd& z) const;
  void precondition_coarse(const Eigen::VectorXd& r, Eigen::VectorXd& z);
  /// Sets up the coarse space for this solve; false: LinesCoarse falls back to Lines.
  bool prepare_coarse();
  BlockUpperView upper_view() const;
  void solve_line(int l, double* v) const;  ///< v <- T_l^{-1} v on the rows of line l
  /// solve_line for lines first .. last - 1, lines of 3-row blocks two at a time.
  void solve_lines(int first, int last, double* v) const;

  // Full matrix (both triangles) in CSR, columns sorted within each row.
  std::vector<int> row_start_, col_;
  std::vector<double> val_;
  std::vector<int> diag_begin_, diag_end_;  ///< per row: entries inside the row's block
  // Its upper triangle by blocks (for the products): per block row a, block columns
  // bcol_[brow_start_[a] ..] >= a with dense row-major blocks at bval_start_[k] in bval_.
  std::vector<int> brow_start_, bcol_, bval_start_;
  std::vector<int> bsr_slot_;  ///< CSR entry -> index in bval_ (-1: lower triangle)
  std::vector<int> direct_slot_;  ///< triplet -> index in bval_ (-1: dropped); direct_fill
  std::vector<double> bval_;
  bool uniform3_ = false;  ///< every block has 3 rows
  /// The blocks below the diagonal by block row: for block row b, the upper blocks k =
  /// tblock_[t] of the rows tsrc_[t] < b whose column is b, t in [tcol_start_[b],
  /// tcol_start_[b + 1]), in increasing row.
  std::vector<int> tcol_start_, tsrc_, tblock_;
  // Blocks and their dense inverses (row-major, size s x s each).
  std::vector<int> block_begin_, inv_start_;
  std::vector<double> inv_;
  // Lines: block LDL^T of every line's block-tridiagonal matrix T = tridiag(C^T, D, C), kept as
  // the inverse pivots P_p^{-1} (P_p = D_p - C_{p-1}^T P_{p-1}^{-1} C_{p-1}) and the products
  // E_p = P_p^{-1} C_p, per position p of the partition's order (row-major).
  struct Lines {
    LinePartition partition;
    std::vector<int> row, size;          ///< per position: first row and rows of the block
    std::vector<int> pivot_start, coupling_start;  ///< per position: offsets in pivot, coupling
    std::vector<int> gather_start;       ///< per position: range in gather_slot / gather_index
    std::vector<int> gather_slot, gather_index;  ///< C_p entries: CSR slot -> index in C_p
    std::vector<double> pivot, coupling;  ///< P_p^{-1} and E_p
    std::vector<char> uniform3;           ///< per line: every block has 3 rows
    /// Lines of 3-row blocks read their blocks from the block rows (bval_): per position the
    /// offset of D_p, and of C_p's stored block (block row min(a, b), transposed when the next
    /// position's block comes first); -1 on other lines and at a line's end.
    std::vector<int> diag_at, coupling_at;
    std::vector<char> coupling_t;
    bool built = false;
  } lines_;
  // Triplet -> value slot, and the triplets' coordinates to check the order.
  std::vector<std::uint64_t> coord_;
  std::vector<int> slot_;
  std::uint64_t pattern_ = 0;
  int n_ = -1;
  int max_block_ = 0;  ///< rows of the largest block
  DualPreconditioner active_ = DualPreconditioner::Blocks;  ///< the one used by this solve
  ThreadPool* pool_ = nullptr;
  bool valid_ = false;
  bool prepared_ = false;  ///< matrix values and preconditioner of the last solve in place
  int rebuilds_ = 0;
  CoarseSpace coarse_;
  DualCoarseMode coarse_mode_ = DualCoarseMode::Additive;  ///< the one used by this solve
  Eigen::VectorXd r_, z_, p_, q_;
  Eigen::VectorXd rc_, yc_, u_;  ///< coarse work vectors (size K) and a fine one (size n)
};

}  // namespace mabd::detail
