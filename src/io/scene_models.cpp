// Robot models placed in a scene: load, rename, move to the base pose, append.
#include "io/scene_models.h"

#include <array>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "mabd/error.h"

namespace mabd::io {

namespace {

const std::vector<std::string> kModelFields = {"file",   "position",      "orientation",
                                               "prefix", "floating_base", "repeat"};
const std::vector<std::string> kRepeatFields = {"count", "spacing"};
constexpr int kMaxNesting = 8;  ///< scenes placed in scenes placed in ... at most
constexpr double kMaxRepeatedBodies = 1e8;  ///< bodies a repeat may make

/// Copies of a model on a grid: count[a] along the model's axis a, spacing[a] apart (m).
struct Repeat {
  std::array<long long, 3> count = {1, 1, 1};
  Vec3 spacing = Vec3::Zero();
  /// (in double: three counts up to 2^31 each overflow an integer)
  double copies() const {
    return static_cast<double>(count[0]) * static_cast<double>(count[1]) *
           static_cast<double>(count[2]);
  }
};

Repeat parse_repeat(const Node& node) {
  node.expect_object();
  node.check_fields(kRepeatFields);
  Repeat r;
  const Node count = node.require("count");
  count.expect_array();
  if (count.size() < 1 || count.size() > 3) count.fail("must list 1 to 3 counts (x, y, z)");
  for (std::size_t a = 0; a < count.size(); ++a) {
    const Node c = count.element(a);
    r.count[a] = c.integer(1);
  }
  if (auto n = node.get("spacing")) r.spacing = n->vec3();
  return r;
}

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
    if (ext != ".urdf" && ext != ".xml" && ext != ".mjcf" && ext != ".json") {
      file_node.fail("'" + file +
                     "' is not a model (expected .urdf, .xml or .mjcf, or a .json scene)");
    }
    Repeat repeat;
    if (auto n = item.get("repeat")) repeat = parse_repeat(*n);
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

    // A scene placed in a scene (in a scene ...): a scene that places itself ends here.
    static thread_local int nesting = 0;
    if (nesting >= kMaxNesting) {
      file_node.fail("models nest more than " + std::to_string(kMaxNesting) +
                     " deep (does a scene place itself?)");
    }
    Scene model;
    ++nesting;
    try {
      model = load_model(path.string(), options);
    } catch (const SceneError& e) {
      --nesting;
      file_node.fail(e.what());
    }
    --nesting;
    if (!model.soft_bodies.empty()) {
      file_node.fail("'" + file + "' has soft bodies, which a placed scene cannot bring");
    }
    const std::string label = item.where() + " '" + file + "'";
    if (repeat.copies() * std::max<double>(1.0, static_cast<double>(model.bodies.size())) >
        kMaxRepeatedBodies) {
      char copies_text[32];
      std::snprintf(copies_text, sizeof copies_text, "%.0f", repeat.copies());
      item.relabel(label).fail(std::string("repeat makes ") + copies_text + " copies of " +
                               std::to_string(model.bodies.size()) +
                               " bodies, more than 100,000,000 bodies");
    }
    const auto copies = static_cast<long long>(repeat.copies());
    scene.bodies.reserve(scene.bodies.size() + model.bodies.size() * copies);
    joints.reserve(joints.size() + model.joints.size() * copies);
    for (long long c = 0; c < copies; ++c) {
      // Copy c sits at grid place (i, j, k), c = i + nx (j + ny k), named "<prefix><c>/".
      const long long i = c % repeat.count[0], j = c / repeat.count[0] % repeat.count[1],
                      k = c / (repeat.count[0] * repeat.count[1]);
      Placement mc = m;
      mc.p += m.vector(Vec3(static_cast<double>(i) * repeat.spacing.x(),
                            static_cast<double>(j) * repeat.spacing.y(),
                            static_cast<double>(k) * repeat.spacing.z()));
      const std::string pre = item.get("repeat") ? prefix + std::to_string(c) + "/" : prefix;
      for (const BodyDef& model_body : model.bodies) {
        BodyDef b = model_body;
        b.name = pre + b.name;
        if (!names.insert(b.name).second) {
          item.relabel(label).fail("body name '" + b.name +
                                   "' is already used in the scene (give the model a \"prefix\")");
        }
        place_body(mc, b);
        scene.bodies.push_back(std::move(b));
      }
      for (const SceneJoint& model_joint : model.joints) {
        SceneJoint jt = model_joint;
        jt.def.name = pre + jt.def.name;
        if (jt.body_a != "world") jt.body_a = pre + jt.body_a;
        if (jt.body_b != "world") jt.body_b = pre + jt.body_b;
        place_joint(mc, jt);
        joints.push_back(std::move(jt));
      }
      for (const auto& [a, b] : model.collision_exclude) {
        scene.collision_exclude.emplace_back(pre + a, pre + b);
      }
    }
    for (std::string& w : model.warnings) scene.warnings.push_back(std::move(w));
  }
  return joints;
}

}  // namespace mabd::io
