#include "solvers/dual_solver.h"

#include <algorithm>
#include <utility>

#include "solvers/thread_pool.h"
#include "solvers/triplet_scatter.h"

namespace mabd::detail {

namespace {

/// The clique of one body in the body frame (BodyOperators::body_frame_clique), for the
/// assemblies that read no W.
struct CliqueScratch {
  std::vector<const Vec12*> g;
  std::vector<Vec12> vb, zb;
  std::vector<double> a;
};

/// Calls emit(row, column, value) for the entries of S at body i, in assembly order. The
/// values: g . W of the rows, or with `clique` the body-frame clique of body i (the same
/// entries, computed without W).
template <class Emit>
void body_entries(const RowSet& rows, const std::vector<int>& index, std::size_t i,
                  const BodyOperators* clique, CliqueScratch& s, Emit&& emit) {
  const auto& rs = rows.rows_of[i];
  int n = 0;  // active rows of the body (clique: their positions in the clique)
  if (clique != nullptr) {
    s.g.clear();
    for (const int r : rs)
      if (index[r] >= 0) s.g.push_back(&rows.g_of(r, i));
    n = static_cast<int>(s.g.size());
    if (n == 0) return;
    s.vb.resize(static_cast<std::size_t>(n));
    s.zb.resize(static_cast<std::size_t>(n));
    s.a.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
    clique->body_frame_clique(i, n, s.g.data(), s.vb.data(), s.zb.data(), s.a.data());
  }
  int ka = 0;
  for (std::size_t a = 0; a < rs.size(); ++a) {
    if (index[rs[a]] < 0) continue;
    int kb = ka;
    for (std::size_t b = a; b < rs.size(); ++b) {
      // One product per pair: g of the later row (in the system) against W of the earlier,
      // the lower triangle's entry, mirrored into the upper one.
      int hi = rs[a], lo = rs[b];
      if (index[lo] < 0) continue;
      if (index[hi] < index[lo]) std::swap(hi, lo);
      const double v = clique != nullptr ? s.a[static_cast<std::size_t>(kb + ka * n)]
                                         : rows.g_of(hi, i).dot(rows.w_of(lo, i));
      emit(index[hi], index[lo], v);
      if (hi != lo) emit(index[lo], index[hi], v);
      ++kb;
    }
    ++ka;
  }
}

}  // namespace

void assemble_dual(const RowSet& rows, const std::vector<int>& index,
                   std::vector<Eigen::Triplet<double>>& trip,
                   std::vector<std::size_t>* body_begin, const BodyOperators* clique) {
  trip.clear();
  if (body_begin) body_begin->resize(rows.rows_of.size() + 1);
  CliqueScratch s;
  for (std::size_t i = 0; i < rows.rows_of.size(); ++i) {
    if (body_begin) (*body_begin)[i] = trip.size();
    body_entries(rows, index, i, clique, s,
                 [&](int r, int c, double v) { trip.emplace_back(r, c, v); });
  }
  if (body_begin) body_begin->back() = trip.size();
  for (int r = 0; r < rows.size(); ++r) {
    if (index[r] >= 0) trip.emplace_back(index[r], index[r], rows.rows[r].compliance);
  }
}

bool assemble_dual_into(const RowSet& rows, const std::vector<int>& index,
                        const std::vector<std::uint64_t>& coords, const std::vector<int>& slots,
                        double* values, const BodyOperators* clique, ThreadPool* pool,
                        std::vector<double>* sequence) {
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
  const std::size_t nb = rows.rows_of.size();
  if (pool != nullptr && pool->threads() > 1 && sequence != nullptr) {
    // The bodies' entries computed on the threads into their places in the sequence (body i
    // emits n_i^2, n_i its active rows), then added in order here: the same sums as above.
    std::vector<std::size_t> start(nb + 1, 0);
    for (std::size_t i = 0; i < nb; ++i) {
      std::size_t n = 0;
      for (const int r : rows.rows_of[i]) n += index[r] >= 0;
      start[i + 1] = start[i] + n * n;
    }
    if (start[nb] > nt) return false;
    sequence->resize(start[nb]);
    std::vector<char> part_ok(static_cast<std::size_t>(pool->threads()), 1);
    pool->run(nb, [&](int t, std::size_t first, std::size_t last) {
      CliqueScratch s;
      for (std::size_t i = first; i < last && part_ok[t]; ++i) {
        std::size_t e = start[i];
        body_entries(rows, index, i, clique, s, [&](int r, int c, double v) {
          if (e >= start[i + 1] || coords[e] != pack_coordinate(r, c)) {
            part_ok[t] = 0;
            return;
          }
          (*sequence)[e++] = v;
        });
      }
    });
    if (std::find(part_ok.begin(), part_ok.end(), 0) != part_ok.end()) return false;
    for (; k < start[nb]; ++k)
      if (slots[k] >= 0) values[slots[k]] += (*sequence)[k];
  } else {
    CliqueScratch s;
    for (std::size_t i = 0; i < nb && ok; ++i) body_entries(rows, index, i, clique, s, add);
  }
  for (int r = 0; r < rows.size() && ok; ++r) {
    if (index[r] >= 0) add(index[r], index[r], rows.rows[r].compliance);
  }
  return ok && k == nt;
}

void patch_dual(const RowSet& rows, const std::vector<int>& index,
                const std::vector<std::uint32_t>& bodies,
                const std::vector<std::size_t>& body_begin,
                std::vector<Eigen::Triplet<double>>& trip) {
  CliqueScratch s;
  for (const std::uint32_t i : bodies) {
    if (i + 1 >= body_begin.size()) continue;
    std::size_t k = body_begin[i];
    body_entries(rows, index, i, nullptr, s, [&](int r, int c, double v) {
      trip[k++] = Eigen::Triplet<double>(r, c, v);
    });
  }
}

}  // namespace mabd::detail
