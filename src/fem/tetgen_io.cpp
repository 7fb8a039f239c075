// TetGen .node/.ele reader and writer (see tet_io.h).
#include <cstdio>
#include <sstream>
#include <unordered_set>

#include "fem/tet_io.h"
#include "fem/tet_io_detail.h"
#include "fem/text_reader.h"

namespace mabd::fem {

TetMesh parse_tetgen(const std::string& node_text, const std::string& ele_text,
                     const std::string& node_name, const std::string& ele_name,
                     std::vector<long long>* node_ids) {
  detail::RawMesh raw;
  {
    detail::TextReader r(node_text, node_name, '#');
    r.require("the header 'POINTS 3 ATTRIBUTES MARKERS'");
    r.expect_fields(1, 4, "header");
    const long long n = r.integer(0, "number of points");
    if (n <= 0) r.fail("number of points " + std::to_string(n) + " must be positive");
    if (r.size() > 1 && r.integer(1, "dimension") != 3) {
      r.fail("dimension " + r.field(1) + " is not 3");
    }
    const long long attributes = r.size() > 2 ? r.integer(2, "number of attributes") : 0;
    const long long markers = r.size() > 3 ? r.integer(3, "boundary marker flag") : 0;
    if (attributes < 0) r.fail("negative number of attributes");
    if (markers != 0 && markers != 1) r.fail("boundary marker flag must be 0 or 1");
    const int fields = 4 + static_cast<int>(attributes + markers);
    std::unordered_set<long long> seen;
    for (long long i = 0; i < n; ++i) {
      r.require(std::to_string(n) + " points, found " + std::to_string(i));
      r.expect_fields(fields, fields, "point");
      const long long id = r.integer(0, "point number");
      if (!seen.insert(id).second) r.fail("duplicate point number " + std::to_string(id));
      raw.node_ids.push_back(id);
      raw.nodes.emplace_back(r.real(1, "x"), r.real(2, "y"), r.real(3, "z"));
    }
    if (r.next()) r.fail("unexpected data after the " + std::to_string(n) + " points");
  }
  {
    detail::TextReader r(ele_text, ele_name, '#');
    r.require("the header 'TETRAHEDRA NODES_PER_TET ATTRIBUTES'");
    r.expect_fields(1, 3, "header");
    const long long n = r.integer(0, "number of tetrahedra");
    if (n <= 0) r.fail("number of tetrahedra " + std::to_string(n) + " must be positive");
    const long long per = r.size() > 1 ? r.integer(1, "nodes per tetrahedron") : 4;
    if (per == 10) r.fail("10-node (quadratic) tetrahedra are not supported");
    if (per != 4) r.fail("nodes per tetrahedron " + std::to_string(per) + " is not 4");
    const long long attributes = r.size() > 2 ? r.integer(2, "number of attributes") : 0;
    if (attributes < 0) r.fail("negative number of attributes");
    const int fields = 5 + static_cast<int>(attributes);
    raw.tet_file = ele_name;
    std::unordered_set<long long> seen;
    for (long long e = 0; e < n; ++e) {
      r.require(std::to_string(n) + " tetrahedra, found " + std::to_string(e));
      r.expect_fields(fields, fields, "tetrahedron");
      const long long id = r.integer(0, "tetrahedron number");
      if (!seen.insert(id).second) r.fail("duplicate tetrahedron number " + std::to_string(id));
      std::array<long long, 4> t;
      for (int a = 0; a < 4; ++a) t[a] = r.integer(1 + a, "node number");
      raw.tets.push_back(t);
      raw.tet_lines.push_back(r.line());
    }
    if (r.next()) r.fail("unexpected data after the " + std::to_string(n) + " tetrahedra");
  }
  return detail::build_mesh(raw, node_ids);
}

void write_tetgen(const TetMesh& mesh, const std::string& base, const std::string& comment) {
  std::string head;
  {
    std::istringstream c(comment);
    std::string line;
    while (std::getline(c, line)) head += "# " + line + "\n";
  }
  char buf[128];
  std::string node = head;
  std::snprintf(buf, sizeof buf, "%d 3 0 0\n", mesh.num_nodes());
  node += buf;
  for (int i = 0; i < mesh.num_nodes(); ++i) {
    const Vec3& p = mesh.rest[i];
    std::snprintf(buf, sizeof buf, "%d %.17g %.17g %.17g\n", i + 1, p.x(), p.y(), p.z());
    node += buf;
  }
  std::string ele = head;
  std::snprintf(buf, sizeof buf, "%d 4 0\n", mesh.num_tets());
  ele += buf;
  for (int e = 0; e < mesh.num_tets(); ++e) {
    const Tet& t = mesh.tets[e];
    std::snprintf(buf, sizeof buf, "%d %d %d %d %d\n", e + 1, t[0] + 1, t[1] + 1, t[2] + 1,
                  t[3] + 1);
    ele += buf;
  }
  detail::write_file_text(base + ".node", node);
  detail::write_file_text(base + ".ele", ele);
}

}  // namespace mabd::fem
