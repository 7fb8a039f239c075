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
// A ball joint's cone limit is C = L (n_a . n_b - cos(swing)) >= 0 on its axes n_a, n_b,
// and its twist limits act on the twist angle about the axis.
//
// Limits stop the bodies, so they act on the relative orientation of the bodies' rigid
// frames, not of material axes A u: the frame of an affine body is its mass-weighted
// best-fit rotation R = polar(A Sigma) (Sigma = diag(sigma), the principal second moments:
// R minimises the mass-weighted sum_points m |(R - A) X|^2), R = A for a rigid body. A
// row f(R) with df = tau . w under a small world rotation w of R has the gradient
//   dC/dA = R [b] Sigma,   b = (tr(S) I - S)^{-1} R^T tau,   S = R^T A Sigma,
// from the polar derivative (R^T dR = [v], (tr(S) I - S) v = axial(Z - Z^T), Z = R^T dA Sigma).
// At a rigid A (S = Sigma, tr(S) I - S the body-frame inertia) it is M_A E(A) I^{-1} tau:
// the generalized force whose response M_A^{-1} (and H^{-1}: Kb vanishes on rotations) is
// the rigid rotation I^{-1} tau, and whose rate is that of the rigid motion alone (angular
// momentum over inertia), blind to the deformation rate. A limit's push turns the bodies
// rigidly. On material axes, the light thin columns of a slender body were the cheapest way
// to satisfy a limit: it held by shearing the body while the body kept turning, and that
// deformation energy came back as motion.
#include <cmath>

#include "body/affine.h"
#include "body/rotation.h"
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

/// Rigid frame of one side of a joint for its limits: R = polar(A Sigma) and the operator
/// (tr(S) I - S)^{-1} of its derivative (see the top of this file).
struct RigidFrame {
  Mat3 R = Mat3::Identity();
  Mat3 Kinv = 0.5 * Mat3::Identity();
  Vec3 sigma = Vec3::Ones();

  RigidFrame(const Vec12& q, const Vec3& s) : sigma(s) {
    const Mat3 B = affine_A(q) * sigma.asDiagonal();
    if (!polar_rotation(B, R)) return;  // an inverted body: check_state reports it
    Mat3 S = R.transpose() * B;
    S = 0.5 * (S + S.transpose());
    Kinv = (S.trace() * Mat3::Identity() - S).inverse();
  }
  Vec3 operator*(const Vec3& u) const { return R * u; }
  /// dC/dq of a row whose change under a small world rotation w of R is tau . w.
  Vec12 grad(const Vec3& tau) const {
    const Vec3 b = Kinv * (R.transpose() * tau);
    Vec12 g;
    for (int k = 0; k < 3; ++k) g.segment<3>(3 * k) = sigma[k] * (R * b.cross(Vec3::Unit(k)));
    g.tail<3>().setZero();
    return g;
  }
};

/// Angle of frame b about the joint axis relative to frame a (rad), unwrapped next to `near`,
/// and its gradient: atan2((Ra wa2) . (Rb wb1), (Ra wa1) . (Rb wb1)) (as twist_angle).
void rigid_angle(const JointModel& j, const RigidFrame& fa, const RigidFrame& fb, double near,
                 double& value, Vec12& ga, Vec12& gb) {
  const Vec3 a1 = fa * j.ax->wa1, a2 = fa * j.ax->wa2, b1 = fb * j.ax->wb1;
  const double x = a1.dot(b1), y = a2.dot(b1), r2 = x * x + y * y;
  value = std::atan2(y, x);
  value += 2 * M_PI * std::round((near - value) / (2 * M_PI));
  // d x = w_a . (a1 x b1) + w_b . (b1 x a1), likewise y; d theta = (x dy - y dx) / r2.
  const Vec3 tau = (x * a2.cross(b1) - y * a1.cross(b1)) / r2;
  ga = fa.grad(tau);
  gb = fb.grad(-tau);
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

double joint_stored_energy(const JointModel& j, const Vec12& qa, const Vec12& qb,
                           std::vector<Row>& scratch) {
  double e = 0;
  const JointExtras& ex = j.extras();
  if (ex.spring && ex.spring->stiffness > 0) {
    const double k = ex.spring->stiffness;
    double theta = 0;
    if (j.type == JointType::Ball) {
      e += 0.5 * k * ball_bend(j, qa, qb).squaredNorm();  // rows L bend, compliance L^2 / k
    } else if (joint_coordinate_value(j, qa, qb, j.coord_prev, theta)) {
      e += 0.5 * k * (theta - ex.spring->rest) * (theta - ex.spring->rest);
    }
  }
  if (j.compliance > 0) {
    scratch.clear();
    type_rows(j, qa, qb, scratch);
    for (const Row& r : scratch) e += 0.5 * r.c * r.c / j.compliance;
  }
  return e;
}

void extra_rows(const JointModel& j, const Vec12& qa, const Vec12& qb, double h,
                std::vector<Row>& out) {
  const JointExtras& ex = j.extras();
  if (ex.limits && (j.type == JointType::Hinge || j.type == JointType::Prismatic)) {
    const RigidFrame fa(qa, ex.sigma_a), fb(qb, ex.sigma_b);
    double theta = 0;
    Vec12 ga, gb;
    if (j.type == JointType::Hinge) {
      rigid_angle(j, fa, fb, j.coord_prev, theta, ga, gb);
    } else {  // s = (Ra na) . (x_b(pb) - x_a(pa))
      const Vec3 n = fa * j.ax->na;
      const Vec3 d = body_point(qb, j.pb) - body_point(qa, j.pa);
      theta = n.dot(d);
      ga = fa.grad(n.cross(d)) - grad_point(j.pa, n);
      gb = grad_point(j.pb, n);
    }
    add_range(theta, ga, gb, j.type == JointType::Hinge ? j.L : 1.0, ex.limits->lower,
              ex.limits->upper, out);
  }
  double theta = 0;
  Vec12 ga, gb;
  if ((ex.spring || ex.drive) && joint_coordinate(j, qa, qb, j.coord_prev, theta, ga, gb)) {
    const double Lc = j.type == JointType::Hinge ? j.L : 1.0;
    if (ex.spring && (ex.spring->stiffness > 0 || ex.spring->damping > 0)) {
      out.push_back(soft_row(theta, j.coord_prev, ga, gb, Lc, ex.spring->stiffness,
                             ex.spring->damping, ex.spring->rest, h));
    }
    if (ex.drive && ex.drive->mode != DriveMode::Effort) {  // an effort is a load (predict)
      const JointDrive& d = *ex.drive;
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
  if (j.type == JointType::Ball && ex.spring &&
      (ex.spring->stiffness > 0 || ex.spring->damping > 0)) {
    const std::size_t first = out.size();
    add_rotation_lock_rows(qa, qb, j.ax->ea, j.ax->eb, j.L, out);
    const double k = ex.spring->stiffness, c = ex.spring->damping;
    const double k_eff = k + c / h;
    for (int i = 0; i < 3; ++i) {
      Row& r = out[first + i];
      r.c -= j.L * (c / h) * j.bend_prev[i] / k_eff;
      r.compliance = j.L * j.L / k_eff;
      r.lever = j.L;
    }
  }
  if (j.type == JointType::Ball && ex.cone) {
    const RigidFrame fa(qa, ex.sigma_a), fb(qb, ex.sigma_b);
    const Vec3 ua = fa * j.ax->na, ub = fb * j.ax->nb;  // unit: the frames are rotations
    Row r;
    r.c = j.L * (ua.dot(ub) - std::cos(ex.cone->swing));
    r.ga = fa.grad(j.L * ua.cross(ub));
    r.gb = fb.grad(j.L * ub.cross(ua));
    r.kind = RowKind::Lower;
    r.lever = j.L;
    out.push_back(r);
    if (ex.cone->twist_lower || ex.cone->twist_upper) {
      rigid_angle(j, fa, fb, j.twist_prev, theta, ga, gb);
      add_range(theta, ga, gb, j.L, ex.cone->twist_lower, ex.cone->twist_upper, out);
    }
  }
}

}  // namespace mabd::detail
