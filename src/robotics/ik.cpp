// Inverse kinematics on a world's current joint frames (include/mabd/robotics.h).
//
// Each chain joint i is a screw xi_i read from the world now: a hinge turns about its axis
// w_i through its anchor q_i, a prismatic joint slides along its axis. With dtheta the change
// of the chain's coordinates from the current ones (product of exponentials, base first):
//   T(dtheta) = exp(xi_1 dtheta_1) ... exp(xi_n dtheta_n) T_0,
// T_0 the tool's world pose now. Its space Jacobian column i is xi_i carried by the joints
// before it. Damped least squares on the stacked error [p* - p; w log(R* R^T)]:
//   dtheta += J^T (J J^T + lambda^2 I)^{-1} e,
// each step shortened to max_step and the coordinates clamped to their limits.
#include "mabd/robotics.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <string>

#include <Eigen/Dense>

#include "mabd/error.h"

namespace mabd {

namespace {

struct Rigid {
  Mat3 R = Mat3::Identity();
  Vec3 p = Vec3::Zero();
  Vec3 apply(const Vec3& x) const { return R * x + p; }
  Rigid operator*(const Rigid& o) const { return {R * o.R, R * o.p + p}; }
};

/// One chain joint as a screw through the current configuration.
struct Screw {
  bool prismatic = false;
  Vec3 axis = Vec3::UnitZ();  ///< unit, world
  Vec3 anchor = Vec3::Zero();  ///< a point on a hinge's axis, world (m)
  double now = 0;              ///< its coordinate now (rad or m)
  bool limited = false;
  double lower = 0, upper = 0;

  Rigid exp(double d) const {
    Rigid t;
    if (prismatic) {
      t.p = axis * d;
    } else {
      t.R = Eigen::AngleAxisd(d, axis).toRotationMatrix();
      t.p = anchor - t.R * anchor;
    }
    return t;
  }
};

std::vector<Screw> screws(const World& world, const std::vector<JointId>& chain) {
  if (chain.empty()) throw InvalidArgument("inverse kinematics: the joint chain is empty");
  std::vector<Screw> out;
  for (JointId j : chain) {
    const JointType type = world.joint_type(j);
    if (type != JointType::Hinge && type != JointType::Prismatic) {
      throw InvalidArgument("inverse kinematics: joint '" + world.joint_name(j) +
                            "' is not a hinge or prismatic joint");
    }
    Screw s;
    const JointFrame f = world.joint_frame(j);
    s.prismatic = type == JointType::Prismatic;
    s.axis = f.axis;
    s.anchor = f.anchor;
    s.now = world.joint_position(j);
    if (const auto lim = world.joint_limits(j)) {
      s.limited = true;
      s.lower = lim->lower;
      s.upper = lim->upper;
    }
    out.push_back(s);
  }
  return out;
}

Rigid tool_now(const World& world, BodyId ee, const Pose& tool) {
  const Pose p = world.pose(ee);
  const Mat3 R = p.orientation.toRotationMatrix();
  return {R * tool.orientation.toRotationMatrix(), p.position + R * tool.position};
}

/// T(dtheta) and, when J is given, the 6 x n Jacobian [linear rows of the tool point;
/// angular rows].
Rigid forward(const std::vector<Screw>& s, const Rigid& t0, const Eigen::VectorXd& d,
              Eigen::MatrixXd* J) {
  Rigid pre;
  std::vector<Rigid> before(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    before[i] = pre;
    pre = pre * s[i].exp(d[static_cast<Eigen::Index>(i)]);
  }
  const Rigid t = pre * t0;
  if (J) {
    J->setZero(6, static_cast<Eigen::Index>(s.size()));
    for (std::size_t i = 0; i < s.size(); ++i) {
      const Vec3 axis = before[i].R * s[i].axis;
      const auto c = static_cast<Eigen::Index>(i);
      if (s[i].prismatic) {
        J->block<3, 1>(0, c) = axis;
      } else {
        const Vec3 q = before[i].apply(s[i].anchor);
        J->block<3, 1>(0, c) = axis.cross(t.p - q);
        J->block<3, 1>(3, c) = axis;
      }
    }
  }
  return t;
}

Vec3 rotation_error(const Mat3& target, const Mat3& R) {
  const Eigen::AngleAxisd aa(Mat3(target * R.transpose()));
  return aa.angle() * aa.axis();
}

bool finite(const Pose& p) {
  return p.position.allFinite() && p.orientation.coeffs().allFinite() &&
         p.orientation.norm() > 0;
}

}  // namespace

std::vector<JointId> arm_chain(const World& world, BodyId end_effector) {
  if (world.body_info(end_effector).kind != BodyKind::Dynamic) {
    throw InvalidArgument("arm_chain: body '" + world.body_info(end_effector).name +
                          "' is not dynamic");
  }
  const std::size_t nb = world.body_count();
  std::vector<std::vector<std::uint32_t>> joints_of(nb);
  for (std::uint32_t j = 0; j < world.joint_count(); ++j) {
    const auto [a, b] = world.joint_bodies(JointId{j});
    if (a.valid()) joints_of[a.index].push_back(j);
    if (b.valid()) joints_of[b.index].push_back(j);
  }
  // Breadth-first from the end effector to the nearest body that does not move (or the world).
  std::vector<std::int64_t> via(nb, -1);  // joint that reached each body
  std::vector<char> seen(nb, 0);
  std::deque<std::uint32_t> todo = {end_effector.index};
  seen[end_effector.index] = 1;
  std::int64_t base_joint = -1;
  std::uint32_t base_body = end_effector.index;
  while (!todo.empty() && base_joint < 0) {
    const std::uint32_t b = todo.front();
    todo.pop_front();
    for (std::uint32_t j : joints_of[b]) {
      const auto [x, y] = world.joint_bodies(JointId{j});
      const BodyId other = x.index == b ? y : x;
      if (!other.valid() || world.body_info(other).kind != BodyKind::Dynamic) {
        base_joint = j;
        base_body = b;
        break;
      }
      if (seen[other.index]) continue;
      seen[other.index] = 1;
      via[other.index] = j;
      todo.push_back(other.index);
    }
  }
  if (base_joint < 0) {
    throw InvalidArgument("arm_chain: no joint path from body '" +
                          world.body_info(end_effector).name +
                          "' to a static or kinematic body or the world");
  }
  std::vector<JointId> chain;
  auto keep = [&](std::uint32_t j) {
    const JointType t = world.joint_type(JointId{j});
    if (t == JointType::Fixed) return;
    if (t != JointType::Hinge && t != JointType::Prismatic) {
      throw InvalidArgument("arm_chain: joint '" + world.joint_name(JointId{j}) +
                            "' on the path is not a hinge, prismatic or fixed joint");
    }
    chain.push_back(JointId{j});
  };
  keep(static_cast<std::uint32_t>(base_joint));
  // From the base body back down to the end effector along the search tree.
  std::vector<std::uint32_t> path;
  for (std::uint32_t b = base_body; via[b] >= 0;) {
    path.push_back(static_cast<std::uint32_t>(via[b]));
    const auto [x, y] = world.joint_bodies(JointId{static_cast<std::uint32_t>(via[b])});
    b = x.index == b ? y.index : x.index;
  }
  for (std::uint32_t j : path) keep(j);
  return chain;
}

Pose chain_pose(const World& world, const std::vector<JointId>& chain, BodyId end_effector,
                const Pose& tool, const std::vector<double>& positions) {
  const std::vector<Screw> s = screws(world, chain);
  if (positions.size() != s.size()) {
    throw InvalidArgument("chain_pose: " + std::to_string(positions.size()) +
                          " positions for " + std::to_string(s.size()) + " joints");
  }
  Eigen::VectorXd d(static_cast<Eigen::Index>(s.size()));
  for (std::size_t i = 0; i < s.size(); ++i) d[static_cast<Eigen::Index>(i)] = positions[i] - s[i].now;
  const Rigid t = forward(s, tool_now(world, end_effector, tool), d, nullptr);
  return Pose{t.p, Quat(t.R).normalized()};
}

IkResult solve_ik(const World& world, const std::vector<JointId>& chain, BodyId end_effector,
                  const Pose& tool, const Pose& target, const IkOptions& o) {
  if (!finite(tool) || !finite(target)) {
    throw InvalidArgument("inverse kinematics: the tool or target pose is not finite");
  }
  if (!(o.damping >= 0) || !(o.max_step > 0) || !(o.orientation_weight >= 0) ||
      o.max_iterations < 1) {
    throw InvalidArgument("inverse kinematics: options out of range (damping >= 0, "
                          "max_step > 0, orientation_weight >= 0, max_iterations >= 1)");
  }
  const std::vector<Screw> s = screws(world, chain);
  const Rigid t0 = tool_now(world, end_effector, tool);
  const Mat3 Rt = target.orientation.normalized().toRotationMatrix();
  const auto n = static_cast<Eigen::Index>(s.size());
  const double w = o.orientation_weight;
  const int rows = w > 0 ? 6 : 3;
  Eigen::VectorXd d = Eigen::VectorXd::Zero(n);
  Eigen::MatrixXd J;
  IkResult r;
  auto clamp = [&] {
    for (Eigen::Index i = 0; o.respect_limits && i < n; ++i) {
      const Screw& x = s[static_cast<std::size_t>(i)];
      if (x.limited) d[i] = std::clamp(x.now + d[i], x.lower, x.upper) - x.now;
    }
  };
  if (!o.start.empty()) {
    if (o.start.size() != s.size()) {
      throw InvalidArgument("inverse kinematics: " + std::to_string(o.start.size()) +
                            " start coordinates for " + std::to_string(s.size()) + " joints");
    }
    for (Eigen::Index i = 0; i < n; ++i) {
      d[i] = o.start[static_cast<std::size_t>(i)] - s[static_cast<std::size_t>(i)].now;
    }
  }
  clamp();  // a start outside the limits starts at them
  // Joints held at a limit by the last step: their column leaves the least-squares problem
  // while the step would push them further out (an active set), so the other joints move.
  auto at_limit_outward = [&](Eigen::Index i, double step) {
    const Screw& x = s[static_cast<std::size_t>(i)];
    if (!o.respect_limits || !x.limited) return false;
    const double v = x.now + d[i];
    return (v <= x.lower && step < 0) || (v >= x.upper && step > 0);
  };
  for (r.iterations = 0;; ++r.iterations) {
    const Rigid t = forward(s, t0, d, &J);
    const Vec3 ep = target.position - t.p, eo = rotation_error(Rt, t.R);
    r.position_error = ep.norm();
    r.orientation_error = eo.norm();
    r.converged = r.position_error <= o.position_tolerance &&
                  (w == 0 || r.orientation_error <= o.orientation_tolerance);
    if (r.converged || r.iterations >= o.max_iterations) break;
    Eigen::VectorXd e(rows);
    e.head<3>() = ep;
    Eigen::MatrixXd Jw(rows, n);
    Jw.topRows<3>() = J.topRows<3>();
    if (w > 0) {
      e.tail<3>() = w * eo;
      Jw.bottomRows<3>() = w * J.bottomRows<3>();
    }
    Eigen::VectorXd step;
    for (int pass = 0; pass < 3; ++pass) {
      Eigen::MatrixXd A = Jw * Jw.transpose();
      A.diagonal().array() += o.damping * o.damping;
      step = Jw.transpose() * A.ldlt().solve(e);
      bool dropped = false;
      for (Eigen::Index i = 0; i < n; ++i) {
        if (Jw.col(i).squaredNorm() > 0 && at_limit_outward(i, step[i])) {
          Jw.col(i).setZero();
          step[i] = 0;
          dropped = true;
        }
      }
      if (!dropped) break;
    }
    const double big = step.cwiseAbs().maxCoeff();
    if (big > o.max_step) step *= o.max_step / big;
    d += step;
    clamp();
  }
  r.positions.resize(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) r.positions[i] = s[i].now + d[static_cast<Eigen::Index>(i)];
  return r;
}

std::vector<Pose> cartesian_line(const Pose& from, const Pose& to, int steps) {
  if (steps < 1) throw InvalidArgument("cartesian_line: steps must be >= 1");
  if (!finite(from) || !finite(to)) throw InvalidArgument("cartesian_line: pose not finite");
  std::vector<Pose> out;
  const Quat a = from.orientation.normalized(), b = to.orientation.normalized();
  for (int k = 0; k <= steps; ++k) {
    const double s = static_cast<double>(k) / steps;
    out.push_back(Pose{(1 - s) * from.position + s * to.position, a.slerp(s, b).normalized()});
  }
  return out;
}

}  // namespace mabd
