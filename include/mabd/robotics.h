// Robot arms on mabd worlds: damped-least-squares inverse kinematics of an end-effector pose
// and straight-line Cartesian motions. The kinematics are read from the world as it is now
// (its joints' anchors, axes and coordinates), so a model loaded from URDF or MJCF, or built
// by hand, needs no separate description.
#pragma once

#include <vector>

#include "mabd/world.h"

namespace mabd {

/// The serial chain of hinge and prismatic joints from a static or kinematic body (or the
/// world) to `end_effector`, base first. Throws InvalidArgument if the body is not dynamic,
/// no such path exists, or a joint on it is not a hinge, prismatic or fixed joint (fixed
/// joints are kept out of the list).
std::vector<JointId> arm_chain(const World& world, BodyId end_effector);

struct IkOptions {
  int max_iterations = 200;
  /// Damping lambda of (J J^T + lambda^2 I) (m, the position units of the task).
  double damping = 1e-2;
  double position_tolerance = 1e-6;     ///< m
  double orientation_tolerance = 1e-5;  ///< rad
  /// Length (m) that turns a rotation error into a position-like one: a 1 rad error weighs
  /// like this many metres. 0 solves for the position only.
  double orientation_weight = 0.2;
  /// Largest change of a joint per iteration (rad or m): keeps the linearisation valid.
  double max_step = 0.2;
  bool respect_limits = true;  ///< keep hinge and prismatic coordinates within their limits
  /// Joint coordinates to start from (one per chain joint); empty: the world's current ones.
  /// A start away from singular poses (a straight arm) converges more often.
  std::vector<double> start;
};

struct IkResult {
  std::vector<double> positions;  ///< joint coordinates (rad or m), one per chain joint
  double position_error = 0;      ///< m, at `positions`
  double orientation_error = 0;   ///< rad, at `positions`
  int iterations = 0;
  bool converged = false;
};

/// Joint coordinates (World::joint_position units) of `chain` (base first, e.g. arm_chain)
/// that bring the frame `tool` (a pose in the end effector's own frame: a point in m and an
/// orientation) to `target` (world frame), starting from the world's current configuration.
/// Damped least squares on the product of exponentials of the joints' current world screws;
/// the world is not changed. Drive the joints to the result (World::set_drive_target) to move
/// there. Throws InvalidArgument on an empty chain or non-finite input.
IkResult solve_ik(const World& world, const std::vector<JointId>& chain, BodyId end_effector,
                  const Pose& tool, const Pose& target, const IkOptions& options = {});

/// World pose of the frame `tool` (in the end effector's frame) with the chain's joints at
/// `positions` (joint_position units), every other joint where it is now. The forward
/// kinematics solve_ik inverts.
Pose chain_pose(const World& world, const std::vector<JointId>& chain, BodyId end_effector,
                const Pose& tool, const std::vector<double>& positions);

/// `steps` + 1 poses on the straight line from `from` to `to` (positions linear, orientations
/// by spherical interpolation), both ends included; steps >= 1.
std::vector<Pose> cartesian_line(const Pose& from, const Pose& to, int steps);

}  // namespace mabd
