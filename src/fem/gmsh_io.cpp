// Gmsh ASCII .msh reader (formats 2.2 and 4.1) and writer (see tet_io.h).
#include <cstdio>
#include <unordered_set>

#include "fem/tet_io.h"
#include "fem/tet_io_detail.h"
#include "fem/text_reader.h"

namespace mabd::fem {
namespace {

constexpr int kTet4 = 4;    // Gmsh element type of the 4-node tetrahedron
constexpr int kTet10 = 11;  // 10-node (quadratic) tetrahedron

struct Reader {
  detail::TextReader& r;
  detail::RawMesh& raw;
  std::unordered_set<long long> seen_nodes, seen_elements;

  /// Next line of a section, which must not be a section marker.
  void data_line(const std::string& expected) {
    r.require(expected);
    if (r.field(0)[0] == '$') r.fail("found " + r.field(0) + ", expected " + expected);
  }

  void add_node(long long id, const Vec3& p) {
    if (!seen_nodes.insert(id).second) r.fail("duplicate node tag " + std::to_string(id));
    raw.node_ids.push_back(id);
    raw.nodes.push_back(p);
  }

  /// Checks an element's type and tag; returns true for a linear tet.
  bool element_type(long long type, long long tag) {
    if (!seen_elements.insert(tag).second) r.fail("duplicate element tag " + std::to_string(tag));
    if (type == kTet10) {
      r.fail("element type 11 (10-node tetrahedron) is not supported, only type 4");
    }
    return type == kTet4;
  }

  void add_tet(int first) {
    std::array<long long, 4> t;
    for (int a = 0; a < 4; ++a) t[a] = r.integer(first + a, "node tag");
    raw.tets.push_back(t);
    raw.tet_lines.push_back(r.line());
  }

  // Format 2: "N" then N lines "TAG X Y Z".
  void nodes_v2() {
    data_line("the number of nodes");
    r.expect_fields(1, 1, "number of nodes");
    const long long n = r.integer(0, "number of nodes");
    if (n < 0) r.fail("negative number of nodes");
    for (long long i = 0; i < n; ++i) {
      data_line(std::to_string(n) + " nodes, found " + std::to_string(i));
      r.expect_fields(4, 4, "node");
      add_node(r.integer(0, "node tag"), Vec3(r.real(1, "x"), r.real(2, "y"), r.real(3, "z")));
    }
  }

  // Format 2: "N" then N lines "TAG TYPE NTAGS TAGS... NODES...".
  void elements_v2() {
    data_line("the number of elements");
    r.expect_fields(1, 1, "number of elements");
    const long long n = r.integer(0, "number of elements");
    if (n < 0) r.fail("negative number of elements");
    for (long long i = 0; i < n; ++i) {
      data_line(std::to_string(n) + " elements, found " + std::to_string(i));
      if (r.size() < 3) r.fail("element: fewer than 3 fields");
      const long long tag = r.integer(0, "element tag");
      const long long type = r.integer(1, "element type");
      const long long ntags = r.integer(2, "number of tags");
      if (ntags < 0) r.fail("negative number of tags");
      if (!element_type(type, tag)) continue;
      const int fields = 3 + static_cast<int>(ntags) + 4;
      r.expect_fields(fields, fields, "tetrahedron");
      add_tet(3 + static_cast<int>(ntags));
    }
  }

  // Format 4.1: "BLOCKS N MIN MAX", per block "DIM ENTITY PARAMETRIC COUNT", COUNT tag lines,
  // then COUNT coordinate lines "X Y Z [U V W]".
  void nodes_v4() {
    data_line("'BLOCKS NODES MIN_TAG MAX_TAG'");
    r.expect_fields(4, 4, "nodes header");
    const long long blocks = r.integer(0, "number of blocks");
    const long long n = r.integer(1, "number of nodes");
    if (blocks < 0 || n < 0) r.fail("negative count in the nodes header");
    long long read = 0;
    for (long long b = 0; b < blocks; ++b) {
      data_line("a node block header 'DIM ENTITY PARAMETRIC COUNT'");
      r.expect_fields(4, 4, "node block header");
      const long long count = r.integer(3, "number of nodes in block");
      if (count < 0) r.fail("negative number of nodes in block");
      std::vector<long long> tags(count);
      for (long long i = 0; i < count; ++i) {
        data_line(std::to_string(count) + " node tags, found " + std::to_string(i));
        r.expect_fields(1, 1, "node tag");
        tags[i] = r.integer(0, "node tag");
      }
      for (long long i = 0; i < count; ++i) {
        data_line(std::to_string(count) + " node coordinates, found " + std::to_string(i));
        r.expect_fields(3, 6, "node coordinates");
        add_node(tags[i], Vec3(r.real(0, "x"), r.real(1, "y"), r.real(2, "z")));
      }
      read += count;
    }
    if (read != n) {
      r.fail("the nodes header announces " + std::to_string(n) + " nodes, the blocks hold " +
             std::to_string(read));
    }
  }

  // Format 4.1: "BLOCKS N MIN MAX", per block "DIM ENTITY TYPE COUNT" and COUNT lines
  // "TAG NODES...".
  void elements_v4() {
    data_line("'BLOCKS ELEMENTS MIN_TAG MAX_TAG'");
    r.expect_fields(4, 4, "elements header");
    const long long blocks = r.integer(0, "number of blocks");
    const long long n = r.integer(1, "number of elements");
    if (blocks < 0 || n < 0) r.fail("negative count in the elements header");
    long long read = 0;
    for (long long b = 0; b < blocks; ++b) {
      data_line("an element block header 'DIM ENTITY TYPE COUNT'");
      r.expect_fields(4, 4, "element block header");
      const long long type = r.integer(2, "element type");
      const long long count = r.integer(3, "number of elements in block");
      if (count < 0) r.fail("negative number of elements in block");
      for (long long i = 0; i < count; ++i) {
        data_line(std::to_string(count) + " elements, found " + std::to_string(i));
        if (!element_type(type, r.integer(0, "element tag"))) continue;
        r.expect_fields(5, 5, "tetrahedron");
        add_tet(1);
      }
      read += count;
    }
    if (read != n) {
      r.fail("the elements header announces " + std::to_string(n) + " elements, the blocks hold " +
             std::to_string(read));
    }
  }

  /// Requires the line `end` (e.g. "$EndNodes") next.
  void end_section(const std::string& end) {
    r.require(end);
    if (r.field(0) != end) r.fail("expected " + end + ", found '" + r.field(0) + "'");
  }
};

}  // namespace

TetMesh parse_gmsh(const std::string& text, const std::string& name,
                   std::vector<long long>* node_ids) {
  detail::TextReader r(text, name);
  detail::RawMesh raw;
  raw.tet_file = name;
  Reader reader{r, raw, {}, {}};
  r.require("$MeshFormat");
  if (r.field(0) != "$MeshFormat") r.fail("expected $MeshFormat, found '" + r.field(0) + "'");
  reader.data_line("the format line 'VERSION FILE_TYPE DATA_SIZE'");
  r.expect_fields(3, 3, "format line");
  const std::string& version = r.field(0);
  const bool v2 = version == "2" || version == "2.0" || version == "2.1" || version == "2.2";
  if (!v2 && version != "4.1") {
    r.fail("unsupported .msh version " + version + " (versions 2.2 and 4.1 are read)");
  }
  if (r.integer(1, "file type") != 0) {
    r.fail("binary .msh files are not supported (save the mesh as ASCII)");
  }
  reader.end_section("$EndMeshFormat");
  bool have_nodes = false, have_elements = false;
  while (r.next()) {
    const std::string section = r.field(0);
    if (section[0] != '$') r.fail("expected a section such as $Nodes, found '" + section + "'");
    if (section == "$Nodes" || section == "$Elements") {
      bool& have = section == "$Nodes" ? have_nodes : have_elements;
      if (have) r.fail("second " + section + " section");
      have = true;
      if (section == "$Nodes") {
        v2 ? reader.nodes_v2() : reader.nodes_v4();
        reader.end_section("$EndNodes");
      } else {
        v2 ? reader.elements_v2() : reader.elements_v4();
        reader.end_section("$EndElements");
      }
      continue;
    }
    // Any other section ($Entities, $PhysicalNames, $NodeData, ...) is skipped.
    const std::string end = "$End" + section.substr(1);
    for (;;) {
      r.require(end);
      if (r.field(0) == end) break;
    }
  }
  if (!have_nodes) throw std::runtime_error(name + ": no $Nodes section");
  if (!have_elements) throw std::runtime_error(name + ": no $Elements section");
  if (raw.tets.empty()) throw std::runtime_error(name + ": no tetrahedra (element type 4)");
  return detail::build_mesh(raw, node_ids);
}

void write_gmsh(const TetMesh& mesh, const std::string& path, const std::string& version) {
  if (version != "2.2" && version != "4.1") {
    throw std::runtime_error(path + ": cannot write .msh version " + version + " (2.2 or 4.1)");
  }
  const int n = mesh.num_nodes(), t = mesh.num_tets();
  std::string s = "$MeshFormat\n" + version + " 0 8\n$EndMeshFormat\n";
  char buf[256];
  if (version == "2.2") {
    s += "$Nodes\n" + std::to_string(n) + "\n";
    for (int i = 0; i < n; ++i) {
      const Vec3& p = mesh.rest[i];
      std::snprintf(buf, sizeof buf, "%d %.17g %.17g %.17g\n", i + 1, p.x(), p.y(), p.z());
      s += buf;
    }
    s += "$EndNodes\n$Elements\n" + std::to_string(t) + "\n";
    for (int e = 0; e < t; ++e) {
      const Tet& k = mesh.tets[e];
      std::snprintf(buf, sizeof buf, "%d 4 2 0 1 %d %d %d %d\n", e + 1, k[0] + 1, k[1] + 1,
                    k[2] + 1, k[3] + 1);
      s += buf;
    }
    s += "$EndElements\n";
  } else {
    Vec3 lo = mesh.rest[0], hi = mesh.rest[0];
    for (const Vec3& p : mesh.rest) {
      lo = lo.cwiseMin(p);
      hi = hi.cwiseMax(p);
    }
    std::snprintf(buf, sizeof buf, "$Entities\n0 0 0 1\n1 %.17g %.17g %.17g %.17g %.17g %.17g 0 0\n"
                  "$EndEntities\n", lo.x(), lo.y(), lo.z(), hi.x(), hi.y(), hi.z());
    s += buf;
    s += "$Nodes\n1 " + std::to_string(n) + " 1 " + std::to_string(n) + "\n3 1 0 " +
         std::to_string(n) + "\n";
    for (int i = 0; i < n; ++i) s += std::to_string(i + 1) + "\n";
    for (int i = 0; i < n; ++i) {
      const Vec3& p = mesh.rest[i];
      std::snprintf(buf, sizeof buf, "%.17g %.17g %.17g\n", p.x(), p.y(), p.z());
      s += buf;
    }
    s += "$EndNodes\n$Elements\n1 " + std::to_string(t) + " 1 " + std::to_string(t) + "\n3 1 4 " +
         std::to_string(t) + "\n";
    for (int e = 0; e < t; ++e) {
      const Tet& k = mesh.tets[e];
      std::snprintf(buf, sizeof buf, "%d %d %d %d %d\n", e + 1, k[0] + 1, k[1] + 1, k[2] + 1,
                    k[3] + 1);
      s += buf;
    }
    s += "$EndElements\n";
  }
  detail::write_file_text(path, s);
}

}  // namespace mabd::fem
