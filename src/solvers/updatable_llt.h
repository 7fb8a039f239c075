// A dense Cholesky factor whose rows come and go: the free set of an active-set loop, which
// changes by a few rows from one solve to the next.
#pragma once

#include <Eigen/Core>

namespace mabd::detail {

/// K = L L^T of a symmetric positive definite matrix (m x m), kept while rows and columns of
/// K are removed and appended: a removal is a rank-one update of the trailing factor, an
/// append one bordering step, each O(m^2) against the O(m^3) of a new factor. The rows keep
/// the order in which they entered (a removal moves the later ones up by one). Units are the
/// caller's (the contact problem's K: m/N).
class UpdatableLlt {
 public:
  /// Factors K (its lower triangle is read). False if K is not positive definite.
  bool factor(const Eigen::MatrixXd& K);
  /// Removes row and column k (0 <= k < size()) of the factored matrix.
  void remove(int k);
  /// Appends a row and column: c = K(new, existing rows) in the factor's order (size()
  /// entries), d = K(new, new). False, the factor unchanged, if the bordered matrix is not
  /// positive definite to working precision (its new pivot below 1e-14 d).
  bool append(const Eigen::VectorXd& c, double d);
  /// b := K^{-1} b (b in the factor's order, size() entries).
  void solve_in_place(Eigen::VectorXd& b) const;
  int size() const { return m_; }

 private:
  Eigen::MatrixXd L_;  ///< its leading m_ x m_ lower triangle is L (the rest is capacity)
  int m_ = 0;
};

}  // namespace mabd::detail
