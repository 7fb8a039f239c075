// Ball joint (paper Eq. ball): C = x_a(pa) - x_b(pb), 3 linear rows with constant gradient.
#include <algorithm>
#include <cmath>

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

double type_residual(const JointModel& j, const Vec12& qa, const Vec12& qb,
                     std::vector<Row>& scratch) {
  const Vec3* u[3];
  const Vec3* v[3];
  const int dots = dot_pairs(j, u, v);
  if (dots < 0) {
    scratch.clear();
    type_rows(j, qa, qb, scratch);
    double worst = 0;
    for (const Row& r : scratch) worst = std::max(worst, std::abs(r.c));
    return worst;
  }
  double worst = (body_point(qa, j.pa) - body_point(qb, j.pb)).lpNorm<Eigen::Infinity>();
  for (int i = 0; i < dots; ++i) {
    worst = std::max(worst, std::abs(j.L * body_vector(qa, *u[i]).dot(body_vector(qb, *v[i]))));
  }
  return worst;
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
