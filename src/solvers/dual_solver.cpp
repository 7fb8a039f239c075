#include "solvers/dual_solver.h"

#include <utility>

#include "solvers/triplet_scatter.h"

namespace mabd::detail {

namespace {

/// Calls emit(row, column, value) for the entries of S at body i, in assembly order.
template <class Emit>
void body_entries(const RowSet& rows, const std::vector<int>& index, std::size_t i, Emit&& emit) {
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
      emit(index[hi], index[lo], v);
      if (hi != lo) emit(index[lo], index[hi], v);
    }
  }
}

}  // namespace

void assemble_dual(const RowSet& rows, const std::vector<int>& index,
                   std::vector<Eigen::Triplet<double>>& trip,
                   std::vector<std::size_t>* body_begin) {
  trip.clear();
  if (body_begin) body_begin->resize(rows.rows_of.size() + 1);
  for (std::size_t i = 0; i < rows.rows_of.size(); ++i) {
    if (body_begin) (*body_begin)[i] = trip.size();
    body_entries(rows, index, i, [&](int r, int c, double v) { trip.emplace_back(r, c, v); });
  }
  if (body_begin) body_begin->back() = trip.size();
  for (int r = 0; r < rows.size(); ++r) {
    if (index[r] >= 0) trip.emplace_back(index[r], index[r], rows.rows[r].compliance);
  }
}

bool assemble_dual_into(const RowSet& rows, const std::vector<int>& index,
                        const std::vector<std::uint64_t>& coords, const std::vector<int>& slots,
                        double* values) {
  const std::size_t nt = coords.size();
  std::size_t k = 0;
  bool ok = true;
  const auto add = [&](int r, int c, double v) {
    if (!ok || k >= nt || coords[k] != pack_coordinate(r, c)) {
      ok = false;
      return;
    }
    if (slots[k] >= 0) values[slots[k]] += v;
    ++k;
  };
  for (std::size_t i = 0; i < rows.rows_of.size() && ok; ++i) body_entries(rows, index, i, add);
  for (int r = 0; r < rows.size() && ok; ++r) {
    if (index[r] >= 0) add(index[r], index[r], rows.rows[r].compliance);
  }
  return ok && k == nt;
}

void patch_dual(const RowSet& rows, const std::vector<int>& index,
                const std::vector<std::uint32_t>& bodies,
                const std::vector<std::size_t>& body_begin,
                std::vector<Eigen::Triplet<double>>& trip) {
  for (const std::uint32_t i : bodies) {
    if (i + 1 >= body_begin.size()) continue;
    std::size_t k = body_begin[i];
    body_entries(rows, index, i, [&](int r, int c, double v) {
      trip[k++] = Eigen::Triplet<double>(r, c, v);
    });
  }
}

}  // namespace mabd::detail
