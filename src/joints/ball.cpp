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
    case JointType::Hinge: return hinge_dot_pairs(j, u, v);
    case JointType::Universal: return universal_dot_pairs(j, u, v);
    case JointType::Fixed: return fixed_dot_pairs(j, u, v);
    case JointType::Prismatic: return -1;
  }
  return -1;
}

void add_point_and_dot_rows(const JointModel& j, const Vec12& qa, const Vec12& qb,
                            std::vector<Row>& out) {
  add_point_rows(qa, qb, j.pa, j.pb, out);
  const Vec3* u[3];
  const Vec3* v[3];
  const int dots = dot_pairs(j, u, v);
  for (int i = 0; i < dots; ++i) out.push_back(dot_row(qa, qb, *u[i], *v[i], j.L));
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
