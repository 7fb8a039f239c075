#include "solvers/cg_dual.h"

namespace mabd::detail {

void CgDual::start(const std::vector<int>& index, int m) {
  x_.setZero(m);
  if (warm_.size() == index.size()) {
    for (std::size_t r = 0; r < index.size(); ++r) {
      if (index[r] >= 0) x_[index[r]] = warm_[r];
    }
  }
}

bool CgDual::resolve(const std::vector<int>& index, const Eigen::VectorXd& rhs,
                     Eigen::VectorXd& sol) {
  start(index, static_cast<int>(rhs.size()));
  result_ = solver_.resolve(rhs, x_);
  if (!result_.converged) return false;
  sol = x_;
  return true;
}

bool CgDual::solve(const RowSet& rows, const BodyOperators& ops, const std::vector<int>& index,
                   int m, std::uint64_t pattern, const Eigen::VectorXd& rhs,
                   Eigen::VectorXd& sol) {
  // One preconditioner block per item with active rows.
  block_begin_.clear();
  for (std::size_t k = 0; k < rows.items(); ++k) {
    for (std::size_t r = rows.item_begin[k]; r < rows.item_begin[k + 1]; ++r) {
      if (index[r] >= 0) {
        block_begin_.push_back(index[r]);
        break;
      }
    }
  }
  block_begin_.push_back(m);
  start(index, m);
  // The structure of the last solve: the values straight into the solver's block rows.
  const BodyOperators* clique = needs_w(ops) ? nullptr : &ops;
  if (auto fill = solver_.direct_fill(m, block_begin_, pattern)) {
    ThreadPool* pool = m >= IterativeDualSolver::kParallelRows ? pool_ : nullptr;
    if (assemble_dual_into(rows, index, *fill->coords, *fill->slots, fill->values, clique, pool,
                           &sequence_)) {
      result_ = solver_.solve_filled(rhs, x_);
      if (!result_.converged) return false;
      sol = x_;
      return true;
    }
  }
  assemble_dual(rows, index, trip_, nullptr, clique);
  result_ = solver_.solve(m, trip_, block_begin_, rhs, pattern, x_);
  if (!result_.converged) return false;
  sol = x_;
  return true;
}

}  // namespace mabd::detail
