// Mesh preparation for collision queries: convex hull (Bullet's btConvexHullComputer) for
// dynamic meshes, adjacency and a triangle tree for colliders.
#include "collision/mesh_data.h"

#include <BulletCollision/CollisionShapes/btConvexHullShape.h>
#include <LinearMath/btConvexHullComputer.h>

#include <algorithm>
#include <map>
#include <utility>

namespace mabd::detail {
namespace {

void build_hull(MeshData& m) {
  btConvexHullComputer hull;
  hull.compute(m.vertices.front().data(), int(sizeof(Vec3)), int(m.vertices.size()), 0, 0);
  m.hull_vertices.assign(hull.original_vertex_index.size(), 0);
  Vec3 centroid = Vec3::Zero();
  for (int i = 0; i < hull.original_vertex_index.size(); ++i) {
    m.hull_vertices[i] = hull.original_vertex_index[i];
    centroid += m.vertices[m.hull_vertices[i]];
  }
  centroid /= double(std::max<std::size_t>(1, m.hull_vertices.size()));
  std::vector<int> loop;
  for (int f = 0; f < hull.faces.size(); ++f) {
    // The face polygon (its edges run counter-clockwise), in the input's own coordinates.
    const btConvexHullComputer::Edge* first = &hull.edges[hull.faces[f]];
    const btConvexHullComputer::Edge* e = first;
    loop.clear();
    do {
      loop.push_back(m.hull_vertices[e->getSourceVertex()]);
      e = e->getNextEdgeOfFace();
    } while (e != first && loop.size() < m.hull_vertices.size());
    // Newell's normal.
    Vec3 normal = Vec3::Zero();
    Vec3 point = Vec3::Zero();
    for (std::size_t k = 0; k < loop.size(); ++k) {
      const Vec3& a = m.vertices[loop[k]];
      const Vec3& b = m.vertices[loop[(k + 1) % loop.size()]];
      normal += Vec3((a.y() - b.y()) * (a.z() + b.z()), (a.z() - b.z()) * (a.x() + b.x()),
                     (a.x() - b.x()) * (a.y() + b.y()));
      point += a;
    }
    if (normal.norm() <= 0) continue;
    normal.normalize();
    point /= double(loop.size());
    if (normal.dot(centroid - point) > 0) normal = -normal;  // outward
    m.hull_planes.emplace_back(normal.x(), normal.y(), normal.z(), normal.dot(point));
    for (std::size_t k = 1; k + 1 < loop.size(); ++k) {
      m.hull_triangles.push_back({loop[0], loop[k], loop[k + 1]});
    }
  }
  auto shape = std::make_shared<btConvexHullShape>();
  for (int v : m.hull_vertices) {
    const Vec3& p = m.vertices[v];
    shape->addPoint(btVector3(p.x(), p.y(), p.z()), false);
  }
  shape->recalcLocalAabb();
  shape->setMargin(0);
  m.hull_shape = std::move(shape);
}

void build_triangles(MeshData& m) {
  const std::size_t nt = m.triangles.size();
  m.normals.resize(nt);
  m.neighbors.assign(nt, {-1, -1, -1});
  std::map<std::pair<int, int>, std::pair<int, int>> edges;  // edge -> (triangle, edge slot)
  std::vector<int> counts(m.vertices.size() + 1, 0);
  for (std::size_t t = 0; t < nt; ++t) {
    const auto& tri = m.triangles[t];
    const Vec3& a = m.vertices[tri[0]];
    const Vec3 n = (m.vertices[tri[1]] - a).cross(m.vertices[tri[2]] - a);
    m.normals[t] = n.norm() > 0 ? Vec3(n.normalized()) : Vec3::Zero();
    Vec3 lower = a, upper = a;
    for (int k = 0; k < 3; ++k) {
      lower = lower.cwiseMin(m.vertices[tri[k]]);
      upper = upper.cwiseMax(m.vertices[tri[k]]);
      ++counts[tri[k] + 1];
      const std::pair<int, int> key(std::min(tri[k], tri[(k + 1) % 3]),
                                    std::max(tri[k], tri[(k + 1) % 3]));
      auto [it, inserted] = edges.emplace(key, std::pair<int, int>(int(t), k));
      if (!inserted && m.neighbors[it->second.first][it->second.second] < 0) {
        m.neighbors[it->second.first][it->second.second] = int(t);
        m.neighbors[t][k] = it->second.first;
      }
    }
    m.tree.set(std::uint32_t(t), lower, upper);
  }
  m.sharp_edges.assign(nt, {true, true, true});
  const double scale = (m.upper - m.lower).norm();
  for (std::size_t t = 0; t < nt; ++t) {
    for (int k = 0; k < 3; ++k) {
      const int nb = m.neighbors[t][k];
      if (nb < 0) continue;
      const Vec3& a = m.vertices[m.triangles[t][k]];
      double below = 0;  // the neighbour's vertices relative to this triangle's plane
      for (int v : m.triangles[nb]) below = std::min(below, m.normals[t].dot(m.vertices[v] - a));
      m.sharp_edges[t][k] = below < -1e-9 * scale;
    }
  }
  for (std::size_t v = 0; v < m.vertices.size(); ++v) counts[v + 1] += counts[v];
  m.vertex_triangle_offsets = counts;
  m.vertex_triangles.resize(std::size_t(counts.back()));
  for (std::size_t t = 0; t < nt; ++t) {
    for (int v : m.triangles[t]) m.vertex_triangles[std::size_t(counts[v]++)] = int(t);
  }
}

}  // namespace

std::shared_ptr<const MeshData> make_mesh_data(const TriangleMesh& mesh, bool collider) {
  auto data = std::make_shared<MeshData>();
  data->vertices = mesh.vertices;
  data->triangles = mesh.triangles;
  data->lower = data->upper = mesh.vertices.front();
  for (const Vec3& v : mesh.vertices) {
    data->lower = data->lower.cwiseMin(v);
    data->upper = data->upper.cwiseMax(v);
  }
  if (collider) {
    build_triangles(*data);
  } else {
    build_hull(*data);
  }
  return data;
}

}  // namespace mabd::detail
