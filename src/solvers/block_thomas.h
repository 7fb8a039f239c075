// Block-tridiagonal solve by block Thomas elimination (paper Eq. chain-btd, Case I):
//   B_{k-1}^T x_{k-1} + D_k x_k + B_k x_{k+1} = b_k,  k = 0 .. K-1,
// with symmetric positive definite D_k of variable size. O(K) small dense operations.
#pragma once

#include <vector>

#include <Eigen/Dense>

namespace mabd::detail {

struct BlockTridiagonal {
  std::vector<Eigen::MatrixXd> D;  ///< diagonal blocks, r_k x r_k
  std::vector<Eigen::MatrixXd> B;  ///< upper blocks, r_k x r_{k+1} (K - 1 of them)
  std::vector<Eigen::VectorXd> b;  ///< right-hand sides, r_k
};

/// Solves the system in place of `x` (one vector per block). Returns false if a pivot block
/// is not positive definite (redundant rows): the caller then falls back to a general solver.
bool block_thomas_solve(const BlockTridiagonal& system, std::vector<Eigen::VectorXd>& x);

}  // namespace mabd::detail
