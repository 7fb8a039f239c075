// A compiled joint: body-local anchors and axes (computed once from the world-space
// definition), its extras, and the per-type row builders (one file per joint type).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "joints/row.h"
#include "mabd/joint.h"

namespace mabd::detail {

/// Body-local axes of a joint, fixed at its creation.
struct JointAxes {
  Vec3 na, nb;          ///< joint axis in a-local / b-local coordinates (unit)
  Vec3 wa1, wa2;        ///< a-local unit vectors perpendicular to the axis (right-handed)
  Vec3 wb1;             ///< b-local image of wa1 at the reference configuration
  Vec3 wb2;             ///< b-local image of wa2 at the reference configuration
  Vec3 ea[3], eb[3];    ///< a-local / b-local images of the world frame (rotation locks)
  Vec3 ua, vb;          ///< universal: axes[0] in a-local, axes[1] in b-local
};

/// Optional extras of a joint, fixed at its creation.
struct JointExtras {
  std::optional<JointLimits> limits;
  std::optional<ConeLimits> cone;
  std::optional<JointSpring> spring;
  std::optional<JointDrive> drive;
  double effort_limit = INFINITY;  ///< N m or N: caps drive->max_force
  /// Principal second moments (kg m^2) of bodies a and b (ones for a side that cannot move):
  /// the weights of the rigid frames the limits act on (extra_rows).
  Vec3 sigma_a = Vec3::Ones(), sigma_b = Vec3::Ones();
};

struct JointModel {
  std::string name;
  JointType type = JointType::Ball;
  int a = -1, b = -1;   ///< body indices; -1 = the world (q = [I; 0])
  int base_rows = 0;    ///< rows of the joint type itself
  double L = 1;         ///< length scale of angular rows (m)
  Vec3 pa, pb;          ///< anchor in a-local / b-local coordinates (m)
  /// Body-local axes; null on plain ball joints (no cone limit, no spring), which use none
  /// (a million-link chain saves 400 bytes per joint).
  std::shared_ptr<const JointAxes> ax;
  /// Limits, spring and drive; null when the joint has none (extras() reads them).
  std::shared_ptr<const JointExtras> ex;
  const JointExtras& extras() const {
    static const JointExtras kNone;
    return ex ? *ex : kNone;
  }
  double compliance = 0;

  // State carried between steps.
  double coord_prev = 0;   ///< joint coordinate at the start of the step (unwrapped)
  double twist_prev = 0;   ///< ball twist angle at the start of the step (unwrapped)
  Vec3 bend_prev = Vec3::Zero();  ///< ball spring: relative rotation at the start of the step (rad)
  JointWrench wrench;      ///< at the end of the last step (from its multipliers)
};

/// Rows of the joint type itself (ball 3, hinge 5, universal 4, prismatic 5, fixed 6).
void ball_rows(const JointModel& j, const Vec12& qa, const Vec12& qb, std::vector<Row>& out);
void hinge_rows(const JointModel& j, const Vec12& qa, const Vec12& qb, std::vector<Row>& out);
void universal_rows(const JointModel& j, const Vec12& qa, const Vec12& qb, std::vector<Row>& out);
void prismatic_rows(const JointModel& j, const Vec12& qa, const Vec12& qb, std::vector<Row>& out);
void fixed_rows(const JointModel& j, const Vec12& qa, const Vec12& qb, std::vector<Row>& out);

/// Ball spring: the relative rotation angles (rad, small-angle, one per rotation lock row).
Vec3 ball_bend(const JointModel& j, const Vec12& qa, const Vec12& qb);

/// The dot rows L (A_a u_i) . (A_b v_i) = 0 that follow the point rows of a hinge (2),
/// universal (1) or fixed joint (3): sets u[i], v[i] (body-local unit vectors of j.ax) and
/// returns their count; 0 for a ball joint, -1 for a prismatic joint (no point rows).
int dot_pairs(const JointModel& j, const Vec3* u[3], const Vec3* v[3]);
/// The pairs of each type, in its own file (hinge.cpp, universal.cpp, fixed.cpp).
int hinge_dot_pairs(const JointModel& j, const Vec3* u[3], const Vec3* v[3]);
int universal_dot_pairs(const JointModel& j, const Vec3* u[3], const Vec3* v[3]);
int fixed_dot_pairs(const JointModel& j, const Vec3* u[3], const Vec3* v[3]);
/// The point rows and then the dot rows of dot_pairs (hinge, universal and fixed joints).
void add_point_and_dot_rows(const JointModel& j, const Vec12& qa, const Vec12& qb,
                            std::vector<Row>& out);

/// |C|_inf of the joint's type rows at (qa, qb) (m): the point and dot rows' values without
/// their gradients; a prismatic joint's rows are built in `scratch`.
double type_residual(const JointModel& j, const Vec12& qa, const Vec12& qb,
                     std::vector<Row>& scratch);

/// Dispatches to the builder of j.type.
void type_rows(const JointModel& j, const Vec12& qa, const Vec12& qb, std::vector<Row>& out);

/// Joint coordinate: hinge angle (rad) or prismatic slide (m) with its gradient, unwrapped
/// next to `near` (hinge). Returns false for other joint types.
bool joint_coordinate(const JointModel& j, const Vec12& qa, const Vec12& qb, double near,
                      double& value, Vec12& ga, Vec12& gb);

/// The value of joint_coordinate alone (rad or m), without its gradient.
bool joint_coordinate_value(const JointModel& j, const Vec12& qa, const Vec12& qb, double near,
                            double& value);

/// The value of twist_angle alone (rad), without its gradient.
double twist_value(const JointModel& j, const Vec12& qa, const Vec12& qb, double near);

/// Angle of body b about the joint axis relative to body a (rad), unwrapped next to `near`,
/// and its gradient: atan2((A_a wa2) . (A_b wb1), (A_a wa1) . (A_b wb1)).
void twist_angle(const JointModel& j, const Vec12& qa, const Vec12& qb, double near, double& value,
                 Vec12& ga, Vec12& gb);

/// Energy stored in the joint at (qa, qb) (J): its spring, 1/2 k (theta - rest)^2 on a hinge
/// or prismatic coordinate and 1/2 k |bend|^2 on a ball joint (the energies the spring rows
/// minimise), plus 1/2 C^2 / compliance over its type rows when it is compliant. Drives and
/// limits store none. `scratch` holds the type rows of a compliant joint.
double joint_stored_energy(const JointModel& j, const Vec12& qa, const Vec12& qb,
                           std::vector<Row>& scratch);

/// Rows of limits, springs and drives at the current iterate (joint_extras.cpp). Springs and
/// drives act on the joint coordinate of the bodies' material axes (joint_coordinate);
/// limits, which stop the bodies, on the relative orientation of their rigid frames (the
/// mass-weighted best-fit rotations polar(A diag(sigma)), see joint_extras.cpp).
/// `coord_start` is the joint coordinate at the start of the step, h the time step (s).
void extra_rows(const JointModel& j, const Vec12& qa, const Vec12& qb, double h,
                std::vector<Row>& out);

}  // namespace mabd::detail
