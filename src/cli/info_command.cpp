// `mabd info`: human-readable summary of a scene and the world built from it.
#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "mabd/error.h"

namespace mabd::cli {

namespace {

constexpr std::size_t kMaxTableBodies = 20;
constexpr std::size_t kMaxTableJoints = 20;

std::string num(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::string vec(const Vec3& v) {
  std::string text = "[";
  text += num(v[0]);
  text += ", ";
  text += num(v[1]);
  text += ", ";
  text += num(v[2]);
  text += "]";
  return text;
}


/// A mesh that is not closed (allowed for static and kinematic bodies only).
bool is_open(const ShapeDef& shape) {
  if (shape.type != ShapeType::Mesh) return false;
  try {
    validate_shape(shape, /*collider_only=*/false);
    return false;
  } catch (const InvalidArgument&) {
    return true;
  }
}

std::string shape_description(const ShapeDef& shape) {
  switch (shape.type) {
    case ShapeType::Box:
    {
      std::string text = "box ";
      text += num(shape.size[0]);
      text += " x ";
      text += num(shape.size[1]);
      text += " x ";
      text += num(shape.size[2]);
      return text;
    }
    case ShapeType::Sphere: {
      std::string text = "sphere r=";
      text += num(shape.radius);
      return text;
    }
    case ShapeType::Capsule:
    case ShapeType::Cylinder:
      return std::string(shape_type_name(shape.type)) + " r=" + num(shape.radius) +
             " l=" + num(shape.length);
    case ShapeType::Mesh: {
      std::string text = "mesh";
      if (!shape.mesh_file.empty()) {
        text += ' ';
        text += std::filesystem::path(shape.mesh_file).filename().string();
      }
      text += " (";
      text += std::to_string(shape.mesh.triangles.size());
      text += " tris";
      if (is_open(shape)) text += ", open";
      text += ")";
      return text;
    }
    case ShapeType::Plane:
      return "plane";
  }
  return "unknown";
}

std::string hex(std::uint32_t bits) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%X", static_cast<unsigned>(bits));
  return text;
}

/// How a body collides: "own shape", "N primitive(s): box, sphere" or "off", then the group
/// and mask where they are not the defaults.
std::string collision_description(const CollisionDef& collision) {
  if (!collision.enabled) return "off";
  std::string text;
  if (collision.primitives.empty()) {
    text = "own shape";
  } else {
    text = std::to_string(collision.primitives.size()) +
           (collision.primitives.size() == 1 ? " primitive: " : " primitives: ");
    constexpr std::size_t kMaxListed = 4;
    for (std::size_t i = 0; i < collision.primitives.size() && i < kMaxListed; ++i) {
      if (i > 0) text += ", ";
      text += shape_type_name(collision.primitives[i].shape.type);
    }
    if (collision.primitives.size() > kMaxListed) text += ", ...";
  }
  const CollisionDef defaults;
  if (collision.group != defaults.group) text += ", group " + hex(collision.group);
  if (collision.mask != defaults.mask) text += ", mask " + hex(collision.mask);
  return text;
}

std::string contact_description(const WorldSettings& settings) {
  const ContactSettings& c = settings.contact;
  std::string text = contact_model_name(c.model);
  if (c.model == ContactModel::None) return text + " (no collision detection)";
  if (c.model == ContactModel::Penalty) {
    text += ", time constant ";
    text += c.time_constant > 0 ? num(c.time_constant) + " s"
                                : "2 dt = " + num(2 * settings.dt) + " s";
    text += ", damping ratio " + num(c.damping_ratio);
  }
  text += ", margin " + num(c.margin) + " m, friction ";
  text += c.friction ? "on" : "off";
  text += ", between bodies ";
  text += c.bodies ? (c.self_collision ? "on (self-collision on)" : "on (self-collision off)")
                   : (c.self_collision ? "self-collision only" : "off");
  return text;
}

const char* joint_type_name(JointType type) {
  switch (type) {
    case JointType::Ball: return "ball";
    case JointType::Hinge: return "hinge";
    case JointType::Universal: return "universal";
    case JointType::Prismatic: return "prismatic";
    case JointType::Fixed: return "fixed";
  }
  return "unknown";
}

void print_field(const char* label, const std::string& value) {
  std::printf("%-22s %s\n", label, value.c_str());
}

/// Prints rows as left-aligned columns separated by two spaces, indented by two.
void print_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line = " ";
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += ' ';
      line += row[c];
      if (c + 1 < row.size()) line.append(widths[c] - row[c].size() + 1, ' ');
    }
    std::printf("%s\n", line.c_str());
  }
}

}  // namespace

int info_command(const InfoOptions& options) {
  SettingsOverrides overrides;
  overrides.floating_base = options.floating_base;
  const LoadedScene loaded = load_and_build(options.scene, overrides);
  const Scene& scene = loaded.scene;
  const World& world = loaded.world;
  const WorldSettings& settings = world.settings();

  // Body i of the scene is the body of the same name in the world (or the i-th body).
  const std::size_t n = world.body_count();
  std::vector<BodyId> ids(scene.bodies.size());
  for (std::size_t i = 0; i < scene.bodies.size(); ++i) {
    std::optional<BodyId> id;
    if (!scene.bodies[i].name.empty()) id = world.find_body(scene.bodies[i].name);
    ids[i] = id ? *id : BodyId{static_cast<std::uint32_t>(i)};
  }

  std::array<std::size_t, 3> kind_counts{};
  std::size_t colliders = 0, colliding_dynamic = 0, collision_off = 0;
  std::map<std::string, std::size_t> shape_counts;
  std::vector<std::string> shape_order;
  double total_mass = 0;
  double dynamic_mass = 0;
  for (std::size_t i = 0; i < scene.bodies.size() && i < n; ++i) {
    const BodyDef& def = scene.bodies[i];
    const BodyInfo& body = world.body_info(ids[i]);
    ++kind_counts[static_cast<std::size_t>(body.kind)];
    const std::string shape = shape_type_name(def.shape.type);
    if (shape_counts[shape]++ == 0) shape_order.push_back(shape);
    total_mass += body.mass;
    if (body.kind == BodyKind::Dynamic) dynamic_mass += body.mass;
    if (!def.collision.enabled) {
      ++collision_off;
    } else if (body.kind == BodyKind::Dynamic) {
      ++colliding_dynamic;
    } else {
      ++colliders;
    }
  }

  print_field("scene", scene.path.empty() ? options.scene : scene.path);
  print_field("dt", num(settings.dt) + " s");
  print_field("gravity", vec(settings.gravity) + " m/s^2");
  print_field("newton iterations", std::to_string(settings.newton_iterations));
  print_field("tolerance", num(settings.tolerance) + " m");
  print_field("rotation", rotation_name(settings.rotation));
  print_field("integrator", integrator_name(settings.integrator));
  print_field("time integration", settings.time_integration == TimeIntegration::GeneralizedAlpha
                                      ? "generalized_alpha (spectral radius " + num(settings.spectral_radius) + ")"
                                      : "implicit_euler");
  {
    std::string dual = dual_solver_name(settings.solver);
    if (settings.solver == DualSolverKind::Iterative) {
      dual += " (relative tolerance " + num(settings.dual_tolerance) + ", at most " +
              std::to_string(settings.dual_max_iterations) + " iterations)";
    }
    print_field("dual solver", dual);
    print_field("threads", std::to_string(settings.threads) +
                               (settings.threads > 1 ? " (per-body phases of 4096 bodies or more)" : ""));
  }
  if (const Wind& w = settings.wind; !w.velocity.isZero(0)) {
    std::string wind = vec(w.velocity) + " m/s, air " + num(w.density) + " kg/m^3, C_d " +
                       num(w.drag_coefficient);
    if (w.gust > 0) wind += ", gusts +-" + num(100 * w.gust) + "% every " + num(w.gust_period) + " s";
    print_field("wind", wind);
  }
  print_field("contact", contact_description(settings));
  {
    // Contacts are between dynamic bodies and colliders (static and kinematic bodies).
    std::string collision = std::to_string(colliders) +
                            (colliders == 1 ? " collider" : " colliders") +
                            " (static/kinematic), " + std::to_string(colliding_dynamic) +
                            " colliding dynamic";
    if (collision_off > 0) {
      collision += ", " + std::to_string(collision_off) + " with collision off";
    }
    print_field("collision", collision);
  }
  if (!scene.collision_exclude.empty()) {
    constexpr std::size_t kMaxListed = 10;
    std::string pairs = std::to_string(scene.collision_exclude.size()) + ":";
    for (std::size_t i = 0; i < scene.collision_exclude.size() && i < kMaxListed; ++i) {
      pairs += (i ? ", " : " ") + scene.collision_exclude[i].first + " - " +
               scene.collision_exclude[i].second;
    }
    if (scene.collision_exclude.size() > kMaxListed) pairs += ", ...";
    print_field("excluded pairs", pairs);
  }
  print_field("default steps", std::to_string(scene.default_steps) + " (" +
                                   num(scene.default_steps * settings.dt) + " s simulated)");
  print_field("bodies", std::to_string(n) + " (" +
                            std::to_string(kind_counts[static_cast<int>(BodyKind::Dynamic)]) +
                            " dynamic, " +
                            std::to_string(kind_counts[static_cast<int>(BodyKind::Static)]) +
                            " static, " +
                            std::to_string(kind_counts[static_cast<int>(BodyKind::Kinematic)]) +
                            " kinematic)");
  std::string shapes;
  for (const std::string& shape : shape_order) {
    if (!shapes.empty()) shapes += ", ";
    shapes += shape + " " + std::to_string(shape_counts[shape]);
  }
  print_field("shapes", shapes.empty() ? "none" : shapes);
  print_field("total mass", num(total_mass) + " kg (dynamic bodies " + num(dynamic_mass) +
                                " kg)");
  print_field("shared factorisations", std::to_string(world.factor_count()));

  const std::size_t joint_count = world.joint_count();
  std::map<std::string, std::size_t> joint_type_counts;
  std::vector<std::string> joint_type_order;
  for (const SceneJoint& joint : scene.joints) {
    const std::string type = joint_type_name(joint.def.type);
    if (joint_type_counts[type]++ == 0) joint_type_order.push_back(type);
  }
  std::string joints = std::to_string(joint_count);
  if (!joint_type_order.empty()) {
    joints += " (";
    for (std::size_t i = 0; i < joint_type_order.size(); ++i) {
      if (i > 0) joints += ", ";
      joints += joint_type_order[i] + " " + std::to_string(joint_type_counts[joint_type_order[i]]);
    }
    joints += ")";
  }
  print_field("joints", joints);
  print_field("constraint rows", std::to_string(world.constraint_rows()));
  // Joint-graph components by kind (what the topology-matched solvers would use).
  std::map<std::string, std::size_t> by_kind;
  std::size_t loops = 0;
  const auto components = world.topology();
  for (const auto& c : components) {
    ++by_kind[c.kind];
    loops += c.loops;
  }
  std::string topo = std::to_string(components.size()) + " component(s)";
  if (!by_kind.empty()) {
    topo += ":";
    bool first = true;
    for (const auto& [kind, count] : by_kind) {
      topo += (first ? " " : ", ") + std::to_string(count) + " " + kind;
      first = false;
    }
  }
  if (loops > 0) topo += "; " + std::to_string(loops) + " loop(s)";
  print_field("topology", topo);
  // The dual solver per component (settings.solver, or matched to the topology under auto).
  std::map<std::string, std::size_t> by_solver;
  for (const auto& c : components) {
    if (c.solver != "none") ++by_solver[c.solver];
  }
  if (!by_solver.empty()) {
    std::string solvers;
    for (const auto& [solver, count] : by_solver) {
      solvers += (solvers.empty() ? "" : ", ") + solver + " (" + std::to_string(count) +
                 (count == 1 ? " component)" : " components)");
    }
    print_field("solved by", solvers);
  }
  if (world.soft_body_count() > 0) {
    std::size_t nodes = 0, tets = 0;
    for (std::uint32_t k = 0; k < world.soft_body_count(); ++k) {
      nodes += world.soft_body_state(SoftBodyId{k}).positions.size();
      tets += world.soft_body_tets(SoftBodyId{k}).size();
    }
    print_field("soft bodies", std::to_string(world.soft_body_count()) + " (" +
                                   std::to_string(nodes) + " nodes, " + std::to_string(tets) +
                                   " tets)");
  }

  if (n > 0 && n <= kMaxTableBodies) {
    std::printf("\n");
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"#", "name", "kind", "shape", "collision", "mass (kg)",
                    "principal inertia (kg m^2)"});
    for (std::size_t i = 0; i < scene.bodies.size() && i < n; ++i) {
      const BodyDef& def = scene.bodies[i];
      const BodyInfo& body = world.body_info(ids[i]);
      std::string kind = body_kind_name(body.kind);
      if (body.kind == BodyKind::Kinematic && def.motion) kind += " (scripted)";
      rows.push_back({std::to_string(i), body.name.empty() ? "-" : body.name, kind,
                      shape_description(def.shape), collision_description(def.collision),
                      num(body.mass), vec(body.principal_inertia)});
    }
    print_table(rows);
  } else if (n > kMaxTableBodies) {
    std::printf("\n(%zu bodies: table omitted, shown for at most %zu)\n", n, kMaxTableBodies);
  }

  if (joint_count > 0 && joint_count <= kMaxTableJoints) {
    std::printf("\n");
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"#", "name", "type", "bodies"});
    for (std::size_t i = 0; i < scene.joints.size() && i < joint_count; ++i) {
      const SceneJoint& joint = scene.joints[i];
      rows.push_back({std::to_string(i), joint.def.name.empty() ? "-" : joint.def.name,
                      joint_type_name(joint.def.type), joint.body_a + " - " + joint.body_b});
    }
    print_table(rows);
  } else if (joint_count > kMaxTableJoints) {
    std::printf("\n(%zu joints: table omitted, shown for at most %zu)\n", joint_count,
                kMaxTableJoints);
  }
  return kExitOk;
}

}  // namespace mabd::cli
