// The joints as a row source: one item per joint, its type rows (paper Eqs. ball, hinge, ...;
// with the joint's compliance) followed by its extra rows (limits, springs, drives).
#pragma once

#include "joints/joint_model.h"
#include "world/row_source.h"

namespace mabd::detail {

class JointRows : public RowSource {
 public:
  /// The joints of a world stepping with time step dt (s).
  JointRows(const std::vector<JointModel>& joints, double dt) : joints_(joints), dt_(dt) {}
  std::size_t items() const override { return joints_.size(); }
  Edge item_bodies(std::size_t k) const override { return {joints_[k].a, joints_[k].b}; }
  void append_rows(const std::vector<Vec12>& q, RowSet& set) const override;
  /// Joints without limits, cone, spring or drive: ball, hinge, universal and fixed joints as
  /// point links (with the dot rows of their type), prismatic joints as general items of
  /// their type rows.
  bool chain_items(std::vector<PointLink>& out) const override;
  /// Joint k's type rows with its compliance.
  void item_rows(std::size_t k, const std::vector<Vec12>& q, std::vector<Row>& out) const override;

 private:
  const std::vector<JointModel>& joints_;
  double dt_;
};

}  // namespace mabd::detail
