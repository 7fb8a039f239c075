#include "solvers/row_set.h"

#include <atomic>

namespace mabd::detail {

void RowSet::begin(const BodyOperators& ops, const std::vector<Vec12>& y) {
  ops_ = &ops;
  y_ = &y;
  rows.clear();
  row_a.clear();
  row_b.clear();
  row_item.clear();
  rhs.clear();
  item_begin.clear();
  have_w = false;
  inequalities = false;
  new_serial(false);
}

void RowSet::begin_item(int a, int b) {
  item_first_ = rows.size();
  item_begin.push_back(item_first_);
  item_a_ = a;
  item_b_ = b;
}

double RowSet::g_y(int r, const std::vector<Vec12>& yv) const {
  // The side with the lower body index first, then C (the order of a pass over the bodies'
  // rows followed by one adding C).
  const Row& row = rows[r];
  const int a = row_a[r], b = row_b[r];
  const bool da = ops_->dynamic(a), db = ops_->dynamic(b);
  double s = 0;
  if (da && (!db || a < b)) {
    s += row.ga.dot(yv[a]);
    if (db) s += row.gb.dot(yv[b]);
  } else if (db) {
    s += row.gb.dot(yv[b]);
    if (da) s += row.ga.dot(yv[a]);
  }
  return s + row.c;
}

void RowSet::end_item() {
  const std::size_t n = rows.size();
  const auto item = static_cast<std::uint32_t>(item_begin.size() - 1);
  row_a.resize(n, item_a_);
  row_b.resize(n, item_b_);
  row_item.resize(n, item);
  for (std::size_t r = item_first_; r < n; ++r) {
    inequalities |= rows[r].kind != RowKind::Equality;
    rhs.push_back(g_y(static_cast<int>(r), *y_));
  }
}

void RowSet::update_rhs(const std::vector<Vec12>& y) {
  y_ = &y;
  for (int r = 0; r < size(); ++r) rhs[r] = g_y(r, y);
}

void RowSet::finish() {
  item_begin.push_back(rows.size());
  rows_of.resize(ops_->body_count());
  for (auto& list : rows_of) list.clear();
  const int n = size();
  for (int r = 0; r < n; ++r) {
    if (ops_->dynamic(row_a[r])) rows_of[row_a[r]].push_back(r);
    if (ops_->dynamic(row_b[r])) rows_of[row_b[r]].push_back(r);
  }
}

void RowSet::compute_w(const BodyOperators& ops) {
  // (Resized, not refilled: every entry is written, zero on a side that cannot move.)
  const int n = size();
  wa.resize(n);
  wb.resize(n);
  for (int r = 0; r < n; ++r) {
    if (ops.dynamic(row_a[r])) {
      wa[r] = ops.solve_body(row_a[r], rows[r].ga);
    } else {
      wa[r].setZero();
    }
    if (ops.dynamic(row_b[r])) {
      wb[r] = ops.solve_body(row_b[r], rows[r].gb);
    } else {
      wb[r].setZero();
    }
  }
  have_w = true;
  new_serial(false);
}

void RowSet::update_w(const BodyOperators& ops, const std::vector<std::uint32_t>& bodies) {
  for (const std::uint32_t i : bodies) {
    if (i >= rows_of.size()) continue;
    const int b = static_cast<int>(i);
    for (const int r : rows_of[i]) {
      if (row_a[r] == b) wa[r] = ops.solve_body(i, rows[r].ga);
      if (row_b[r] == b) wb[r] = ops.solve_body(i, rows[r].gb);
    }
  }
  new_serial(true);
  w_changed = bodies;
}

void RowSet::new_serial(bool partial) {
  static std::atomic<std::uint64_t> next{1};
  w_serial_before = w_serial;
  w_serial = next.fetch_add(1, std::memory_order_relaxed);
  w_partial = partial;
}

}  // namespace mabd::detail
