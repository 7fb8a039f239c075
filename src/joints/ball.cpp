// Ball joint (paper Eq. ball): C = x_a(pa) - x_b(pb), 3 linear rows with constant gradient.
#include "joints/joint_model.h"

namespace mabd::detail {

void ball_rows(const JointModel& j, const Vec12& qa, const Vec12& qb, std::vector<Row>& out) {
  add_point_rows(qa, qb, j.pa, j.pb, out);
}

void type_rows(const JointModel& j, const Vec12& qa, const Vec12& qb, std::vector<Row>& out) {
  switch (j.type) {
    case JointType::Ball: return ball_rows(j, qa, qb, out);
    case JointType::Hinge: return hinge_rows(j, qa, qb, out);
    case JointType::Universal: return universal_rows(j, qa, qb, out);
    case JointType::Prismatic: return prismatic_rows(j, qa, qb, out);
    case JointType::Fixed: return fixed_rows(j, qa, qb, out);
  }
}

}  // namespace mabd::detail
