// The constraint rows of one Newton iteration (DESIGN section 3), gathered from every row
// source (joints with their limits and drives; contacts and attachments may follow) into one
// set that the active-set loop and the dual solvers work on. Rows come in items: the rows of
// one source item (a joint, say) on one pair of bodies, consecutive in the set. The items are
// the edges of the dual topology (chains, trees, graphs); the solvers never look further
// into a source than its rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "joints/row.h"
#include "solvers/body_operators.h"
#include "solvers/topology.h"

namespace mabd::detail {

/// What the dual solvers plan for: the bodies that move and the bodies of every item. It
/// changes only when items or bodies are added or removed (not with the iterate).
struct DualTopology {
  std::vector<char> movable;  ///< per body: dynamic
  std::vector<Edge> items;    ///< bodies of each item (-1 for anything that cannot move)
};

class RowSet {
 public:
  std::vector<Row> rows;
  std::vector<std::int32_t> row_a, row_b;  ///< bodies of each row (-1: the world)
  std::vector<std::uint32_t> row_item;     ///< item of each row
  /// G y + C of each row (y = H^{-1} f): the right-hand side of the first active-set pass,
  /// computed while its item is built.
  std::vector<double> rhs;
  std::vector<std::size_t> item_begin;     ///< rows of item k: [item_begin[k], item_begin[k + 1])
  std::vector<std::vector<int>> rows_of;   ///< rows touching each dynamic body
  /// W = H^{-1} G^T per row and side (zero on a side that cannot move), when computed.
  std::vector<Vec12> wa, wb;
  bool have_w = false;
  /// A number unique to the rows and W as they are, new at every change (begin, compute_w,
  /// update_w), so that a solver can tell what changed since it last read them: if the last
  /// change was update_w (w_partial), from w_serial_before, w_changed lists its bodies.
  std::uint64_t w_serial = 0, w_serial_before = 0;
  bool w_partial = false;
  std::vector<std::uint32_t> w_changed;
  bool inequalities = false;  ///< some row is Lower or Bounded (the active-set loop tests)

  /// Starts an empty set for the iterate whose free increment is y (per body).
  void begin(const BodyOperators& ops, const std::vector<Vec12>& y);
  /// Opens the next item on bodies a and b: the rows a source appends to `rows` from here
  /// until end_item belong to it.
  void begin_item(int a, int b);
  /// Closes the item: its rows' bodies, item and right-hand side.
  void end_item();
  /// Closes the set: the item ranges and the rows of each body.
  void finish();

  /// Recomputes rhs = G y + C for new increments y, the rows as they are (the same iterate).
  void update_rhs(const std::vector<Vec12>& y);

  int size() const { return static_cast<int>(rows.size()); }
  std::size_t items() const { return item_begin.empty() ? 0 : item_begin.size() - 1; }
  /// G y + C of row r for per-body increments yv.
  double g_y(int r, const std::vector<Vec12>& yv) const;
  /// Computes wa, wb with the current body operators.
  void compute_w(const BodyOperators& ops);
  /// Recomputes wa, wb of the rows on `bodies` only, whose operators changed since W was
  /// computed (the rows themselves the same); the other rows' W stand.
  void update_w(const BodyOperators& ops, const std::vector<std::uint32_t>& bodies);
  const Vec12& g_of(int r, std::size_t body) const {
    return row_a[r] == static_cast<int>(body) ? rows[r].ga : rows[r].gb;
  }
  const Vec12& w_of(int r, std::size_t body) const {
    return row_a[r] == static_cast<int>(body) ? wa[r] : wb[r];
  }
  /// Starts loading row r into the cache (passes that read rows out of item order).
  void prefetch_row(std::size_t r) const {
    const char* p = reinterpret_cast<const char*>(&rows[r]);
    for (std::size_t off = 0; off < sizeof(Row); off += 64) __builtin_prefetch(p + off);
  }

 private:
  void new_serial(bool partial);
  const BodyOperators* ops_ = nullptr;
  const std::vector<Vec12>* y_ = nullptr;
  std::size_t item_first_ = 0;
  int item_a_ = -1, item_b_ = -1;
};

}  // namespace mabd::detail
