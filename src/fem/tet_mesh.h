// Linear tetrahedral mesh in its rest configuration. For tet e with nodes (a, b, c, d) the
// rest shape matrix is Dm = [X_b - X_a, X_c - X_a, X_d - X_a] (m), its volume V = det(Dm)/6
// (m^3, positive: the fourth node lies on the side of face (a, b, c) that the right-hand
// rule points to, the orientation of TetGen and Gmsh), and the deformation gradient of
// deformed positions x is F = Ds Dm^-1 with Ds = [x_b - x_a, x_c - x_a, x_d - x_a].
#pragma once

#include <array>
#include <string>
#include <vector>

#include "mabd/math.h"

namespace mabd::fem {

using Tet = std::array<int, 4>;  ///< node indices of one tetrahedron (0-based)

struct TetMesh {
  std::vector<Vec3> rest;       ///< rest node positions X_i (m)
  std::vector<Tet> tets;        ///< node indices of each tet, positive orientation
  std::vector<double> volume;   ///< rest volume V_e of each tet (m^3)
  std::vector<Mat3> Dm_inv;     ///< inverse rest shape matrix Dm^-1 of each tet (1/m)

  int num_nodes() const { return static_cast<int>(rest.size()); }
  int num_tets() const { return static_cast<int>(tets.size()); }
  double total_volume() const;  ///< sum of V_e (m^3)
};

/// Where a tet came from, for error messages: `source` names the file or generator and
/// `tet_lines` (optional, one entry per tet) the line of each tet in it.
struct MeshSource {
  std::string source = "mesh";
  std::vector<int> tet_lines;
};

/// Builds a mesh from node positions (m) and tets, computing V_e and Dm^-1. Throws
/// std::runtime_error "SOURCE: line N: ..." (or "SOURCE: tet k: ..." without line numbers)
/// on a node index out of range, a repeated node, a non-finite position, an inverted tet
/// (det Dm < 0) or a degenerate one (|det Dm| <= 1e-9 l^3, l its longest edge), and
/// "SOURCE: ..." on an empty mesh or a node used by no tet.
TetMesh make_tet_mesh(std::vector<Vec3> nodes, std::vector<Tet> tets,
                      const MeshSource& where = {});

/// How each cube of a box mesh is cut.
enum class BoxSplit {
  five,  ///< 5 tets (a central one and four corners), mirrored in a checkerboard so the
         ///< face diagonals of neighbouring cells match
  six,   ///< 6 tets around the cube's main diagonal (Kuhn / Freudenthal), the same in
         ///< every cell
};

/// Structured mesh of the box [lo, hi] (m) with nx x ny x nz cubes (each >= 1). Node
/// (i, j, k), 0 <= i <= nx etc., has index i + (nx + 1) (j + (ny + 1) k) and rest position
/// lo + (i/nx, j/ny, k/nz) * (hi - lo). Throws mabd::InvalidArgument on a bad size.
TetMesh make_box_mesh(const Vec3& lo, const Vec3& hi, int nx, int ny, int nz,
                      BoxSplit split = BoxSplit::six);

/// Index of node (i, j, k) of a box mesh with nx x ny cells in x and y.
inline int box_node(int i, int j, int k, int nx, int ny) {
  return i + (nx + 1) * (j + (ny + 1) * k);
}

}  // namespace mabd::fem
