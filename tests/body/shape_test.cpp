// Tests of shape validation and mass properties against analytic values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <string>

#include "mabd/error.h"
#include "mabd/shape.h"

namespace mabd {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kRel = 1e-12;
constexpr double kInf = std::numeric_limits<double>::infinity();

/// |a - b| <= rel * max(|b|, scale): relative check with an absolute floor for zeros.
void expect_close(double a, double b, double rel = kRel, double scale = 0) {
  EXPECT_LE(std::abs(a - b), rel * std::max(std::abs(b), scale)) << a << " vs " << b;
}

void expect_mat_close(const Mat3& a, const Mat3& b, double rel = kRel) {
  const double scale = b.cwiseAbs().maxCoeff();
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) expect_close(a(i, j), b(i, j), rel, scale);
  }
}

void expect_vec_close(const Vec3& a, const Vec3& b, double rel = kRel, double scale = 0) {
  scale = std::max(scale, b.cwiseAbs().maxCoeff());
  for (int i = 0; i < 3; ++i) expect_close(a[i], b[i], rel, scale);
}

/// Principal frame consistency: proper rotation that diagonalises Sigma, ascending moments.
void expect_valid_principal_frame(const MassProperties& p) {
  const Mat3& r = p.principal_axes;
  EXPECT_NEAR(r.determinant(), 1.0, 1e-12);
  expect_mat_close(r.transpose() * r, Mat3::Identity());
  const Mat3 d = r.transpose() * p.second_moment * r;
  expect_mat_close(d, Mat3(p.principal_second_moment.asDiagonal()), 1e-11);
}

/// Error message of `f`, which must throw InvalidArgument.
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InvalidArgument thrown";
  return {};
}

/// Closed box mesh (12 outward CCW triangles) of full extents `size`, rotated by `rot` and
/// centred at `centre`.
TriangleMesh box_mesh(const Vec3& size, const Mat3& rot = Mat3::Identity(),
                      const Vec3& centre = Vec3::Zero()) {
  TriangleMesh m;
  for (int k = 0; k < 8; ++k) {  // vertex index = x + 2y + 4z (bits)
    const Vec3 local((k & 1 ? 0.5 : -0.5) * size.x(), (k & 2 ? 0.5 : -0.5) * size.y(),
                     (k & 4 ? 0.5 : -0.5) * size.z());
    m.vertices.push_back(rot * local + centre);
  }
  const int quads[6][4] = {{0, 4, 6, 2}, {1, 3, 7, 5}, {0, 1, 5, 4},
                           {2, 6, 7, 3}, {0, 2, 3, 1}, {4, 5, 7, 6}};
  for (const auto& q : quads) {
    m.triangles.push_back({q[0], q[1], q[2]});
    m.triangles.push_back({q[0], q[2], q[3]});
  }
  return m;
}

TriangleMesh tetra_mesh() {
  TriangleMesh m;
  m.vertices = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)};
  m.triangles = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}};
  return m;
}

ShapeDef mesh_shape(TriangleMesh mesh) {
  ShapeDef s;
  s.type = ShapeType::Mesh;
  s.mesh = std::move(mesh);
  return s;
}

Mat3 test_rotation() {
  return (Eigen::AngleAxisd(0.7, Vec3(1, 2, 3).normalized()) *
          Eigen::AngleAxisd(-1.1, Vec3(-2, 0.5, 1).normalized()))
      .toRotationMatrix();
}

// ---- primitives ----------------------------------------------------------------------------

TEST(MassProperties, Box) {
  ShapeDef s;
  s.type = ShapeType::Box;
  s.size = Vec3(0.5, 2.0, 3.0);
  const double rho = 7.0;
  const auto p = compute_mass_properties(s, rho);
  expect_close(p.volume, 3.0);
  expect_close(p.mass, 21.0);
  EXPECT_EQ(p.com, Vec3::Zero());
  const Vec3 diag = 21.0 / 12.0 * Vec3(0.25, 4.0, 9.0);
  expect_mat_close(p.second_moment, Mat3(diag.asDiagonal()));
  EXPECT_EQ(p.principal_axes, Mat3::Identity());
  expect_vec_close(p.principal_second_moment, diag);  // x, y, z order, not sorted
}

TEST(MassProperties, PrimitiveAxesStayInShapeOrderEvenWhenUnsorted) {
  ShapeDef s;
  s.type = ShapeType::Box;
  s.size = Vec3(3.0, 1.0, 2.0);
  const auto p = compute_mass_properties(s, 1.0);
  EXPECT_EQ(p.principal_axes, Mat3::Identity());
  EXPECT_GT(p.principal_second_moment.x(), p.principal_second_moment.z());
  EXPECT_GT(p.principal_second_moment.z(), p.principal_second_moment.y());
}

TEST(MassProperties, Sphere) {
  ShapeDef s;
  s.type = ShapeType::Sphere;
  s.radius = 0.3;
  const double rho = 1200.0;
  const auto p = compute_mass_properties(s, rho);
  const double v = 4.0 / 3.0 * kPi * 0.027;
  expect_close(p.volume, v);
  expect_close(p.mass, rho * v);
  expect_mat_close(p.second_moment, Mat3::Identity() * rho * v * 0.09 / 5.0);
  EXPECT_EQ(p.principal_axes, Mat3::Identity());
  expect_vec_close(p.principal_second_moment, Vec3::Constant(rho * v * 0.09 / 5.0));
}

TEST(MassProperties, Cylinder) {
  ShapeDef s;
  s.type = ShapeType::Cylinder;
  s.radius = 0.2;
  s.length = 1.5;
  const double rho = 500.0;
  const auto p = compute_mass_properties(s, rho);
  const double v = kPi * 0.04 * 1.5;
  const double m = rho * v;
  expect_close(p.volume, v);
  expect_close(p.mass, m);
  const Vec3 diag(m * 0.04 / 4.0, m * 0.04 / 4.0, m * 2.25 / 12.0);
  expect_mat_close(p.second_moment, Mat3(diag.asDiagonal()));
  EXPECT_EQ(p.principal_axes, Mat3::Identity());
  expect_vec_close(p.principal_second_moment, diag);
  // Inertia about the axis is m r^2 / 2.
  const Mat3 inertia = p.second_moment.trace() * Mat3::Identity() - p.second_moment;
  expect_close(inertia(2, 2), m * 0.04 / 2.0);
}

TEST(MassProperties, CapsuleMatchesSliceIntegration) {
  // Integrals of x^2 and z^2 computed independently by slicing along z:
  // a disc of radius s contributes pi s^4 / 4 to x^2 and pi s^2 z^2 to z^2.
  const double r = 0.25;
  const double len = 0.8;
  const double a = len / 2.0;
  const double int_xx = kPi * r * r * r * r * len / 4.0 + 2.0 * (2.0 * kPi * std::pow(r, 5) / 15.0);
  const double int_zz = kPi * r * r * len * len * len / 12.0 +
                        2.0 * kPi *
                            (2.0 / 3.0 * a * a * r * r * r + 0.5 * a * std::pow(r, 4) +
                             2.0 / 15.0 * std::pow(r, 5));
  const double volume = kPi * r * r * len + 4.0 / 3.0 * kPi * r * r * r;

  ShapeDef s;
  s.type = ShapeType::Capsule;
  s.radius = r;
  s.length = len;
  const double rho = 900.0;
  const auto p = compute_mass_properties(s, rho);
  expect_close(p.volume, volume);
  expect_close(p.mass, rho * volume);
  EXPECT_EQ(p.com, Vec3::Zero());
  const Vec3 diag = rho * Vec3(int_xx, int_xx, int_zz);
  expect_mat_close(p.second_moment, Mat3(diag.asDiagonal()));
  EXPECT_EQ(p.principal_axes, Mat3::Identity());
  expect_vec_close(p.principal_second_moment, diag);
}

TEST(MassProperties, CapsuleOfZeroLengthIsSphere) {
  ShapeDef cap;
  cap.type = ShapeType::Capsule;
  cap.radius = 0.4;
  cap.length = 0.0;
  ShapeDef sph;
  sph.type = ShapeType::Sphere;
  sph.radius = 0.4;
  const auto a = compute_mass_properties(cap, 10.0);
  const auto b = compute_mass_properties(sph, 10.0);
  expect_close(a.volume, b.volume);
  expect_mat_close(a.second_moment, b.second_moment);
}

TEST(MassProperties, ScalesLinearlyWithDensity) {
  ShapeDef s;
  s.type = ShapeType::Capsule;
  const auto a = compute_mass_properties(s, 1.0);
  const auto b = compute_mass_properties(s, 250.0);
  expect_close(b.volume, a.volume);
  expect_close(b.mass, 250.0 * a.mass);
  expect_mat_close(b.second_moment, 250.0 * a.second_moment);
}

// ---- meshes --------------------------------------------------------------------------------

TEST(MassProperties, RotatedOffsetBoxMeshMatchesAnalyticBox) {
  const Vec3 size(0.3, 0.5, 0.7);
  const Mat3 rot = test_rotation();
  const Vec3 centre(1.5, -2.0, 0.7);
  const double rho = 2700.0;

  ShapeDef box;
  box.type = ShapeType::Box;
  box.size = size;
  const auto expected = compute_mass_properties(box, rho);
  const auto p = compute_mass_properties(mesh_shape(box_mesh(size, rot, centre)), rho);

  expect_close(p.volume, expected.volume);
  expect_close(p.mass, expected.mass);
  expect_vec_close(p.com, centre);
  expect_mat_close(rot.transpose() * p.second_moment * rot, expected.second_moment);
  // Sizes ascend along x, y, z, so the sorted principal moments equal the box diagonal and
  // the principal axes are the box axes (up to sign).
  expect_vec_close(p.principal_second_moment, expected.principal_second_moment);
  expect_valid_principal_frame(p);
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(std::abs(p.principal_axes.col(k).dot(rot.col(k))), 1.0, 1e-12) << k;
  }
}

TEST(MassProperties, MeshPrincipalMomentsAreAscending) {
  const Vec3 size(0.9, 0.2, 0.5);
  const auto p = compute_mass_properties(mesh_shape(box_mesh(size, test_rotation())), 1.0);
  expect_valid_principal_frame(p);
  EXPECT_LT(p.principal_second_moment[0], p.principal_second_moment[1]);
  EXPECT_LT(p.principal_second_moment[1], p.principal_second_moment[2]);
  const double v = size.prod();
  expect_vec_close(p.principal_second_moment, v / 12.0 * Vec3(0.04, 0.25, 0.81));
}

TEST(MassProperties, AxisAlignedMeshGivesDeterministicAxes) {
  // Diagonal Sigma (ascending y, z, x): axes are a signed permutation with det +1 and
  // non-negative dominant components for the first two columns.
  const auto p = compute_mass_properties(mesh_shape(box_mesh(Vec3(0.9, 0.2, 0.5))), 1.0);
  Mat3 expected;
  expected.col(0) = Vec3::UnitY();
  expected.col(1) = Vec3::UnitZ();
  expected.col(2) = Vec3::UnitX();
  expect_mat_close(p.principal_axes, expected);
}

TEST(MassProperties, Tetrahedron) {
  const double rho = 3.0;
  const auto p = compute_mass_properties(mesh_shape(tetra_mesh()), rho);
  expect_close(p.volume, 1.0 / 6.0);
  expect_close(p.mass, 0.5);
  expect_vec_close(p.com, Vec3::Constant(0.25));
  // About the origin: integral x^2 = 1/60, xy = 1/120; shifted to the COM (V = 1/6).
  const double diag = 1.0 / 60.0 - 1.0 / 96.0;  // 1/160
  const double off = 1.0 / 120.0 - 1.0 / 96.0;  // -1/480
  Mat3 sigma;
  sigma << diag, off, off, off, diag, off, off, off, diag;
  expect_mat_close(p.second_moment, rho * sigma);
  expect_valid_principal_frame(p);
  // Eigenvalues of a I + b (1 1^T - I) style matrix: diag - off (twice), diag + 2 off.
  expect_vec_close(p.principal_second_moment,
                   rho * Vec3(diag + 2 * off, diag - off, diag - off), 1e-12);
}

TEST(MassProperties, TetrahedronObjFile) {
  const auto mesh = load_obj(std::string(MABD_SOURCE_DIR) + "/meshes/tetra.obj");
  const auto p = compute_mass_properties(mesh_shape(mesh), 1.0);
  expect_close(p.volume, 1.0 / 6.0);
  expect_vec_close(p.com, Vec3::Constant(0.25));
}

TEST(MassProperties, THandleHasDistinctOrderedPrincipalMoments) {
  const auto mesh = load_obj(std::string(MABD_SOURCE_DIR) + "/meshes/t_handle.obj");
  const auto p = compute_mass_properties(mesh_shape(mesh), 1.0);

  // Analytic: two boxes (bar 0.10 x 0.02 x 0.02 at z = 0.05, stem 0.02 x 0.02 x 0.04 at
  // z = 0.02), combined with the parallel-axis theorem.
  const double v_bar = 0.10 * 0.02 * 0.02;
  const double v_stem = 0.02 * 0.02 * 0.04;
  const double v = v_bar + v_stem;
  const double zc = (v_bar * 0.05 + v_stem * 0.02) / v;
  const double xx = v_bar * 0.01 / 12.0 + v_stem * 0.0004 / 12.0;
  const double yy = v_bar * 0.0004 / 12.0 + v_stem * 0.0004 / 12.0;
  const double zz = v_bar * 0.0004 / 12.0 + v_bar * (0.05 - zc) * (0.05 - zc) +
                    v_stem * 0.0016 / 12.0 + v_stem * (0.02 - zc) * (0.02 - zc);
  expect_close(p.volume, v, 1e-12);
  expect_vec_close(p.com, Vec3(0, 0, zc), 1e-12);
  expect_mat_close(p.second_moment, Mat3(Vec3(xx, yy, zz).asDiagonal()), 1e-11);

  expect_valid_principal_frame(p);
  const Vec3& m = p.principal_second_moment;
  // Distinct (well separated) and ascending: y (thin), z (stem), x (bar).
  EXPECT_LT(m[0] * 1.2, m[1]);
  EXPECT_LT(m[1] * 1.2, m[2]);
  expect_vec_close(m, Vec3(yy, zz, xx), 1e-11);
  EXPECT_NEAR(std::abs(p.principal_axes.col(0).y()), 1.0, 1e-12);
  EXPECT_NEAR(std::abs(p.principal_axes.col(1).z()), 1.0, 1e-12);
  EXPECT_NEAR(std::abs(p.principal_axes.col(2).x()), 1.0, 1e-12);
  // The inertia moments are distinct too (intermediate axis exists).
  const Vec3 inertia = Vec3::Constant(m.sum()) - m;
  EXPECT_GT(std::abs(inertia[0] - inertia[1]), 0.1 * inertia.maxCoeff());
  EXPECT_GT(std::abs(inertia[1] - inertia[2]), 0.1 * inertia.maxCoeff());
}

TEST(MassProperties, TwoSeparateShellsAddUp) {
  TriangleMesh m = box_mesh(Vec3(1, 1, 1), Mat3::Identity(), Vec3(-2, 0, 0));
  const TriangleMesh b = box_mesh(Vec3(1, 1, 1), Mat3::Identity(), Vec3(2, 0, 0));
  for (const auto& t : b.triangles) m.triangles.push_back({t[0] + 8, t[1] + 8, t[2] + 8});
  m.vertices.insert(m.vertices.end(), b.vertices.begin(), b.vertices.end());
  const auto p = compute_mass_properties(mesh_shape(m), 1.0);
  expect_close(p.volume, 2.0);
  expect_vec_close(p.com, Vec3::Zero(), kRel, 1.0);
  const Vec3 diag(2.0 / 12.0 + 2.0 * 4.0, 2.0 / 12.0, 2.0 / 12.0);
  expect_mat_close(p.second_moment, Mat3(diag.asDiagonal()));
}

// ---- validation ----------------------------------------------------------------------------

TEST(ValidateShape, BoxSizes) {
  ShapeDef s;
  s.type = ShapeType::Box;
  s.size = Vec3(1, -1, 1);
  EXPECT_EQ(error_of([&] { validate_shape(s); }),
            "shape.size[1] must be positive and finite (got -1)");
  s.size = Vec3(0, 1, 1);
  EXPECT_NE(error_of([&] { validate_shape(s); }).find("shape.size[0]"), std::string::npos);
  s.size = Vec3(1, 1, std::nan(""));
  EXPECT_NE(error_of([&] { validate_shape(s); }).find("shape.size[2]"), std::string::npos);
  s.size = Vec3(1, 1, kInf);
  EXPECT_NE(error_of([&] { validate_shape(s); }).find("shape.size[2]"), std::string::npos);
}

TEST(ValidateShape, Radius) {
  for (ShapeType t : {ShapeType::Sphere, ShapeType::Capsule, ShapeType::Cylinder}) {
    ShapeDef s;
    s.type = t;
    s.radius = 0;
    EXPECT_EQ(error_of([&] { validate_shape(s); }),
              "shape.radius must be positive and finite (got 0)");
    s.radius = std::nan("");
    EXPECT_NE(error_of([&] { validate_shape(s); }).find("shape.radius"), std::string::npos);
  }
}

TEST(ValidateShape, Length) {
  ShapeDef s;
  s.type = ShapeType::Capsule;
  s.length = 0;
  EXPECT_NO_THROW(validate_shape(s));
  s.length = -1;
  EXPECT_EQ(error_of([&] { validate_shape(s); }),
            "shape.length must be >= 0 and finite (got -1)");
  s.length = kInf;
  EXPECT_NE(error_of([&] { validate_shape(s); }).find("shape.length"), std::string::npos);

  s.type = ShapeType::Cylinder;
  s.length = 0;
  EXPECT_EQ(error_of([&] { validate_shape(s); }),
            "shape.length must be positive and finite (got 0)");
}

TEST(ValidateShape, Density) {
  ShapeDef s;
  for (double rho : {0.0, -5.0, std::nan(""), kInf}) {
    const std::string msg = error_of([&] { compute_mass_properties(s, rho); });
    EXPECT_EQ(msg.rfind("density must be positive and finite (got ", 0), 0u) << msg;
  }
}

TEST(ValidateShape, MassPropertiesValidatesShape) {
  ShapeDef s;
  s.type = ShapeType::Sphere;
  s.radius = -1;
  EXPECT_THROW(compute_mass_properties(s, 1.0), InvalidArgument);
}

TEST(ValidateShape, ValidMeshes) {
  EXPECT_NO_THROW(validate_shape(mesh_shape(box_mesh(Vec3(1, 2, 3), test_rotation()))));
  EXPECT_NO_THROW(validate_shape(mesh_shape(tetra_mesh())));
}

TEST(ValidateShape, EmptyMesh) {
  EXPECT_EQ(error_of([] { validate_shape(mesh_shape({})); }), "mesh has no triangles");
}

TEST(ValidateShape, MeshIndexOutOfRange) {
  TriangleMesh m = box_mesh(Vec3(1, 1, 1));
  m.triangles[5][1] = 40;
  EXPECT_EQ(error_of([&] { validate_shape(mesh_shape(m)); }),
            "mesh triangle 5 references vertex 40 but the mesh has 8 vertices");
  m.triangles[5][1] = -1;
  EXPECT_NE(error_of([&] { validate_shape(mesh_shape(m)); }).find("references vertex -1"),
            std::string::npos);
}

TEST(ValidateShape, MeshVertexNotFinite) {
  TriangleMesh m = box_mesh(Vec3(1, 1, 1));
  m.vertices[3].y() = std::nan("");
  EXPECT_EQ(error_of([&] { validate_shape(mesh_shape(m)); }), "mesh vertex 3 is not finite");
}

TEST(ValidateShape, MeshDegenerateTriangle) {
  TriangleMesh m = box_mesh(Vec3(1, 1, 1));
  m.triangles[2] = {4, 4, 5};
  EXPECT_NE(error_of([&] { validate_shape(mesh_shape(m)); }).find("mesh triangle 2"),
            std::string::npos);
}

TEST(ValidateShape, OpenMesh) {
  TriangleMesh m = box_mesh(Vec3(1, 1, 1));
  m.triangles.pop_back();
  const std::string msg = error_of([&] { validate_shape(mesh_shape(m)); });
  EXPECT_EQ(msg.rfind("mesh is not closed (edge ", 0), 0u) << msg;
  EXPECT_NE(msg.find("is used by 1 triangle(s))"), std::string::npos) << msg;
}

TEST(ValidateShape, InconsistentlyOrientedMesh) {
  TriangleMesh m = box_mesh(Vec3(1, 1, 1));
  std::swap(m.triangles[0][1], m.triangles[0][2]);
  const std::string msg = error_of([&] { validate_shape(mesh_shape(m)); });
  EXPECT_EQ(msg.rfind("mesh is not consistently oriented (edge ", 0), 0u) << msg;
}

TEST(ValidateShape, InvertedMesh) {
  TriangleMesh m = box_mesh(Vec3(1, 1, 1), test_rotation(), Vec3(3, 4, 5));
  for (auto& t : m.triangles) std::swap(t[1], t[2]);
  const std::string msg = error_of([&] { validate_shape(mesh_shape(m)); });
  EXPECT_EQ(msg.rfind("mesh volume is not positive (inward-facing triangles?)", 0), 0u) << msg;
  EXPECT_THROW(compute_mass_properties(mesh_shape(m), 1.0), InvalidArgument);
}

TEST(ValidateShape, FlatMeshHasNoVolume) {
  // Two triangles back to back: closed and consistently oriented, but zero volume.
  TriangleMesh m;
  m.vertices = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0)};
  m.triangles = {{0, 1, 2}, {0, 2, 1}};
  EXPECT_NE(error_of([&] { validate_shape(mesh_shape(m)); }).find("mesh volume is not positive"),
            std::string::npos);
}

}  // namespace
}  // namespace mabd
