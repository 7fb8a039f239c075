// Shared pieces of the Python bindings (module mabd._mabd): the world wrapper, conversions
// between Eigen types and numpy arrays, and a binder for plain definition structs.
#pragma once

#include <pybind11/eigen.h>
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mabd/mabd.h"

namespace py = pybind11;

namespace mabd::python {

using Vec4 = Eigen::Matrix<double, 4, 1>;

/// Quaternions cross the boundary as (w, x, y, z) arrays.
inline Vec4 quat_to_vec(const Quat& q) { return Vec4(q.w(), q.x(), q.y(), q.z()); }
inline Quat vec_to_quat(const Vec4& v) { return Quat(v[0], v[1], v[2], v[3]); }

/// A body definition as Python holds it: the C++ definition plus the Python callable behind
/// `motion` (kept for pickling).
struct PyBodyDef : BodyDef {
  py::object motion_callable = py::none();
};

/// A joint as added from Python; the C++ definition (body ids included).
using PyJointDef = JointDef;

/// Binds a plain struct with keyword construction, a field-listing repr and pickling through
/// its properties: `Material(density=7850)`, `repr(m)`, `pickle.dumps(m)`.
template <class T, class Base = void>
class StructBinder {
 public:
  using Class = std::conditional_t<std::is_void_v<Base>, py::class_<T>, py::class_<T, Base>>;

  StructBinder(py::handle scope, const char* name, const char* doc) : cls_(scope, name, doc) {}

  /// A read-write field (nested structs are returned by reference: `d.material.density = 1`).
  template <class D, class C>
  StructBinder& field(const char* name, D C::*member, const char* doc) {
    cls_.def_readwrite(name, member, doc);
    fields_.push_back(name);
    return *this;
  }
  /// A quaternion field, read and written as (w, x, y, z).
  template <class C>
  StructBinder& quat(const char* name, Quat C::*member, const char* doc) {
    cls_.def_property(
        name, [member](const T& t) { return quat_to_vec(t.*member); },
        [member](T& t, const Vec4& v) { t.*member = vec_to_quat(v); }, doc);
    fields_.push_back(name);
    return *this;
  }
  /// A computed field.
  template <class Get, class Set>
  StructBinder& property(const char* name, Get get, Set set, const char* doc) {
    cls_.def_property(name, get, set, doc);
    fields_.push_back(name);
    return *this;
  }
  Class& cls() { return cls_; }

  /// Adds __init__(**fields), __repr__ and __reduce__ over the fields declared so far.
  Class& finish() {
    const std::vector<std::string> fields = fields_;
    const std::string type_name = py::str(cls_.attr("__name__"));
    cls_.def(py::init([fields, type_name](const py::kwargs& kwargs) {
               py::object obj = py::cast(T{});
               for (const auto& [key, value] : kwargs) {
                 const std::string k = py::str(key);
                 if (std::find(fields.begin(), fields.end(), k) == fields.end()) {
                   throw py::type_error(type_name + "(): unknown field '" + k + "'");
                 }
                 py::setattr(obj, key, value);
               }
               return obj.cast<T>();
             }),
             ("Keyword arguments set fields: " + type_name + "(field=value, ...).").c_str());
    cls_.def("__repr__", [fields, type_name](const py::object& self) {
      std::string out = type_name + "(";
      for (std::size_t i = 0; i < fields.size(); ++i) {
        if (i) out += ", ";
        out += fields[i] + "=" + std::string(py::repr(self.attr(fields[i].c_str())));
      }
      return out + ")";
    });
    // (type, (), (None, {field: value})): pickle and copy call type() and set each field.
    cls_.def("__reduce__", [fields](const py::object& self) {
      py::dict state;
      for (const std::string& f : fields) state[f.c_str()] = self.attr(f.c_str());
      return py::make_tuple(py::type::of(self), py::tuple(), py::make_tuple(py::none(), state));
    });
    return cls_;
  }

 private:
  Class cls_;
  std::vector<std::string> fields_;
};

/// Where a Python-built world's model came from: an optional scene, then additions.
struct SceneSource {
  std::string text;      ///< the scene file's JSON text
  std::string name;      ///< file name used in messages (as given)
  std::string base_dir;  ///< absolute directory resolving relative mesh paths
  bool floating_base = false;  ///< URDF model read with ModelOptions::floating_base
};

/// The World of the Python module: the engine's World, the definitions it was built from (for
/// glTF export and pickling) and the count of live numpy views of its storage.
class PyWorld {
 public:
  explicit PyWorld(const WorldSettings& settings) : world(settings) {}
  PyWorld(World w, std::optional<SceneSource> source, std::vector<BodyDef> scene_defs,
          int default_steps, std::vector<std::string> scene_warnings)
      : world(std::move(w)),
        scene(std::move(source)),
        defs(std::move(scene_defs)),
        default_steps(default_steps),
        scene_warnings(std::move(scene_warnings)) {}

  World world;
  std::optional<SceneSource> scene;
  /// Definitions of every body, body-id order (the recorder draws their shapes).
  std::vector<BodyDef> defs;
  /// Additions from Python in call order: ("body", BodyDef), ("joint", JointDef),
  /// ("soft", SoftBodyDef) and ("exclude", a, b); replayed when unpickling.
  py::list ops;
  int default_steps = 1000;
  std::vector<std::string> scene_warnings;
  /// What was added after the world stepped or restored a state and holds a body-local point
  /// taken from that configuration ("a joint", "soft body 'x' attached to a body"), which
  /// replaying the additions would not reproduce; empty if nothing.
  std::string added_after_motion;
  /// The world stepped or restored a state since it was built.
  bool has_moved = false;
  /// Live numpy views of q and qdot (their base objects count themselves here).
  int live_views = 0;
  std::atomic<bool> stepping{false};

  /// Id of a body given by index or name; throws InvalidArgument naming it if unknown.
  BodyId body(const py::handle& ref) const;
  /// Id of a joint given by index or name.
  JointId joint(const py::handle& ref) const;
  /// Id of a soft body given by index or name.
  SoftBodyId soft_body(const py::handle& ref) const;
  /// Throws BufferError if numpy views of the state storage exist (`what` names the call).
  void check_no_views(const char* what) const;
};

/// World::find_body, find_joint or find_soft_body bound for Python: the id of the item named
/// `name`, or None.
template <class Id>
auto find_query(std::optional<Id> (World::*find)(const std::string&) const) {
  return [find](const PyWorld& w, const std::string& name) -> py::object {
    if (auto id = (w.world.*find)(name)) return py::int_(id->index);
    return py::none();
  };
}

/// Adds a body / a joint / a soft body / a collision exclusion and records the addition.
std::uint32_t add_body(PyWorld& w, const PyBodyDef& def);
std::uint32_t add_joint(PyWorld& w, const JointDef& def);
std::uint32_t add_soft_body(PyWorld& w, const SoftBodyDef& def);
void exclude_collision(PyWorld& w, BodyId a, BodyId b);

void bind_errors(py::module_& m);
void bind_bodies(py::module_& m);
void bind_joints(py::module_& m);
void bind_settings(py::module_& m);
void bind_world(py::module_& m, py::class_<PyWorld>& cls);
void bind_soft(py::module_& m, py::class_<PyWorld>& cls);
void bind_state(py::module_& m, py::class_<PyWorld>& cls);
void bind_io(py::module_& m, py::class_<PyWorld>& cls);
void bind_batch(py::module_& m);
void bind_robotics(py::module_& m);

/// A new world from a scene: its text, the name used in messages and the mesh directory.
std::unique_ptr<PyWorld> world_from_scene_text(const std::string& text, const std::string& name,
                                               const std::string& base_dir,
                                               bool floating_base = false);

}  // namespace mabd::python
