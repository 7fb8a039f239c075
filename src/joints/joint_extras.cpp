// Limits, springs and drives on a joint coordinate theta (hinge angle or prismatic slide).
// Each becomes one row in the dual solve:
//  - limit:  C = Lc (theta - lower) >= 0 and C = Lc (upper - theta) >= 0, active only when
//            violated, pushing only (an active limit row is exact, DESIGN section 2);
//  - spring: compliant row C = Lc (theta - theta*) with compliance Lc^2 / k_eff, where
//            k_eff = k + c/h and theta* = (k rest + (c/h) theta_n) / k_eff: the implicit
//            spring-damper force -k (theta - rest) - c (theta - theta_n)/h;
//  - drive:  the same with the drive's gains towards its target (position) or towards
//            theta_n + h v (velocity); zero gains make it rigid; |force| <= max_force.
// Lc = L for angles (rad -> m) and 1 for slides, so every multiplier is in N.
// A ball joint's spring: the three rotation-lock rows of a fixed joint made compliant
// (compliance L^2 / k_eff per row) towards (c/h) bend_n / k_eff.
// A ball joint's cone limit is C = L (n_a . n_b - cos(swing)) >= 0 on the unit axes
// n = A n_local / |A n_local|, and its twist
// limits act on the twist angle about the axis.
#include <cmath>

#include "joints/joint_model.h"

namespace mabd::detail {
namespace {

Row coordinate_row(double scale, double value, const Vec12& ga, const Vec12& gb, double lever) {
  Row r;
  r.c = scale * value;
  r.ga = scale * ga;
  r.gb = scale * gb;
  r.lever = lever;
  return r;
}

void add_range(double theta, const Vec12& ga, const Vec12& gb, double Lc, std::optional<double> lo,
               std::optional<double> hi, std::vector<Row>& out) {
  if (lo) {
    Row r = coordinate_row(Lc, theta - *lo, ga, gb, Lc);
    r.kind = RowKind::Lower;
    out.push_back(r);
  }
  if (hi) {
    Row r = coordinate_row(-Lc, theta - *hi, ga, gb, Lc);
    r.kind = RowKind::Lower;
    out.push_back(r);
  }
}

/// Spring-damper row towards `target` with stiffness k (per rad or m) and damping c.
Row soft_row(double theta, double theta_n, const Vec12& ga, const Vec12& gb, double Lc, double k,
             double c, double target, double h) {
  const double k_eff = k + c / h;
  const double goal = k_eff > 0 ? (k * target + (c / h) * theta_n) / k_eff : target;
  Row r = coordinate_row(Lc, theta - goal, ga, gb, Lc);
  r.compliance = k_eff > 0 ? Lc * Lc / k_eff : 0;
  return r;
}

}  // namespace

Vec3 ball_bend(const JointModel& j, const Vec12& qa, const Vec12& qb) {
  Vec3 bend;  // the values of the rotation-lock rows / L, without building them
  for (int i = 0; i < 3; ++i) {
    const Vec3 au = body_vector(qa, j.ax->ea[kLockPairs[i][0]]);
    bend[i] = au.dot(body_vector(qb, j.ax->eb[kLockPairs[i][1]]));
  }
  return bend;
}

void extra_rows(const JointModel& j, const Vec12& qa, const Vec12& qb, double h,
                std::vector<Row>& out) {
  double theta = 0;
  Vec12 ga, gb;
  if (joint_coordinate(j, qa, qb, j.coord_prev, theta, ga, gb)) {
    const double Lc = j.type == JointType::Hinge ? j.L : 1.0;
    if (j.extras().limits) add_range(theta, ga, gb, Lc, j.extras().limits->lower, j.extras().limits->upper, out);
    if (j.extras().spring && (j.extras().spring->stiffness > 0 || j.extras().spring->damping > 0)) {
      out.push_back(soft_row(theta, j.coord_prev, ga, gb, Lc, j.extras().spring->stiffness,
                             j.extras().spring->damping, j.extras().spring->rest, h));
    }
    if (j.extras().drive) {
      const JointDrive& d = *j.extras().drive;
      Row r = d.mode == DriveMode::Position
                  ? soft_row(theta, j.coord_prev, ga, gb, Lc, d.stiffness, d.damping, d.target, h)
                  : soft_row(theta, j.coord_prev + h * d.target, ga, gb, Lc, 0, d.damping,
                             0.0, h);  // damper towards the rate: theta_n + h v
      if (d.mode == DriveMode::Velocity && d.damping <= 0) {
        r = coordinate_row(Lc, theta - (j.coord_prev + h * d.target), ga, gb, Lc);  // motor
      }
      if (std::isfinite(d.max_force)) {
        r.kind = RowKind::Bounded;
        r.bound = d.max_force / Lc;
      }
      out.push_back(r);
    }
  }
  if (j.type == JointType::Ball && j.extras().spring &&
      (j.extras().spring->stiffness > 0 || j.extras().spring->damping > 0)) {
    const std::size_t first = out.size();
    add_rotation_lock_rows(qa, qb, j.ax->ea, j.ax->eb, j.L, out);
    const double k = j.extras().spring->stiffness, c = j.extras().spring->damping;
    const double k_eff = k + c / h;
    for (int i = 0; i < 3; ++i) {
      Row& r = out[first + i];
      r.c -= j.L * (c / h) * j.bend_prev[i] / k_eff;
      r.compliance = j.L * j.L / k_eff;
      r.lever = j.L;
    }
  }
  if (j.type == JointType::Ball && j.extras().cone) {
    // Unit axes, so that an elastic stretch of the bodies cannot satisfy the limit.
    const Vec3 an = body_vector(qa, j.ax->na), bn = body_vector(qb, j.ax->nb);
    const double la = an.norm(), lb = bn.norm();
    const Vec3 ua = an / la, ub = bn / lb;
    Row r;
    r.c = j.L * (ua.dot(ub) - std::cos(j.extras().cone->swing));
    r.ga = j.L * grad_vector(j.ax->na, (ub - ua * ua.dot(ub)) / la);
    r.gb = j.L * grad_vector(j.ax->nb, (ua - ub * ub.dot(ua)) / lb);
    r.kind = RowKind::Lower;
    r.lever = j.L;
    out.push_back(r);
    if (j.extras().cone->twist_lower || j.extras().cone->twist_upper) {
      twist_angle(j, qa, qb, j.twist_prev, theta, ga, gb);
      add_range(theta, ga, gb, j.L, j.extras().cone->twist_lower, j.extras().cone->twist_upper, out);
    }
  }
}

}  // namespace mabd::detail
