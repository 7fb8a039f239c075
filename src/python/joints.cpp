// Joints: definitions, limits, springs, drives, and the joint outputs (wrench, coordinates).
#include "python/bindings.h"

namespace mabd::python {

namespace {

/// A body id of a joint definition: None (the world) or the body's index.
py::object body_ref(BodyId id) {
  return id.valid() ? py::object(py::int_(id.index)) : py::object(py::none());
}

BodyId body_id(const py::object& ref, const char* field) {
  if (ref.is_none()) return BodyId{};
  if (!py::isinstance<py::int_>(ref)) {
    throw InvalidArgument(std::string("JointDef.") + field +
                          ": expected a body id (int) or None (the world)");
  }
  const long long index = ref.cast<long long>();
  if (index < 0 || index >= static_cast<long long>(UINT32_MAX)) {
    throw InvalidArgument(std::string("JointDef.") + field + ": body id " + std::to_string(index) +
                          " out of range");
  }
  return BodyId{static_cast<std::uint32_t>(index)};
}

}  // namespace

void bind_joints(py::module_& m) {
  py::enum_<JointType>(m, "JointType")
      .value("Ball", JointType::Ball, "3 rows: anchors coincide")
      .value("Hinge", JointType::Hinge, "5 rows: rotation about `axis` free")
      .value("Universal", JointType::Universal, "4 rows: rotations about axes[0], axes[1] free")
      .value("Prismatic", JointType::Prismatic, "5 rows: slide along `axis` free")
      .value("Fixed", JointType::Fixed, "6 rows: no relative motion");
  py::enum_<DriveMode>(m, "DriveMode")
      .value("Position", DriveMode::Position)
      .value("Velocity", DriveMode::Velocity)
      .value("Effort", DriveMode::Effort);

  StructBinder<JointLimits> limits(m, "JointLimits",
                                   "Range of a hinge angle (rad) or prismatic slide (m).");
  limits.field("lower", &JointLimits::lower, "rad or m")
      .field("upper", &JointLimits::upper, "rad or m, >= lower")
      .finish();

  StructBinder<ConeLimits> cone(m, "ConeLimits", "Ball-joint swing cone and twist range.");
  cone.field("swing", &ConeLimits::swing, "rad, in (0, pi)")
      .field("twist_lower", &ConeLimits::twist_lower, "rad or None")
      .field("twist_upper", &ConeLimits::twist_upper, "rad or None")
      .finish();

  StructBinder<JointSpring> spring(m, "JointSpring",
                                   "Spring-damper on the joint coordinate: hinge N m/rad and "
                                   "N m s/rad, prismatic N/m and N s/m, towards `rest`.");
  spring.field("stiffness", &JointSpring::stiffness, "N m/rad or N/m")
      .field("damping", &JointSpring::damping, "N m s/rad or N s/m")
      .field("rest", &JointSpring::rest, "rad or m (ball joints: 0)")
      .finish();

  StructBinder<JointDrive> drive(m, "JointDrive",
                                 "Actuator on a hinge or prismatic coordinate; its force (N) or "
                                 "torque (N m) is clamped to +-max_force.");
  drive.field("mode", &JointDrive::mode, "DriveMode")
      .field("target", &JointDrive::target, "rad or m (position), rad/s or m/s (velocity)")
      .field("stiffness", &JointDrive::stiffness, "N m/rad or N/m (0 with damping 0: rigid)")
      .field("damping", &JointDrive::damping, "N m s/rad or N s/m")
      .field("max_force", &JointDrive::max_force, "N m or N, > 0")
      .finish();

  StructBinder<JointDef> def(m, "JointDef",
                             "Everything needed to create a joint. Anchor and axes are in "
                             "WORLD coordinates at the bodies' configuration when the joint is "
                             "added.");
  def.field("name", &JointDef::name, "name (unique names can be looked up)")
      .field("type", &JointDef::type, "JointType")
      .property(
          "body_a", [](const JointDef& d) { return body_ref(d.body_a); },
          [](JointDef& d, const py::object& v) { d.body_a = body_id(v, "body_a"); },
          "first body id, or None for the world")
      .property(
          "body_b", [](const JointDef& d) { return body_ref(d.body_b); },
          [](JointDef& d, const py::object& v) { d.body_b = body_id(v, "body_b"); },
          "second body id, or None for the world")
      .field("anchor", &JointDef::anchor, "joint point, world (m)")
      .field("axis", &JointDef::axis, "hinge / prismatic axis, ball cone axis (world)")
      .field("axes", &JointDef::axes, "universal joint axes (two 3-vectors, world)")
      .field("limits", &JointDef::limits, "JointLimits or None (hinge, prismatic)")
      .field("cone", &JointDef::cone, "ConeLimits or None (ball)")
      .field("spring", &JointDef::spring, "JointSpring or None")
      .field("drive", &JointDef::drive, "JointDrive or None (hinge, prismatic)")
      .field("effort_limit", &JointDef::effort_limit,
             "hinge / prismatic: largest drive torque (N m) or force (N); inf = none")
      .field("compliance", &JointDef::compliance, "compliance of every row (m/N); 0 = exact")
      .property(
          "frames",
          [](const JointDef& d) -> py::object {
            if (!d.frames) return py::none();
            auto side = [](const Pose& p) {
              return py::make_tuple(p.position, quat_to_vec(p.orientation));
            };
            return py::make_tuple(side(d.frames->a), side(d.frames->b));
          },
          [](JointDef& d, const py::object& v) {
            if (v.is_none()) {
              d.frames.reset();
              return;
            }
            const auto sides = v.cast<std::pair<std::pair<Vec3, Vec4>, std::pair<Vec3, Vec4>>>();
            JointFrames f;
            f.a = Pose{sides.first.first, vec_to_quat(sides.first.second).normalized()};
            f.b = Pose{sides.second.first, vec_to_quat(sides.second.second).normalized()};
            d.frames = f;
          },
          "None, or ((position, (w, x, y, z)) in body_a's frame, (position, (w, x, y, z)) in "
          "body_b's frame): the joint defined by a frame fixed in each body (m), its coordinate "
          "zero where the frames coincide; anchor and axes are then ignored")
      .finish();

  StructBinder<JointWrench> wrench(m, "JointWrench",
                                   "Wrench a joint applied to its second body (or to the first "
                                   "if the second is the world) at the anchor, world frame.");
  wrench.field("force", &JointWrench::force, "N")
      .field("torque", &JointWrench::torque, "N m about the current anchor")
      .finish();

  StructBinder<JointCoordinates> coords(
      m, "JointCoordinates",
      "Coordinates and rates of a joint, parent = body_a, child = body_b, parent frame. hinge: "
      "angle (rad); prismatic: slide (m); universal: (theta1, theta2) (rad); ball: rotation "
      "vector (rad) and relative angular velocity (rad/s); fixed: none.");
  coords.field("dofs", &JointCoordinates::dofs, "1, 2, 3 or 0")
      .field("position", &JointCoordinates::position, "3 values; unused entries 0")
      .field("velocity", &JointCoordinates::velocity, "3 values; unused entries 0")
      .quat("rotation", &JointCoordinates::rotation,
            "child relative to parent since the joint was added (w, x, y, z)")
      .field("angular_velocity", &JointCoordinates::angular_velocity,
             "child relative to parent, parent frame (rad/s)")
      .finish();
}

}  // namespace mabd::python
