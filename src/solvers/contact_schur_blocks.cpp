// D of the contact rows by articulation blocks (contact_schur.h): each row side's group (an
// articulation with a jointed body under a row, or a lone body), one dense block per group,
// and D's columns as the merge of their groups' columns.
#include "solvers/contact_schur.h"

#include <algorithm>

namespace mabd::detail {

void ContactSchur::assemble_blocks(const ContactRows& rows,
                                   const std::vector<std::uint32_t>& articulation,
                                   const std::vector<char>& jointed, const JointBlock& block) {
  const int n = rows.size();
  auto body_of = [&](int r, int side) { return side == 0 ? rows.a[r] : rows.b[r]; };
  auto g_of = [&](int r, int side) -> const Vec12& { return side == 0 ? rows.ga[r] : rows.gb[r]; };
  auto w_of = [&](int r, int side) -> const Vec12& { return side == 0 ? wa_[r] : wb_[r]; };
  // Each row side falls in one group: the articulation of its body where a row has a side on
  // a jointed body of it, else its body alone. D is the sum over the groups of their blocks
  //   G_g H^{-1} G_g^T - C_g   (C_g: the joints' share, JointBlock; none for a lone body)
  // over the rows with a side in g, and a row meets at most two groups, so D's column j is
  // the merge of its groups' columns: no triplets to sort.
  art_group_.clear();
  body_group_.clear();
  group_key_.clear();
  for (int r = 0; r < n; ++r) {
    for (int side = 0; side < 2; ++side) {
      const std::int32_t body = body_of(r, side);
      if (body < 0 || !jointed[body]) continue;
      const int next = static_cast<int>(group_key_.size());
      if (art_group_.emplace(articulation[body], next).second) {
        group_key_.push_back(static_cast<std::int64_t>(articulation[body]));
      }
    }
  }
  side_group_.assign(2 * static_cast<std::size_t>(n), -1);
  for (int r = 0; r < n; ++r) {
    for (int side = 0; side < 2; ++side) {
      const std::int32_t body = body_of(r, side);
      if (body < 0) continue;
      auto art = art_group_.find(articulation[body]);
      int g;
      if (art != art_group_.end()) {
        g = art->second;
      } else {
        auto [it, added] = body_group_.emplace(body, static_cast<int>(group_key_.size()));
        if (added) group_key_.push_back(-1 - static_cast<std::int64_t>(body));
        g = it->second;
      }
      side_group_[2 * r + side] = g;
    }
  }
  // Each group's rows, ascending (a row with both sides in one group listed once), and each
  // side's place among them.
  const int groups = static_cast<int>(group_key_.size());
  group_start_.assign(groups + 1, 0);
  auto second_group = [&](int r) {  // the row's group on side b, if another than side a's
    const int g = side_group_[2 * r + 1];
    return g == side_group_[2 * r] ? -1 : g;
  };
  for (int r = 0; r < n; ++r) {
    if (side_group_[2 * r] >= 0) ++group_start_[side_group_[2 * r] + 1];
    if (second_group(r) >= 0) ++group_start_[second_group(r) + 1];
  }
  for (int g = 0; g < groups; ++g) group_start_[g + 1] += group_start_[g];
  group_rows_.resize(group_start_[groups]);
  side_pos_.assign(2 * static_cast<std::size_t>(n), -1);
  fill_.assign(group_start_.begin(), group_start_.end() - 1);
  for (int r = 0; r < n; ++r) {
    const int ga = side_group_[2 * r], gb = side_group_[2 * r + 1];
    if (ga >= 0) {
      side_pos_[2 * r] = fill_[ga] - group_start_[ga];
      group_rows_[fill_[ga]++] = r;
    }
    if (gb >= 0 && gb == ga) {
      side_pos_[2 * r + 1] = side_pos_[2 * r];
    } else if (gb >= 0) {
      side_pos_[2 * r + 1] = fill_[gb] - group_start_[gb];
      group_rows_[fill_[gb]++] = r;
    }
  }
  // The groups' blocks, column-major, each symmetrised: 0.5 (B + B^T).
  block_start_.assign(groups + 1, 0);
  for (int g = 0; g < groups; ++g) {
    const std::size_t m = group_start_[g + 1] - group_start_[g];
    block_start_[g + 1] = block_start_[g] + m * m;
  }
  block_.resize(block_start_[groups]);
  std::vector<BlockColumn> columns;
  Eigen::MatrixXd C;
  for (int g = 0; g < groups; ++g) {
    const int* list = group_rows_.data() + group_start_[g];
    const int m = group_start_[g + 1] - group_start_[g];
    Eigen::Map<Eigen::MatrixXd> B(block_.data() + block_start_[g], m, m);
    columns.assign(m, BlockColumn{});
    for (int c = 0; c < m; ++c) {
      for (int side = 0; side < 2; ++side) {
        if (side_group_[2 * list[c] + side] != g) continue;
        columns[c].body[side] = body_of(list[c], side);
        columns[c].w[side] = w_of(list[c], side);
      }
    }
    if (group_key_[g] >= 0) {
      block(static_cast<std::uint32_t>(group_key_[g]), columns, C);
      ++responses_;
      B = -C;
    } else {
      B.setZero();
    }
    // G H^{-1} G^T: the sides that share a body.
    for (int j = 0; j < m; ++j) {
      for (int i = 0; i < m; ++i) {
        double v = 0;
        for (int si = 0; si < 2; ++si) {
          const std::int32_t body = columns[i].body[si];
          if (body < 0) continue;
          for (int sj = 0; sj < 2; ++sj) {
            if (columns[j].body[sj] == body) v += g_of(list[i], si).dot(columns[j].w[sj]);
          }
        }
        B(i, j) += v;
      }
    }
    for (int j = 0; j < m; ++j) {
      for (int i = j + 1; i < m; ++i) B(i, j) = B(j, i) = 0.5 * (B(i, j) + B(j, i));
    }
  }
  // D column by column: the merge of the column's groups (rows ascending in each).
  auto column_of = [&](int j, int side, const int*& list, const double*& val, int& m) {
    const int g = side_group_[2 * j + side];
    list = group_rows_.data() + group_start_[g];
    m = group_start_[g + 1] - group_start_[g];
    val = block_.data() + block_start_[g] + static_cast<std::size_t>(m) * side_pos_[2 * j + side];
  };
  // Two passes over the columns: their sizes, then their entries.
  Eigen::SparseMatrix<double>& D = lcp_.D;
  D.resize(n, n);
  std::vector<int>& start = fill_;
  start.assign(n + 1, 0);
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) {
      for (int j = 0; j < n; ++j) start[j + 1] += start[j];
      D.resizeNonZeros(start[n]);
      std::copy(start.begin(), start.end(), D.outerIndexPtr());
    }
    int* inner = D.innerIndexPtr();
    double* value = D.valuePtr();
    for (int j = 0; j < n; ++j) {
      const int* la;
      const double* va;
      int ma;
      column_of(j, side_group_[2 * j] >= 0 ? 0 : 1, la, va, ma);
      const int* lb = nullptr;
      const double* vb = nullptr;
      int mb = 0;
      if (side_group_[2 * j] >= 0 && second_group(j) >= 0) column_of(j, 1, lb, vb, mb);
      int p = 0, q = 0, at = pass == 1 ? start[j] : 0;
      while (p < ma || q < mb) {
        int row;
        double v;
        if (q == mb || (p < ma && la[p] < lb[q])) {
          row = la[p];
          v = va[p++];
        } else if (p == ma || lb[q] < la[p]) {
          row = lb[q];
          v = vb[q++];
        } else {
          row = la[p];
          v = va[p++] + vb[q++];
        }
        if (pass == 1) {
          inner[at] = row;
          value[at] = v;
        }
        ++at;
      }
      if (pass == 0) start[j + 1] = at;
    }
  }
}

}  // namespace mabd::detail
