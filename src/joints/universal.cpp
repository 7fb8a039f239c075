// Universal joint (paper Eq. universal, 4 rows): the ball rows, plus the first axis (carried
// by body a) kept perpendicular to the second axis (carried by body b):
// L (A_a ua) . (A_b vb) = 0. Bilinear, exact gradient.
#include "joints/joint_model.h"

namespace mabd::detail {

int universal_dot_pairs(const JointModel& j, const Vec3* u[3], const Vec3* v[3]) {
  u[0] = &j.ax->ua;
  v[0] = &j.ax->vb;
  return 1;
}

void universal_rows(const JointModel& j, const Vec12& qa, const Vec12& qb, std::vector<Row>& out) {
  add_point_and_dot_rows(j, qa, qb, out);
}

}  // namespace mabd::detail
