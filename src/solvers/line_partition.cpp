// Greedy line (path) partition of the blocks of the dual matrix (see line_partition.h).
#include "solvers/line_partition.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>
#include <utility>

#include "solvers/small_dense.h"

namespace mabd::detail {

std::vector<int> LinePartition::positions() const {
  std::vector<int> position(order.size());
  for (std::size_t p = 0; p < order.size(); ++p) position[static_cast<std::size_t>(order[p])] = static_cast<int>(p);
  return position;
}

namespace {

/// |L_a^{-1} C L_b^{-T}|_F for the sa x sb block C (row-major, overwritten).
double scaled_norm(const double* la, int sa, const double* lb, int sb, double* c) {
  for (int j = 0; j < sb; ++j) {  // columns of C: L_a X = C
    for (int i = 0; i < sa; ++i) {
      double v = c[i * sb + j];
      for (int k = 0; k < i; ++k) v -= la[i * sa + k] * c[k * sb + j];
      c[i * sb + j] = v / la[i * sa + i];
    }
  }
  double sum = 0;
  for (int i = 0; i < sa; ++i) {  // rows of X: L_b y = x
    double* x = c + i * sb;
    for (int j = 0; j < sb; ++j) {
      double v = x[j];
      for (int k = 0; k < j; ++k) v -= lb[j * sb + k] * x[k];
      x[j] = v / lb[j * sb + j];
      sum += x[j] * x[j];
    }
  }
  return std::sqrt(sum);
}

}  // namespace

std::vector<BlockCoupling> block_couplings(const std::vector<int>& row_start,
                                           const std::vector<int>& col,
                                           const std::vector<double>& val,
                                           const std::vector<int>& block_begin) {
  std::vector<BlockCoupling> out;
  if (block_begin.size() < 2) return out;
  const int nb = static_cast<int>(block_begin.size()) - 1;
  const int n = block_begin.back();
  std::vector<int> block_of(static_cast<std::size_t>(n));
  for (int k = 0; k < nb; ++k)
    for (int r = block_begin[k]; r < block_begin[k + 1]; ++r) block_of[r] = k;

  // Cholesky factors of the diagonal blocks, slightly shifted so that blocks with redundant
  // rows still scale; an empty factor marks a block without couplings.
  std::vector<int> factor_start(static_cast<std::size_t>(nb) + 1, 0);
  for (int k = 0; k < nb; ++k) {
    const int s = block_begin[k + 1] - block_begin[k];
    factor_start[k + 1] = factor_start[k] + s * s;
  }
  std::vector<double> factors(static_cast<std::size_t>(factor_start.back()), 0.0);
  std::vector<char> valid(static_cast<std::size_t>(nb), 0);
  std::vector<double> work;
  for (int k = 0; k < nb; ++k) {
    const int b0 = block_begin[k], s = block_begin[k + 1] - b0;
    work.assign(static_cast<std::size_t>(s) * s, 0.0);
    for (int i = 0; i < s; ++i) {
      for (int e = row_start[b0 + i]; e < row_start[b0 + i + 1]; ++e) {
        const int c = col[e];
        if (c >= b0 && c < b0 + s) work[i * s + (c - b0)] = val[e];
      }
    }
    double scale = 0;
    for (int i = 0; i < s; ++i) scale = std::max(scale, std::abs(work[i * s + i]));
    if (!(scale > 0) || !std::isfinite(scale)) continue;
    if (!small_cholesky_rowmajor(work.data(), s, 1e-8 * scale)) continue;
    std::copy(work.begin(), work.end(), factors.begin() + factor_start[k]);
    valid[k] = 1;
  }

  // Off-diagonal blocks (a, b > a), gathered row by row of block a.
  std::vector<int> local(static_cast<std::size_t>(nb), -1);  // block b -> index in `neighbours`
  std::vector<int> neighbours;
  std::vector<double> blocks;  // dense sa x sb blocks of the neighbours, row-major
  std::vector<int> block_start;
  for (int a = 0; a < nb; ++a) {
    if (!valid[a]) continue;
    const int a0 = block_begin[a], sa = block_begin[a + 1] - a0;
    neighbours.clear();
    blocks.clear();
    block_start.clear();
    for (int i = 0; i < sa; ++i) {
      for (int e = row_start[a0 + i]; e < row_start[a0 + i + 1]; ++e) {
        const int b = block_of[col[e]];
        if (b <= a || !valid[b]) continue;
        const int sb = block_begin[b + 1] - block_begin[b];
        if (local[b] < 0) {
          local[b] = static_cast<int>(neighbours.size());
          neighbours.push_back(b);
          block_start.push_back(static_cast<int>(blocks.size()));
          blocks.resize(blocks.size() + static_cast<std::size_t>(sa) * sb, 0.0);
        }
        blocks[block_start[local[b]] + i * sb + (col[e] - block_begin[b])] = val[e];
      }
    }
    for (std::size_t q = 0; q < neighbours.size(); ++q) {
      const int b = neighbours[q], sb = block_begin[b + 1] - block_begin[b];
      local[b] = -1;
      const double strength = scaled_norm(factors.data() + factor_start[a], sa,
                                          factors.data() + factor_start[b], sb,
                                          blocks.data() + block_start[q]);
      if (strength > 0 && std::isfinite(strength)) out.push_back({a, b, strength});
    }
  }
  return out;
}

LinePartition partition_lines(int blocks, const std::vector<BlockCoupling>& couplings) {
  LinePartition lines;
  if (blocks <= 0) {
    lines.line_begin = {0};
    return lines;
  }
  const auto ub = static_cast<std::size_t>(blocks);
  std::vector<std::size_t> rank(couplings.size());
  std::iota(rank.begin(), rank.end(), std::size_t{0});
  std::sort(rank.begin(), rank.end(), [&](std::size_t x, std::size_t y) {
    const BlockCoupling &cx = couplings[x], &cy = couplings[y];
    return std::make_tuple(-cx.strength, cx.a, cx.b) < std::make_tuple(-cy.strength, cy.a, cy.b);
  });

  // Path forest: at most two neighbours per block, no cycles (union-find on the paths).
  std::vector<int> parent(ub), degree(ub, 0), link(2 * ub, -1);
  std::iota(parent.begin(), parent.end(), 0);
  auto root = [&](int v) {
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
  };
  auto usable = [&](const BlockCoupling& c) {
    return c.strength > 0 && c.a != c.b && c.a >= 0 && c.b >= 0 && c.a < blocks && c.b < blocks;
  };
  // Coupling graph, to keep paths from circling one body: no three consecutive blocks of a
  // path pairwise coupled.
  std::vector<int> adj_start(ub + 1, 0), adj;
  for (const BlockCoupling& c : couplings) {
    if (!usable(c)) continue;
    ++adj_start[c.a + 1];
    ++adj_start[c.b + 1];
  }
  for (std::size_t v = 0; v < ub; ++v) adj_start[v + 1] += adj_start[v];
  adj.resize(static_cast<std::size_t>(adj_start[ub]));
  {
    std::vector<int> next(adj_start.begin(), adj_start.end() - 1);
    for (const BlockCoupling& c : couplings) {
      if (!usable(c)) continue;
      adj[next[c.a]++] = c.b;
      adj[next[c.b]++] = c.a;
    }
    for (std::size_t v = 0; v < ub; ++v)
      std::sort(adj.begin() + adj_start[v], adj.begin() + adj_start[v + 1]);
  }
  auto coupled = [&](int u, int v) {
    return std::binary_search(adj.begin() + adj_start[u], adj.begin() + adj_start[u + 1], v);
  };
  auto closes_triangle = [&](int a, int b) {  // a's path neighbour coupled to b
    for (int d = 0; d < degree[a]; ++d)
      if (coupled(link[2 * a + d], b)) return true;
    return false;
  };
  for (const std::size_t k : rank) {
    const BlockCoupling& c = couplings[k];
    if (!usable(c)) continue;
    if (degree[c.a] >= 2 || degree[c.b] >= 2) continue;
    if (closes_triangle(c.a, c.b) || closes_triangle(c.b, c.a)) continue;
    const int ra = root(c.a), rb = root(c.b);
    if (ra == rb) continue;
    parent[ra] = rb;
    link[2 * c.a + degree[c.a]++] = c.b;
    link[2 * c.b + degree[c.b]++] = c.a;
  }

  // Walk every path from its lower-numbered end.
  std::vector<char> seen(ub, 0);
  lines.order.reserve(ub);
  for (int start = 0; start < blocks; ++start) {
    if (seen[start] || degree[start] == 2) continue;
    lines.line_begin.push_back(static_cast<int>(lines.order.size()));
    int prev = -1, v = start;
    while (v >= 0) {
      seen[v] = 1;
      lines.order.push_back(v);
      const int next = link[2 * v] != prev ? link[2 * v] : link[2 * v + 1];
      prev = v;
      v = next;
    }
  }
  lines.line_begin.push_back(static_cast<int>(lines.order.size()));

  // Cut the paths where two blocks that are not consecutive are coupled, so that every path's
  // part of the matrix is exactly its block-tridiagonal part.
  const std::vector<int> position = lines.positions();
  std::vector<int> cut;
  cut.reserve(lines.line_begin.size());
  for (int l = 0; l < lines.lines(); ++l) {
    int segment = lines.line_begin[l];
    cut.push_back(segment);
    for (int p = segment + 1; p < lines.line_begin[l + 1]; ++p) {
      const int v = lines.order[p];
      for (int e = adj_start[v]; e < adj_start[v + 1]; ++e) {
        const int q = position[adj[e]];
        if (q >= segment && q < p - 1) {
          segment = p;
          cut.push_back(segment);
          break;
        }
      }
    }
  }
  cut.push_back(static_cast<int>(lines.order.size()));
  lines.line_begin = std::move(cut);
  return lines;
}

}  // namespace mabd::detail
