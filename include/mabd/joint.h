// Joint definitions: constraints between two bodies, or a body and the world, enforced
// exactly by the dual (KKT) solve.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "mabd/ids.h"
#include "mabd/math.h"

namespace mabd {

/// Id of a joint in a World (dense, stable).
struct JointId {
  std::uint32_t index = UINT32_MAX;
  constexpr bool valid() const { return index != UINT32_MAX; }
  friend constexpr bool operator==(JointId a, JointId b) { return a.index == b.index; }
};

enum class JointType {
  Ball,       ///< 3 rows: the anchor points coincide; all rotations free
  Hinge,      ///< 5 rows: ball + the bodies' axes stay parallel; rotation about `axis` free
  Universal,  ///< 4 rows: ball + axes[0] (on the first body) stays perpendicular to axes[1]
              ///< (on the second body); rotations about both free
  Prismatic,  ///< 5 rows: relative rotation locked, the anchors stay on the line `axis`
  Fixed,      ///< 6 rows: no relative motion
};

/// Range of the joint coordinate: hinge angle (rad) or prismatic slide (m).
struct JointLimits {
  double lower = 0;  ///< rad or m
  double upper = 0;  ///< rad or m, >= lower
};

/// Ball-joint cone limit: the angle between the joint axis carried by the first body and the
/// one carried by the second body stays below `swing`; the twist about that axis stays within
/// [twist_lower, twist_upper].
struct ConeLimits {
  double swing = 0;               ///< rad, in (0, pi)
  std::optional<double> twist_lower;  ///< rad
  std::optional<double> twist_upper;  ///< rad
};

/// Spring and damper on the joint coordinate (hinge: N m/rad and N m s/rad; prismatic: N/m
/// and N s/m), towards `rest` (rad or m). Treated implicitly. On a ball joint it is an angular
/// spring-damper (N m/rad, N m s/rad) on the relative rotation away from the relative
/// orientation the bodies had when the joint was added (bending and twist alike, e.g. branch
/// stiffness); `rest` must then be 0.
struct JointSpring {
  double stiffness = 0;
  double damping = 0;
  double rest = 0;
};

enum class DriveMode { Position, Velocity, Effort };

/// Actuator on the joint coordinate. Position: a spring-damper towards `target` (rad or m).
/// Velocity: a damper towards the rate `target` (rad/s or m/s); without a `damping` gain it is
/// a rigid motor. Effort: a motor applying `target` itself as the joint force (N, prismatic)
/// or torque (N m, hinge), equal and opposite on the two bodies, held over each step (MJCF's
/// `motor`: target = gear * ctrl); it takes no gains. The force (N) or torque (N m) a drive
/// applies is clamped to +-max_force, and to the joint's JointDef::effort_limit.
struct JointDrive {
  DriveMode mode = DriveMode::Position;
  double target = 0;
  double stiffness = 0;   ///< position mode (N m/rad or N/m); 0 with damping 0 = rigid
  double damping = 0;     ///< N m s/rad or N s/m; 0 in velocity mode = rigid motor
  double max_force = INFINITY;  ///< N m or N, > 0
};

/// Joint frames fixed in the two bodies (as URDF, MJCF and Jolt define joints): each is given
/// in its body's own (user) frame, or in the world frame for a side that is the world.
struct JointFrames {
  Pose a;  ///< joint frame in body_a's frame (m, rotation)
  Pose b;  ///< joint frame in body_b's frame (m, rotation)
};

/// Everything needed to create a joint. Anchor and axes are given in WORLD coordinates at the
/// bodies' current configuration; the world turns them into body-local quantities. Or, with
/// `frames`, in each body's own frame.
struct JointDef {
  std::string name;
  JointType type = JointType::Ball;
  BodyId body_a;                         ///< first body; invalid id = the world
  BodyId body_b;                         ///< second body; invalid id = the world
  Vec3 anchor = Vec3::Zero();            ///< joint point, world (m)
  Vec3 axis = Vec3::UnitZ();             ///< hinge / prismatic axis, ball cone axis (world)
  std::array<Vec3, 2> axes = {Vec3::UnitX(), Vec3::UnitY()};  ///< universal axes (world)
  std::optional<JointLimits> limits;     ///< hinge / prismatic
  std::optional<ConeLimits> cone;        ///< ball
  std::optional<JointSpring> spring;     ///< hinge / prismatic
  std::optional<JointDrive> drive;       ///< hinge / prismatic
  /// Defines the joint by a frame in each body instead of `anchor`, `axis` and `axes` (then
  /// ignored): the anchor is the frames' origin, the hinge / prismatic / cone axis their z
  /// axis, the universal axes frame a's x axis and frame b's y axis. The joint coordinates are
  /// zero (and the ball spring at rest) where the two frames coincide, not in the
  /// configuration the bodies have when the joint is added; that configuration must satisfy
  /// the joint's constraints (to 1e-6 of the joint's length scale and 1e-6 rad). A hinge
  /// added more than pi from its zero reads its angle in (-pi, pi] at first.
  std::optional<JointFrames> frames;
  /// Hinge / prismatic: the largest torque (N m) or force (N) any drive on the joint applies
  /// (URDF's `effort`); a drive's max_force is capped to it. Infinite: no limit.
  double effort_limit = INFINITY;
  /// Compliance of every row (m/N): 0 = exact. Makes the joint soft and regularises
  /// redundant rows.
  double compliance = 0;
};

/// Wrench a joint applies to its second body (or, if that is the world, to its first body),
/// at the joint anchor, world frame.
struct JointWrench {
  Vec3 force = Vec3::Zero();   ///< N
  Vec3 torque = Vec3::Zero();  ///< N m, about the current anchor point
};

/// Coordinates and rates of a joint (World::joint_coordinates). The parent is the joint's
/// first body (body_a), the child its second (body_b); if body_a is the world, the parent
/// frame is the world frame, if body_b is, the child is the world. Frames are the bodies' own
/// (user) frames, those of World::pose. Zero coordinates are the configuration in which the
/// joint was added, or, for a joint defined by JointDef::frames, where its frames coincide.
///  - hinge: position[0] = angle (rad) about the axis, velocity[0] its rate (rad/s);
///  - prismatic: position[0] = slide (m) along the axis, velocity[0] its rate (m/s);
///  - universal: position = (theta1, theta2) (rad): the relative rotation is
///    Rot(u, theta1) Rot(v, theta2), u = axes[0] carried by the parent, v = axes[1] where it
///    was at creation, both in the parent frame; velocity = their rates (rad/s);
///  - ball: position = rotation vector (rad, parent frame) of `rotation`, velocity = angular
///    velocity (rad/s) of the child relative to the parent, in the parent frame (not the
///    rate of the rotation vector);
///  - fixed: no coordinates.
struct JointCoordinates {
  int dofs = 0;  ///< hinge, prismatic 1; universal 2; ball 3; fixed 0
  std::array<double, 3> position = {0, 0, 0};  ///< unused entries are 0
  std::array<double, 3> velocity = {0, 0, 0};  ///< unused entries are 0
  /// Every type: the rotation of the child relative to the parent since the joint was added,
  /// in the parent frame (R_a^T R_b times the inverse of its value at creation).
  Quat rotation = Quat::Identity();
  /// Every type: angular velocity (rad/s) of the child relative to the parent, parent frame.
  Vec3 angular_velocity = Vec3::Zero();
};

}  // namespace mabd
