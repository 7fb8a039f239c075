// Soft bodies of a scene file (scene_soft.h).
#include "io/scene_soft.h"

#include <filesystem>
#include <stdexcept>

#include "fem/tet_io.h"
#include "fem/tet_mesh.h"
#include "mabd/error.h"

namespace mabd::io {
namespace {

const std::vector<std::string> kSoftFields = {"name",     "mesh",     "box",
                                              "position", "scale",    "material",
                                              "linear_velocity", "attach", "face_contacts"};
const std::vector<std::string> kBoxFields = {"size", "cells"};
const std::vector<std::string> kAttachFields = {"body", "nodes", "region"};
const std::vector<std::string> kRegionFields = {"min", "max"};

fem::TetMesh read_mesh(const Node& node, const std::string& base_dir) {
  const std::string file = node.string();
  std::filesystem::path path(file);
  if (path.is_relative()) path = std::filesystem::path(base_dir) / path;
  try {
    return fem::read_tet_mesh(path.string());
  } catch (const std::exception& e) {
    node.fail(e.what());
  }
}

fem::TetMesh box_mesh(const Node& node) {
  node.expect_object();
  node.check_fields(kBoxFields);
  const Node size = node.require("size");
  const Vec3 s = size.vec3();
  if (!(s.minCoeff() > 0)) size.fail("every extent must be positive");
  const Node cells = node.require("cells");
  cells.expect_array();
  if (cells.size() != 3) cells.fail("needs 3 cell counts (x, y, z)");
  int n[3];
  for (int k = 0; k < 3; ++k) n[k] = cells.element(k).integer(1);
  if (static_cast<double>(n[0]) * n[1] * n[2] > 1e6) cells.fail("more than a million cells");
  return fem::make_box_mesh(-0.5 * s, 0.5 * s, n[0], n[1], n[2]);
}

void parse_attach(const Node& item, const SoftBodyDef& def, SceneSoftBody& out) {
  item.expect_object();
  item.check_fields(kAttachFields);
  const std::string body = item.require("body").string();
  const int n = static_cast<int>(def.nodes.size());
  std::vector<int> nodes;
  if (auto list = item.get("nodes")) {
    list->expect_array();
    for (std::size_t k = 0; k < list->size(); ++k) {
      const Node e = list->element(k);
      const int i = e.integer(0);
      if (i >= n) e.fail("node " + std::to_string(i) + " out of range [0, " + std::to_string(n) + ")");
      nodes.push_back(i);
    }
  }
  if (auto region = item.get("region")) {
    region->expect_object();
    region->check_fields(kRegionFields);
    const Vec3 lo = region->require("min").vec3(), hi = region->require("max").vec3();
    for (int i = 0; i < n; ++i) {
      const Vec3& x = def.nodes[i];
      if ((x.array() >= lo.array()).all() && (x.array() <= hi.array()).all()) nodes.push_back(i);
    }
    if (nodes.empty()) region->fail("holds no node of the soft body");
  }
  if (!item.has("nodes") && !item.has("region")) item.fail("needs 'nodes' or 'region'");
  for (int i : nodes) {
    out.def.attachments.push_back({i, BodyId{}});
    out.attach_bodies.push_back(body);
  }
}

}  // namespace

void add_soft_bodies(const Node& soft_bodies, const std::string& base_dir,
                     const std::function<Material(const Node&)>& material, Scene& scene) {
  soft_bodies.expect_array();
  for (std::size_t i = 0; i < soft_bodies.size(); ++i) {
    Node item = soft_bodies.element(i).relabel("soft_bodies[" + std::to_string(i) + "]");
    item.expect_object();
    item.check_fields(kSoftFields);
    SceneSoftBody soft;
    SoftBodyDef& def = soft.def;
    if (auto n = item.get("name")) {
      def.name = n->string();
      item = item.relabel(item.where() + " '" + def.name + "'");
    }
    fem::TetMesh mesh;
    const auto mesh_node = item.get("mesh");
    const auto box_node = item.get("box");
    if (mesh_node.has_value() == box_node.has_value()) item.fail("needs one of 'mesh' or 'box'");
    mesh = mesh_node ? read_mesh(*mesh_node, base_dir) : box_mesh(*box_node);
    const double scale = item.has("scale") ? item.require("scale").positive() : 1.0;
    const Vec3 position = item.has("position") ? item.require("position").vec3() : Vec3::Zero();
    def.nodes.reserve(mesh.rest.size());
    for (const Vec3& x : mesh.rest) def.nodes.push_back(position + scale * x);
    def.tets.assign(mesh.tets.begin(), mesh.tets.end());
    if (auto n = item.get("material")) def.material = material(*n);
    if (auto n = item.get("linear_velocity")) def.linear_velocity = n->vec3();
    if (auto n = item.get("face_contacts")) def.face_contacts = n->boolean();
    if (auto list = item.get("attach")) {
      list->expect_array();
      for (std::size_t k = 0; k < list->size(); ++k) parse_attach(list->element(k), def, soft);
    }
    for (const SceneSoftBody& other : scene.soft_bodies) {
      if (!def.name.empty() && other.def.name == def.name) {
        item.fail("duplicate soft body name '" + def.name + "'");
      }
    }
    scene.soft_bodies.push_back(std::move(soft));
  }
}

}  // namespace mabd::io
