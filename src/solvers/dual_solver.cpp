#include "solvers/dual_solver.h"

#include <utility>

namespace mabd::detail {

void assemble_dual(const RowSet& rows, const std::vector<int>& index,
                   std::vector<Eigen::Triplet<double>>& trip) {
  trip.clear();
  for (std::size_t i = 0; i < rows.rows_of.size(); ++i) {
    const auto& rs = rows.rows_of[i];
    for (std::size_t a = 0; a < rs.size(); ++a) {
      if (index[rs[a]] < 0) continue;
      for (std::size_t b = a; b < rs.size(); ++b) {
        // One product per pair: g of the later row (in the system) against W of the earlier,
        // the lower triangle's entry, mirrored into the upper one.
        int hi = rs[a], lo = rs[b];
        if (index[lo] < 0) continue;
        if (index[hi] < index[lo]) std::swap(hi, lo);
        const double v = rows.g_of(hi, i).dot(rows.w_of(lo, i));
        trip.emplace_back(index[hi], index[lo], v);
        if (hi != lo) trip.emplace_back(index[lo], index[hi], v);
      }
    }
  }
  for (int r = 0; r < rows.size(); ++r) {
    if (index[r] >= 0) trip.emplace_back(index[r], index[r], rows.rows[r].compliance);
  }
}

}  // namespace mabd::detail
