#include "world/joint_rows.h"

#include "body/affine.h"

namespace mabd::detail {

namespace {

/// Joint j's type rows at (qa, qb), with its compliance.
void compliant_type_rows(const JointModel& j, const Vec12& qa, const Vec12& qb,
                         std::vector<Row>& out) {
  const std::size_t first = out.size();
  type_rows(j, qa, qb, out);
  for (std::size_t r = first; r < out.size(); ++r) out[r].compliance += j.compliance;
}

}  // namespace

void JointRows::append_rows(const std::vector<Vec12>& q, RowSet& set) const {
  const Vec12 world_q = make_q(Mat3::Identity(), Vec3::Zero());
  auto q_of = [&](int body) -> const Vec12& { return body >= 0 ? q[body] : world_q; };
  for (const JointModel& j : joints_) {
    const Vec12& qa = q_of(j.a);
    const Vec12& qb = q_of(j.b);
    set.begin_item(j.a, j.b);
    compliant_type_rows(j, qa, qb, set.rows);
    extra_rows(j, qa, qb, dt_, set.rows);
    set.end_item();
  }
}

void JointRows::item_rows(std::size_t k, const std::vector<Vec12>& q, std::vector<Row>& out) const {
  const JointModel& j = joints_[k];
  const Vec12 world_q = make_q(Mat3::Identity(), Vec3::Zero());
  compliant_type_rows(j, j.a >= 0 ? q[j.a] : world_q, j.b >= 0 ? q[j.b] : world_q, out);
}

bool JointRows::chain_items(std::vector<PointLink>& out) const {
  out.clear();
  out.reserve(joints_.size());
  for (const JointModel& j : joints_) {
    const JointExtras& e = j.extras();
    if (e.limits || e.cone || e.spring || e.drive) return false;
    if (j.type == JointType::Ball) {
      out.push_back({j.a, j.b, j.pa, j.pb, j.compliance, 0});
    } else {
      out.push_back({j.a, j.b, Vec3::Zero(), Vec3::Zero(), 0.0, j.base_rows});
    }
  }
  return true;
}

}  // namespace mabd::detail
