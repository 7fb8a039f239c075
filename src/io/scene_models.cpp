// Robot models placed in a scene: load, rename, move to the base pose, append.
#include "io/scene_models.h"

#include <cmath>
#include <filesystem>
#include <set>

#include "mabd/error.h"

namespace mabd::io {

namespace {

const std::vector<std::string> kModelFields = {"file", "position", "orientation", "prefix",
                                               "floating_base"};

/// The rigid motion x -> R x + p that places a model.
struct Placement {
  Quat R = Quat::Identity();
  Vec3 p = Vec3::Zero();
  Vec3 point(const Vec3& x) const { return R * x + p; }
  Vec3 vector(const Vec3& v) const { return R * v; }
  Pose pose(const Pose& x) const { return Pose{point(x.position), (R * x.orientation).normalized()}; }
};

void place_body(const Placement& m, BodyDef& b) {
  b.position = m.point(b.position);
  b.orientation = (m.R * b.orientation).normalized();
  b.linear_velocity = m.vector(b.linear_velocity);
  b.angular_velocity = m.vector(b.angular_velocity);
}

/// Joint data given in world coordinates moves with the model; frames in a body's own frame
/// do not, except a frame whose side is the world.
void place_joint(const Placement& m, SceneJoint& j) {
  JointDef& d = j.def;
  d.anchor = m.point(d.anchor);
  d.axis = m.vector(d.axis);
  for (Vec3& a : d.axes) a = m.vector(a);
  if (d.frames) {
    if (j.body_a == "world") d.frames->a = m.pose(d.frames->a);
    if (j.body_b == "world") d.frames->b = m.pose(d.frames->b);
  }
}

}  // namespace

std::vector<SceneJoint> add_models(const Node& models, const std::string& base_dir,
                                   Scene& scene) {
  models.expect_array();
  std::vector<SceneJoint> joints;
  std::set<std::string> names;
  for (const BodyDef& b : scene.bodies) names.insert(b.name);
  for (std::size_t i = 0; i < models.size(); ++i) {
    const Node item = models.element(i).relabel("models[" + std::to_string(i) + "]");
    item.expect_object();
    item.check_fields(kModelFields);
    const Node file_node = item.require("file");
    const std::string file = file_node.string();
    if (file.empty()) file_node.fail("must not be empty");
    std::filesystem::path path(file);
    if (path.is_relative()) path = std::filesystem::path(base_dir) / path;
    const std::string ext = path.extension().string();
    if (ext != ".urdf" && ext != ".xml" && ext != ".mjcf") {
      file_node.fail("'" + file + "' is not a robot model (expected .urdf, .xml or .mjcf)");
    }
    ModelOptions options;
    if (auto n = item.get("floating_base")) options.floating_base = n->boolean();
    std::string prefix;
    if (auto n = item.get("prefix")) prefix = n->string();
    Placement m;
    if (auto n = item.get("position")) m.p = n->vec3();
    if (auto n = item.get("orientation")) {
      const auto q = n->vec4();
      const Quat quat(q[0], q[1], q[2], q[3]);
      const double norm = quat.norm();
      if (!(norm > 0) || !std::isfinite(norm)) n->fail("must be a non-zero quaternion [w, x, y, z]");
      m.R = Quat(q[0] / norm, q[1] / norm, q[2] / norm, q[3] / norm);
    }

    Scene model;
    try {
      model = load_model(path.string(), options);
    } catch (const SceneError& e) {
      file_node.fail(e.what());
    }
    const std::string label = item.where() + " '" + file + "'";
    for (BodyDef& b : model.bodies) {
      b.name = prefix + b.name;
      if (!names.insert(b.name).second) {
        item.relabel(label).fail("body name '" + b.name +
                                 "' is already used in the scene (give the model a \"prefix\")");
      }
      place_body(m, b);
      scene.bodies.push_back(std::move(b));
    }
    for (SceneJoint& j : model.joints) {
      j.def.name = prefix + j.def.name;
      if (j.body_a != "world") j.body_a = prefix + j.body_a;
      if (j.body_b != "world") j.body_b = prefix + j.body_b;
      place_joint(m, j);
      joints.push_back(std::move(j));
    }
    for (auto& [a, b] : model.collision_exclude) {
      scene.collision_exclude.emplace_back(prefix + a, prefix + b);
    }
    for (std::string& w : model.warnings) scene.warnings.push_back(std::move(w));
  }
  return joints;
}

}  // namespace mabd::io
