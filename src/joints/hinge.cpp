// Hinge joint (paper Eq. hinge, 5 rows): the ball rows, plus the axis carried by body b kept
// perpendicular to the two directions wa1, wa2 that body a carries perpendicular to the
// axis: L (A_a wa_i) . (A_b nb) = 0, i = 1, 2. Bilinear in (q_a, q_b), exact gradient.
// The hinge angle is atan2((A_a wa2) . (A_b wb1), (A_a wa1) . (A_b wb1)).
#include <cmath>

#include "joints/joint_model.h"

namespace mabd::detail {

int hinge_dot_pairs(const JointModel& j, const Vec3* u[3], const Vec3* v[3]) {
  u[0] = &j.ax->wa1;
  u[1] = &j.ax->wa2;
  v[0] = v[1] = &j.ax->nb;
  return 2;
}

void hinge_rows(const JointModel& j, const Vec12& qa, const Vec12& qb, std::vector<Row>& out) {
  add_point_and_dot_rows(j, qa, qb, out);
}

namespace {

/// atan2(y, x) unwrapped next to `near` (rad).
double unwrapped_atan2(double y, double x, double near) {
  const double theta = std::atan2(y, x);
  return theta + 2 * M_PI * std::round((near - theta) / (2 * M_PI));
}

}  // namespace

void twist_angle(const JointModel& j, const Vec12& qa, const Vec12& qb, double near, double& value,
                 Vec12& ga, Vec12& gb) {
  const Vec3 a1 = body_vector(qa, j.ax->wa1), a2 = body_vector(qa, j.ax->wa2);
  const Vec3 b1 = body_vector(qb, j.ax->wb1);
  const double x = a1.dot(b1), y = a2.dot(b1), r2 = x * x + y * y;
  value = unwrapped_atan2(y, x, near);
  // d theta = (x dy - y dx) / (x^2 + y^2)
  ga = (x * grad_vector(j.ax->wa2, b1) - y * grad_vector(j.ax->wa1, b1)) / r2;
  gb = (x * grad_vector(j.ax->wb1, a2) - y * grad_vector(j.ax->wb1, a1)) / r2;
}

double twist_value(const JointModel& j, const Vec12& qa, const Vec12& qb, double near) {
  const Vec3 b1 = body_vector(qb, j.ax->wb1);
  return unwrapped_atan2(body_vector(qa, j.ax->wa2).dot(b1), body_vector(qa, j.ax->wa1).dot(b1),
                         near);
}

bool joint_coordinate_value(const JointModel& j, const Vec12& qa, const Vec12& qb, double near,
                            double& value) {
  if (j.type == JointType::Hinge) {
    value = twist_value(j, qa, qb, near);
    return true;
  }
  if (j.type == JointType::Prismatic) {
    value = body_vector(qa, j.ax->na).dot(body_point(qb, j.pb) - body_point(qa, j.pa));
    return true;
  }
  return false;
}

bool joint_coordinate(const JointModel& j, const Vec12& qa, const Vec12& qb, double near,
                      double& value, Vec12& ga, Vec12& gb) {
  if (j.type == JointType::Hinge) {
    twist_angle(j, qa, qb, near, value, ga, gb);
    return true;
  }
  if (j.type == JointType::Prismatic) {
    // s = (A_a na) . (x_b(pb) - x_a(pa))
    const Vec3 n = body_vector(qa, j.ax->na);
    const Vec3 d = body_point(qb, j.pb) - body_point(qa, j.pa);
    value = n.dot(d);
    ga = grad_vector(j.ax->na, d) - grad_point(j.pa, n);
    gb = grad_point(j.pb, n);
    return true;
  }
  return false;
}

}  // namespace mabd::detail
