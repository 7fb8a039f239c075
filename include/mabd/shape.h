// Body shapes and their mass properties.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "mabd/math.h"

namespace mabd {

/// Plane: the half-space z <= 0 of the shape's frame (outward normal +z), for static and
/// kinematic bodies only (a ground, a wall); it has no mass properties.
enum class ShapeType { Box, Sphere, Capsule, Cylinder, Mesh, Plane };

/// Triangle mesh in the shape's own frame (m): closed and outward-oriented for dynamic bodies;
/// static and kinematic bodies may use open meshes (a bowl, a terrain), whose triangles then
/// collide on the side their counter-clockwise normal points to.
struct TriangleMesh {
  std::vector<Vec3> vertices;                 ///< vertex positions (m)
  std::vector<std::array<int, 3>> triangles;  ///< counter-clockwise seen from outside
};

/// Geometry of a body in its own (user) frame. Capsule and cylinder axes are the frame's z
/// axis; every shape is centred at the frame origin except meshes, which keep their own
/// coordinates.
struct ShapeDef {
  ShapeType type = ShapeType::Box;
  Vec3 size = Vec3(1, 1, 1);  ///< box: full extents along x, y, z (m)
  double radius = 0.5;        ///< sphere, capsule, cylinder radius (m)
  double length = 1.0;        ///< capsule, cylinder: length of the cylindrical part (m)
  TriangleMesh mesh;          ///< mesh: geometry (see load_obj)
  std::string mesh_file;      ///< mesh: where it was loaded from (informational)
};

/// Mass properties of a solid of uniform density, in the shape's own frame.
struct MassProperties {
  double volume = 0;            ///< m^3
  double mass = 0;              ///< kg
  Vec3 com = Vec3::Zero();      ///< centre of mass in the shape frame (m)
  /// Second moment about the COM, Sigma = integral rho x x^T (kg m^2), in the shape frame.
  /// Inertia tensor I = tr(Sigma) I3 - Sigma.
  Mat3 second_moment = Mat3::Zero();
  /// Columns are the principal axes in the shape frame (a proper rotation).
  Mat3 principal_axes = Mat3::Identity();
  /// Second moment in the principal frame (diagonal entries), kg m^2.
  Vec3 principal_second_moment = Vec3::Zero();
};

/// Lower-case name of a shape type as in scene files: "box", "sphere", "capsule",
/// "cylinder", "mesh" or "plane".
const char* shape_type_name(ShapeType type);

/// Checks a shape (positive finite sizes, closed non-degenerate mesh); throws InvalidArgument
/// with a message naming the offending field. `collider_only`: the shape belongs to a static
/// or kinematic body, so a plane and an open mesh are accepted.
void validate_shape(const ShapeDef& shape, bool collider_only = false);

/// True if every edge of `mesh` joins exactly two triangles of opposite orientation (a closed,
/// consistently oriented surface).
bool is_closed(const TriangleMesh& mesh);

/// Mass properties of `shape` at `density` (kg/m^3). Throws InvalidArgument on a degenerate
/// shape, a plane or an open mesh, or a non-positive density.
MassProperties compute_mass_properties(const ShapeDef& shape, double density);

/// Reads a Wavefront OBJ file (v and f records; polygons are fanned into triangles; vertex
/// indices may be negative/relative and may carry /vt/vn parts). Throws InvalidArgument
/// naming the file and line on malformed input.
TriangleMesh load_obj(const std::string& path);

}  // namespace mabd
