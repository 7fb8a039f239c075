// File access shared by the mesh readers and writers, and the id -> index resolution (see
// tet_io.h).
#include "fem/tet_io.h"

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "fem/tet_io_detail.h"

namespace mabd::fem {
namespace detail {

std::string read_file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error(path + ": cannot open file for writing");
  out << text;
  if (!out) throw std::runtime_error(path + ": write failed");
}

TetMesh build_mesh(const RawMesh& raw, std::vector<long long>* node_ids) {
  // File node id -> position in raw.node_ids; duplicate ids were rejected by the parsers.
  std::unordered_map<long long, int> index;
  index.reserve(raw.node_ids.size());
  for (int i = 0; i < static_cast<int>(raw.node_ids.size()); ++i) index[raw.node_ids[i]] = i;
  // Compact to the nodes used by some tet, keeping the file order.
  std::vector<int> used(raw.node_ids.size(), -1);
  std::vector<Tet> tets(raw.tets.size());
  for (size_t e = 0; e < raw.tets.size(); ++e) {
    for (int a = 0; a < 4; ++a) {
      const auto it = index.find(raw.tets[e][a]);
      if (it == index.end()) {
        throw std::runtime_error(raw.tet_file + ": line " + std::to_string(raw.tet_lines[e]) +
                                 ": unknown node " + std::to_string(raw.tets[e][a]));
      }
      used[it->second] = 0;
      tets[e][a] = it->second;
    }
  }
  std::vector<Vec3> nodes;
  if (node_ids) node_ids->clear();
  for (size_t i = 0; i < used.size(); ++i) {
    if (used[i] < 0) continue;
    used[i] = static_cast<int>(nodes.size());
    nodes.push_back(raw.nodes[i]);
    if (node_ids) node_ids->push_back(raw.node_ids[i]);
  }
  for (Tet& t : tets) {
    for (int& a : t) a = used[a];
  }
  return make_tet_mesh(std::move(nodes), std::move(tets), {raw.tet_file, raw.tet_lines});
}

}  // namespace detail

TetMesh read_tetgen(const std::string& base, std::vector<long long>* node_ids) {
  const std::string node = base + ".node", ele = base + ".ele";
  const std::string node_text = detail::read_file_text(node);  // .node first, in order
  const std::string ele_text = detail::read_file_text(ele);
  return parse_tetgen(node_text, ele_text, node, ele, node_ids);
}

TetMesh read_gmsh(const std::string& path, std::vector<long long>* node_ids) {
  return parse_gmsh(detail::read_file_text(path), path, node_ids);
}

TetMesh read_tet_mesh(const std::string& path) {
  const auto ends_with = [&](const std::string& s) {
    return path.size() >= s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0;
  };
  if (ends_with(".msh")) return read_gmsh(path);
  if (ends_with(".node") || ends_with(".ele")) {
    return read_tetgen(path.substr(0, path.rfind('.')));
  }
  return read_tetgen(path);
}

}  // namespace mabd::fem
