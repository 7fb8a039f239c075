// Rest-shape quantities of a tet mesh and the structured box generator (see tet_mesh.h).
#include "fem/tet_mesh.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "mabd/error.h"

namespace mabd::fem {
namespace {

std::string item(const MeshSource& where, int e) {
  std::ostringstream s;
  s << where.source << ": ";
  if (e < static_cast<int>(where.tet_lines.size())) {
    s << "line " << where.tet_lines[e] << ": ";
  } else {
    s << "tet " << e << ": ";
  }
  return s.str();
}

}  // namespace

double TetMesh::total_volume() const {
  double v = 0;
  for (double ve : volume) v += ve;
  return v;
}

TetMesh make_tet_mesh(std::vector<Vec3> nodes, std::vector<Tet> tets, const MeshSource& where) {
  if (tets.empty()) throw std::runtime_error(where.source + ": no tetrahedra");
  const int n = static_cast<int>(nodes.size());
  for (int i = 0; i < n; ++i) {
    if (!nodes[i].allFinite()) {
      throw std::runtime_error(where.source + ": node " + std::to_string(i) +
                               ": non-finite position");
    }
  }
  TetMesh mesh;
  mesh.volume.reserve(tets.size());
  mesh.Dm_inv.reserve(tets.size());
  std::vector<char> used(n, 0);
  for (int e = 0; e < static_cast<int>(tets.size()); ++e) {
    const Tet& t = tets[e];
    for (int a = 0; a < 4; ++a) {
      if (t[a] < 0 || t[a] >= n) {
        throw std::runtime_error(item(where, e) + "node index " + std::to_string(t[a]) +
                                 " out of range [0, " + std::to_string(n) + ")");
      }
      for (int b = 0; b < a; ++b) {
        if (t[a] == t[b]) {
          throw std::runtime_error(item(where, e) + "node " + std::to_string(t[a]) +
                                   " appears twice");
        }
      }
      used[t[a]] = 1;
    }
    Mat3 Dm;
    for (int k = 0; k < 3; ++k) Dm.col(k) = nodes[t[k + 1]] - nodes[t[0]];
    double l = 0;  // longest edge
    for (int a = 0; a < 4; ++a) {
      for (int b = 0; b < a; ++b) l = std::max(l, (nodes[t[a]] - nodes[t[b]]).norm());
    }
    const double det = Dm.determinant();
    if (std::abs(det) <= 1e-9 * l * l * l) {
      std::ostringstream s;
      s << item(where, e) << "degenerate tetrahedron (volume " << det / 6 << " m^3, longest edge "
        << l << " m)";
      throw std::runtime_error(s.str());
    }
    if (det < 0) {
      std::ostringstream s;
      s << item(where, e) << "inverted tetrahedron (signed volume " << det / 6
        << " m^3; swap two nodes)";
      throw std::runtime_error(s.str());
    }
    mesh.volume.push_back(det / 6);
    mesh.Dm_inv.push_back(Dm.inverse());
  }
  for (int i = 0; i < n; ++i) {
    if (!used[i]) {
      throw std::runtime_error(where.source + ": node " + std::to_string(i) +
                               " belongs to no tetrahedron");
    }
  }
  mesh.rest = std::move(nodes);
  mesh.tets = std::move(tets);
  return mesh;
}

TetMesh make_box_mesh(const Vec3& lo, const Vec3& hi, int nx, int ny, int nz, BoxSplit split) {
  if (nx < 1 || ny < 1 || nz < 1 || !((hi - lo).minCoeff() > 0)) {
    throw InvalidArgument("make_box_mesh: need nx, ny, nz >= 1 and hi > lo componentwise");
  }
  std::vector<Vec3> nodes;
  nodes.reserve((nx + 1) * (ny + 1) * (nz + 1));
  for (int k = 0; k <= nz; ++k) {
    for (int j = 0; j <= ny; ++j) {
      for (int i = 0; i <= nx; ++i) {
        const Vec3 s(double(i) / nx, double(j) / ny, double(k) / nz);
        nodes.push_back(lo + s.cwiseProduct(hi - lo));
      }
    }
  }
  // Corner c = (bit0, bit1, bit2) of a cell.
  std::vector<Tet> tets;
  auto add = [&](int i, int j, int k, std::array<int, 4> corners) {
    Tet t;
    for (int a = 0; a < 4; ++a) {
      const int c = corners[a];
      t[a] = box_node(i + (c & 1), j + ((c >> 1) & 1), k + ((c >> 2) & 1), nx, ny);
    }
    Mat3 D;
    for (int a = 0; a < 3; ++a) D.col(a) = nodes[t[a + 1]] - nodes[t[0]];
    if (D.determinant() < 0) std::swap(t[2], t[3]);
    tets.push_back(t);
  };
  for (int k = 0; k < nz; ++k) {
    for (int j = 0; j < ny; ++j) {
      for (int i = 0; i < nx; ++i) {
        if (split == BoxSplit::six) {
          // Paths 0 -> 7 along the three axes in every order.
          static constexpr int axes[6][3] = {{1, 2, 4}, {1, 4, 2}, {2, 1, 4},
                                             {2, 4, 1}, {4, 1, 2}, {4, 2, 1}};
          for (const auto& p : axes) add(i, j, k, {0, p[0], p[0] + p[1], 7});
        } else if ((i + j + k) % 2 == 0) {
          add(i, j, k, {1, 2, 4, 7});  // central tet on the odd corners
          add(i, j, k, {0, 1, 2, 4});
          add(i, j, k, {3, 1, 2, 7});
          add(i, j, k, {5, 1, 4, 7});
          add(i, j, k, {6, 2, 4, 7});
        } else {
          add(i, j, k, {0, 3, 5, 6});  // central tet on the even corners
          add(i, j, k, {1, 0, 3, 5});
          add(i, j, k, {2, 0, 3, 6});
          add(i, j, k, {4, 0, 5, 6});
          add(i, j, k, {7, 3, 5, 6});
        }
      }
    }
  }
  return make_tet_mesh(std::move(nodes), std::move(tets), {"box mesh", {}});
}

}  // namespace mabd::fem
