// A row source contributes constraint rows to the Newton iteration's RowSet (DESIGN section
// 3): the joints with their limits, springs and drives (joint_rows.h); contacts and
// attachments can follow. It names its items (row groups on one pair of bodies; the edges of
// the dual topology) and appends their rows at the current iterate. The active-set loop and
// the dual solvers read only the RowSet: a new source needs no change in them.
#pragma once

#include <cstddef>
#include <vector>

#include "solvers/ball_chain_dual.h"
#include "solvers/row_set.h"

namespace mabd::detail {

class RowSource {
 public:
  virtual ~RowSource() = default;
  /// Number of items; their order and bodies change only with the topology.
  virtual std::size_t items() const = 0;
  /// Bodies of item k (-1: the world).
  virtual Edge item_bodies(std::size_t k) const = 0;
  /// Appends every item's rows at the iterate q (per body), each between set.begin_item and
  /// set.end_item, in item order.
  virtual void append_rows(const std::vector<Vec12>& q, RowSet& set) const = 0;
  /// If every item is either a point coincidence x_a(pa) = x_b(pb) (three rows) or at most
  /// 6 equality rows (no inequality, no bound), fills one PointLink per item (rows > 0 for
  /// the latter) and returns true: the closed-form chains can then solve without a row set
  /// (ball_chain_dual.h), building only the latter's rows (item_rows).
  virtual bool chain_items(std::vector<PointLink>& /*out*/) const { return false; }
  /// Appends the rows of item k at the iterate q (per body); only for the general items of
  /// chain_items.
  virtual void item_rows(std::size_t /*k*/, const std::vector<Vec12>& /*q*/,
                         std::vector<Row>& /*out*/) const {}
};

}  // namespace mabd::detail
