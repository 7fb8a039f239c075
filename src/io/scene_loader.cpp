// Scene files: JSON -> validated mabd::Scene. The format is documented in docs/scene-format.md.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "io/generators.h"
#include "io/json_reader.h"
#include "io/keyframes.h"
#include "io/mjcf.h"
#include "io/scene_models.h"
#include "io/scene_soft.h"
#include "io/urdf.h"
#include "io/unit_checks.h"
#include "mabd/error.h"
#include "mabd/scene.h"
#include "mabd/settings.h"
#include "mabd/shape.h"

namespace mabd {

namespace {

using io::Node;

const std::vector<std::string> kTopLevelFields = {
    "description", "settings",  "materials",  "bodies",
    "joints",      "colliders", "generators", "collision_exclude", "models",
    "soft_bodies"};
const std::vector<std::string> kReservedFields = {"colliders"};
const std::vector<std::string> kSettingsFields = {
    "dt",         "gravity",          "newton_iterations", "tolerance",
    "rotation",   "integrator",       "time_integration",  "spectral_radius",
    "solver",     "dual_tolerance",   "dual_max_iterations", "steps",
    "threads",    "wind",             "contact"};
const std::vector<std::string> kWindFields = {"velocity", "density", "drag_coefficient", "gust",
                                              "gust_period"};
const std::vector<std::string> kContactFields = {"model",  "time_constant", "damping_ratio",
                                                 "margin", "friction",      "bodies",
                                                 "self_collision"};
const std::vector<std::string> kMaterialFields = {"density", "youngs_modulus", "poisson_ratio",
                                                  "friction"};
const std::vector<std::string> kBodyFields = {
    "name",            "shape",            "material", "mass",      "position",
    "orientation",     "linear_velocity",  "angular_velocity",      "kind",
    "collision",       "keyframes",        "loop"};
const std::vector<std::string> kCollisionFields = {"enabled", "group", "mask", "primitives"};
const std::vector<std::string> kPrimitiveFields = {"shape", "position", "orientation"};
const std::vector<std::string> kKeyframeFields = {"time", "position", "orientation"};
const std::vector<std::string> kJointTypes = {"ball", "hinge", "universal", "prismatic",
                                              "fixed"};
const std::vector<std::string> kJointCommonFields = {"name", "type", "bodies", "anchor",
                                                     "compliance", "frames"};
const std::vector<std::string> kFramesFields = {"a", "b"};
const std::vector<std::string> kFrameFields = {"position", "orientation"};
const std::vector<std::string> kLimitsFields = {"lower", "upper"};
const std::vector<std::string> kConeFields = {"swing", "twist_lower", "twist_upper"};
const std::vector<std::string> kSpringFields = {"stiffness", "damping", "rest"};
const std::vector<std::string> kDriveFields = {"mode", "target", "stiffness", "damping",
                                               "max_force"};
/// Name that stands for the world (not a body) in a joint's "bodies".
const std::string kWorldName = "world";
/// Largest |cos| between the two axes of a universal joint.
constexpr double kMaxAxesCos = 0.999;
constexpr double kPi = 3.14159265358979323846;
const std::vector<std::string> kShapeTypes = {"box",      "sphere", "capsule",
                                              "cylinder", "mesh",   "plane"};
const std::vector<std::string> kBodyKinds = {"dynamic", "static", "kinematic"};

/// Fields each shape type takes (besides "type").
std::vector<std::string> shape_fields(ShapeType type) {
  switch (type) {
    case ShapeType::Box: return {"size"};
    case ShapeType::Sphere: return {"radius"};
    case ShapeType::Capsule:
    case ShapeType::Cylinder: return {"radius", "length"};
    case ShapeType::Mesh: return {"file"};
    case ShapeType::Plane: return {};
  }
  return {};
}

/// Who a shape belongs to: a collider (static or kinematic body) may use a plane or an open
/// mesh; otherwise `dynamic_note` says why the shape is a dynamic one (shown in messages).
struct ShapeUse {
  bool collider = false;
  std::string dynamic_note = "this body is dynamic";
};

std::string list(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out;
}

/// Fields a joint type takes besides the common ones (name, type, bodies, anchor, compliance).
std::vector<std::string> joint_type_fields(JointType type) {
  switch (type) {
    case JointType::Ball: return {"axis", "cone", "spring"};
    case JointType::Hinge:
    case JointType::Prismatic: return {"axis", "limits", "spring", "drive", "effort_limit"};
    case JointType::Universal: return {"axes"};
    case JointType::Fixed: return {};
  }
  return {};
}

std::vector<std::string> joint_fields(JointType type) {
  std::vector<std::string> fields = kJointCommonFields;
  const std::vector<std::string> extra = joint_type_fields(type);
  fields.insert(fields.end(), extra.begin(), extra.end());
  return fields;
}

std::vector<std::string> all_joint_fields() {
  std::vector<std::string> fields = kJointCommonFields;
  for (const char* f : {"axis", "axes", "limits", "cone", "spring", "drive", "effort_limit"}) {
    fields.push_back(f);
  }
  return fields;
}

WorldSettings parse_settings(const Node& node, int& default_steps) {
  node.check_fields(kSettingsFields);
  WorldSettings s;
  if (auto n = node.get("dt")) s.dt = n->positive();
  if (auto n = node.get("gravity")) s.gravity = n->vec3();
  if (auto n = node.get("newton_iterations")) s.newton_iterations = n->integer(1);
  if (auto n = node.get("tolerance")) s.tolerance = n->positive();
  if (auto n = node.get("rotation")) {
    s.rotation = n->one_of({"polar", "normalized"}) == 0 ? RotationMode::Polar
                                                          : RotationMode::Normalized;
  }
  if (auto n = node.get("integrator")) {
    s.integrator = n->one_of({"corotated", "vanilla"}) == 0 ? IntegratorMode::CoRotated
                                                             : IntegratorMode::Vanilla;
  }
  if (auto n = node.get("time_integration")) {
    s.time_integration = n->one_of({"generalized_alpha", "implicit_euler"}) == 0
                             ? TimeIntegration::GeneralizedAlpha
                             : TimeIntegration::ImplicitEuler;
  }
  if (auto n = node.get("spectral_radius")) s.spectral_radius = n->number();
  if (auto n = node.get("solver")) {
    s.solver = static_cast<DualSolverKind>(n->one_of(dual_solver_names()));
  }
  if (auto n = node.get("dual_tolerance")) s.dual_tolerance = n->number();
  if (auto n = node.get("dual_max_iterations")) s.dual_max_iterations = n->integer(1);
  if (auto n = node.get("threads")) s.threads = n->integer(1);
  if (auto n = node.get("steps")) default_steps = n->integer(1);
  if (auto n = node.get("wind")) {
    n->check_fields(kWindFields);
    if (auto v = n->get("velocity")) s.wind.velocity = v->vec3();
    if (auto v = n->get("density")) s.wind.density = v->non_negative();
    if (auto v = n->get("drag_coefficient")) s.wind.drag_coefficient = v->non_negative();
    if (auto v = n->get("gust")) s.wind.gust = v->non_negative();
    if (auto v = n->get("gust_period")) s.wind.gust_period = v->positive();
  }
  if (auto n = node.get("contact")) {
    n->check_fields(kContactFields);
    if (auto v = n->get("model")) {
      std::vector<std::string> models;
      for (ContactModel m : {ContactModel::None, ContactModel::Penalty, ContactModel::Exact}) {
        models.emplace_back(contact_model_name(m));
      }
      s.contact.model = static_cast<ContactModel>(v->one_of(models));
    }
    if (auto v = n->get("time_constant")) s.contact.time_constant = v->non_negative();
    if (auto v = n->get("damping_ratio")) s.contact.damping_ratio = v->non_negative();
    if (auto v = n->get("margin")) s.contact.margin = v->non_negative();
    if (auto v = n->get("friction")) s.contact.friction = v->boolean();
    if (auto v = n->get("bodies")) s.contact.bodies = v->boolean();
    if (auto v = n->get("self_collision")) s.contact.self_collision = v->boolean();
    // Exact contact integrates in implicit Euler unless the scene says otherwise (and then
    // validation rejects generalized-alpha, see ContactModel::Exact).
    if (s.contact.model == ContactModel::Exact && !node.get("time_integration")) {
      s.time_integration = TimeIntegration::ImplicitEuler;
    }
  }
  try {
    validate_settings(s);
  } catch (const InvalidArgument& e) {
    // "settings.FIELD[.SUB]: problem": reported on the deepest field of that path the file
    // gives (a default that conflicts with another field stays on the nearest one given).
    std::string what = e.what();
    const std::string prefix = "settings.";
    if (what.rfind(prefix, 0) == 0) what = what.substr(prefix.size());
    const std::size_t colon = what.find(": ");
    Node at = node;
    std::size_t start = 0;
    while (colon != std::string::npos && start < colon) {
      const std::size_t end = std::min(what.find('.', start), colon);
      const std::string field = what.substr(start, end - start);
      if (field.find(' ') != std::string::npos) break;
      auto child = at.get(field);
      if (!child) break;
      at = *child;
      start = end + 1;
    }
    at.fail(colon != std::string::npos && start > colon ? what.substr(colon + 2) : what.substr(start));
  }
  return s;
}

Material parse_material(const Node& node) {
  node.check_fields(kMaterialFields);
  Material m;
  if (auto n = node.get("density")) m.density = n->positive();
  if (auto n = node.get("youngs_modulus")) m.youngs_modulus = n->positive();
  if (auto n = node.get("poisson_ratio")) {
    const double nu = n->number();
    if (!(nu >= 0 && nu < 0.5)) {
      n->fail("must be in [0, 0.5) (got " + io::format_number(nu) + ")");
    }
    m.poisson_ratio = nu;
  }
  if (auto n = node.get("friction")) m.friction = n->non_negative();
  return m;
}

std::filesystem::path resolve_mesh_path(const std::string& file, const std::string& base_dir) {
  std::filesystem::path p(file);
  if (p.is_absolute()) return p;
  return (std::filesystem::path(base_dir.empty() ? "." : base_dir) / p).lexically_normal();
}

ShapeDef parse_shape(const Node& node, const std::string& base_dir, const ShapeUse& use) {
  node.expect_object();
  ShapeDef shape;
  if (!node.has("type")) node.check_fields({"type", "size", "radius", "length", "file"});
  const Node type_node = node.require("type");
  shape.type = static_cast<ShapeType>(type_node.one_of(kShapeTypes));
  const std::string type_name = kShapeTypes[static_cast<std::size_t>(shape.type)];
  if (shape.type == ShapeType::Plane && !use.collider) {
    type_node.fail("a plane is only for static and kinematic bodies (" + use.dynamic_note + ")");
  }

  // Unknown keys; a key that belongs to another shape type gets a pointed message.
  std::vector<std::string> allowed = shape_fields(shape.type);
  allowed.insert(allowed.begin(), "type");
  for (const auto& item : node.json().items()) {
    const std::string& key = item.key();
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    for (ShapeType other : {ShapeType::Box, ShapeType::Sphere, ShapeType::Capsule,
                            ShapeType::Cylinder, ShapeType::Mesh}) {
      const auto fields = shape_fields(other);
      if (std::find(fields.begin(), fields.end(), key) != fields.end()) {
        const auto own = shape_fields(shape.type);
        node.fail("field '" + key + "' does not apply to a " + type_name + " shape (a " +
                  type_name +
                  (own.empty() ? std::string(" takes no other field than 'type')")
                               : " takes: " + list(own) + ")"));
      }
    }
    node.check_fields(allowed);  // reports the unknown key with a suggestion
  }

  switch (shape.type) {
    case ShapeType::Box: {
      const Node size = node.require("size");
      shape.size = size.vec3();
      for (std::size_t i = 0; i < 3; ++i) size.element(i).positive();
      break;
    }
    case ShapeType::Sphere:
      shape.radius = node.require("radius").positive();
      break;
    case ShapeType::Capsule:
    case ShapeType::Cylinder:
      shape.radius = node.require("radius").positive();
      shape.length = node.require("length").positive();
      break;
    case ShapeType::Mesh: {
      const Node file_node = node.require("file");
      const std::string file = file_node.string();
      if (file.empty()) file_node.fail("must not be empty");
      const std::filesystem::path resolved = resolve_mesh_path(file, base_dir);
      std::error_code ec;
      if (!std::filesystem::is_regular_file(resolved, ec)) {
        file_node.fail("mesh file not found: '" + resolved.string() + "'");
      }
      try {
        shape.mesh = load_obj(resolved.string());
      } catch (const InvalidArgument& e) {
        file_node.fail(e.what());
      }
      shape.mesh_file = resolved.string();
      break;
    }
    case ShapeType::Plane:
      break;
  }

  try {
    validate_shape(shape, use.collider);
  } catch (const InvalidArgument& e) {
    std::string what = e.what();
    if (shape.type == ShapeType::Mesh && !use.collider) {
      // A mesh that would do for a collider: say that open meshes are for colliders only.
      try {
        validate_shape(shape, /*collider_only=*/true);
        what += " (open meshes are only for static and kinematic bodies; " + use.dynamic_note +
                ")";
      } catch (const InvalidArgument&) {
      }
    }
    node.fail(what);
  }
  return shape;
}

/// A quaternion [w, x, y, z], any non-zero length; returned normalised.
Quat parse_orientation(const Node& node) {
  const auto q = node.vec4();
  Quat quat(q[0], q[1], q[2], q[3]);
  const double norm = quat.norm();
  if (!(norm > 0) || !std::isfinite(norm)) node.fail("must be a non-zero quaternion [w, x, y, z]");
  return Quat(q[0] / norm, q[1] / norm, q[2] / norm, q[3] / norm);
}

/// A body's "collision": false / true, or {"enabled", "group", "mask", "primitives"}.
CollisionDef parse_collision(const Node& node, const std::string& base_dir, const ShapeUse& use) {
  CollisionDef collision;
  if (node.json().is_boolean()) {
    collision.enabled = node.boolean();
    return collision;
  }
  if (!node.json().is_object()) {
    node.fail("expected false, true or a collision object, got " + io::type_name(node.json()));
  }
  node.check_fields(kCollisionFields);
  if (auto n = node.get("enabled")) collision.enabled = n->boolean();
  if (auto n = node.get("group")) collision.group = n->uint32();
  if (auto n = node.get("mask")) collision.mask = n->uint32();
  if (auto n = node.get("primitives")) {
    n->expect_array();
    if (n->size() == 0) {
      n->fail("must not be empty (leave 'primitives' out to collide with the body's own shape)");
    }
    collision.primitives.reserve(n->size());
    for (std::size_t i = 0; i < n->size(); ++i) {
      const Node item = n->element(i);
      item.check_fields(kPrimitiveFields);
      CollisionPrimitive primitive;
      primitive.shape = parse_shape(item.require("shape"), base_dir, use);
      if (auto v = item.get("position")) primitive.pose.position = v->vec3();
      if (auto v = item.get("orientation")) primitive.pose.orientation = parse_orientation(*v);
      collision.primitives.push_back(std::move(primitive));
    }
  }
  return collision;
}

/// Largest position difference (m) and rotation angle (rad) below which the last keyframe
/// of a loop counts as repeating the first.
constexpr double kLoopPositionTolerance = 1e-9;
constexpr double kLoopAngleTolerance = 1e-9;

/// A kinematic body's "keyframes" (and "loop"): sets def.motion and the initial pose.
void parse_keyframes(const Node& body, const Node& node, BodyDef& def) {
  if (def.kind != BodyKind::Kinematic) {
    node.fail(std::string("only kinematic bodies follow keyframes (this body is ") +
              body_kind_name(def.kind) + "; set \"kind\": \"kinematic\")");
  }
  // The keyframes give the pose and the velocity at every time, t = 0 included.
  for (const char* key : {"position", "orientation", "linear_velocity", "angular_velocity"}) {
    if (auto n = body.get(key)) {
      n->fail("does not apply to a body with keyframes (they give its pose and velocity at "
              "every time; put the initial pose in a keyframe at time 0)");
    }
  }
  node.expect_array();
  if (node.size() == 0) node.fail("must hold at least one keyframe");
  std::vector<io::Keyframe> keys;
  keys.reserve(node.size());
  for (std::size_t i = 0; i < node.size(); ++i) {
    const Node item = node.element(i);
    item.check_fields(kKeyframeFields);
    io::Keyframe key;
    const Node time = item.require("time");
    key.time = time.number();
    if (!keys.empty() && !(key.time > keys.back().time)) {
      time.fail("must be greater than the time of keyframes[" + std::to_string(i - 1) + "] (" +
                io::format_number(keys.back().time) + "): times must increase strictly (got " +
                io::format_number(key.time) + ")");
    }
    key.pose.position = item.require("position").vec3();
    if (auto n = item.get("orientation")) key.pose.orientation = parse_orientation(*n);
    keys.push_back(key);
  }
  bool loop = false;
  if (auto n = body.get("loop")) {
    loop = n->boolean();
    if (loop && keys.size() < 2) n->fail("a loop needs at least 2 keyframes");
    if (loop) {
      const Pose& a = keys.front().pose;
      const Pose& b = keys.back().pose;
      const double angle = a.orientation.angularDistance(b.orientation);
      if ((a.position - b.position).norm() > kLoopPositionTolerance * (1 + a.position.norm()) ||
          !(angle <= kLoopAngleTolerance)) {
        n->fail("the last keyframe must repeat the position and orientation of the first (a "
                "loop must not jump)");
      }
    }
  }
  def.motion = io::keyframe_motion(std::move(keys), loop);
  const Pose start = def.motion(0.0);
  def.position = start.position;
  def.orientation = start.orientation;
}

/// A body's "material": the name of an entry of `materials`, or an inline material object.
Material parse_material_ref(const Node& material,
                            const std::map<std::string, Material>& materials) {
  if (material.json().is_string()) {
    const std::string key = material.string();
    auto it = materials.find(key);
    if (it == materials.end()) {
      std::vector<std::string> known;
      known.reserve(materials.size());
      for (const auto& entry : materials) known.push_back(entry.first);
      material.fail(io::unknown_name_message("material", key, known));
    }
    return it->second;
  } else if (material.json().is_object()) {
    return parse_material(material);
  } else {
    material.fail("expected a material name (string) or a material object, got " +
                  io::type_name(material.json()));
  }
}

BodyDef parse_body(const Node& item, const std::map<std::string, Material>& materials,
                   const std::string& base_dir) {
  item.expect_object();
  BodyDef def;

  const Node name_node = item.require("name");
  def.name = name_node.string();
  if (def.name.empty()) name_node.fail("must not be empty");
  const Node body = item.relabel(item.where() + " '" + def.name + "'");
  body.check_fields(kBodyFields);

  // The kind first: it decides which shapes the body may have.
  if (auto n = body.get("kind")) {
    switch (n->one_of(kBodyKinds)) {
      case 0: def.kind = BodyKind::Dynamic; break;
      case 1: def.kind = BodyKind::Static; break;
      default: def.kind = BodyKind::Kinematic; break;
    }
  }
  ShapeUse use;
  use.collider = def.kind != BodyKind::Dynamic;
  use.dynamic_note = "this body is dynamic; set \"kind\": \"static\" or \"kinematic\"";

  def.shape = parse_shape(body.require("shape"), base_dir, use);

  def.material = parse_material_ref(body.require("material"), materials);

  if (auto n = body.get("mass")) def.mass = n->positive();
  if (auto n = body.get("position")) def.position = n->vec3();
  if (auto n = body.get("orientation")) def.orientation = parse_orientation(*n);
  if (auto n = body.get("linear_velocity")) def.linear_velocity = n->vec3();
  if (auto n = body.get("angular_velocity")) def.angular_velocity = n->vec3();
  if (auto n = body.get("collision")) {
    use.dynamic_note = "this body is dynamic";
    def.collision = parse_collision(*n, base_dir, use);
  }
  if (auto n = body.get("keyframes")) {
    parse_keyframes(body, *n, def);
  } else if (auto loop = body.get("loop")) {
    loop->fail("only applies to a body with keyframes");
  }
  return def;
}

/// A direction: three finite numbers, not all zero; returned normalised.
Vec3 unit_vector(const Node& node) {
  const Vec3 v = node.vec3();
  const double norm = v.norm();
  if (!(norm > 0)) node.fail("must be non-zero");
  if (!std::isfinite(norm)) return (v / v.cwiseAbs().maxCoeff()).normalized();
  return v / norm;
}

/// The names of a scene's bodies, for the joints' lookups (hashed: a scene may have millions).
class BodyNames {
 public:
  explicit BodyNames(const std::vector<BodyDef>& bodies) : bodies_(bodies) {
    names_.reserve(bodies.size());
    for (const BodyDef& body : bodies) names_.insert(body.name);
  }
  bool contains(const std::string& name) const { return names_.count(name) != 0; }
  /// "world" and every body name, in scene order (for messages).
  std::vector<std::string> listed() const {
    std::vector<std::string> out = {kWorldName};
    out.reserve(bodies_.size() + 1);
    for (const BodyDef& body : bodies_) out.push_back(body.name);
    return out;
  }

 private:
  const std::vector<BodyDef>& bodies_;
  std::unordered_set<std::string_view> names_;
};

/// Looks up a body name (or "world") from a joint's "bodies" entry.
void check_joint_body(const Node& node, const std::string& name, const BodyNames& body_names) {
  if (name == kWorldName) {
    if (body_names.contains(kWorldName)) {
      node.fail("'world' is ambiguous: a body is also named 'world' (rename that body)");
    }
    return;
  }
  if (body_names.contains(name)) return;
  node.fail(io::unknown_name_message("body", name, body_names.listed()));
}

JointLimits parse_limits(const Node& node) {
  node.check_fields(kLimitsFields);
  JointLimits limits;
  limits.lower = node.require("lower").number();
  limits.upper = node.require("upper").number();
  if (limits.lower > limits.upper) {
    node.fail("lower (" + io::format_number(limits.lower) + ") is greater than upper (" +
              io::format_number(limits.upper) + ")");
  }
  return limits;
}

ConeLimits parse_cone(const Node& node) {
  node.check_fields(kConeFields);
  ConeLimits cone;
  const Node swing = node.require("swing");
  cone.swing = swing.number();
  if (!(cone.swing > 0 && cone.swing < kPi)) {
    swing.fail("must be in (0, pi) (got " + io::format_number(cone.swing) + ")");
  }
  const auto lower = node.get("twist_lower");
  const auto upper = node.get("twist_upper");
  if (lower.has_value() != upper.has_value()) {
    node.fail(std::string("'twist_lower' and 'twist_upper' must be given together (missing '") +
              (lower ? "twist_upper" : "twist_lower") + "')");
  }
  if (lower) {
    cone.twist_lower = lower->number();
    cone.twist_upper = upper->number();
    if (*cone.twist_lower > *cone.twist_upper) {
      node.fail("twist_lower (" + io::format_number(*cone.twist_lower) +
                ") is greater than twist_upper (" + io::format_number(*cone.twist_upper) + ")");
    }
  }
  return cone;
}

JointSpring parse_spring(const Node& node) {
  node.check_fields(kSpringFields);
  JointSpring spring;
  if (auto n = node.get("stiffness")) spring.stiffness = n->non_negative();
  if (auto n = node.get("damping")) spring.damping = n->non_negative();
  if (auto n = node.get("rest")) spring.rest = n->number();
  return spring;
}

JointDrive parse_drive(const Node& node) {
  node.check_fields(kDriveFields);
  JointDrive drive;
  const std::size_t mode = node.require("mode").one_of({"position", "velocity", "effort"});
  drive.mode = mode == 0 ? DriveMode::Position : mode == 1 ? DriveMode::Velocity : DriveMode::Effort;
  drive.target = node.require("target").number();
  if (auto n = node.get("stiffness")) {
    if (drive.mode == DriveMode::Velocity) {
      n->fail("does not apply to a velocity drive (it takes: mode, target, damping, max_force)");
    }
    if (drive.mode == DriveMode::Effort) {
      n->fail("does not apply to an effort drive (it takes: mode, target, max_force)");
    }
    drive.stiffness = n->non_negative();
  }
  if (auto n = node.get("damping")) {
    if (drive.mode == DriveMode::Effort) {
      n->fail("does not apply to an effort drive (it takes: mode, target, max_force)");
    }
    drive.damping = n->non_negative();
  }
  if (auto n = node.get("max_force")) drive.max_force = n->positive();
  return drive;
}

SceneJoint parse_joint(const Node& item, const BodyNames& body_names) {
  item.expect_object();
  SceneJoint joint;
  JointDef& def = joint.def;

  const Node name_node = item.require("name");
  def.name = name_node.string();
  if (def.name.empty()) name_node.fail("must not be empty");
  const Node node = item.relabel(item.where() + " '" + def.name + "'");

  if (!node.has("type")) node.check_fields(all_joint_fields());
  const std::size_t type_index = node.require("type").one_of(kJointTypes);
  def.type = static_cast<JointType>(type_index);
  const std::string& type_name = kJointTypes[type_index];

  // Unknown keys; a key that belongs to another joint type gets a pointed message.
  const std::vector<std::string> allowed = joint_fields(def.type);
  const std::vector<std::string> all = all_joint_fields();
  for (const auto& entry : node.json().items()) {
    const std::string& key = entry.key();
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    if (std::find(all.begin(), all.end(), key) != all.end()) {
      node.fail("field '" + key + "' does not apply to a " + type_name + " joint (a " +
                type_name + " joint takes: " + list(allowed) + ")");
    }
    node.check_fields(allowed);  // reports the unknown key with a suggestion
  }

  // Bodies.
  const Node bodies = node.require("bodies");
  if (!bodies.json().is_array()) {
    bodies.fail("expected an array of 2 body names, got " + io::type_name(bodies.json()));
  }
  if (bodies.size() != 2) {
    bodies.fail("expected an array of 2 body names, got " + std::to_string(bodies.size()) +
                " element" + (bodies.size() == 1 ? "" : "s"));
  }
  joint.body_a = bodies.element(0).string();
  joint.body_b = bodies.element(1).string();
  check_joint_body(bodies.element(0), joint.body_a, body_names);
  check_joint_body(bodies.element(1), joint.body_b, body_names);
  if (joint.body_a == kWorldName && joint.body_b == kWorldName) {
    bodies.fail("a joint needs at least one body (both are 'world')");
  }
  if (joint.body_a == joint.body_b) {
    bodies.fail("body '" + joint.body_a + "' cannot be joined to itself");
  }

  if (auto frames = node.get("frames")) {
    // A frame in each body ({"position", "orientation"} in the body's own frame) replaces the
    // world anchor and axes.
    frames->check_fields(kFramesFields);
    JointFrames f;
    for (const char* side : {"a", "b"}) {
      const Node frame = frames->require(side);
      frame.check_fields(kFrameFields);
      Pose& pose = side[0] == 'a' ? f.a : f.b;
      if (auto v = frame.get("position")) pose.position = v->vec3();
      if (auto v = frame.get("orientation")) pose.orientation = parse_orientation(*v);
    }
    def.frames = f;
    for (const char* field : {"anchor", "axis", "axes"}) {
      if (auto n = node.get(field)) {
        n->fail("does not apply to a joint defined by 'frames' (its anchor is the frames' "
                "origin, its axis their z axis)");
      }
    }
  } else {
    def.anchor = node.require("anchor").vec3();
  }

  switch (def.type) {
    case JointType::Ball:
      if (auto n = node.get("axis")) def.axis = unit_vector(*n);
      if (auto n = node.get("cone")) def.cone = parse_cone(*n);
      break;
    case JointType::Hinge:
    case JointType::Prismatic:
      if (!def.frames) def.axis = unit_vector(node.require("axis"));
      if (auto n = node.get("limits")) def.limits = parse_limits(*n);
      if (auto n = node.get("spring")) def.spring = parse_spring(*n);
      if (auto n = node.get("drive")) def.drive = parse_drive(*n);
      if (auto n = node.get("effort_limit")) def.effort_limit = n->positive();
      break;
    case JointType::Universal: {
      if (def.frames) break;
      const Node axes = node.require("axes");
      if (!axes.json().is_array()) {
        axes.fail("expected an array of 2 axes, got " + io::type_name(axes.json()));
      }
      if (axes.size() != 2) {
        axes.fail("expected an array of 2 axes, got " + std::to_string(axes.size()) +
                  " element" + (axes.size() == 1 ? "" : "s"));
      }
      def.axes = {unit_vector(axes.element(0)), unit_vector(axes.element(1))};
      const double cos_angle = std::abs(def.axes[0].dot(def.axes[1]));
      if (!(cos_angle < kMaxAxesCos)) {
        char cos_text[32];
        std::snprintf(cos_text, sizeof cos_text, "%.6g", cos_angle);
        axes.fail("axes are parallel (|cos| = " + std::string(cos_text) + "; must be below " +
                  io::format_number(kMaxAxesCos) + ")");
      }
      break;
    }
    case JointType::Fixed:
      break;
  }

  if (auto n = node.get("compliance")) def.compliance = n->non_negative();
  return joint;
}

/// Top-level "collision_exclude": pairs of body names (explicit or generated).
std::vector<std::pair<std::string, std::string>> parse_collision_exclude(
    const Node& node, const std::vector<BodyDef>& bodies) {
  node.expect_array();
  std::vector<std::pair<std::string, std::string>> pairs;
  if (node.size() == 0) return pairs;
  std::unordered_set<std::string> names;
  names.reserve(bodies.size());
  for (const BodyDef& body : bodies) names.insert(body.name);
  const auto body_name = [&](const Node& item) {
    const std::string name = item.string();
    if (names.count(name)) return name;
    std::vector<std::string> all;
    all.reserve(bodies.size());
    for (const BodyDef& body : bodies) all.push_back(body.name);
    item.fail(io::unknown_name_message("body", name, all));
  };
  pairs.reserve(node.size());
  for (std::size_t i = 0; i < node.size(); ++i) {
    const Node pair = node.element(i);
    if (!pair.json().is_array()) {
      pair.fail("expected an array of 2 body names, got " + io::type_name(pair.json()));
    }
    if (pair.size() != 2) {
      pair.fail("expected an array of 2 body names, got " + std::to_string(pair.size()) +
                " element" + (pair.size() == 1 ? "" : "s"));
    }
    std::string a = body_name(pair.element(0));
    std::string b = body_name(pair.element(1));
    if (a == b) pair.fail("names body '" + a + "' twice (a pair needs two different bodies)");
    pairs.emplace_back(std::move(a), std::move(b));
  }
  return pairs;
}

}  // namespace

Scene parse_scene(const std::string& json_text, const std::string& name,
                  const std::string& base_dir) {
  const io::Json root = io::parse_json_text(json_text, name);
  const Node top(name, root, "", "");
  if (!root.is_object()) top.fail("expected a JSON object, got " + io::type_name(root));
  top.check_fields(kTopLevelFields);

  Scene scene;
  if (auto n = top.get("description")) n->string();

  for (const std::string& key : kReservedFields) {
    if (auto n = top.get(key)) {
      n->expect_array();
      if (n->size() != 0) n->fail("not supported by this version of mabd");
    }
  }

  if (auto n = top.get("settings")) scene.settings = parse_settings(*n, scene.default_steps);

  if (auto n = top.get("materials")) {
    n->expect_object();
    for (const auto& item : n->json().items()) {
      if (item.key().empty()) n->fail("material names must not be empty");
      const Node material(name, item.value(), "materials '" + item.key() + "'", "");
      scene.materials[item.key()] = parse_material(material);
    }
  }

  const Node bodies = top.require("bodies");
  bodies.expect_array();
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const Node item = bodies.element(i).relabel("bodies[" + std::to_string(i) + "]");
    BodyDef def = parse_body(item, scene.materials, base_dir);
    auto [it, inserted] = seen.emplace(def.name, i);
    if (!inserted) {
      item.relabel(item.where() + " '" + def.name + "'")
          .fail("duplicate body name '" + def.name + "' (also used by bodies[" +
                std::to_string(it->second) + "])");
    }
    scene.bodies.push_back(std::move(def));
  }

  // Generated bodies follow the explicit ones (explicit joints may name them); generated
  // joints follow the explicit joints.
  const std::size_t explicit_bodies = scene.bodies.size();
  // Robot models follow (explicit joints may name their bodies); their joints come last.
  std::vector<SceneJoint> model_joints;
  if (auto n = top.get("models")) model_joints = io::add_models(*n, base_dir, scene);
  std::vector<SceneJoint> generated_joints;
  if (auto n = top.get("generators")) {
    io::GeneratorParsers parsers;
    ShapeUse part_use;
    part_use.dynamic_note = "generated parts are dynamic";
    parsers.shape = [&](const Node& node) { return parse_shape(node, base_dir, part_use); };
    parsers.collision = [&](const Node& node) {
      return parse_collision(node, base_dir, part_use);
    };
    parsers.material = [&](const Node& node) {
      return parse_material_ref(node, scene.materials);
    };
    generated_joints = io::run_generators(top, *n, parsers, scene);
  }

  if (auto joints = top.get("joints")) {
    joints->expect_array();
    const BodyNames body_names(scene.bodies);
    std::map<std::string, std::size_t> joint_seen;
    for (std::size_t i = 0; i < joints->size(); ++i) {
      const Node item = joints->element(i).relabel("joints[" + std::to_string(i) + "]");
      SceneJoint joint = parse_joint(item, body_names);
      auto [it, inserted] = joint_seen.emplace(joint.def.name, i);
      if (!inserted) {
        item.relabel(item.where() + " '" + joint.def.name + "'")
            .fail("duplicate joint name '" + joint.def.name + "' (also used by joints[" +
                  std::to_string(it->second) + "])");
      }
      scene.joints.push_back(std::move(joint));
    }
  }
  const std::size_t explicit_joints = scene.joints.size();
  if (scene.joints.empty()) {
    scene.joints = std::move(generated_joints);
  } else {
    scene.joints.insert(scene.joints.end(), std::make_move_iterator(generated_joints.begin()),
                        std::make_move_iterator(generated_joints.end()));
  }
  scene.joints.insert(scene.joints.end(), std::make_move_iterator(model_joints.begin()),
                      std::make_move_iterator(model_joints.end()));

  if (auto n = top.get("soft_bodies")) {
    io::add_soft_bodies(
        *n, base_dir, [&](const Node& m) { return parse_material_ref(m, scene.materials); },
        scene);
  }
  if (auto n = top.get("collision_exclude")) {
    scene.collision_exclude = parse_collision_exclude(*n, scene.bodies);
  }
  for (std::string& warning : io::unit_warnings(scene, explicit_bodies, explicit_joints)) {
    scene.warnings.push_back(name + ": " + warning);
  }
  return scene;
}

namespace {

/// Robot model format of `path` by its extension: "urdf", "mjcf" or "" (a JSON scene).
std::string model_format(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == ".urdf") return "urdf";
  if (ext == ".xml" || ext == ".mjcf") return "mjcf";
  return "";
}

Scene load_json_scene(const std::string& path);

}  // namespace

Scene load_scene(const std::string& path) { return load_model(path); }

Scene load_model(const std::string& path, const ModelOptions& options) {
  const std::string format = model_format(path);
  if (format == "urdf") return io::load_urdf(path, options);
  if (format == "mjcf") return io::load_mjcf(path, options);
  return load_json_scene(path);
}

namespace {

Scene load_json_scene(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::error_code ec;
  if (!in || std::filesystem::is_directory(path, ec)) {
    io::throw_scene_error(path, "", "cannot open file");
  }
  // Read in one piece of the file's size (a stream buffer would hold up to three copies).
  std::string text;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec) {
    text.resize(static_cast<std::size_t>(size));
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    in.clear();
  }
  // Whatever the size did not cover (a pipe, a file that grew).
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) io::throw_scene_error(path, "", "cannot read file");
  std::string base_dir = std::filesystem::path(path).parent_path().string();
  if (base_dir.empty()) base_dir = ".";
  Scene scene = parse_scene(text, path, base_dir);
  scene.path = path;
  return scene;
}

}  // namespace

}  // namespace mabd
