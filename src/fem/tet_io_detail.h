// Pieces shared by the TetGen and Gmsh readers (internal; see tet_io.h).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "fem/tet_mesh.h"

namespace mabd::fem::detail {

/// A mesh as read, before node ids are resolved.
struct RawMesh {
  std::vector<long long> node_ids;   ///< file id of each node, no duplicates
  std::vector<Vec3> nodes;           ///< position of each node (m)
  std::vector<std::array<long long, 4>> tets;  ///< node ids of each tet
  std::vector<int> tet_lines;        ///< line of each tet in tet_file
  std::string tet_file;              ///< file the tets were read from
};

/// Whole file as a string; throws "PATH: cannot open file".
std::string read_file_text(const std::string& path);
void write_file_text(const std::string& path, const std::string& text);

/// Resolves node ids ("FILE: line N: unknown node ID"), drops unused nodes and builds the
/// mesh (make_tet_mesh, with the tets' lines in its messages).
TetMesh build_mesh(const RawMesh& raw, std::vector<long long>* node_ids);

}  // namespace mabd::fem::detail
