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
    PointLink l;
    l.a = j.a;
    l.b = j.b;
    l.dots = dot_pairs(j, l.u, l.v);
    if (l.dots < 0) {  // prismatic: a general item of its type rows
      l.dots = 0;
      l.rows = j.base_rows;
      out.push_back(l);
      continue;
    }
    // A point link, with the dot rows of its type (hinge.cpp, universal.cpp, fixed.cpp).
    l.pa = j.pa;
    l.pb = j.pb;
    l.compliance = j.compliance;
    l.L = j.L;
    out.push_back(l);
  }
  return true;
}

}  // namespace mabd::detail
