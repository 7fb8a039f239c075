#include "solvers/dual_solver.h"

namespace mabd::detail {

void assemble_dual(const RowSet& rows, const std::vector<int>& index,
                   std::vector<Eigen::Triplet<double>>& trip) {
  trip.clear();
  for (std::size_t i = 0; i < rows.rows_of.size(); ++i) {
    for (int r1 : rows.rows_of[i]) {
      if (index[r1] < 0) continue;
      for (int r2 : rows.rows_of[i]) {
        if (index[r2] >= 0) {
          trip.emplace_back(index[r1], index[r2], rows.g_of(r1, i).dot(rows.w_of(r2, i)));
        }
      }
    }
  }
  for (int r = 0; r < rows.size(); ++r) {
    if (index[r] >= 0) trip.emplace_back(index[r], index[r], rows.rows[r].compliance);
  }
}

}  // namespace mabd::detail
