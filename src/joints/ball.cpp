// Ball joint (paper Eq. ball): C = x_a(pa) - x_b(pb), 3 linear rows with constant gradient.
#include "joints/joint_model.h"

namespace mabd::detail {

void ball_rows(const JointModel& j, const Vec12& qa, const Vec12& qb, std::vector<Row>& out) {
  add_point_rows(qa, qb, j.pa, j.pb, out);
}

int dot_pairs(const JointModel& j, const Vec3* u[3], const Vec3* v[3]) {
  switch (j.type) {
    case JointType::Ball: return 0;
    case JointType::Hinge:  // hinge.cpp
      u[0] = &j.ax->wa1;
      u[1] = &j.ax->wa2;
      v[0] = v[1] = &j.ax->nb;
      return 2;
    case JointType::Universal:  // universal.cpp
      u[0] = &j.ax->ua;
      v[0] = &j.ax->vb;
      return 1;
    case JointType::Fixed:  // fixed.cpp: add_rotation_lock_rows
      for (int i = 0; i < 3; ++i) {
        u[i] = &j.ax->ea[kLockPairs[i][0]];
        v[i] = &j.ax->eb[kLockPairs[i][1]];
      }
      return 3;
    case JointType::Prismatic: return -1;
  }
  return -1;
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
