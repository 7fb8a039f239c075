// Joint control at run time (drive targets and gains, limits, springs) and joint-space
// queries (coordinates and rates of every joint type).
//
// Relative rotation of a joint: with R_a, R_b the rotations of the parent's and the child's
// user frames (the polar part of A, as World::pose; the identity for the world),
//   D = (R_a^T R_b) (R_a0^T R_b0)^T,
// the child's rotation relative to the parent since the joint was added, in the parent frame.
// Its angular velocity is w = R_a^T (w_b - w_a) (dD/dt = [w] D), with each body's w the exact
// rate of its polar rotation: for A = R S, R^T dA - dA^T R = [W] S + S [W] and
//   (tr(S) I - S) W = axial(R^T dA - dA^T R),   w = R W.
#include <cmath>
#include <sstream>

#include "body/affine.h"
#include "body/rotation.h"
#include "mabd/error.h"
#include "world/world_impl.h"

namespace mabd {

namespace {

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

/// Angular velocity (rad/s, world) of the polar rotation of A for the rate dA.
Vec3 polar_rate(const Mat3& A, const Mat3& dA) {
  Mat3 R;
  if (!detail::polar_rotation(A, R)) return Vec3::Zero();
  Mat3 S = R.transpose() * A;
  S = 0.5 * (S + S.transpose());
  const Mat3 X = R.transpose() * dA - dA.transpose() * R;
  const Vec3 axial(X(2, 1), X(0, 2), X(1, 0));
  return R * ((S.trace() * Mat3::Identity() - S).inverse() * axial);
}

std::string joint_label(const detail::JointModel& j, std::uint32_t index) {
  return j.name.empty() ? "joint #" + std::to_string(index) : "joint '" + j.name + "'";
}

}  // namespace

// ---- Validation and storage of the extras ------------------------------------------------

void World::Impl::check_extras(const std::string& label, JointType type,
                               const std::optional<JointLimits>& limits,
                               const std::optional<JointSpring>& spring,
                               const std::optional<JointDrive>& drive) {
  auto fail = [&](const std::string& what) { throw InvalidArgument(label + ": " + what); };
  const bool has_coordinate = type == JointType::Hinge || type == JointType::Prismatic;
  if (limits) {
    if (!has_coordinate) fail("limits: only hinge and prismatic joints take limits");
    if (!std::isfinite(limits->lower) || !std::isfinite(limits->upper) ||
        limits->lower > limits->upper) {
      fail("limits: need finite lower <= upper (got " + num(limits->lower) + ", " +
           num(limits->upper) + ")");
    }
  }
  if (spring) {
    if (!has_coordinate && type != JointType::Ball) {
      fail("spring: only hinge, prismatic and ball joints take a spring");
    }
    if (type == JointType::Ball && spring->rest != 0) {
      fail("spring.rest: a ball joint's spring acts towards the relative orientation at "
           "creation; rest must be 0");
    }
    if (!(spring->stiffness >= 0) || !(spring->damping >= 0) || !std::isfinite(spring->rest) ||
        !std::isfinite(spring->stiffness) || !std::isfinite(spring->damping)) {
      fail("spring: stiffness and damping must be finite and >= 0");
    }
  }
  if (drive) {
    if (!has_coordinate) fail("drive: only hinge and prismatic joints take a drive");
    if (!(drive->stiffness >= 0) || !(drive->damping >= 0) || !std::isfinite(drive->stiffness) ||
        !std::isfinite(drive->damping) || !std::isfinite(drive->target)) {
      fail("drive: target, stiffness and damping must be finite, gains >= 0");
    }
    if (!(drive->max_force > 0)) fail("drive.max_force: must be positive");
    if (drive->mode == DriveMode::Effort && (drive->stiffness != 0 || drive->damping != 0)) {
      fail("drive: an effort drive takes no stiffness or damping (its target is the force)");
    }
  }
}

void World::Impl::set_extras(std::uint32_t ji, const std::optional<JointLimits>& limits,
                             const std::optional<JointSpring>& spring,
                             const std::optional<JointDrive>& drive) {
  detail::JointModel& j = joints[ji];
  if (!j.ex && !limits && !spring && !drive) return;  // nothing before, nothing after
  const detail::JointExtras& old = j.extras();
  if (j.type == JointType::Ball && spring && !old.spring) {
    // The spring acts on the rotation-lock directions recorded when the joint was added.
    throw InvalidArgument(joint_label(j, ji) +
                          ": spring: a ball joint added without a spring cannot take one later");
  }
  const bool presence_changed = old.limits.has_value() != limits.has_value() ||
                                old.spring.has_value() != spring.has_value() ||
                                old.drive.has_value() != drive.has_value();
  auto ex = std::make_shared<detail::JointExtras>(old);
  if (!j.ex) {  // the rigid-frame weights of the limits (as add_joint)
    auto sigma = [&](int body) {
      return body >= 0 && bodies[body].dynamic() ? bodies[body].sigma() : Vec3(Vec3::Ones());
    };
    ex->sigma_a = sigma(j.a);
    ex->sigma_b = sigma(j.b);
  }
  ex->limits = limits;
  ex->spring = spring;
  ex->drive = drive;
  if (ex->drive) ex->drive->max_force = std::min(ex->drive->max_force, ex->effort_limit);
  if (!ex->limits && !ex->cone && !ex->spring && !ex->drive && !std::isfinite(ex->effort_limit)) {
    j.ex.reset();
  } else {
    j.ex = std::move(ex);
  }
  // Which joints are limited, and whether the closed-form ball-chain solver applies.
  if (presence_changed) topology_dirty = true;
}

// ---- Control --------------------------------------------------------------------------------

void World::set_drive(JointId id, const std::optional<JointDrive>& drive) {
  Impl& w = *impl_;
  w.check_joint(id);
  const auto& j = w.joints[id.index];
  Impl::check_extras(joint_label(j, id.index), j.type, std::nullopt, std::nullopt, drive);
  w.set_extras(id.index, j.extras().limits, j.extras().spring, drive);
}

void World::set_joint_limits(JointId id, const std::optional<JointLimits>& limits) {
  Impl& w = *impl_;
  w.check_joint(id);
  const auto& j = w.joints[id.index];
  Impl::check_extras(joint_label(j, id.index), j.type, limits, std::nullopt, std::nullopt);
  w.set_extras(id.index, limits, j.extras().spring, j.extras().drive);
}

void World::set_joint_spring(JointId id, const std::optional<JointSpring>& spring) {
  Impl& w = *impl_;
  w.check_joint(id);
  const auto& j = w.joints[id.index];
  Impl::check_extras(joint_label(j, id.index), j.type, std::nullopt, spring, std::nullopt);
  w.set_extras(id.index, j.extras().limits, spring, j.extras().drive);
}

void World::set_drive_target(JointId id, double target) {
  std::optional<JointDrive> drive = joint_drive(id);
  if (!drive) {
    throw InvalidArgument(joint_label(impl_->joints[id.index], id.index) +
                          ": set_drive_target: the joint has no drive (add one with set_drive)");
  }
  drive->target = target;
  set_drive(id, drive);
}

void World::set_drive_gains(JointId id, double stiffness, double damping, double max_force) {
  std::optional<JointDrive> drive = joint_drive(id);
  if (!drive) {
    throw InvalidArgument(joint_label(impl_->joints[id.index], id.index) +
                          ": set_drive_gains: the joint has no drive (add one with set_drive)");
  }
  drive->stiffness = stiffness;
  drive->damping = damping;
  drive->max_force = max_force;
  set_drive(id, drive);
}

std::optional<JointDrive> World::joint_drive(JointId id) const {
  impl_->check_joint(id);
  return impl_->joints[id.index].extras().drive;
}

double World::joint_effort_limit(JointId id) const {
  impl_->check_joint(id);
  return impl_->joints[id.index].extras().effort_limit;
}

std::optional<JointLimits> World::joint_limits(JointId id) const {
  impl_->check_joint(id);
  return impl_->joints[id.index].extras().limits;
}

std::optional<JointSpring> World::joint_spring(JointId id) const {
  impl_->check_joint(id);
  return impl_->joints[id.index].extras().spring;
}

// ---- Joint space ------------------------------------------------------------------------------

Mat3 World::Impl::user_rotation(int body) const {
  if (body < 0) return Mat3::Identity();
  Mat3 R;
  if (!detail::polar_rotation(detail::affine_A(q[body]), R)) R = Mat3::Identity();
  return R * bodies[body].R_up().transpose();
}

void World::Impl::record_joint_rest(const detail::JointModel& j) {
  joint_rest.push_back(Quat(user_rotation(j.a).transpose() * user_rotation(j.b)).normalized());
}

double World::joint_velocity(JointId id) const {
  const Impl& w = *impl_;
  w.check_joint(id);
  const auto& j = w.joints[id.index];
  double value = 0;
  Vec12 ga, gb;
  if (!detail::joint_coordinate(j, w.joint_q(j.a), w.joint_q(j.b), j.coord_prev, value, ga, gb)) {
    return 0;
  }
  double rate = 0;  // d theta / dt = G qdot (the world side does not move)
  if (j.a >= 0) rate += ga.dot(w.qdot[j.a]);
  if (j.b >= 0) rate += gb.dot(w.qdot[j.b]);
  return rate;
}

JointCoordinates World::joint_coordinates(JointId id) const {
  const Impl& w = *impl_;
  w.check_joint(id);
  const auto& j = w.joints[id.index];
  auto omega = [&](int body) -> Vec3 {
    if (body < 0) return Vec3::Zero();
    return polar_rate(detail::affine_A(w.q[body]), detail::affine_A(w.qdot[body]));
  };
  const Mat3 Ra = w.user_rotation(j.a);
  const Mat3 rest = w.joint_rest[id.index].toRotationMatrix();
  const Mat3 D = Ra.transpose() * w.user_rotation(j.b) * rest.transpose();
  JointCoordinates out;
  out.rotation = Quat(D).normalized();
  out.angular_velocity = Ra.transpose() * (omega(j.b) - omega(j.a));
  switch (j.type) {
    case JointType::Hinge:
    case JointType::Prismatic:
      out.dofs = 1;
      out.position[0] = joint_position(id);
      out.velocity[0] = joint_velocity(id);
      break;
    case JointType::Ball: {
      out.dofs = 3;
      const Eigen::AngleAxisd aa(out.rotation);
      const Vec3 phi = aa.angle() * aa.axis();
      const Vec3& wr = out.angular_velocity;
      for (int k = 0; k < 3; ++k) {
        out.position[k] = phi[k];
        out.velocity[k] = wr[k];
      }
      break;
    }
    case JointType::Universal: {
      out.dofs = 2;
      // The axes in the parent frame: u carried by the parent (its body-local ua in user
      // coordinates), v where the child carried it when the joint was added.
      auto user_axis = [&](int body, const Vec3& local) -> Vec3 {
        return body >= 0 ? Vec3(w.bodies[body].R_up() * local) : local;
      };
      const Vec3 u = user_axis(j.a, j.ax->ua).normalized();
      Vec3 v = rest * user_axis(j.b, j.ax->vb);
      v = (v - u * u.dot(v)).normalized();
      Mat3 B;
      B << u, v, u.cross(v);
      const Mat3 M = B.transpose() * D * B;  // = Rx(theta1) Ry(theta2) in the basis (u, v, u x v)
      const double t1 = std::atan2(M(2, 1), M(1, 1));
      out.position[0] = t1;
      out.position[1] = std::atan2(M(0, 2), M(0, 0));
      out.velocity[0] = out.angular_velocity.dot(u);
      out.velocity[1] = out.angular_velocity.dot(Eigen::AngleAxisd(t1, u) * v);
      break;
    }
    case JointType::Fixed:
      break;
  }
  return out;
}

}  // namespace mabd

namespace mabd {

JointFrame World::joint_frame(JointId id) const {
  const Impl& w = *impl_;
  w.check_joint(id);
  const auto& j = w.joints[id.index];
  JointFrame f;
  f.anchor = j.b >= 0 ? detail::point(w.q[j.b], j.pb) : detail::point(w.joint_q(j.a), j.pa);
  if (j.ax && (j.type == JointType::Hinge || j.type == JointType::Prismatic)) {
    const Vec3 axis = detail::affine_A(w.joint_q(j.a)) * j.ax->na;
    f.axis = axis.normalized();
  }
  return f;
}

std::pair<BodyId, BodyId> World::joint_bodies(JointId id) const {
  const Impl& w = *impl_;
  w.check_joint(id);
  const auto& j = w.joints[id.index];
  auto body = [](int i) { return i >= 0 ? BodyId{static_cast<std::uint32_t>(i)} : BodyId{}; };
  return {body(j.a), body(j.b)};
}

JointType World::joint_type(JointId id) const {
  impl_->check_joint(id);
  return impl_->joints[id.index].type;
}

}  // namespace mabd
