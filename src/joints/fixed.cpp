// Fixed joint (6 rows): the ball rows plus the relative rotation locked.
#include "joints/joint_model.h"

namespace mabd::detail {

// The rotation-lock rows (add_rotation_lock_rows, which a ball joint's spring uses too):
// (A_a ea_i) . (A_b eb_j) for the pairs kLockPairs.
int fixed_dot_pairs(const JointModel& j, const Vec3* u[3], const Vec3* v[3]) {
  for (int i = 0; i < 3; ++i) {
    u[i] = &j.ax->ea[kLockPairs[i][0]];
    v[i] = &j.ax->eb[kLockPairs[i][1]];
  }
  return 3;
}

void fixed_rows(const JointModel& j, const Vec12& qa, const Vec12& qb, std::vector<Row>& out) {
  add_point_and_dot_rows(j, qa, qb, out);
}

}  // namespace mabd::detail
