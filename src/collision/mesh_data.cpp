// Mesh preparation for collision queries.
#include "collision/mesh_data.h"

#include <memory>

namespace mabd::detail {

std::shared_ptr<const MeshData> make_mesh_data(const TriangleMesh& mesh, bool /*collider*/) {
  auto data = std::make_shared<MeshData>();
  data->vertices = mesh.vertices;
  data->triangles = mesh.triangles;
  data->lower = data->upper = mesh.vertices.front();
  for (const Vec3& v : mesh.vertices) {
    data->lower = data->lower.cwiseMin(v);
    data->upper = data->upper.cwiseMax(v);
  }
  data->hull_vertices.resize(mesh.vertices.size());
  for (std::size_t i = 0; i < mesh.vertices.size(); ++i) data->hull_vertices[i] = int(i);
  return data;
}

}  // namespace mabd::detail
