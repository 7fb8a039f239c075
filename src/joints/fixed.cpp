// Fixed joint (6 rows): the ball rows plus the relative rotation locked.
#include "joints/joint_model.h"

namespace mabd::detail {

void fixed_rows(const JointModel& j, const Vec12& qa, const Vec12& qb, std::vector<Row>& out) {
  add_point_rows(qa, qb, j.pa, j.pb, out);
  add_rotation_lock_rows(qa, qb, j.ax->ea, j.ax->eb, j.L, out);
}

}  // namespace mabd::detail
