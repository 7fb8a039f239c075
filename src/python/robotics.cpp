// Robotics helpers of the Python module (include/mabd/robotics.h): the arm chain of an end
// effector, inverse kinematics, chain forward kinematics and straight Cartesian lines.
#include "python/bindings.h"

namespace mabd::python {

namespace {

std::vector<JointId> chain_of(const PyWorld& w, const py::list& joints) {
  std::vector<JointId> out;
  for (const auto& j : joints) out.push_back(w.joint(j));
  return out;
}

Pose pose_of(const Vec3& p, const Vec4& q) { return Pose{p, vec_to_quat(q).normalized()}; }

}  // namespace

void bind_robotics(py::module_& m) {
  m.def(
      "arm_chain",
      [](const PyWorld& w, const py::object& body) {
        std::vector<std::uint32_t> out;
        for (JointId j : arm_chain(w.world, w.body(body))) out.push_back(j.index);
        return out;
      },
      py::arg("world"), py::arg("end_effector"),
      "Ids of the hinge and prismatic joints from the fixed base (a static or kinematic body, "
      "or the world) to `end_effector` (id or name), base first; fixed joints left out.");
  m.def(
      "solve_ik",
      [](const PyWorld& w, const py::list& joints, const py::object& ee, const Vec3& position,
         const std::optional<Vec4>& orientation, const Vec3& tool_position,
         const Vec4& tool_orientation, const std::optional<std::vector<double>>& start,
         int max_iterations, double damping, double position_tolerance,
         double orientation_tolerance, double orientation_weight, double max_step,
         bool respect_limits) {
        IkOptions o;
        o.max_iterations = max_iterations;
        o.damping = damping;
        o.position_tolerance = position_tolerance;
        o.orientation_tolerance = orientation_tolerance;
        o.orientation_weight = orientation ? orientation_weight : 0.0;
        o.max_step = max_step;
        o.respect_limits = respect_limits;
        if (start) o.start = *start;
        const Pose target = pose_of(position, orientation.value_or(Vec4(1, 0, 0, 0)));
        const IkResult r = solve_ik(w.world, chain_of(w, joints), w.body(ee),
                                    pose_of(tool_position, tool_orientation), target, o);
        py::dict out;
        out["positions"] = py::array_t<double>(r.positions.size(), r.positions.data());
        out["position_error"] = r.position_error;
        out["orientation_error"] = r.orientation_error;
        out["iterations"] = r.iterations;
        out["converged"] = r.converged;
        return out;
      },
      py::arg("world"), py::arg("joints"), py::arg("end_effector"), py::arg("position"),
      py::arg("orientation") = py::none(), py::arg("tool_position") = Vec3::Zero(),
      py::arg("tool_orientation") = Vec4(1, 0, 0, 0), py::arg("start") = py::none(),
      py::arg("max_iterations") = 200, py::arg("damping") = 1e-2,
      py::arg("position_tolerance") = 1e-6, py::arg("orientation_tolerance") = 1e-5,
      py::arg("orientation_weight") = 0.2, py::arg("max_step") = 0.2,
      py::arg("respect_limits") = true,
      R"doc(Joint coordinates of `joints` (base first, e.g. arm_chain) that bring the tool frame
(tool_position in m and tool_orientation (w, x, y, z), in the end effector's frame) to
`position` (m, world) and, if given, `orientation` (w, x, y, z), by damped least squares from
`start` (one coordinate per joint) or the world's current configuration. The world is not
changed. Returns a dict: positions (rad or m), position_error (m), orientation_error (rad),
iterations, converged.)doc");
  m.def(
      "chain_pose",
      [](const PyWorld& w, const py::list& joints, const py::object& ee,
         const std::vector<double>& positions, const Vec3& tool_position,
         const Vec4& tool_orientation) {
        const Pose p = chain_pose(w.world, chain_of(w, joints), w.body(ee),
                                  pose_of(tool_position, tool_orientation), positions);
        return py::make_tuple(p.position, quat_to_vec(p.orientation));
      },
      py::arg("world"), py::arg("joints"), py::arg("end_effector"), py::arg("positions"),
      py::arg("tool_position") = Vec3::Zero(), py::arg("tool_orientation") = Vec4(1, 0, 0, 0),
      "(position (m), orientation (w, x, y, z)) of the tool frame with `joints` at `positions`, "
      "every other joint where it is now: the forward kinematics solve_ik inverts.");
  m.def(
      "cartesian_line",
      [](const Vec3& p0, const Vec4& q0, const Vec3& p1, const Vec4& q1, int steps) {
        const std::vector<Pose> line = cartesian_line(pose_of(p0, q0), pose_of(p1, q1), steps);
        py::array_t<double> pos({line.size(), std::size_t{3}}), quat({line.size(), std::size_t{4}});
        for (std::size_t k = 0; k < line.size(); ++k) {
          const Vec4 q = quat_to_vec(line[k].orientation);
          for (int c = 0; c < 3; ++c) pos.mutable_at(k, c) = line[k].position[c];
          for (int c = 0; c < 4; ++c) quat.mutable_at(k, c) = q[c];
        }
        return py::make_tuple(pos, quat);
      },
      py::arg("p0"), py::arg("q0"), py::arg("p1"), py::arg("q1"), py::arg("steps"),
      "steps + 1 poses from (p0, q0) to (p1, q1): positions (m) linear, orientations "
      "(w, x, y, z) by spherical interpolation. Returns (positions (n, 3), quaternions (n, 4)).");
}

}  // namespace mabd::python
