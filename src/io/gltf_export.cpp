// Binary glTF 2.0 export (tinygltf). Layout of the file:
//   node 0        root "mabd_world": rotation of -90 degrees about x (z-up scene -> y-up glTF)
//   node 1 + i    body i, child of the root, mesh of its shape, pose at the first frame
//   animation 0   per body a translation and a rotation channel (LINEAR), shared time input
//   materials     "dynamic", "static", "kinematic", then (only when used)
//                 "static_double_sided", "kinematic_double_sided" for planes and open meshes
// One binary buffer holds the meshes (float positions and normals, uint32 indices), the
// frame times and the sampled translations and rotations (x, y, z, w), body after body.
#include "io/gltf_export.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <new>
#include <numbers>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <tiny_gltf.h>

#include "mabd/error.h"

namespace mabd::io {

namespace {

constexpr int kSegments = 24;  ///< around the axis of spheres, capsules, cylinders
constexpr int kRings = 12;     ///< pole to pole of spheres (even)
constexpr std::size_t kFloatsPerPose = 7;

struct MeshData {
  std::vector<float> positions;  ///< x, y, z per vertex
  std::vector<float> normals;    ///< unit, per vertex
  std::vector<std::uint32_t> indices;

  std::uint32_t vertex_count() const {
    return static_cast<std::uint32_t>(positions.size() / 3);
  }

  std::uint32_t add_vertex(const Vec3& p, const Vec3& n) {
    const std::uint32_t index = vertex_count();
    const double length = n.norm();
    const Vec3 unit = length > 0 ? Vec3(n / length) : Vec3(0, 0, 1);
    for (int k = 0; k < 3; ++k) {
      positions.push_back(static_cast<float>(p[k]));
      normals.push_back(static_cast<float>(unit[k]));
    }
    return index;
  }

  Vec3 position(std::uint32_t i) const {
    return {positions[3 * i], positions[3 * i + 1], positions[3 * i + 2]};
  }
  Vec3 normal(std::uint32_t i) const {
    return {normals[3 * i], normals[3 * i + 1], normals[3 * i + 2]};
  }

  /// Adds a triangle, skipping degenerate ones and orienting it counter-clockwise as seen
  /// from the side its vertex normals point to.
  void add_triangle(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    const Vec3 pa = position(a);
    const Vec3 face = (position(b) - pa).cross(position(c) - pa);
    const double scale = std::max({(position(b) - pa).squaredNorm(),
                                   (position(c) - pa).squaredNorm(), 1e-300});
    if (face.norm() <= 1e-9 * scale) return;
    if (face.dot(normal(a) + normal(b) + normal(c)) < 0) std::swap(b, c);
    indices.insert(indices.end(), {a, b, c});
  }
};

/// A surface of revolution about z: each row is a circle (radius rho at height z) with the
/// normal (nrho, nz) in the meridian plane.
struct LatheRow {
  double rho, z, nrho, nz;
};

MeshData lathe(const std::vector<LatheRow>& rows) {
  MeshData mesh;
  const int columns = kSegments + 1;  // the seam is duplicated
  for (const LatheRow& row : rows) {
    for (int j = 0; j < columns; ++j) {
      const double phi = 2 * std::numbers::pi * j / kSegments;
      const double c = std::cos(phi), s = std::sin(phi);
      mesh.add_vertex({row.rho * c, row.rho * s, row.z}, {row.nrho * c, row.nrho * s, row.nz});
    }
  }
  for (std::size_t k = 0; k + 1 < rows.size(); ++k) {
    for (int j = 0; j < kSegments; ++j) {
      const auto at = [&](std::size_t r, int col) {
        return static_cast<std::uint32_t>(r * columns + static_cast<std::size_t>(col));
      };
      const std::uint32_t a = at(k, j), b = at(k + 1, j), c = at(k + 1, j + 1), d = at(k, j + 1);
      mesh.add_triangle(a, b, c);
      mesh.add_triangle(a, c, d);
    }
  }
  return mesh;
}

/// Rows of a sphere of radius r from the north to the south pole; the southern half is
/// shifted by -gap and the northern by +gap (a capsule for gap = length / 2).
std::vector<LatheRow> sphere_rows(double r, double gap) {
  std::vector<LatheRow> rows;
  for (int i = 0; i <= kRings; ++i) {
    const double theta = std::numbers::pi * i / kRings;
    const double nrho = std::sin(theta), nz = std::cos(theta);
    if (2 * i <= kRings) rows.push_back({r * nrho, r * nz + gap, nrho, nz});
    if (2 * i >= kRings) rows.push_back({r * nrho, r * nz - gap, nrho, nz});
  }
  return rows;
}

MeshData box_mesh(const Vec3& size) {
  MeshData mesh;
  const Vec3 h = 0.5 * size;
  for (int axis = 0; axis < 3; ++axis) {
    const int u = (axis + 1) % 3, v = (axis + 2) % 3;
    for (double sign : {1.0, -1.0}) {
      Vec3 n = Vec3::Zero();
      n[axis] = sign;
      std::uint32_t corner[4];
      int k = 0;
      for (double su : {-1.0, 1.0}) {
        for (double sv : {-1.0, 1.0}) {
          Vec3 p;
          p[axis] = sign * h[axis];
          p[u] = su * h[u];
          p[v] = sv * h[v];
          corner[k++] = mesh.add_vertex(p, n);
        }
      }
      // corners: (-,-), (-,+), (+,-), (+,+)
      mesh.add_triangle(corner[0], corner[2], corner[3]);
      mesh.add_triangle(corner[0], corner[3], corner[1]);
    }
  }
  return mesh;
}

/// Flat-shaded triangle mesh (vertices are duplicated per triangle).
MeshData triangle_mesh(const TriangleMesh& source) {
  MeshData mesh;
  const int count = static_cast<int>(source.vertices.size());
  for (const auto& t : source.triangles) {
    if (t[0] < 0 || t[1] < 0 || t[2] < 0 || t[0] >= count || t[1] >= count || t[2] >= count) {
      continue;
    }
    const Vec3& a = source.vertices[t[0]];
    const Vec3& b = source.vertices[t[1]];
    const Vec3& c = source.vertices[t[2]];
    const Vec3 n = (b - a).cross(c - a);
    if (n.squaredNorm() == 0) continue;
    const std::uint32_t ia = mesh.add_vertex(a, n);
    const std::uint32_t ib = mesh.add_vertex(b, n);
    const std::uint32_t ic = mesh.add_vertex(c, n);
    mesh.indices.insert(mesh.indices.end(), {ia, ib, ic});  // already counter-clockwise
  }
  return mesh;
}

/// A plane drawn as the square [cx - h, cx + h] x [cy - h, cy + h] at z = 0, facing +z.
MeshData plane_mesh(const std::array<double, 3>& square) {
  MeshData mesh;
  const double cx = square[0], cy = square[1], h = square[2];
  const Vec3 n(0, 0, 1);
  const std::uint32_t a = mesh.add_vertex({cx - h, cy - h, 0}, n);
  const std::uint32_t b = mesh.add_vertex({cx + h, cy - h, 0}, n);
  const std::uint32_t c = mesh.add_vertex({cx + h, cy + h, 0}, n);
  const std::uint32_t d = mesh.add_vertex({cx - h, cy + h, 0}, n);
  mesh.add_triangle(a, b, c);
  mesh.add_triangle(a, c, d);
  return mesh;
}

MeshData build_mesh(const ShapeDef& shape, const std::array<double, 3>& square) {
  switch (shape.type) {
    case ShapeType::Plane:
      return plane_mesh(square);
    case ShapeType::Box:
      return box_mesh(shape.size);
    case ShapeType::Sphere:
      return lathe(sphere_rows(shape.radius, 0));
    case ShapeType::Capsule:
      return lathe(sphere_rows(shape.radius, 0.5 * shape.length));
    case ShapeType::Cylinder: {
      const double r = shape.radius, h = 0.5 * shape.length;
      return lathe({{0, h, 0, 1},
                    {r, h, 0, 1},
                    {r, h, 1, 0},
                    {r, -h, 1, 0},
                    {r, -h, 0, -1},
                    {0, -h, 0, -1}});
    }
    case ShapeType::Mesh:
      return triangle_mesh(shape.mesh);
  }
  return {};
}

/// True unless every edge of the mesh is shared by exactly two triangles that use it in
/// opposite directions (a closed, consistently oriented surface).
bool is_open_mesh(const TriangleMesh& mesh) {
  std::map<std::pair<int, int>, std::pair<int, int>> edges;  // (lo, hi) -> (forward, backward)
  for (const auto& t : mesh.triangles) {
    for (int k = 0; k < 3; ++k) {
      const int a = t[k], b = t[(k + 1) % 3];
      auto& use = edges[{std::min(a, b), std::max(a, b)}];
      (a < b ? use.first : use.second) += 1;
    }
  }
  for (const auto& [edge, use] : edges) {
    if (use.first != 1 || use.second != 1) return true;
  }
  return edges.empty();
}

/// Planes and open meshes are seen from both sides.
bool double_sided(const ShapeDef& shape) {
  return shape.type == ShapeType::Plane ||
         (shape.type == ShapeType::Mesh && is_open_mesh(shape.mesh));
}

/// Radius (m) of a sphere about the shape frame's origin holding the shape (0 for a plane).
double shape_radius(const ShapeDef& shape) {
  switch (shape.type) {
    case ShapeType::Box: return 0.5 * shape.size.norm();
    case ShapeType::Sphere: return shape.radius;
    case ShapeType::Capsule: return shape.radius + 0.5 * shape.length;
    case ShapeType::Cylinder: return std::hypot(shape.radius, 0.5 * shape.length);
    case ShapeType::Mesh: {
      double r = 0;
      for (const Vec3& v : shape.mesh.vertices) r = std::max(r, v.norm());
      return r;
    }
    case ShapeType::Plane: return 0;
  }
  return 0;
}

/// The square a plane at `plane` is drawn as: centred under the bounding spheres of the
/// other bodies (centres `poses`, radii `radii`, negative for planes) seen in the plane's
/// frame, half side their extent there (the square is twice as wide as the scene), at least
/// kMinPlaneHalfSize.
std::array<double, 3> square_for_plane(const Pose& plane, const std::vector<double>& radii,
                                       const std::vector<Pose>& poses) {
  const Mat3 to_plane = plane.orientation.normalized().toRotationMatrix().transpose();
  double lo[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  double hi[2] = {-lo[0], -lo[1]};
  bool any = false;
  for (std::size_t j = 0; j < radii.size(); ++j) {
    const double r = radii[j];
    if (r < 0) continue;  // a plane
    const Vec3 c = to_plane * (poses[j].position - plane.position);
    if (!c.allFinite() || !std::isfinite(r)) continue;
    for (int k = 0; k < 2; ++k) {
      lo[k] = std::min(lo[k], c[k] - r);
      hi[k] = std::max(hi[k], c[k] + r);
    }
    any = true;
  }
  if (!any) return {0, 0, kMinPlaneHalfSize};
  const double extent = std::max(hi[0] - lo[0], hi[1] - lo[1]);
  return {0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), std::max(kMinPlaneHalfSize, extent)};
}


int kind_index(BodyKind kind) {
  switch (kind) {
    case BodyKind::Dynamic: return 0;
    case BodyKind::Static: return 1;
    case BodyKind::Kinematic: return 2;
  }
  return 0;
}

/// Identifies meshes that can be shared: primitive shapes by type and sizes, meshes by file
/// (and size, for meshes not read from a file), planes by their drawn square.
std::string shape_key(const ShapeDef& shape, BodyKind kind, const std::array<double, 3>& square) {
  char text[160];
  switch (shape.type) {
    case ShapeType::Plane:
      std::snprintf(text, sizeof text, "plane %.17g %.17g %.17g", square[0], square[1],
                    square[2]);
      break;
    case ShapeType::Box:
      std::snprintf(text, sizeof text, "box %.17g %.17g %.17g", shape.size[0], shape.size[1],
                    shape.size[2]);
      break;
    case ShapeType::Sphere:
      std::snprintf(text, sizeof text, "sphere %.17g", shape.radius);
      break;
    case ShapeType::Capsule:
    case ShapeType::Cylinder:
      std::snprintf(text, sizeof text, "%s %.17g %.17g", shape_type_name(shape.type), shape.radius,
                    shape.length);
      break;
    case ShapeType::Mesh:
      std::snprintf(text, sizeof text, "mesh %zu %zu ", shape.mesh.vertices.size(),
                    shape.mesh.triangles.size());
      return std::string(text) + std::to_string(kind_index(kind)) + " " + shape.mesh_file;
  }
  return std::string(text) + " " + std::to_string(kind_index(kind));
}

/// Appends raw bytes to the buffer at a 4-byte aligned offset; returns the offset.
std::size_t append_bytes(std::vector<unsigned char>& buffer, const void* data,
                         std::size_t size) {
  while (buffer.size() % 4 != 0) buffer.push_back(0);
  const std::size_t offset = buffer.size();
  buffer.resize(offset + size);
  if (size > 0) std::memcpy(buffer.data() + offset, data, size);
  return offset;
}

int add_view(tinygltf::Model& model, std::size_t offset, std::size_t length, int target) {
  tinygltf::BufferView view;
  view.buffer = 0;
  view.byteOffset = offset;
  view.byteLength = length;
  view.target = target;
  model.bufferViews.push_back(view);
  return static_cast<int>(model.bufferViews.size() - 1);
}

int add_accessor(tinygltf::Model& model, int view, std::size_t offset, int component_type,
                 int type, std::size_t count) {
  tinygltf::Accessor accessor;
  accessor.bufferView = view;
  accessor.byteOffset = offset;
  accessor.componentType = component_type;
  accessor.type = type;
  accessor.count = count;
  model.accessors.push_back(accessor);
  return static_cast<int>(model.accessors.size() - 1);
}

}  // namespace

std::int64_t default_frame_every(double dt) {
  if (!(dt > 0) || !std::isfinite(dt)) return 1;
  const double k = std::round(1.0 / (60.0 * dt));
  if (!(k >= 1)) return 1;
  if (k > 1e15) return static_cast<std::int64_t>(1e15);
  return static_cast<std::int64_t>(k);
}

namespace {

/// JSON of one morph target: its accessor (with min and max), buffer view, the primitive's
/// reference to it and the mesh's default weight (bytes; 279 measured on a falling cube).
constexpr std::size_t kJsonPerMorphTarget = 280;
/// JSON of one soft body's mesh, node, base accessors and weights channel (bytes).
constexpr std::size_t kJsonPerSoftBody = 1000;

/// Bytes of the soft bodies' part of an export of `frames` frames.
std::size_t soft_export_bytes(const std::vector<SoftSurfaceSize>& soft, std::size_t frames) {
  if (soft.empty() || frames == 0) return 0;
  std::size_t bytes = frames * frames * sizeof(float);  // the weights, shared by all
  for (const SoftSurfaceSize& s : soft) {
    // Base positions and normals, indices, then one target of 3 floats per node per frame.
    bytes += s.nodes * 6 * sizeof(float) + s.triangles * 3 * sizeof(std::uint32_t) +
             frames * (s.nodes * 3 * sizeof(float) + kJsonPerMorphTarget) + kJsonPerSoftBody;
  }
  return bytes;
}

}  // namespace

GltfEstimate estimate_gltf(std::size_t bodies, std::size_t frames,
                           const std::vector<SoftSurfaceSize>& soft) {
  GltfEstimate e;
  e.bodies = bodies;
  e.frames = frames;
  e.samples = bodies * frames;
  e.soft_bodies = soft.size();
  e.soft_bytes = soft_export_bytes(soft, frames);
  // Poses as floats, frame times, and roughly 550 bytes of JSON per body (node, two
  // accessors, two channels and samplers), plus the meshes.
  e.bytes = e.samples * kFloatsPerPose * sizeof(float) + frames * sizeof(float) + bodies * 550 +
            16384 + e.soft_bytes;
  return e;
}

std::vector<SoftSurfaceSize> soft_surface_sizes(const World& world) {
  std::vector<SoftSurfaceSize> out;
  for (std::uint32_t k = 0; k < world.soft_body_count(); ++k) {
    const SoftTrack t = soft_track(world, SoftBodyId{k});
    out.push_back({t.nodes.size(), t.triangles.size() / 3});
  }
  return out;
}

TrajectoryRecorder::TrajectoryRecorder(const World& world, const std::vector<BodyDef>& bodies,
                                       std::size_t max_bodies) {
  std::size_t count = world.body_count();
  if (max_bodies > 0) count = std::min(count, max_bodies);
  if (bodies.size() < count) {
    throw InvalidArgument("glTF export: " + std::to_string(bodies.size()) +
                          " body definitions for " + std::to_string(count) + " bodies");
  }
  std::vector<std::string> names;
  std::vector<BodyKind> kinds;
  std::vector<Pose> poses;
  names.reserve(count);
  kinds.reserve(count);
  poses.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const BodyId id{static_cast<std::uint32_t>(i)};
    const BodyInfo& info = world.body_info(id);
    names.push_back(info.name);
    kinds.push_back(info.kind);
    poses.push_back(world.pose(id));
  }
  init(names, kinds, bodies, poses);
  for (std::uint32_t k = 0; k < world.soft_body_count(); ++k) {
    soft_.push_back(soft_track(world, SoftBodyId{k}));
  }
}

SoftTrack soft_track(const World& world, SoftBodyId id) {
  SoftTrack t;
  t.name = world.soft_body_name(id);
  if (t.name.empty()) t.name = "soft" + std::to_string(id.index);
  // Faces of one tet only, outward for a positively oriented tet (a, b, c, d).
  std::map<std::array<int, 3>, std::array<int, 3>> faces;  // sorted nodes -> oriented face
  for (const auto& e : world.soft_body_tets(id)) {
    const std::array<std::array<int, 3>, 4> f = {{{e[1], e[2], e[3]},
                                                  {e[0], e[3], e[2]},
                                                  {e[0], e[1], e[3]},
                                                  {e[0], e[2], e[1]}}};
    for (const auto& face : f) {
      std::array<int, 3> key = face;
      std::sort(key.begin(), key.end());
      auto [it, inserted] = faces.emplace(key, face);
      if (!inserted) faces.erase(it);
    }
  }
  std::map<int, std::uint32_t> index;
  for (const auto& [key, face] : faces) {
    for (int v : face) {
      auto [it, inserted] = index.emplace(v, static_cast<std::uint32_t>(t.nodes.size()));
      if (inserted) t.nodes.push_back(static_cast<std::uint32_t>(v));
      t.triangles.push_back(it->second);
    }
  }
  return t;
}

TrajectoryRecorder::TrajectoryRecorder(const std::vector<BodyDef>& bodies) {
  std::vector<std::string> names;
  std::vector<BodyKind> kinds;
  std::vector<Pose> poses;
  names.reserve(bodies.size());
  kinds.reserve(bodies.size());
  poses.reserve(bodies.size());
  for (const BodyDef& def : bodies) {
    names.push_back(def.name);
    kinds.push_back(def.kind);
    if (def.kind == BodyKind::Kinematic && def.motion) {
      poses.push_back(def.motion(0.0));
    } else {
      poses.push_back(Pose{def.position, def.orientation.normalized()});
    }
  }
  init(names, kinds, bodies, poses);
}

void TrajectoryRecorder::init(const std::vector<std::string>& names,
                              const std::vector<BodyKind>& kinds,
                              const std::vector<BodyDef>& bodies, const std::vector<Pose>& poses) {
  const std::size_t count = names.size();
  names_.reserve(count);
  kinds_.reserve(count);
  body_mesh_.reserve(count);
  bool planes = false;
  for (std::size_t i = 0; i < count; ++i) {
    planes = planes || bodies[i].shape.type == ShapeType::Plane;
  }
  // With planes: the bounding radius of every other body, to size the planes' squares.
  std::vector<double> radii;
  if (planes) {
    radii.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      const ShapeDef& shape = bodies[i].shape;
      radii[i] = shape.type == ShapeType::Plane ? -1.0 : shape_radius(shape);
    }
  }
  std::map<std::string, std::uint32_t> meshes;
  for (std::size_t i = 0; i < count; ++i) {
    names_.push_back(names[i].empty() ? "body" + std::to_string(i) : names[i]);
    kinds_.push_back(kinds[i]);
    const ShapeDef& shape = bodies[i].shape;
    std::array<double, 3> square{0, 0, 0};
    if (planes && shape.type == ShapeType::Plane) {
      square = square_for_plane(poses[i], radii, poses);
    }
    const auto [it, inserted] = meshes.emplace(shape_key(shape, kinds[i], square),
                                               static_cast<std::uint32_t>(mesh_shapes_.size()));
    if (inserted) {
      mesh_shapes_.push_back(shape);
      mesh_kinds_.push_back(kinds[i]);
      mesh_squares_.push_back(square);
    }
    body_mesh_.push_back(it->second);
  }
}

std::array<double, 3> TrajectoryRecorder::plane_square(std::size_t index) const {
  if (index >= body_mesh_.size() || mesh_shapes_[body_mesh_[index]].type != ShapeType::Plane) {
    throw InvalidArgument("glTF export: body " + std::to_string(index) + " is not a plane");
  }
  return mesh_squares_[body_mesh_[index]];
}

void TrajectoryRecorder::reserve(std::size_t frames) {
  // Only a hint: if that much memory is not available now, the frames are appended anyway
  // (and a run that stops early may never need it).
  try {
    times_.reserve(frames);
    poses_.reserve(frames * kinds_.size() * kFloatsPerPose);
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
}

void TrajectoryRecorder::push_pose(std::size_t index, const Pose& pose) {
  const std::size_t n = kinds_.size();
  float* out = poses_.data() + (times_.size() - 1) * n * kFloatsPerPose + index * kFloatsPerPose;
  Quat q = pose.orientation.normalized();
  if (times_.size() > 1) {
    // Keep consecutive samples in the same hemisphere so that interpolation takes the
    // short way round.
    const float* prev = out - n * kFloatsPerPose;
    const double dot = prev[3] * q.x() + prev[4] * q.y() + prev[5] * q.z() + prev[6] * q.w();
    if (dot < 0) q.coeffs() = -q.coeffs();
  }
  for (int k = 0; k < 3; ++k) out[k] = static_cast<float>(pose.position[k]);
  out[3] = static_cast<float>(q.x());
  out[4] = static_cast<float>(q.y());
  out[5] = static_cast<float>(q.z());
  out[6] = static_cast<float>(q.w());
}

void TrajectoryRecorder::record(const World& world) {
  const std::size_t n = kinds_.size();
  times_.push_back(static_cast<float>(world.time()));
  poses_.resize(poses_.size() + n * kFloatsPerPose);
  for (std::size_t i = 0; i < n; ++i) {
    push_pose(i, world.pose(BodyId{static_cast<std::uint32_t>(i)}));
  }
  for (std::size_t k = 0; k < soft_.size(); ++k) {
    SoftTrack& t = soft_[k];
    const SoftBodyState st = world.soft_body_state(SoftBodyId{static_cast<std::uint32_t>(k)});
    for (std::uint32_t v : t.nodes) {
      for (int c = 0; c < 3; ++c) t.positions.push_back(static_cast<float>(st.positions[v][c]));
    }
  }
}

void TrajectoryRecorder::record(double time, const std::vector<Pose>& poses) {
  const std::size_t n = kinds_.size();
  if (poses.size() != n) {
    throw InvalidArgument("glTF export: " + std::to_string(poses.size()) + " poses for " +
                          std::to_string(n) + " bodies");
  }
  times_.push_back(static_cast<float>(time));
  poses_.resize(poses_.size() + n * kFloatsPerPose);
  for (std::size_t i = 0; i < n; ++i) push_pose(i, poses[i]);
}

namespace {

/// Accessor of `count` float vectors of `type` (3 or 4 floats) appended to the buffer, with
/// min and max when `bounds` (POSITION accessors need them).
int add_floats(tinygltf::Model& model, const float* data, std::size_t count, int type,
               bool bounds) {
  const int width = type == TINYGLTF_TYPE_VEC3 ? 3 : (type == TINYGLTF_TYPE_VEC4 ? 4 : 1);
  const std::size_t bytes = count * width * sizeof(float);
  std::vector<unsigned char>& buffer = model.buffers[0].data;
  const int view = add_view(model, append_bytes(buffer, data, bytes), bytes, 0);
  const int accessor = add_accessor(model, view, 0, TINYGLTF_COMPONENT_TYPE_FLOAT, type, count);
  if (bounds) {
    std::vector<double> lo(width, std::numeric_limits<double>::infinity());
    std::vector<double> hi(width, -std::numeric_limits<double>::infinity());
    for (std::size_t v = 0; v < count; ++v) {
      for (int k = 0; k < width; ++k) {
        lo[k] = std::min<double>(lo[k], data[v * width + k]);
        hi[k] = std::max<double>(hi[k], data[v * width + k]);
      }
    }
    model.accessors[accessor].minValues = lo;
    model.accessors[accessor].maxValues = hi;
  }
  return accessor;
}

/// One mesh and node per soft body: its surface at frame 0 (base positions and normals) and
/// one morph target per frame. Returns the nodes.
std::vector<int> add_soft_meshes(tinygltf::Model& model, const std::vector<SoftTrack>& soft,
                                 std::size_t frames) {
  std::vector<int> nodes;
  if (frames == 0 || soft.empty()) return nodes;
  tinygltf::Material material;
  material.name = "soft";
  material.pbrMetallicRoughness.baseColorFactor = {0.35, 0.70, 0.40, 1.0};
  material.pbrMetallicRoughness.metallicFactor = 0.0;
  material.pbrMetallicRoughness.roughnessFactor = 0.7;
  model.materials.push_back(material);
  const int material_index = static_cast<int>(model.materials.size() - 1);
  for (const SoftTrack& t : soft) {
    const std::size_t v = t.nodes.size();
    const float* base = t.positions.data();
    // Area-weighted vertex normals of the base surface.
    std::vector<float> normals(3 * v, 0.0f);
    for (std::size_t k = 0; k + 2 < t.triangles.size(); k += 3) {
      Eigen::Vector3f x[3];
      for (int c = 0; c < 3; ++c) x[c] = Eigen::Vector3f(base + 3 * t.triangles[k + c]);
      const Eigen::Vector3f nrm = (x[1] - x[0]).cross(x[2] - x[0]);
      for (int c = 0; c < 3; ++c) {
        for (int d = 0; d < 3; ++d) normals[3 * t.triangles[k + c] + d] += nrm[d];
      }
    }
    for (std::size_t i = 0; i < v; ++i) {
      Eigen::Map<Eigen::Vector3f> nrm(normals.data() + 3 * i);
      if (nrm.norm() > 0) nrm.normalize();
    }
    tinygltf::Primitive primitive;
    primitive.attributes["POSITION"] = add_floats(model, base, v, TINYGLTF_TYPE_VEC3, true);
    primitive.attributes["NORMAL"] =
        add_floats(model, normals.data(), v, TINYGLTF_TYPE_VEC3, false);
    const std::size_t index_bytes = t.triangles.size() * sizeof(std::uint32_t);
    std::vector<unsigned char>& buffer = model.buffers[0].data;
    const int index_view =
        add_view(model, append_bytes(buffer, t.triangles.data(), index_bytes), index_bytes,
                 TINYGLTF_TARGET_ELEMENT_ARRAY_BUFFER);
    primitive.indices = add_accessor(model, index_view, 0, TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT,
                                     TINYGLTF_TYPE_SCALAR, t.triangles.size());
    primitive.material = material_index;
    primitive.mode = TINYGLTF_MODE_TRIANGLES;
    std::vector<float> shift(3 * v);
    for (std::size_t f = 0; f < frames; ++f) {
      for (std::size_t k = 0; k < 3 * v; ++k) shift[k] = t.positions[f * 3 * v + k] - base[k];
      primitive.targets.push_back(
          {{"POSITION", add_floats(model, shift.data(), v, TINYGLTF_TYPE_VEC3, true)}});
    }
    tinygltf::Mesh mesh;
    mesh.name = t.name;
    mesh.primitives.push_back(primitive);
    mesh.weights.assign(frames, 0.0);
    model.meshes.push_back(mesh);
    tinygltf::Node node;
    node.name = t.name;
    node.mesh = static_cast<int>(model.meshes.size() - 1);
    model.nodes.push_back(node);
    nodes.push_back(static_cast<int>(model.nodes.size() - 1));
  }
  return nodes;
}

/// The soft bodies' weights channels: target f at full weight at frame f.
void add_soft_weights(tinygltf::Model& model, tinygltf::Animation& animation,
                      const std::vector<int>& nodes, int input, std::size_t frames) {
  if (nodes.empty()) return;
  std::vector<float> weights(frames * frames, 0.0f);
  for (std::size_t f = 0; f < frames; ++f) weights[f * frames + f] = 1.0f;
  const int output =
      add_floats(model, weights.data(), frames * frames, TINYGLTF_TYPE_SCALAR, false);
  for (int node : nodes) {
    tinygltf::AnimationSampler sampler;
    sampler.input = input;
    sampler.output = output;
    sampler.interpolation = "LINEAR";
    animation.samplers.push_back(sampler);
    tinygltf::AnimationChannel channel;
    channel.sampler = static_cast<int>(animation.samplers.size() - 1);
    channel.target_node = node;
    channel.target_path = "weights";
    animation.channels.push_back(channel);
  }
}

tinygltf::Model build_model(const std::vector<std::string>& names,
                            const std::vector<std::uint32_t>& body_mesh,
                            const std::vector<ShapeDef>& mesh_shapes,
                            const std::vector<BodyKind>& mesh_kinds,
                            const std::vector<std::array<double, 3>>& mesh_squares,
                            const std::vector<float>& times, const std::vector<float>& poses,
                            const std::vector<SoftTrack>& soft) {
  tinygltf::Model model;
  model.asset.version = "2.0";
  model.asset.generator = "mabd";
  model.buffers.emplace_back();
  std::vector<unsigned char>& buffer = model.buffers[0].data;

  // Materials, indexed like kind_index().
  const struct {
    const char* name;
    double rgb[3];
  } materials[] = {{"dynamic", {0.80, 0.45, 0.15}},
                   {"static", {0.50, 0.50, 0.50}},
                   {"kinematic", {0.20, 0.45, 0.80}}};
  for (const auto& m : materials) {
    tinygltf::Material material;
    material.name = m.name;
    material.pbrMetallicRoughness.baseColorFactor = {m.rgb[0], m.rgb[1], m.rgb[2], 1.0};
    material.pbrMetallicRoughness.metallicFactor = 0.0;
    material.pbrMetallicRoughness.roughnessFactor = 0.6;
    model.materials.push_back(material);
  }
  // Double-sided variants of the materials, added when a plane or an open mesh uses them.
  int double_sided_material[3] = {-1, -1, -1};
  const auto material_of = [&](std::size_t m) {
    const int kind = kind_index(mesh_kinds[m]);
    if (!double_sided(mesh_shapes[m])) return kind;
    if (double_sided_material[kind] < 0) {
      tinygltf::Material material = model.materials[static_cast<std::size_t>(kind)];
      material.name += "_double_sided";
      material.doubleSided = true;
      model.materials.push_back(material);
      double_sided_material[kind] = static_cast<int>(model.materials.size() - 1);
    }
    return double_sided_material[kind];
  };

  // Meshes.
  for (std::size_t m = 0; m < mesh_shapes.size(); ++m) {
    const MeshData data = build_mesh(mesh_shapes[m], mesh_squares[m]);
    const std::size_t vertices = data.vertex_count();
    tinygltf::Mesh mesh;
    mesh.name = std::string(shape_type_name(mesh_shapes[m].type)) + std::to_string(m);
    if (vertices > 0 && !data.indices.empty()) {
      const std::size_t bytes = data.positions.size() * sizeof(float);
      const int position_view =
          add_view(model, append_bytes(buffer, data.positions.data(), bytes), bytes,
                   TINYGLTF_TARGET_ARRAY_BUFFER);
      const int normal_view =
          add_view(model, append_bytes(buffer, data.normals.data(), bytes), bytes,
                   TINYGLTF_TARGET_ARRAY_BUFFER);
      const std::size_t index_bytes = data.indices.size() * sizeof(std::uint32_t);
      const int index_view =
          add_view(model, append_bytes(buffer, data.indices.data(), index_bytes), index_bytes,
                   TINYGLTF_TARGET_ELEMENT_ARRAY_BUFFER);

      tinygltf::Primitive primitive;
      const int position = add_accessor(model, position_view, 0, TINYGLTF_COMPONENT_TYPE_FLOAT,
                                        TINYGLTF_TYPE_VEC3, vertices);
      std::vector<double> lo(3, std::numeric_limits<double>::infinity());
      std::vector<double> hi(3, -std::numeric_limits<double>::infinity());
      for (std::size_t v = 0; v < vertices; ++v) {
        for (int k = 0; k < 3; ++k) {
          lo[k] = std::min<double>(lo[k], data.positions[3 * v + k]);
          hi[k] = std::max<double>(hi[k], data.positions[3 * v + k]);
        }
      }
      model.accessors[position].minValues = lo;
      model.accessors[position].maxValues = hi;
      primitive.attributes["POSITION"] = position;
      primitive.attributes["NORMAL"] = add_accessor(
          model, normal_view, 0, TINYGLTF_COMPONENT_TYPE_FLOAT, TINYGLTF_TYPE_VEC3, vertices);
      primitive.indices =
          add_accessor(model, index_view, 0, TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT,
                       TINYGLTF_TYPE_SCALAR, data.indices.size());
      primitive.material = material_of(m);
      primitive.mode = TINYGLTF_MODE_TRIANGLES;
      mesh.primitives.push_back(primitive);
    }
    model.meshes.push_back(mesh);
  }

  // Nodes: the root turns the z-up world into glTF's y-up frame.
  const std::size_t n = names.size();
  const std::size_t frames = times.size();
  tinygltf::Node root;
  root.name = "mabd_world";
  root.rotation = {-std::sqrt(0.5), 0.0, 0.0, std::sqrt(0.5)};
  for (std::size_t i = 0; i < n; ++i) root.children.push_back(static_cast<int>(i + 1));
  model.nodes.push_back(root);
  for (std::size_t i = 0; i < n; ++i) {
    tinygltf::Node node;
    node.name = names[i];
    if (!model.meshes[body_mesh[i]].primitives.empty()) node.mesh = static_cast<int>(body_mesh[i]);
    if (mesh_shapes[body_mesh[i]].type == ShapeType::Plane) {
      // Lets viewers tell the (arbitrarily sized) square of a plane from the bodies, e.g. to
      // leave it out when framing the scene.
      tinygltf::Value::Object extras;
      extras["mabd_shape"] = tinygltf::Value(std::string("plane"));
      node.extras = tinygltf::Value(std::move(extras));
    }
    if (frames > 0) {
      const float* p = poses.data() + i * kFloatsPerPose;
      node.translation = {p[0], p[1], p[2]};
      node.rotation = {p[3], p[4], p[5], p[6]};
    }
    model.nodes.push_back(node);
  }
  const std::vector<int> soft_nodes = add_soft_meshes(model, soft, frames);
  for (int node : soft_nodes) model.nodes[0].children.push_back(node);
  tinygltf::Scene scene;
  scene.name = "mabd";
  scene.nodes = {0};
  model.scenes.push_back(scene);
  model.defaultScene = 0;

  if (frames == 0 || (n == 0 && soft.empty())) return model;

  // Animation: times, then translations and rotations body after body.
  const std::size_t time_bytes = frames * sizeof(float);
  const int time_view = add_view(model, append_bytes(buffer, times.data(), time_bytes),
                                 time_bytes, 0);
  const int input = add_accessor(model, time_view, 0, TINYGLTF_COMPONENT_TYPE_FLOAT,
                                 TINYGLTF_TYPE_SCALAR, frames);
  model.accessors[input].minValues = {*std::min_element(times.begin(), times.end())};
  model.accessors[input].maxValues = {*std::max_element(times.begin(), times.end())};

  tinygltf::Animation animation;
  animation.name = "simulation";
  add_soft_weights(model, animation, soft_nodes, input, frames);
  if (n > 0) {
    const std::size_t translation_bytes = n * frames * 3 * sizeof(float);
    const std::size_t rotation_bytes = n * frames * 4 * sizeof(float);
    while (buffer.size() % 4 != 0) buffer.push_back(0);
    const std::size_t translation_offset = buffer.size();
    const std::size_t rotation_offset = translation_offset + translation_bytes;
    buffer.resize(rotation_offset + rotation_bytes);
    {
      float* translation = reinterpret_cast<float*>(buffer.data() + translation_offset);
      float* rotation = reinterpret_cast<float*>(buffer.data() + rotation_offset);
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t f = 0; f < frames; ++f) {
          const float* p = poses.data() + (f * n + i) * kFloatsPerPose;
          std::memcpy(translation + (i * frames + f) * 3, p, 3 * sizeof(float));
          std::memcpy(rotation + (i * frames + f) * 4, p + 3, 4 * sizeof(float));
        }
      }
    }
    const int translation_view = add_view(model, translation_offset, translation_bytes, 0);
    const int rotation_view = add_view(model, rotation_offset, rotation_bytes, 0);
    animation.samplers.reserve(2 * n);
    animation.channels.reserve(2 * n);
    for (std::size_t i = 0; i < n; ++i) {
      const int outputs[2] = {
          add_accessor(model, translation_view, i * frames * 3 * sizeof(float),
                       TINYGLTF_COMPONENT_TYPE_FLOAT, TINYGLTF_TYPE_VEC3, frames),
          add_accessor(model, rotation_view, i * frames * 4 * sizeof(float),
                       TINYGLTF_COMPONENT_TYPE_FLOAT, TINYGLTF_TYPE_VEC4, frames)};
      const char* paths[2] = {"translation", "rotation"};
      for (int c = 0; c < 2; ++c) {
        tinygltf::AnimationSampler sampler;
        sampler.input = input;
        sampler.output = outputs[c];
        sampler.interpolation = "LINEAR";
        animation.samplers.push_back(sampler);
        tinygltf::AnimationChannel channel;
        channel.sampler = static_cast<int>(animation.samplers.size() - 1);
        channel.target_node = static_cast<int>(i + 1);
        channel.target_path = paths[c];
        animation.channels.push_back(channel);
      }
    }
  }
  model.animations.push_back(animation);
  return model;
}

}  // namespace

std::string TrajectoryRecorder::to_glb() const {
  const tinygltf::Model model =
      build_model(names_, body_mesh_, mesh_shapes_, mesh_kinds_, mesh_squares_, times_, poses_,
                  soft_);
  std::ostringstream out(std::ios::binary);
  tinygltf::TinyGLTF writer;
  if (!writer.WriteGltfSceneToStream(&model, out, false, true)) {
    throw std::runtime_error("glTF export: serialisation failed");
  }
  return out.str();
}

void TrajectoryRecorder::write_glb(const std::string& path) const {
  bool ok = false;
  {
    const tinygltf::Model model =
        build_model(names_, body_mesh_, mesh_shapes_, mesh_kinds_, mesh_squares_, times_,
                    poses_, soft_);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (out) {
      tinygltf::TinyGLTF writer;
      ok = writer.WriteGltfSceneToStream(&model, out, false, true);
      out.flush();
      ok = ok && static_cast<bool>(out);
    }
  }
  if (!ok) throw std::runtime_error("cannot write glTF file '" + path + "'");
}

}  // namespace mabd::io
