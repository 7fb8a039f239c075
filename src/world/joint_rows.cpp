#include "world/joint_rows.h"

#include "body/affine.h"

namespace mabd::detail {

void JointRows::append_rows(const std::vector<Vec12>& q, RowSet& set) const {
  const Vec12 world_q = make_q(Mat3::Identity(), Vec3::Zero());
  auto q_of = [&](int body) -> const Vec12& { return body >= 0 ? q[body] : world_q; };
  for (const JointModel& j : joints_) {
    const Vec12& qa = q_of(j.a);
    const Vec12& qb = q_of(j.b);
    set.begin_item(j.a, j.b);
    const std::size_t first = set.rows.size();
    type_rows(j, qa, qb, set.rows);
    for (std::size_t r = first; r < set.rows.size(); ++r) set.rows[r].compliance += j.compliance;
    extra_rows(j, qa, qb, dt_, set.rows);
    set.end_item();
  }
}

bool JointRows::point_links(std::vector<PointLink>& out) const {
  out.clear();
  out.reserve(joints_.size());
  for (const JointModel& j : joints_) {
    const JointExtras& e = j.extras();
    if (j.type != JointType::Ball || e.limits || e.cone || e.spring || e.drive) return false;
    out.push_back({j.a, j.b, j.pa, j.pb, j.compliance});
  }
  return true;
}

}  // namespace mabd::detail
