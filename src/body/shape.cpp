// Shape validation and mass properties (volume, centre of mass, second moment, principal
// frame) of uniform-density solids: analytic for primitives, exact polyhedral integrals for
// closed triangle meshes.
#include "mabd/shape.h"
#include "mabd/body.h"

#include <cmath>
#include <map>
#include <numbers>
#include <sstream>
#include <utility>

#include <Eigen/Eigenvalues>

#include "mabd/error.h"

namespace mabd {
namespace {

constexpr double kPi = std::numbers::pi;

/// Formats a number the way it appears in error messages ("-1", "0.5", "nan").
std::string fmt(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

[[noreturn]] void fail(const std::string& msg) { throw InvalidArgument(msg); }

void require_positive(double v, const std::string& field) {
  if (!(std::isfinite(v) && v > 0)) {
    fail(field + " must be positive and finite (got " + fmt(v) + ")");
  }
}

void require_non_negative(double v, const std::string& field) {
  if (!(std::isfinite(v) && v >= 0)) {
    fail(field + " must be >= 0 and finite (got " + fmt(v) + ")");
  }
}

/// Volume integrals of a mesh about a reference point: V (m^3), first moment (m^4),
/// second moment integral (x-ref)(x-ref)^T dV (m^5).
struct MeshIntegrals {
  double volume = 0;
  Vec3 first = Vec3::Zero();
  Mat3 second = Mat3::Zero();
};

/// Exact integrals over the solid bounded by `mesh`, as a sum of signed tetrahedra
/// (ref, a, b, c). Coordinates are taken relative to `ref` to limit cancellation.
MeshIntegrals integrate_mesh(const TriangleMesh& mesh, const Vec3& ref) {
  MeshIntegrals out;
  for (const auto& t : mesh.triangles) {
    const Vec3 a = mesh.vertices[t[0]] - ref;
    const Vec3 b = mesh.vertices[t[1]] - ref;
    const Vec3 c = mesh.vertices[t[2]] - ref;
    const double v = a.dot(b.cross(c)) / 6.0;  // signed tetrahedron volume
    const Vec3 s = a + b + c;                  // the fourth vertex is the origin
    out.volume += v;
    out.first += v * s / 4.0;
    // integral over a tetrahedron of x x^T = V/20 (sum_i v_i v_i^T + s s^T)
    out.second += v / 20.0 * (a * a.transpose() + b * b.transpose() + c * c.transpose() +
                              s * s.transpose());
  }
  return out;
}

/// Mean of the mesh vertices: a reference point inside (or near) the solid.
Vec3 vertex_mean(const TriangleMesh& mesh) {
  Vec3 sum = Vec3::Zero();
  for (const auto& v : mesh.vertices) sum += v;
  return sum / static_cast<double>(mesh.vertices.size());
}

void validate_mesh_indices(const TriangleMesh& mesh) {
  if (mesh.triangles.empty()) fail("mesh has no triangles");
  const auto n = static_cast<long long>(mesh.vertices.size());
  for (std::size_t i = 0; i < mesh.vertices.size(); ++i) {
    if (!mesh.vertices[i].allFinite()) fail("mesh vertex " + std::to_string(i) + " is not finite");
  }
  for (std::size_t i = 0; i < mesh.triangles.size(); ++i) {
    const auto& t = mesh.triangles[i];
    for (int k : t) {
      if (k < 0 || k >= n) {
        fail("mesh triangle " + std::to_string(i) + " references vertex " + std::to_string(k) +
             " but the mesh has " + std::to_string(n) + " vertices");
      }
    }
    if (t[0] == t[1] || t[1] == t[2] || t[2] == t[0]) {
      fail("mesh triangle " + std::to_string(i) + " is degenerate (repeated vertex index)");
    }
  }
}

/// Uses of an undirected edge (lo, hi): how often it appears as lo->hi and as hi->lo.
struct EdgeUse {
  int forward = 0;
  int backward = 0;
};

std::map<std::pair<int, int>, EdgeUse> count_edges(const TriangleMesh& mesh) {
  std::map<std::pair<int, int>, EdgeUse> edges;
  for (const auto& t : mesh.triangles) {
    for (int k = 0; k < 3; ++k) {
      const int a = t[k];
      const int b = t[(k + 1) % 3];
      if (a < b) {
        ++edges[{a, b}].forward;
      } else {
        ++edges[{b, a}].backward;
      }
    }
  }
  return edges;
}

/// Every undirected edge must be used an even number of times (closed), and as often in
/// each direction (consistently oriented). The triangles of the last mesh that passed are
/// kept: the bodies of a generated chain or tree share one part's mesh, whose edge map is the
/// costly part of checking it (an exact comparison, no hashing).
void validate_mesh_topology(const TriangleMesh& mesh) {
  thread_local std::vector<std::array<int, 3>> last_closed;
  if (!mesh.triangles.empty() && mesh.triangles == last_closed) return;
  const auto edges = count_edges(mesh);
  for (const auto& [e, use] : edges) {
    const int total = use.forward + use.backward;
    if (total % 2 != 0) {
      fail("mesh is not closed (edge " + std::to_string(e.first) + "-" + std::to_string(e.second) +
           " is used by " + std::to_string(total) + " triangle(s))");
    }
  }
  for (const auto& [e, use] : edges) {
    if (use.forward != use.backward) {
      const std::string a = std::to_string(e.first);
      const std::string b = std::to_string(e.second);
      fail("mesh is not consistently oriented (edge " + a + "-" + b + " is used " +
           std::to_string(use.forward) + " time(s) as " + a + "->" + b + " and " +
           std::to_string(use.backward) + " time(s) as " + b + "->" + a + ")");
    }
  }
  last_closed = mesh.triangles;
}

void validate_mesh(const TriangleMesh& mesh) {
  validate_mesh_indices(mesh);
  validate_mesh_topology(mesh);
  const double volume = integrate_mesh(mesh, vertex_mean(mesh)).volume;
  if (!(std::isfinite(volume) && volume > 0)) {
    fail("mesh volume is not positive (inward-facing triangles?): got " + fmt(volume) + " m^3");
  }
}

/// Mass properties of a shape centred at the origin whose second moment is diagonal in the
/// shape axes. `diag` holds the integrals of x^2, y^2, z^2 over the solid (m^5).
MassProperties diagonal_properties(double volume, double density, const Vec3& diag) {
  MassProperties p;
  p.volume = volume;
  p.mass = density * volume;
  p.com = Vec3::Zero();
  p.principal_second_moment = density * diag;
  p.second_moment = p.principal_second_moment.asDiagonal();
  p.principal_axes = Mat3::Identity();
  return p;
}

MassProperties box_properties(const Vec3& size, double density) {
  const double volume = size.prod();
  return diagonal_properties(volume, density, volume / 12.0 * size.cwiseAbs2());
}

MassProperties sphere_properties(double r, double density) {
  const double volume = 4.0 / 3.0 * kPi * r * r * r;
  return diagonal_properties(volume, density, Vec3::Constant(volume * r * r / 5.0));
}

MassProperties cylinder_properties(double r, double len, double density) {
  const double volume = kPi * r * r * len;
  const double xx = volume * r * r / 4.0;
  return diagonal_properties(volume, density, Vec3(xx, xx, volume * len * len / 12.0));
}

/// Capsule: cylinder of length `len` plus two hemispherical caps whose flat faces sit at
/// z = +-len/2. Exact, via the parallel-axis theorem on each part.
MassProperties capsule_properties(double r, double len, double density) {
  const double v_cyl = kPi * r * r * len;
  const double v_hemi = 2.0 / 3.0 * kPi * r * r * r;
  const double cyl_xx = v_cyl * r * r / 4.0;
  const double cyl_zz = v_cyl * len * len / 12.0;
  // Hemisphere: about axes through its flat-face centre x^2 and z^2 both integrate to
  // V r^2 / 5; its COM is 3r/8 from the flat face, i.e. d = len/2 + 3r/8 from the centre.
  const double h = 3.0 * r / 8.0;
  const double d = len / 2.0 + h;
  const double hemi_xx = v_hemi * r * r / 5.0;
  const double hemi_zz = v_hemi * (r * r / 5.0 - h * h) + v_hemi * d * d;
  const double xx = cyl_xx + 2.0 * hemi_xx;
  const double zz = cyl_zz + 2.0 * hemi_zz;
  return diagonal_properties(v_cyl + 2.0 * v_hemi, density, Vec3(xx, xx, zz));
}

/// Eigen-decomposition of a symmetric second moment: ascending moments, and axes made
/// deterministic (largest component of the first two axes positive, third = first x second).
void principal_frame(const Mat3& sigma, Mat3& axes, Vec3& moments) {
  Eigen::SelfAdjointEigenSolver<Mat3> solver(sigma);
  moments = solver.eigenvalues();
  axes = solver.eigenvectors();
  for (int k = 0; k < 2; ++k) {
    Eigen::Index i = 0;
    axes.col(k).cwiseAbs().maxCoeff(&i);
    if (axes(i, k) < 0) axes.col(k) = -axes.col(k);
  }
  axes.col(2) = axes.col(0).cross(axes.col(1)).normalized();
}

MassProperties mesh_properties(const TriangleMesh& mesh, double density) {
  const Vec3 ref = vertex_mean(mesh);
  const MeshIntegrals in = integrate_mesh(mesh, ref);
  const Vec3 c = in.first / in.volume;  // COM relative to ref
  Mat3 second = in.second - in.volume * c * c.transpose();
  second = 0.5 * (second + second.transpose());
  MassProperties p;
  p.volume = in.volume;
  p.mass = density * in.volume;
  p.com = ref + c;
  p.second_moment = density * second;
  principal_frame(p.second_moment, p.principal_axes, p.principal_second_moment);
  return p;
}

}  // namespace

void validate_shape(const ShapeDef& shape, bool collider_only) {
  switch (shape.type) {
    case ShapeType::Plane:
      if (!collider_only) fail("shape.type: a plane is for static and kinematic bodies only");
      return;
    case ShapeType::Box:
      for (int i = 0; i < 3; ++i) {
        require_positive(shape.size[i], "shape.size[" + std::to_string(i) + "]");
      }
      return;
    case ShapeType::Sphere:
      require_positive(shape.radius, "shape.radius");
      return;
    case ShapeType::Capsule:
      require_positive(shape.radius, "shape.radius");
      require_non_negative(shape.length, "shape.length");
      return;
    case ShapeType::Cylinder:
      require_positive(shape.radius, "shape.radius");
      require_positive(shape.length, "shape.length");
      return;
    case ShapeType::Mesh:
      if (collider_only) {
        validate_mesh_indices(shape.mesh);
      } else {
        validate_mesh(shape.mesh);
      }
      return;
  }
  fail("shape.type is not a known shape type");
}

MassProperties compute_mass_properties(const ShapeDef& shape, double density) {
  require_positive(density, "density");
  validate_shape(shape);
  switch (shape.type) {
    case ShapeType::Box:
      return box_properties(shape.size, density);
    case ShapeType::Sphere:
      return sphere_properties(shape.radius, density);
    case ShapeType::Capsule:
      return capsule_properties(shape.radius, shape.length, density);
    case ShapeType::Cylinder:
      return cylinder_properties(shape.radius, shape.length, density);
    case ShapeType::Mesh:
      return mesh_properties(shape.mesh, density);
    case ShapeType::Plane:
      break;
  }
  fail("shape.type is not a known shape type");
}

const char* body_kind_name(BodyKind kind) {
  switch (kind) {
    case BodyKind::Dynamic: return "dynamic";
    case BodyKind::Static: return "static";
    case BodyKind::Kinematic: return "kinematic";
  }
  return "unknown";
}

bool is_closed(const TriangleMesh& mesh) {
  try {
    validate_mesh_topology(mesh);
  } catch (const InvalidArgument&) {
    return false;
  }
  return true;
}

const char* shape_type_name(ShapeType type) {
  switch (type) {
    case ShapeType::Box: return "box";
    case ShapeType::Sphere: return "sphere";
    case ShapeType::Capsule: return "capsule";
    case ShapeType::Cylinder: return "cylinder";
    case ShapeType::Mesh: return "mesh";
    case ShapeType::Plane: return "plane";
  }
  return "unknown";
}

}  // namespace mabd
