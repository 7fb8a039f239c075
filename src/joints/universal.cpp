// Universal joint (paper Eq. universal, 4 rows): the ball rows, plus the first axis (carried
// by body a) kept perpendicular to the second axis (carried by body b):
// L (A_a ua) . (A_b vb) = 0. Bilinear, exact gradient.
#include "joints/joint_model.h"

namespace mabd::detail {

void universal_rows(const JointModel& j, const Vec12& qa, const Vec12& qb, std::vector<Row>& out) {
  add_point_rows(qa, qb, j.pa, j.pb, out);
  out.push_back(dot_row(qa, qb, j.ax->ua, j.ax->vb, j.L));
}

}  // namespace mabd::detail
