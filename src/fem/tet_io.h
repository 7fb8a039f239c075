// Tet mesh files: TetGen .node/.ele and Gmsh .msh (ASCII 2.2 and 4.1). Coordinates are read
// as metres. Only linear tetrahedra are read: Gmsh elements of other types (points, lines,
// triangles, ...) are skipped, quadratic tets (TetGen 10 nodes per tet, Gmsh type 11) are
// an error. Nodes used by no tet (Gmsh geometry points, ...) are dropped; the others keep
// their order in the file. Every error is a std::runtime_error "FILE: line N: what is wrong"
// ("FILE: what is wrong" if it concerns no line, e.g. a missing file or an empty mesh).
#pragma once

#include <string>
#include <vector>

#include "fem/tet_mesh.h"

namespace mabd::fem {

/// Reads `base`.node and `base`.ele (base without extension). If `node_ids` is given it
/// receives the file's number of each mesh node.
TetMesh read_tetgen(const std::string& base, std::vector<long long>* node_ids = nullptr);

/// Parses TetGen text (contents of a .node and an .ele file); the names are used in
/// messages. Format: '#' starts a comment; .node header "N 3 ATTRIBUTES MARKER(0|1)", then N
/// lines "ID X Y Z [attributes] [marker]"; .ele header "T 4 ATTRIBUTES", then T lines
/// "ID N1 N2 N3 N4 [attributes]" referring to node IDs (0- or 1-based alike).
TetMesh parse_tetgen(const std::string& node_text, const std::string& ele_text,
                     const std::string& node_name = "mesh.node",
                     const std::string& ele_name = "mesh.ele",
                     std::vector<long long>* node_ids = nullptr);

/// Reads a Gmsh ASCII .msh file of format 2.2 (2.0, 2.1) or 4.1.
TetMesh read_gmsh(const std::string& path, std::vector<long long>* node_ids = nullptr);

/// Parses Gmsh .msh text; `name` is used in messages.
TetMesh parse_gmsh(const std::string& text, const std::string& name = "mesh.msh",
                   std::vector<long long>* node_ids = nullptr);

/// Reads a mesh by extension: ".msh" -> read_gmsh, ".node" or ".ele" (or no extension) ->
/// read_tetgen of the base name.
TetMesh read_tet_mesh(const std::string& path);

/// Writes `base`.node and `base`.ele (1-based, full precision); `comment` (may be several
/// lines) is written as '#' lines at the top of both files.
void write_tetgen(const TetMesh& mesh, const std::string& base, const std::string& comment = "");

/// Writes an ASCII .msh file, format "2.2" or "4.1" (1-based tags, one volume entity).
void write_gmsh(const TetMesh& mesh, const std::string& path, const std::string& version = "4.1");

}  // namespace mabd::fem
