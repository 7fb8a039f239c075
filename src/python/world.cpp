// The World class: construction, bodies and joints, stepping, per-body and per-joint queries,
// loads, kinematic targets and joint control.
#include <string>

#include "python/bindings.h"

namespace mabd::python {

namespace {

/// "bodies", "joints", "soft bodies".
std::string plural_of(const std::string& kind) {
  return kind.back() == 'y' ? kind.substr(0, kind.size() - 1) + "ies" : kind + "s";
}

/// Index of a body, joint or soft body given by its index or name: `kind` names it in messages
/// ("body", "joint", "soft body"), `find` looks a name up, `count` is how many there are.
template <class Find>
std::uint32_t resolve(const py::handle& ref, const char* kind, Find find, std::size_t count) {
  if (py::isinstance<py::str>(ref)) {
    const std::string name = ref.cast<std::string>();
    if (auto id = find(name)) return id->index;
    throw InvalidArgument(std::string("no ") + kind + " named '" + name + "'");
  }
  if (!py::isinstance<py::int_>(ref)) {
    throw InvalidArgument(std::string("a ") + kind +
                          " is given by its id (int) or name (str), not " +
                          std::string(py::str(py::type::of(ref).attr("__name__"))));
  }
  const long long index = ref.cast<long long>();
  if (index < 0 || index >= static_cast<long long>(count)) {
    throw InvalidArgument(std::string("unknown ") + kind + " id " + std::to_string(index) +
                          " (world has " + std::to_string(count) + " " + plural_of(kind) + ")");
  }
  return static_cast<std::uint32_t>(index);
}

}  // namespace

BodyId PyWorld::body(const py::handle& ref) const {
  return BodyId{resolve(
      ref, "body", [&](const std::string& n) { return world.find_body(n); }, world.body_count())};
}

JointId PyWorld::joint(const py::handle& ref) const {
  return JointId{resolve(
      ref, "joint", [&](const std::string& n) { return world.find_joint(n); },
      world.joint_count())};
}

SoftBodyId PyWorld::soft_body(const py::handle& ref) const {
  return SoftBodyId{resolve(
      ref, "soft body", [&](const std::string& n) { return world.find_soft_body(n); },
      world.soft_body_count())};
}

void PyWorld::check_no_views(const char* what) const {
  if (live_views > 0) {
    throw py::buffer_error(std::string(what) + ": " + std::to_string(live_views) +
                           " numpy view(s) of the world's q/qdot exist and this call may move "
                           "that storage; delete them or use copies (q.copy())");
  }
}

std::uint32_t add_body(PyWorld& w, const PyBodyDef& def) {
  w.check_no_views("add_body");
  const BodyId id = w.world.add_body(def);
  w.defs.push_back(def);
  w.ops.append(py::make_tuple("body", def));
  return id.index;
}

std::uint32_t add_joint(PyWorld& w, const JointDef& def) {
  const JointId id = w.world.add_joint(def);
  if (w.has_moved && w.added_after_motion.empty()) w.added_after_motion = "a joint";
  w.ops.append(py::make_tuple("joint", def));
  return id.index;
}

void exclude_collision(PyWorld& w, BodyId a, BodyId b) {
  w.world.exclude_collision(a, b);
  w.ops.append(py::make_tuple("exclude", a.index, b.index));
}

namespace {

/// Settings from an optional WorldSettings and keyword overrides (`World(dt=1e-3)`).
WorldSettings settings_from(const py::object& base, const py::kwargs& kwargs) {
  const py::object fresh = py::cast(base.is_none() ? WorldSettings{} : base.cast<WorldSettings>());
  for (const auto& [key, value] : kwargs) {
    const std::string k = py::str(key);
    if (!py::hasattr(fresh, k.c_str()) || k.rfind("__", 0) == 0) {
      throw py::type_error("World(): unknown setting '" + k + "'");
    }
    py::setattr(fresh, key, value);
  }
  return fresh.cast<WorldSettings>();
}

/// Steps n times with the GIL released, checking for Ctrl-C every so often.
void step_n(PyWorld& w, long long n) {
  if (n < 0) throw InvalidArgument("step: n must be >= 0, got " + std::to_string(n));
  if (w.stepping.exchange(true)) {
    throw py::value_error("step: the world is already stepping in another thread");
  }
  struct Done {
    PyWorld& w;
    ~Done() { w.stepping = false; }
  } done{w};
  if (n > 0) w.has_moved = true;
  const Vec12* q = w.world.coordinates_data();
  const Vec12* qdot = w.world.velocities_data();
  {
    py::gil_scoped_release release;
    for (long long i = 0; i < n; ++i) {
      w.world.step();
      if ((i + 1) % 256 == 0 && i + 1 < n) {
        py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      }
    }
  }
  if (w.live_views > 0 && (q != w.world.coordinates_data() || qdot != w.world.velocities_data())) {
    throw std::logic_error("step moved the state storage while numpy views of it exist");
  }
}

/// A query of one body, given by id or name: `world.f(body)`.
template <class R>
auto body_query(R (World::*f)(BodyId) const) {
  return [f](const PyWorld& w, const py::object& b) { return (w.world.*f)(w.body(b)); };
}

/// A query of one joint, given by id or name.
template <class R>
auto joint_query(R (World::*f)(JointId) const) {
  return [f](const PyWorld& w, const py::object& j) { return (w.world.*f)(w.joint(j)); };
}

/// A query of one body, or (body None) its total over all bodies.
template <class R>
auto body_or_total(R (World::*one)(BodyId) const, R (World::*all)() const) {
  return [one, all](const PyWorld& w, const py::object& b) {
    return b.is_none() ? (w.world.*all)() : (w.world.*one)(w.body(b));
  };
}

template <class F>
py::array_t<double> per_body_vec3(const PyWorld& w, F f) {
  const std::size_t n = w.world.body_count();
  py::array_t<double> out({static_cast<py::ssize_t>(n), py::ssize_t{3}});
  auto a = out.mutable_unchecked<2>();
  for (std::size_t i = 0; i < n; ++i) {
    const Vec3 v = f(BodyId{static_cast<std::uint32_t>(i)});
    for (int k = 0; k < 3; ++k) a(static_cast<py::ssize_t>(i), k) = v[k];
  }
  return out;
}

}  // namespace

void bind_world(py::module_& m, py::class_<PyWorld>& cls) {
  (void)m;
  cls.def(py::init([](const py::object& settings, const py::kwargs& kwargs) {
            return std::make_unique<PyWorld>(settings_from(settings, kwargs));
          }),
          py::arg("settings") = py::none(),
          "World(settings=None, **overrides): an empty world. `settings` is a WorldSettings; "
          "keywords override its fields (World(dt=1e-3, gravity=(0, 0, -9.81))). ValueError "
          "names a bad setting.")
      .def("add_body", &add_body, py::arg("body_def"),
           "Validates and adds a body; returns its id. ValueError names the body and field.")
      .def("add_joint", &add_joint, py::arg("joint_def"),
           "Validates and adds a joint (anchor and axes in world coordinates at the bodies' "
           "current configuration); returns its id. ValueError names the joint and problem.")
      .def(
          "exclude_collision",
          [](PyWorld& w, const py::object& a, const py::object& b) {
            exclude_collision(w, w.body(a), w.body(b));
          },
          py::arg("a"), py::arg("b"), "Bodies a and b never collide with each other.")
      .def(
          "reserve",
          [](PyWorld& w, std::size_t bodies, std::size_t joints) {
            w.check_no_views("reserve");
            w.world.reserve(bodies, joints);
            w.defs.reserve(bodies);
          },
          py::arg("bodies"), py::arg("joints"), "Reserves storage for this many bodies/joints.")
      .def("step", &step_n, py::arg("n") = 1,
           "Advances n steps of settings.dt (s) with the GIL released. Raises SimulationError "
           "(a RuntimeError) naming step, body and quantity if the state diverges; the state "
           "is then that of the last valid step.")
      // ---- model facts -----------------------------------------------------------------------
      .def_property_readonly(
          "settings", [](const PyWorld& w) { return w.world.settings(); },
          "a copy of the WorldSettings")
      .def_property_readonly(
          "dt", [](const PyWorld& w) { return w.world.settings().dt; }, "time step (s)")
      .def_property_readonly(
          "time", [](const PyWorld& w) { return w.world.time(); }, "simulated time (s)")
      .def_property_readonly("step_count", [](const PyWorld& w) { return w.world.step_count(); })
      .def_property_readonly("body_count", [](const PyWorld& w) { return w.world.body_count(); })
      .def_property_readonly("joint_count", [](const PyWorld& w) { return w.world.joint_count(); })
      .def_property_readonly("constraint_rows",
                             [](const PyWorld& w) { return w.world.constraint_rows(); })
      .def_property_readonly(
          "last_step", [](const PyWorld& w) { return w.world.last_step(); },
          "StepStats of the last step")
      .def_property_readonly(
          "warnings", [](const PyWorld& w) { return w.world.warnings(); },
          "remarks collected while building")
      .def(
          "topology", [](const PyWorld& w) { return w.world.topology(); },
          "Connected components of the joint graph (list of ComponentSummary).")
      .def("factor_count", [](const PyWorld& w) { return w.world.factor_count(); })
      .def("body_info", body_query(&World::body_info), py::arg("body"),
           "BodyInfo of a body (id or name).")
      .def(
          "find_body",
          find_query(&World::find_body),
          py::arg("name"), "Id of the body named `name`, or None.")
      .def(
          "find_joint",
          find_query(&World::find_joint),
          py::arg("name"), "Id of the joint named `name`, or None.")
      .def("joint_name", joint_query(&World::joint_name), py::arg("joint"))
      .def_property_readonly(
          "body_names",
          [](const PyWorld& w) {
            std::vector<std::string> names;
            for (std::size_t i = 0; i < w.world.body_count(); ++i) {
              names.push_back(w.world.body_info(BodyId{static_cast<std::uint32_t>(i)}).name);
            }
            return names;
          },
          "names of the bodies, id order")
      // ---- per-body queries (world frame, SI) -------------------------------------------------
      .def("pose", body_query(&World::pose), py::arg("body"),
           "Pose of the body's own frame (orientation: polar rotation of A).")
      .def("com_position", body_query(&World::com_position), py::arg("body"), "Centre of mass (m).")
      .def(
          "twist",
          [](const PyWorld& w, const py::object& b) {
            const Twist t = w.world.twist(w.body(b));
            return py::make_tuple(t.angular, t.linear);
          },
          py::arg("body"), "(angular (rad/s), linear velocity of the COM (m/s)), world axes.")
      .def("affine_matrix", body_query(&World::affine_matrix), py::arg("body"),
           "The 3x3 affine matrix A.")
      .def("coordinates", body_query(&World::coordinates), py::arg("body"),
           "q = [a1; a2; a3; t] of one body (a copy).")
      .def("velocities", body_query(&World::velocities), py::arg("body"),
           "dq/dt of one body (a copy).")
      .def("rigidity_deviation", body_query(&World::rigidity_deviation), py::arg("body"),
           "|A^T A - I|_F (dimensionless).")
      .def("elastic_energy", body_query(&World::elastic_energy), py::arg("body"), "J")
      .def("kinetic_energy", body_or_total<double>(&World::kinetic_energy, &World::kinetic_energy),
           py::arg("body") = py::none(), "J, of one body or (None) of all.")
      .def("potential_energy",
           body_or_total<double>(&World::potential_energy, &World::potential_energy),
           py::arg("body") = py::none(),
           "J: gravity (zero at the origin) + elastic; the total (None) adds joint_energy() and "
           "contact_energy().")
      .def("joint_energy", [](const PyWorld& w) { return w.world.joint_energy(); },
           "J stored in the joints: springs (1/2 k (theta - rest)^2, ball 1/2 k |bend|^2) and "
           "compliant joints (1/2 C^2 / compliance).")
      .def("contact_energy", [](const PyWorld& w) { return w.world.contact_energy(); },
           "J stored in the penalty contacts' springs (normal 1/2 k d^2, friction 1/2 k s^2 on "
           "the anchor); 0 for the exact model.")
      .def("linear_momentum", body_or_total<Vec3>(&World::linear_momentum, &World::linear_momentum),
           py::arg("body") = py::none(), "kg m/s")
      .def("angular_momentum",
           body_or_total<Vec3>(&World::angular_momentum, &World::angular_momentum),
           py::arg("body") = py::none(), "about the world origin, kg m^2/s")
      // ---- all bodies at once (copies) --------------------------------------------------------
      .def(
          "positions",
          [](const PyWorld& w) {
            return per_body_vec3(w, [&](BodyId id) { return w.world.pose(id).position; });
          },
          "(n, 3) origins of the body frames (m); a copy.")
      .def(
          "orientations",
          [](const PyWorld& w) {
            const std::size_t n = w.world.body_count();
            py::array_t<double> out({static_cast<py::ssize_t>(n), py::ssize_t{4}});
            auto a = out.mutable_unchecked<2>();
            for (std::size_t i = 0; i < n; ++i) {
              const Vec4 v =
                  quat_to_vec(w.world.pose(BodyId{static_cast<std::uint32_t>(i)}).orientation);
              for (int k = 0; k < 4; ++k) a(static_cast<py::ssize_t>(i), k) = v[k];
            }
            return out;
          },
          "(n, 4) body frame -> world rotations (w, x, y, z); a copy.")
      .def(
          "com_positions",
          [](const PyWorld& w) {
            return per_body_vec3(w, [&](BodyId id) { return w.world.com_position(id); });
          },
          "(n, 3) centres of mass (m); a copy.")
      .def(
          "linear_velocities",
          [](const PyWorld& w) {
            return per_body_vec3(w, [&](BodyId id) { return w.world.twist(id).linear; });
          },
          "(n, 3) velocities of the centres of mass (m/s, world); a copy.")
      .def(
          "angular_velocities",
          [](const PyWorld& w) {
            return per_body_vec3(w, [&](BodyId id) { return w.world.twist(id).angular; });
          },
          "(n, 3) angular velocities (rad/s, world axes); a copy.")
      // ---- loads and kinematic targets --------------------------------------------------------
      .def(
          "apply_wrench",
          [](PyWorld& w, const py::object& b, const Vec3& force, const Vec3& torque) {
            w.world.apply_wrench(w.body(b), force, torque);
          },
          py::arg("body"), py::arg("force") = Vec3::Zero(), py::arg("torque") = Vec3::Zero(),
          "For the next step only: force (N, world) through the COM and torque (N m, world). "
          "Dynamic bodies only.")
      .def(
          "apply_force_at",
          [](PyWorld& w, const py::object& b, const Vec3& force, const Vec3& point) {
            w.world.apply_force_at(w.body(b), force, point);
          },
          py::arg("body"), py::arg("force"), py::arg("point"),
          "For the next step only: force (N, world) at a world point (m).")
      .def(
          "set_kinematic_target",
          [](PyWorld& w, const py::object& b, const Vec3& position, const Vec4& orientation) {
            w.world.set_kinematic_target(w.body(b), Pose{position, vec_to_quat(orientation)});
          },
          py::arg("body"), py::arg("position"), py::arg("orientation") = Vec4(1, 0, 0, 0),
          "Kinematic bodies: pose of the body frame (m; (w, x, y, z)) at the end of the next "
          "step.")
      // ---- joints -----------------------------------------------------------------------------
      .def("joint_wrench", joint_query(&World::joint_wrench), py::arg("joint"),
           "JointWrench applied during the last step (N, N m, world).")
      .def("joint_residual", joint_query(&World::joint_residual), py::arg("joint"),
           "|C(q)|_inf of the joint's rows now (m).")
      .def("joint_position", joint_query(&World::joint_position), py::arg("joint"),
           "Hinge angle (rad) or prismatic slide (m); 0 for other types.")
      .def("joint_velocity", joint_query(&World::joint_velocity), py::arg("joint"),
           "Rate of joint_position (rad/s or m/s).")
      .def("joint_coordinates", joint_query(&World::joint_coordinates), py::arg("joint"),
           "JointCoordinates of any joint type.")
      .def(
          "set_drive_target",
          [](PyWorld& w, const py::object& j, double target) {
            w.world.set_drive_target(w.joint(j), target);
          },
          py::arg("joint"), py::arg("target"),
          "Drive target: rad or m (position mode), rad/s or m/s (velocity mode).")
      .def(
          "set_drive_gains",
          [](PyWorld& w, const py::object& j, double k, double c, double max_force) {
            w.world.set_drive_gains(w.joint(j), k, c, max_force);
          },
          py::arg("joint"), py::arg("stiffness"), py::arg("damping"),
          py::arg("max_force") = INFINITY,
          "Drive gains: N m/rad or N/m, N m s/rad or N s/m, max force N m or N.")
      .def(
          "set_drive",
          [](PyWorld& w, const py::object& j, const std::optional<JointDrive>& d) {
            w.world.set_drive(w.joint(j), d);
          },
          py::arg("joint"), py::arg("drive"), "Adds, replaces or (None) removes the drive.")
      .def(
          "set_joint_limits",
          [](PyWorld& w, const py::object& j, const std::optional<JointLimits>& l) {
            w.world.set_joint_limits(w.joint(j), l);
          },
          py::arg("joint"), py::arg("limits"), "JointLimits (rad or m), or None.")
      .def(
          "set_joint_spring",
          [](PyWorld& w, const py::object& j, const std::optional<JointSpring>& s) {
            w.world.set_joint_spring(w.joint(j), s);
          },
          py::arg("joint"), py::arg("spring"), "JointSpring, or None.")
      .def("joint_drive", joint_query(&World::joint_drive), py::arg("joint"))
      .def("joint_effort_limit", joint_query(&World::joint_effort_limit), py::arg("joint"),
           "largest drive torque (N m) or force (N) of the joint; inf when unlimited")
      .def("joint_limits", joint_query(&World::joint_limits), py::arg("joint"))
      .def("joint_spring", joint_query(&World::joint_spring), py::arg("joint"))
      .def("__repr__", [](const PyWorld& w) {
        return "<mabd.World: " + std::to_string(w.world.body_count()) + " bodies, " +
               std::to_string(w.world.joint_count()) +
               " joints, t = " + std::to_string(w.world.time()) + " s>";
      });
}

}  // namespace mabd::python
