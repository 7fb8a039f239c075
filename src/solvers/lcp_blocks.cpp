// K = D + diag(alpha) of a contact problem in 3x3 point blocks (lcp_blocks.h).
#include "solvers/lcp_blocks.h"

#include <Eigen/SparseCore>

namespace mabd::detail {

void LcpBlocks::build(const ContactLcp& p) {
  using SpMat = Eigen::SparseMatrix<double>;
  points = p.points();
  const int n = p.size();
  const int point_rows = 3 * points;
  block_begin.assign(1, 0);
  block_col.clear();
  block_val.clear();
  diag.assign(points, -1);
  scalar_begin.assign(1, 0);
  scalar_col.clear();
  scalar_val.clear();
  slot.assign(points, -1);  // point j -> its block in the current block row
  for (int k = 0; k < points; ++k) {
    const int first = static_cast<int>(block_col.size());
    auto block_of = [&](int j) {
      if (slot[j] < 0) {
        slot[j] = static_cast<int>(block_col.size());
        block_col.push_back(j);
        block_val.resize(block_val.size() + 9, 0.0);
      }
      return slot[j];
    };
    diag[k] = block_of(k);  // every point has its own block (alpha > 0 on its diagonal)
    for (int t = 0; t < 3; ++t) {
      const int r = 3 * k + t;
      block_val[9 * static_cast<std::size_t>(diag[k]) + 4 * t] += p.alpha[r];
      // D is symmetric: its column r is its row r.
      for (SpMat::InnerIterator it(p.D, r); it; ++it) {
        const int c = static_cast<int>(it.row());
        if (c < point_rows) {
          block_val[9 * static_cast<std::size_t>(block_of(c / 3)) + 3 * t + c % 3] += it.value();
        } else {
          scalar_col.push_back(c);
          scalar_val.push_back(it.value());
        }
      }
      scalar_begin.push_back(static_cast<int>(scalar_col.size()));
    }
    for (int e = first; e < static_cast<int>(block_col.size()); ++e) slot[block_col[e]] = -1;
    block_begin.push_back(static_cast<int>(block_col.size()));
  }
  for (int r = point_rows; r < n; ++r) {
    bool own = false;
    for (SpMat::InnerIterator it(p.D, r); it; ++it) {
      const int c = static_cast<int>(it.row());
      scalar_col.push_back(c);
      scalar_val.push_back(it.value() + (c == r ? p.alpha[r] : 0.0));
      own |= c == r;
    }
    if (!own) {
      scalar_col.push_back(r);
      scalar_val.push_back(p.alpha[r]);
    }
    scalar_begin.push_back(static_cast<int>(scalar_col.size()));
  }
}

}  // namespace mabd::detail
