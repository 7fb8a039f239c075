// The dense block B^T S^{-1} B for a sparse factor S = P^T L D L^T P (Eigen's SimplicialLDLT)
// and a sparse B with few nonzeros per column: the Schur complement of many contact rows over
// one articulation's joint rows (contact_schur.h), all columns at once.
//
// With Y = L^{-1} P B, B^T S^{-1} B = Y^T D^{-1} Y. Each column of Y is a sparse forward
// solve that visits only the column's reach in the elimination tree (the union of the tree
// paths from its nonzeros to the root: Gilbert and Peierls), so a column costs the factor
// entries on those paths, not the whole factor, and the product then costs the overlap of
// the columns' reaches. One structured solve per column would cost two passes over the whole
// factor each. The factor takes its rows in the caller's order (natural ordering): ordering
// the rows under B's nonzeros last keeps every reach among them.
#pragma once

#include <cstdint>
#include <vector>

#include <Eigen/Core>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>

namespace mabd::detail {

class LdltBlock {
 public:
  using Factor = Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>, Eigen::Lower,
                                      Eigen::NaturalOrdering<int>>;
  /// Reach: forward solves over each column's reach. Solve: whole solves of the factor, in
  /// groups of columns (cheaper where the reaches are long: a chain's tree is a path). Auto:
  /// the cheaper by a count of the work, from the reaches (symbolic, no arithmetic).
  enum class Method { Auto, Reach, Solve };

  /// Reads the elimination tree of a computed factor (call again after each factorisation
  /// with a new pattern).
  void prepare(const Factor& factor);
  /// C = B^T S^{-1} B (n x n, symmetric) for B m x n (m the factor's size). Units: those of
  /// B^2 over S's (here m^2 / (m/N) = m N for rows in m and S in m/N).
  void product(const Factor& factor, const Eigen::SparseMatrix<double>& B, Eigen::MatrixXd& C,
               Method method = Method::Auto);
  /// Factor entries the last product's forward solves visited (for cost reports).
  std::int64_t visited() const { return visited_; }

 private:
  void whole_solves(const Factor& factor, const Eigen::SparseMatrix<double>& B,
                    Eigen::MatrixXd& C);
  void reach_product(const Factor& factor, const Eigen::SparseMatrix<double>& B,
                     Eigen::MatrixXd& C, int dense_from);

  std::vector<int> parent_;  ///< elimination tree (-1: a root)
  std::vector<int> mark_;    ///< last column that reached each row
  std::vector<int> reach_;   ///< every column's reach, ascending, one after the other
  std::vector<std::size_t> reach_begin_;
  std::vector<double> x_;    ///< dense work vector, zero between columns
  std::vector<int> count_, dense_row_;  ///< columns per row of Y; its row in the dense part
  /// Y's sparse rows: row i's entries at [sparse_begin_[i], sparse_end_[i]), by column.
  std::vector<std::size_t> sparse_begin_, sparse_end_;
  std::vector<int> sparse_col_;
  std::vector<double> sparse_val_;
  std::int64_t visited_ = 0;
};

}  // namespace mabd::detail
