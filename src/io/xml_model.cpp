// Shared pieces of the URDF and MJCF loaders.
#include "io/xml_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <Eigen/Eigenvalues>

#include "io/json_reader.h"
#include "mabd/error.h"

namespace mabd::io {

XmlFile::XmlFile(const std::string& path) : path_(path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw_scene_error(path, "", "cannot open file");
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw_scene_error(path, "", "cannot open file");
  const tinyxml2::XMLError status = doc_.LoadFile(f);
  std::fclose(f);
  if (status != tinyxml2::XML_SUCCESS) {
    std::string what = "malformed XML";
    switch (status) {
      case tinyxml2::XML_ERROR_MISMATCHED_ELEMENT:
        what += ": an element opened here is not closed, or closed by another tag";
        break;
      case tinyxml2::XML_ERROR_PARSING_ATTRIBUTE:
        what += ": bad attribute (name=\"value\" expected)";
        break;
      case tinyxml2::XML_ERROR_EMPTY_DOCUMENT:
        throw_scene_error(path, "", "empty file (no XML element)");
      default:
        break;
    }
    throw_scene_error(path, "line " + std::to_string(doc_.ErrorLineNum()),
                      what + " (" + doc_.ErrorName() + ")");
  }
  if (!doc_.RootElement()) throw_scene_error(path, "", "no root element");
}

std::string XmlFile::dir() const {
  const std::string d = std::filesystem::path(path_).parent_path().string();
  return d.empty() ? "." : d;
}

const tinyxml2::XMLElement* XmlFile::root(const char* tag, const char* format) const {
  const tinyxml2::XMLElement* e = doc_.RootElement();
  if (std::string(e->Name()) != tag) {
    fail(e, std::string("the root element of ") + format + " file must be <" + tag + ">");
  }
  return e;
}

std::string XmlFile::where(const tinyxml2::XMLElement* e) {
  std::string out = "line " + std::to_string(e->GetLineNum()) + ": <" + e->Name();
  if (const char* name = e->Attribute("name")) out += std::string(" name='") + name + "'";
  return out + ">";
}

void XmlFile::fail(const tinyxml2::XMLElement* e, const std::string& what) const {
  throw_scene_error(path_, where(e), what);
}

void XmlFile::warn(const tinyxml2::XMLElement* e, const std::string& what) {
  warnings_.push_back(one_line(path_ + ": " + where(e) + ": " + what));
}

void XmlFile::check(const tinyxml2::XMLElement* e, const std::vector<std::string>& known,
                    const std::vector<std::string>& known_children) {
  for (const tinyxml2::XMLAttribute* a = e->FirstAttribute(); a; a = a->Next()) {
    if (std::find(known.begin(), known.end(), a->Name()) == known.end()) {
      warn(e, std::string("attribute '") + a->Name() + "' is not supported; ignored");
    }
  }
  for (const tinyxml2::XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) {
    if (std::find(known_children.begin(), known_children.end(), c->Name()) ==
        known_children.end()) {
      warn(c, std::string("element <") + c->Name() + "> is not supported; ignored");
    }
  }
}

std::optional<std::string> XmlFile::text(const tinyxml2::XMLElement* e, const char* name) {
  const char* value = e->Attribute(name);
  if (!value) return std::nullopt;
  return std::string(value);
}

std::string XmlFile::require_text(const tinyxml2::XMLElement* e, const char* name) const {
  const char* value = e->Attribute(name);
  if (!value) fail(e, std::string("missing attribute '") + name + "'");
  return value;
}

std::vector<double> XmlFile::numbers(const tinyxml2::XMLElement* e, const char* name,
                                     const std::string& value, std::size_t count) const {
  std::vector<double> out;
  const char* p = value.c_str();
  while (true) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') ++p;
    if (!*p) break;
    const char* start = p;
    while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') ++p;
    const std::string token(start, p);
    char* end = nullptr;
    const double v = std::strtod(token.c_str(), &end);
    if (end != token.c_str() + token.size() || token.empty()) {
      fail(e, std::string("attribute '") + name + "': '" + token + "' is not a number");
    }
    if (!std::isfinite(v)) {
      fail(e, std::string("attribute '") + name + "': must be finite (got " + token + ")");
    }
    out.push_back(v);
  }
  if (count > 0 && out.size() != count) {
    fail(e, std::string("attribute '") + name + "': expected " + std::to_string(count) +
                " number" + (count > 1 ? "s" : "") + ", got " + std::to_string(out.size()) +
                " ('" + value + "')");
  }
  if (count == 0 && out.empty()) {
    fail(e, std::string("attribute '") + name + "': expected numbers, got ''");
  }
  return out;
}

std::optional<std::vector<double>> XmlFile::numbers(const tinyxml2::XMLElement* e,
                                                    const char* name, std::size_t count) const {
  const auto value = text(e, name);
  if (!value) return std::nullopt;
  return numbers(e, name, *value, count);
}

double XmlFile::number(const tinyxml2::XMLElement* e, const char* name, double fallback) const {
  const auto v = numbers(e, name, 1);
  return v ? (*v)[0] : fallback;
}

Vec3 XmlFile::vec3(const tinyxml2::XMLElement* e, const char* name, const Vec3& fallback) const {
  const auto v = numbers(e, name, 3);
  return v ? Vec3((*v)[0], (*v)[1], (*v)[2]) : fallback;
}

Pose compose(const Pose& parent, const Pose& child) {
  Pose out;
  out.position = parent.position + parent.orientation * child.position;
  out.orientation = (parent.orientation * child.orientation).normalized();
  return out;
}

Pose relative(const Pose& parent, const Pose& child) {
  Pose out;
  const Quat inv = parent.orientation.conjugate();
  out.position = inv * (child.position - parent.position);
  out.orientation = (inv * child.orientation).normalized();
  return out;
}

Quat rpy_quat(const Vec3& rpy) {
  return (Eigen::AngleAxisd(rpy.z(), Vec3::UnitZ()) * Eigen::AngleAxisd(rpy.y(), Vec3::UnitY()) *
          Eigen::AngleAxisd(rpy.x(), Vec3::UnitX()))
      .normalized();
}

void MassSum::add(double m, const Vec3& com, const Mat3& sigma, const Pose& pose) {
  const Mat3 R = pose.orientation.toRotationMatrix();
  const Vec3 c = pose.position + R * com;
  mass += m;
  first_moment += m * c;
  second_moment += R * sigma * R.transpose() + m * c * c.transpose();
}

void MassSum::add(const MassSum& other, const Pose& pose) {
  const Mat3 R = pose.orientation.toRotationMatrix();
  const Vec3& t = pose.position;
  mass += other.mass;
  first_moment += R * other.first_moment + other.mass * t;
  const Vec3 f = R * other.first_moment;
  second_moment += R * other.second_moment * R.transpose() + f * t.transpose() +
                   t * f.transpose() + other.mass * t * t.transpose();
}

Mat3 second_moment_of_inertia(const Mat3& inertia) {
  return 0.5 * inertia.trace() * Mat3::Identity() - inertia;
}

namespace {

/// Closed box mesh of full extents `size`, centred at `centre`, axes the columns of `axes`,
/// triangles counter-clockwise seen from outside.
TriangleMesh box_mesh(const Vec3& centre, const Mat3& axes, const Vec3& size) {
  TriangleMesh mesh;
  for (int i = 0; i < 8; ++i) {
    const Vec3 local(((i & 1) ? 0.5 : -0.5) * size.x(), ((i & 2) ? 0.5 : -0.5) * size.y(),
                     ((i & 4) ? 0.5 : -0.5) * size.z());
    mesh.vertices.push_back(centre + axes * local);
  }
  // Faces -x, +x, -y, +y, -z, +z (corner index bits: x = 1, y = 2, z = 4).
  const std::array<std::array<int, 4>, 6> faces = {{{0, 4, 6, 2},
                                                    {1, 3, 7, 5},
                                                    {0, 1, 5, 4},
                                                    {2, 6, 7, 3},
                                                    {0, 2, 3, 1},
                                                    {4, 5, 7, 6}}};
  for (const auto& f : faces) {
    mesh.triangles.push_back({f[0], f[1], f[2]});
    mesh.triangles.push_back({f[0], f[2], f[3]});
  }
  return mesh;
}

}  // namespace

BodyDef link_body(const std::string& name, const MassSum& mass,
                  std::vector<CollisionPrimitive> primitives, BodyKind kind, const Pose& pose,
                  const std::string& label, std::vector<std::string>& warnings) {
  const Vec3 com = mass.first_moment / mass.mass;
  const Mat3 sigma = mass.second_moment - mass.mass * com * com.transpose();
  Eigen::SelfAdjointEigenSolver<Mat3> eig(0.5 * (sigma + sigma.transpose()));
  Vec3 moments = eig.eigenvalues();
  Mat3 axes = eig.eigenvectors();
  if (axes.determinant() < 0) axes.col(2) = -axes.col(2);
  const double largest = std::max(moments.maxCoeff(), 1e-12 * mass.mass);
  // A box of side a has second moment m a^2 / 12 along it.
  const double floor = 1e-6 * largest;  // (1e-3 of the largest side)^2
  Vec3 size;
  bool thickened = false;
  for (int i = 0; i < 3; ++i) {
    if (moments[i] < floor) {
      moments[i] = floor;
      thickened = true;
    }
    size[i] = std::sqrt(12.0 * moments[i] / mass.mass);
  }
  if (thickened) {
    warnings.push_back(label +
                       ": inertia is not positive along a principal axis; the body gets a box "
                       "1e-3 as thick as its largest side there");
  }
  BodyDef def;
  def.name = name;
  def.kind = kind;
  def.shape.type = ShapeType::Mesh;
  def.shape.mesh = box_mesh(com, axes, size);
  def.shape.mesh_file = "(inertia box)";
  def.mass = mass.mass;
  def.position = pose.position;
  def.orientation = pose.orientation;
  def.collision.enabled = !primitives.empty();
  def.collision.primitives = std::move(primitives);
  return def;
}

MassSum cube_mass(double mass, double side) {
  MassSum sum;
  sum.add(mass, Vec3::Zero(), Mat3::Identity() * mass * side * side / 12.0, Pose{});
  return sum;
}

std::optional<ShapeDef> obj_mesh(XmlFile& xml, const tinyxml2::XMLElement* e,
                                 const std::string& file, const std::string& base_dir,
                                 const Vec3& scale) {
  std::filesystem::path p(file);
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) {
    return static_cast<char>(std::tolower(c));
  });
  if (ext != ".obj") {
    xml.warn(e, "mesh '" + file + "': only OBJ meshes are read; the geometry is left out");
    return std::nullopt;
  }
  if (p.is_relative()) p = std::filesystem::path(base_dir) / p;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(p, ec)) {
    xml.warn(e, "mesh file not found: '" + p.lexically_normal().string() +
                    "'; the geometry is left out");
    return std::nullopt;
  }
  ShapeDef shape;
  shape.type = ShapeType::Mesh;
  try {
    shape.mesh = load_obj(p.string());
  } catch (const InvalidArgument& ex) {
    xml.fail(e, ex.what());
  }
  for (Vec3& v : shape.mesh.vertices) v = v.cwiseProduct(scale);
  shape.mesh_file = p.lexically_normal().string();
  return shape;
}

}  // namespace mabd::io
