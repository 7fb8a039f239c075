// State: numpy views of q and qdot, joint and contact arrays, save/restore, checkpoints,
// copies and pickling.
#include <string>

#include "python/bindings.h"

namespace mabd::python {

namespace {

/// Base object of the numpy views: keeps the world alive and counts itself in live_views.
struct ViewToken {
  ViewToken(py::object owner_object, PyWorld* world) : owner(std::move(owner_object)), w(world) {
    ++w->live_views;
  }
  ~ViewToken() { --w->live_views; }
  ViewToken(const ViewToken&) = delete;
  ViewToken& operator=(const ViewToken&) = delete;
  py::object owner;
  PyWorld* w;
};

static_assert(sizeof(Vec12) == 12 * sizeof(double), "Vec12 must be 12 packed doubles");

/// Read-only (n, 12) view of `data`, tied to the world object `self`.
py::array state_view(const py::object& self, const Vec12* data) {
  PyWorld& w = self.cast<PyWorld&>();
  const auto n = static_cast<py::ssize_t>(w.world.body_count());
  if (n == 0) return py::array_t<double>(std::vector<py::ssize_t>{0, 12});
  py::object token = py::cast(std::make_unique<ViewToken>(self, &w));
  py::array view(
      py::dtype::of<double>(), {n, py::ssize_t{12}},
      {static_cast<py::ssize_t>(sizeof(Vec12)), static_cast<py::ssize_t>(sizeof(double))},
      data->data(), token);
  view.attr("flags").attr("writeable") = false;
  return view;
}

py::array_t<double> rows(std::size_t n, py::ssize_t cols) {
  return py::array_t<double>({static_cast<py::ssize_t>(n), cols});
}

template <int N, class V>
void put(py::detail::unchecked_mutable_reference<double, 2>& a, std::size_t i, const V& v) {
  for (int k = 0; k < N; ++k) a(static_cast<py::ssize_t>(i), k) = v[k];
}

/// Arrays of every joint's JointCoordinates (see the docstring of joint_states).
py::dict joint_states(const PyWorld& w) {
  const std::size_t m = w.world.joint_count();
  py::array_t<std::int32_t> dofs(static_cast<py::ssize_t>(m));
  auto pos = rows(m, 3), vel = rows(m, 3), rot = rows(m, 4), ang = rows(m, 3);
  auto d = dofs.mutable_unchecked<1>();
  auto p = pos.mutable_unchecked<2>(), v = vel.mutable_unchecked<2>(),
       r = rot.mutable_unchecked<2>(), a = ang.mutable_unchecked<2>();
  for (std::size_t j = 0; j < m; ++j) {
    const JointCoordinates c = w.world.joint_coordinates(JointId{static_cast<std::uint32_t>(j)});
    d(static_cast<py::ssize_t>(j)) = c.dofs;
    put<3>(p, j, c.position);
    put<3>(v, j, c.velocity);
    put<4>(r, j, quat_to_vec(c.rotation));
    put<3>(a, j, c.angular_velocity);
  }
  py::dict out;
  out["dofs"] = dofs;
  out["position"] = pos;
  out["velocity"] = vel;
  out["rotation"] = rot;
  out["angular_velocity"] = ang;
  return out;
}

py::tuple joint_wrenches(const PyWorld& w) {
  const std::size_t m = w.world.joint_count();
  auto force = rows(m, 3), torque = rows(m, 3);
  auto f = force.mutable_unchecked<2>(), t = torque.mutable_unchecked<2>();
  for (std::size_t j = 0; j < m; ++j) {
    const JointWrench wr = w.world.joint_wrench(JointId{static_cast<std::uint32_t>(j)});
    put<3>(f, j, wr.force);
    put<3>(t, j, wr.torque);
  }
  return py::make_tuple(force, torque);
}

py::dict contacts(const PyWorld& w) {
  const std::vector<ContactInfo> cs = w.world.contacts();
  const std::size_t k = cs.size();
  py::array_t<std::int64_t> body(static_cast<py::ssize_t>(k)),
      collider(static_cast<py::ssize_t>(k)), soft_body(static_cast<py::ssize_t>(k)),
      node(static_cast<py::ssize_t>(k));
  py::array_t<double> depth(static_cast<py::ssize_t>(k));
  py::array_t<bool> sliding(static_cast<py::ssize_t>(k));
  auto point = rows(k, 3), normal = rows(k, 3), force = rows(k, 3);
  auto b = body.mutable_unchecked<1>(), c = collider.mutable_unchecked<1>(),
       sbody = soft_body.mutable_unchecked<1>(), nd = node.mutable_unchecked<1>();
  auto dp = depth.mutable_unchecked<1>();
  auto s = sliding.mutable_unchecked<1>();
  auto p = point.mutable_unchecked<2>(), n = normal.mutable_unchecked<2>(),
       f = force.mutable_unchecked<2>();
  for (std::size_t i = 0; i < k; ++i) {
    const auto ii = static_cast<py::ssize_t>(i);
    b(ii) = cs[i].body.valid() ? std::int64_t{cs[i].body.index} : -1;
    c(ii) = cs[i].collider.index;
    sbody(ii) = cs[i].soft_body.valid() ? std::int64_t{cs[i].soft_body.index} : -1;
    nd(ii) = cs[i].node;
    dp(ii) = cs[i].depth;
    s(ii) = cs[i].sliding;
    put<3>(p, i, cs[i].point);
    put<3>(n, i, cs[i].normal);
    put<3>(f, i, cs[i].force);
  }
  py::dict out;
  out["body"] = body;
  out["collider"] = collider;
  out["point"] = point;
  out["normal"] = normal;
  out["depth"] = depth;
  out["force"] = force;
  out["sliding"] = sliding;
  out["soft_body"] = soft_body;
  out["node"] = node;
  return out;
}

void restore(PyWorld& w, const py::bytes& data) {
  w.check_no_views("restore_state");
  const std::string bytes = data;
  WorldState state;
  state.data.assign(bytes.begin(), bytes.end());
  w.world.restore_state(state);
  w.has_moved = true;
}

using Rows = std::optional<py::array_t<double, py::array::forcecast>>;

/// Rows of `a` (None: the current ones from `current`), checked to be (n, 12).
std::vector<Vec12> state_rows(const PyWorld& w, const Rows& a, const char* name,
                              Vec12 (World::*current)(BodyId) const) {
  const std::size_t n = w.world.body_count();
  if (a && (a->ndim() != 2 || a->shape(0) != static_cast<py::ssize_t>(n) || a->shape(1) != 12)) {
    throw InvalidArgument(std::string("set_state_arrays: ") + name + " must have shape (" +
                          std::to_string(n) + ", 12)");
  }
  std::vector<Vec12> rows(n);  // a copy: `a` may be a view of the storage about to be written
  for (std::size_t i = 0; i < n; ++i) {
    const BodyId id{static_cast<std::uint32_t>(i)};
    rows[i] = (w.world.*current)(id);
    if (!a) continue;
    for (int k = 0; k < 12; ++k) rows[i][k] = a->at(static_cast<py::ssize_t>(i), k);
  }
  return rows;
}

void set_state_arrays(PyWorld& w, const Rows& q, const Rows& qdot) {
  const std::vector<Vec12> new_q = state_rows(w, q, "q", &World::coordinates);
  const std::vector<Vec12> new_v = state_rows(w, qdot, "qdot", &World::velocities);
  for (std::size_t i = 0; i < new_q.size(); ++i) {
    const BodyId id{static_cast<std::uint32_t>(i)};
    const std::string row = "set_state_arrays: row " + std::to_string(i);
    if (w.world.body_info(id).kind != BodyKind::Dynamic) {
      if (new_q[i] != w.world.coordinates(id) || new_v[i] != w.world.velocities(id)) {
        throw InvalidArgument(row + " is a static or kinematic body's and must keep its values");
      }
    } else if (!new_q[i].allFinite() || !new_v[i].allFinite() ||
               !(Eigen::Map<const Mat3>(new_q[i].data()).determinant() > 0)) {
      throw InvalidArgument(row + ": non-finite values or det(A) <= 0");
    }
  }
  for (std::size_t i = 0; i < new_q.size(); ++i) {
    const BodyId id{static_cast<std::uint32_t>(i)};
    if (w.world.body_info(id).kind == BodyKind::Dynamic) {
      w.world.set_body_state(id, new_q[i], new_v[i]);
    }
  }
  w.has_moved = true;
}

py::bytes save(const PyWorld& w) {
  const WorldState s = w.world.save_state();
  return py::bytes(reinterpret_cast<const char*>(s.data.data()), s.data.size());
}

std::unique_ptr<PyWorld> clone(const PyWorld& w) {
  auto c = std::make_unique<PyWorld>(w.world.clone(), w.scene, w.defs, w.default_steps,
                                     w.scene_warnings);
  c->ops = py::list(w.ops);
  c->added_after_motion = w.added_after_motion;
  c->has_moved = w.has_moved;
  return c;
}

constexpr int kPickleVersion = 1;

py::tuple get_state(const PyWorld& w) {
  if (!w.added_after_motion.empty()) {
    throw py::type_error(
        "cannot pickle this World: " + w.added_after_motion +
        " was added after it stepped or restored a state, and rebuilding it from its "
        "definitions would place it differently (add all joints and attached soft bodies "
        "before stepping, or use save_state with a world built the same way)");
  }
  py::object scene = py::none();
  if (w.scene) {
    scene = py::make_tuple(w.scene->text, w.scene->name, w.scene->base_dir,
                           w.scene->floating_base);
  }
  return py::make_tuple(kPickleVersion, scene, w.world.settings(), w.ops, save(w));
}

std::unique_ptr<PyWorld> set_state(const py::tuple& t) {
  if (t.size() != 5 || t[0].cast<int>() != kPickleVersion) {
    throw InvalidArgument("World pickle: unsupported format (expected version " +
                          std::to_string(kPickleVersion) + ")");
  }
  std::unique_ptr<PyWorld> w;
  if (t[1].is_none()) {
    w = std::make_unique<PyWorld>(t[2].cast<WorldSettings>());
  } else {
    const auto scene = t[1].cast<py::tuple>();
    const bool floating = scene.size() > 3 && scene[3].cast<bool>();
    w = world_from_scene_text(scene[0].cast<std::string>(), scene[1].cast<std::string>(),
                              scene[2].cast<std::string>(), floating);
  }
  for (const py::handle op : t[3].cast<py::list>()) {
    const auto item = op.cast<py::tuple>();
    const std::string kind = item[0].cast<std::string>();
    if (kind == "body") {
      add_body(*w, item[1].cast<PyBodyDef>());
    } else if (kind == "joint") {
      add_joint(*w, item[1].cast<JointDef>());
    } else if (kind == "soft") {
      add_soft_body(*w, item[1].cast<SoftBodyDef>());
    } else if (kind == "exclude") {
      exclude_collision(*w, BodyId{item[1].cast<std::uint32_t>()},
                        BodyId{item[2].cast<std::uint32_t>()});
    } else {
      throw InvalidArgument("World pickle: unknown addition '" + kind + "'");
    }
  }
  restore(*w, t[4].cast<py::bytes>());
  w->has_moved = w->world.step_count() > 0;
  return w;
}

}  // namespace

void bind_state(py::module_& m, py::class_<PyWorld>& cls) {
  py::class_<ViewToken>(m, "_StateView",
                        "Base object of the q/qdot views: keeps the world alive and counted.");
  cls.def_property_readonly(
         "q",
         [](const py::object& self) {
           return state_view(self, self.cast<PyWorld&>().world.coordinates_data());
         },
         "(n, 12) read-only VIEW of the affine coordinates q = [a1; a2; a3; t] (m) of every "
         "body, id order; follows every step. While it (or a slice) lives, add_body, reserve "
         "and restore_state raise BufferError. q.copy() for a snapshot.")
      .def_property_readonly(
          "qdot",
          [](const py::object& self) {
            return state_view(self, self.cast<PyWorld&>().world.velocities_data());
          },
          "(n, 12) read-only VIEW of dq/dt (m/s), same rules as q.")
      .def(
          "set_body_state",
          [](PyWorld& w, const py::object& b, const std::optional<Vec12>& q,
             const std::optional<Vec12>& qdot) {
            const BodyId id = w.body(b);
            w.world.set_body_state(id, q ? *q : w.world.coordinates(id),
                                   qdot ? *qdot : w.world.velocities(id));
            w.has_moved = true;
          },
          py::arg("body"), py::arg("q") = py::none(), py::arg("qdot") = py::none(),
          "Sets q (12 values as coordinates() returns them, m) and/or dq/dt (m/s) of a dynamic "
          "body in place (views stay valid); None keeps the current value. Accelerations, "
          "contacts and joint state are kept and joints are not projected: give a "
          "configuration that satisfies them. ValueError for a static or kinematic body, "
          "non-finite values or det(A) <= 0.")
      .def("set_state_arrays", &set_state_arrays, py::arg("q") = py::none(),
           py::arg("qdot") = py::none(),
           "Sets q and/or qdot of every dynamic body from (n, 12) arrays (as World.q and qdot "
           "hold them; the rows of static and kinematic bodies must keep their values). The "
           "rules of set_body_state apply; nothing is set if a row is rejected.")
      .def_property_readonly(
          "view_count", [](const PyWorld& w) { return w.live_views; },
          "number of live q/qdot views (and slices of them)")
      .def("joint_states", &joint_states,
           "Coordinates of every joint (copies): dict of 'dofs' (m,), 'position' (m, 3) and "
           "'velocity' (m, 3) (hinge rad, rad/s; prismatic m, m/s; universal two angles; ball "
           "rotation vector and relative angular velocity, parent frame), 'rotation' (m, 4) "
           "(w, x, y, z) and 'angular_velocity' (m, 3) of the child relative to the parent.")
      .def("joint_wrenches", &joint_wrenches,
           "(force (m, 3) N, torque (m, 3) N m) each joint applied to its second body during "
           "the last step, at the anchor, world frame (copies).")
      .def("contacts", &contacts,
           "Contacts of the last step (copies): dict of 'body', 'collider' (k,) ids, 'point' "
           "(k, 3) m, 'normal' (k, 3) from collider to body, 'depth' (k,) m, 'force' (k, 3) N "
           "on the body, 'sliding' (k,) bool, and for a soft body's surface node 'soft_body' "
           "and 'node' (k,) (-1 otherwise; 'body' is then -1 and 'point' the node).")
      .def("save_state", &save,
           "Snapshot of everything the next step reads, as bytes (not the model).")
      .def("restore_state", &restore, py::arg("state"),
           "Restores a save_state() snapshot of this world or one built the same way; "
           "stepping on is bit-identical (iterative dual solver: to dual_tolerance). ValueError "
           "names a mismatch; BufferError while q/qdot views exist.")
      .def(
          "write_checkpoint",
          [](const PyWorld& w, const std::string& path) { write_checkpoint(w.world, path); },
          py::arg("path"), "Writes the state to a checkpoint file (atomically).")
      .def(
          "read_checkpoint",
          [](PyWorld& w, const std::string& path) {
            w.check_no_views("read_checkpoint");
            read_checkpoint(w.world, path);
            w.has_moved = true;
          },
          py::arg("path"), "Restores a checkpoint file of a world built the same way.")
      .def("clone", &clone, "A deep copy: same model, same state.")
      .def("__copy__", &clone)
      .def(
          "__deepcopy__", [](const PyWorld& w, const py::object&) { return clone(w); },
          py::arg("memo"))
      .def(py::pickle(&get_state, &set_state));
}

}  // namespace mabd::python
