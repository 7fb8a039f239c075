// Bodies: shapes, materials, collision filters, body definitions and mass properties.
#include <string>

#include "python/arrays.h"

namespace mabd::python {

namespace {

/// (n, 3) float64 array of the mesh's vertices (m).
py::array_t<double> vertices_array(const TriangleMesh& mesh) { return points_array(mesh.vertices); }

py::array_t<std::int64_t> triangles_array(const TriangleMesh& mesh) {
  return index_array(mesh.triangles);
}

void set_vertices(TriangleMesh& mesh, const py::array_t<double, py::array::forcecast>& a) {
  mesh.vertices = read_points(a, "TriangleMesh.vertices");
}

void set_triangles(TriangleMesh& mesh, const py::array_t<std::int64_t, py::array::forcecast>& a) {
  mesh.triangles = read_index_rows<3>(a, "TriangleMesh.triangles", "vertex");
}

/// A shape of `type`; the other fields keep ShapeDef's defaults unless given.
ShapeDef make_shape(ShapeType type, const Vec3& size = ShapeDef{}.size,
                    double radius = ShapeDef{}.radius, double length = ShapeDef{}.length) {
  ShapeDef s;
  s.type = type;
  s.size = size;
  s.radius = radius;
  s.length = length;
  return s;
}

/// A C++ motion function calling the Python callable `f(t)`, which returns a Pose or a
/// (position, orientation) pair. The callable is released under the GIL.
MotionFunction wrap_motion(const py::object& f) {
  std::shared_ptr<py::object> held(new py::object(f), [](py::object* o) {
    py::gil_scoped_acquire gil;
    delete o;
  });
  return [held](double t) -> Pose {
    py::gil_scoped_acquire gil;
    const py::object r = (*held)(t);
    if (py::isinstance<Pose>(r)) return r.cast<Pose>();
    try {
      const auto pair = r.cast<std::pair<Vec3, Vec4>>();
      return Pose{pair.first, vec_to_quat(pair.second)};
    } catch (const py::cast_error&) {
      throw InvalidArgument("BodyDef.motion: f(" + std::to_string(t) +
                            ") must return a Pose or (position, (w, x, y, z)), not " +
                            std::string(py::repr(r)));
    }
  };
}

}  // namespace

void bind_bodies(py::module_& m) {
  py::enum_<ShapeType>(m, "ShapeType", "Shape of a body (scene-file names in lower case).")
      .value("Box", ShapeType::Box)
      .value("Sphere", ShapeType::Sphere)
      .value("Capsule", ShapeType::Capsule)
      .value("Cylinder", ShapeType::Cylinder)
      .value("Mesh", ShapeType::Mesh)
      .value("Plane", ShapeType::Plane);
  py::enum_<BodyKind>(m, "BodyKind")
      .value("Dynamic", BodyKind::Dynamic, "integrated by the solver")
      .value("Static", BodyKind::Static, "never moves")
      .value("Kinematic", BodyKind::Kinematic, "follows a prescribed motion");

  StructBinder<Pose> pose(m, "Pose", "Rigid pose of a frame in world coordinates.");
  pose.field("position", &Pose::position, "origin of the frame in world (m)")
      .quat("orientation", &Pose::orientation, "rotation frame -> world, (w, x, y, z)")
      .finish();

  StructBinder<TriangleMesh> mesh(m, "TriangleMesh",
                                  "Triangle mesh in the shape's own frame (m), counter-clockwise "
                                  "seen from outside.");
  mesh.property("vertices", &vertices_array, &set_vertices, "(n, 3) vertex positions (m); a copy")
      .property("triangles", &triangles_array, &set_triangles,
                "(m, 3) vertex indices, counter-clockwise from outside; a copy")
      .finish();

  StructBinder<ShapeDef> shape(m, "ShapeDef",
                               "Geometry of a body in its own frame. Capsule and cylinder axes "
                               "are the frame's z axis; shapes are centred at the frame origin "
                               "except meshes. A plane is the half-space z <= 0 (static and "
                               "kinematic bodies only).");
  shape.field("type", &ShapeDef::type, "ShapeType")
      .field("size", &ShapeDef::size, "box: full extents along x, y, z (m)")
      .field("radius", &ShapeDef::radius, "sphere, capsule, cylinder radius (m)")
      .field("length", &ShapeDef::length, "capsule, cylinder: length of the cylindrical part (m)")
      .field("mesh", &ShapeDef::mesh, "mesh: geometry (TriangleMesh)")
      .field("mesh_file", &ShapeDef::mesh_file, "mesh: where it was loaded from (informational)")
      .finish()
      .def_static(
          "box", [](const Vec3& size) { return make_shape(ShapeType::Box, size); }, py::arg("size"),
          "A box of full extents (x, y, z) (m).")
      .def_static(
          "sphere", [](double r) { return make_shape(ShapeType::Sphere, ShapeDef{}.size, r); },
          py::arg("radius"), "A sphere of `radius` (m).")
      .def_static(
          "capsule",
          [](double r, double l) { return make_shape(ShapeType::Capsule, ShapeDef{}.size, r, l); },
          py::arg("radius"), py::arg("length"),
          "A capsule along z: `radius` (m), cylindrical part `length` (m).")
      .def_static(
          "cylinder",
          [](double r, double l) { return make_shape(ShapeType::Cylinder, ShapeDef{}.size, r, l); },
          py::arg("radius"), py::arg("length"), "A cylinder along z: `radius`, `length` (m).")
      .def_static(
          "plane", [] { return make_shape(ShapeType::Plane); },
          "The half-space z <= 0 of the body frame (static and kinematic bodies only).")
      .def_static(
          "mesh_from",
          [](const py::array_t<double, py::array::forcecast>& vertices,
             const py::array_t<std::int64_t, py::array::forcecast>& triangles) {
            ShapeDef s;
            s.type = ShapeType::Mesh;
            set_vertices(s.mesh, vertices);
            set_triangles(s.mesh, triangles);
            return s;
          },
          py::arg("vertices"), py::arg("triangles"),
          "A mesh from (n, 3) vertices (m) and (m, 3) counter-clockwise triangles.")
      .def_static(
          "obj",
          [](const std::string& path) {
            ShapeDef s;
            s.type = ShapeType::Mesh;
            s.mesh = load_obj(path);
            s.mesh_file = path;
            return s;
          },
          py::arg("path"), "A mesh read from a Wavefront OBJ file (coordinates in m).");

  StructBinder<Material> material(m, "Material", "Elastic solid; a body's bulk properties.");
  material.field("density", &Material::density, "kg/m^3")
      .field("youngs_modulus", &Material::youngs_modulus, "Pa")
      .field("poisson_ratio", &Material::poisson_ratio, "dimensionless, in [0, 0.5)")
      .field("friction", &Material::friction,
             "Coulomb coefficient (>= 0); a pair uses the geometric mean")
      .finish();

  StructBinder<CollisionPrimitive> primitive(m, "CollisionPrimitive",
                                             "A collision shape placed in the body's frame.");
  primitive.field("shape", &CollisionPrimitive::shape, "ShapeDef in the primitive's frame")
      .field("pose", &CollisionPrimitive::pose, "primitive frame in the body frame (m, rotation)")
      .finish();

  StructBinder<CollisionDef> collision(m, "CollisionDef", "How a body collides.");
  collision.field("enabled", &CollisionDef::enabled, "False: the body never collides")
      .field("primitives", &CollisionDef::primitives,
             "list of CollisionPrimitive used instead of the body's shape (a copy: assign a "
             "whole list)")
      .field("group", &CollisionDef::group, "collision group bits of this body")
      .field("mask", &CollisionDef::mask, "groups this body collides with")
      .finish();

  StructBinder<PyBodyDef> body(m, "BodyDef",
                               "Everything needed to create a body. Pose and velocities are "
                               "those of the body's own frame in world coordinates at t = 0.");
  body.field("name", &BodyDef::name, "unique within a world; may be empty")
      .field("shape", &BodyDef::shape, "ShapeDef")
      .field("material", &BodyDef::material, "Material")
      .field("mass", &BodyDef::mass, "total mass (kg) overriding material.density, or None")
      .field("position", &BodyDef::position, "origin of the body frame in world (m)")
      .quat("orientation", &BodyDef::orientation,
            "body frame -> world rotation (w, x, y, z), normalised when added")
      .field("linear_velocity", &BodyDef::linear_velocity,
             "velocity of the centre of mass, world (m/s)")
      .field("angular_velocity", &BodyDef::angular_velocity, "world axes (rad/s)")
      .field("kind", &BodyDef::kind, "BodyKind")
      .property(
          "motion", [](const PyBodyDef& d) { return d.motion_callable; },
          [](PyBodyDef& d, const py::object& f) {
            if (!f.is_none() && !PyCallable_Check(f.ptr())) {
              throw InvalidArgument("BodyDef.motion: expected a callable f(t) or None");
            }
            d.motion_callable = f;
            d.motion = f.is_none() ? MotionFunction() : wrap_motion(f);
          },
          "kinematic bodies: f(t) -> Pose or (position, (w, x, y, z)), the pose of the body "
          "frame at time t (s); None: constant initial twist. Called with the GIL held; "
          "pickled by reference. An exception it raises during step() propagates and leaves "
          "the world mid-step: restore a saved state before stepping on")
      .field("collision", &BodyDef::collision, "CollisionDef")
      .finish();

  StructBinder<MassProperties> mass(m, "MassProperties",
                                    "Mass properties of a uniform solid, shape frame.");
  mass.field("volume", &MassProperties::volume, "m^3")
      .field("mass", &MassProperties::mass, "kg")
      .field("com", &MassProperties::com, "centre of mass (m)")
      .field("second_moment", &MassProperties::second_moment,
             "integral of rho x x^T about the COM (kg m^2)")
      .field("principal_axes", &MassProperties::principal_axes, "columns: principal axes")
      .field("principal_second_moment", &MassProperties::principal_second_moment, "kg m^2")
      .finish();
  m.def("compute_mass_properties", &compute_mass_properties, py::arg("shape"), py::arg("density"),
        "Mass properties of `shape` at `density` (kg/m^3). ValueError on a degenerate shape.");
  m.def("validate_shape", &validate_shape, py::arg("shape"), py::arg("collider_only") = false,
        "Raises ValueError naming the offending field of `shape`.");
  m.def("load_obj", &load_obj, py::arg("path"), "Reads a Wavefront OBJ file as a TriangleMesh.");

  StructBinder<BodyInfo> info(m, "BodyInfo", "Read-only facts about a body, fixed at creation.");
  info.field("name", &BodyInfo::name, "name")
      .field("kind", &BodyInfo::kind, "BodyKind")
      .field("mass", &BodyInfo::mass, "kg")
      .field("volume", &BodyInfo::volume, "m^3")
      .field("principal_inertia", &BodyInfo::principal_inertia, "kg m^2")
      .field("size", &BodyInfo::size, "bounding radius about the COM (m)")
      .finish();
}

}  // namespace mabd::python
