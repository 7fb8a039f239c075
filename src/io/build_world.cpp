// Scene -> World.
#include <string>
#include <vector>

#include "io/build_world.h"
#include "io/json_reader.h"
#include "mabd/error.h"
#include "mabd/scene.h"
#include "mabd/settings.h"
#include "mabd/world.h"

namespace mabd {

namespace {

/// A solver that only handles one topology must match the scene's joint graph, checked here
/// rather than at the first step (after the output files were created).
void check_solver_choice(const World& world, const std::string& file) {
  if (world.settings().solver != DualSolverKind::Chain) return;
  for (const ComponentSummary& component : world.topology()) {
    if (component.joints == 0 || component.kind == "chain") continue;
    io::throw_scene_error(
        file, "settings.solver",
        "\"chain\" needs every joint component to be a chain, but one is a " + component.kind +
            " (" + std::to_string(component.bodies) + " bodies, " +
            std::to_string(component.joints) + " joints, " + std::to_string(component.loops) +
            " loops; see mabd info); use \"auto\", \"tree\" or \"sparse\"");
  }
}

/// The world's message less its own "KIND 'NAME': " prefix (the item label names it already).
std::string without_own_name(std::string what, const std::string& kind, const std::string& name) {
  const std::string prefix = kind + " '" + name + "': ";
  if (!name.empty() && what.rfind(prefix, 0) == 0) what = what.substr(prefix.size());
  return what;
}

/// build_world; with `release` (the same scene), its bodies and joints are released as soon
/// as the world holds them.
World build(const Scene& scene, Scene* release) {
  const std::string file = scene.path.empty() ? std::string("scene") : scene.path;
  World world = [&]() {
    try {
      return World(scene.settings);
    } catch (const InvalidArgument& e) {
      io::throw_scene_error(file, "settings", e.what());
    }
  }();
  world.reserve(scene.bodies.size(), scene.joints.size());
  for (std::size_t i = 0; i < scene.bodies.size(); ++i) {
    const BodyDef& def = scene.bodies[i];
    try {
      world.add_body(def);
    } catch (const InvalidArgument& e) {
      std::string item = "bodies[" + std::to_string(i) + "]";
      if (!def.name.empty()) item += " '" + def.name + "'";
      io::throw_scene_error(file, item, e.what());
    }
  }
  if (release) std::vector<BodyDef>().swap(release->bodies);
  for (std::size_t i = 0; i < scene.joints.size(); ++i) {
    const SceneJoint& joint = scene.joints[i];
    std::string item = "joints[" + std::to_string(i) + "]";
    if (!joint.def.name.empty()) item += " '" + joint.def.name + "'";
    JointDef def = joint.def;
    const auto resolve = [&](const std::string& name) -> BodyId {
      if (name == "world") return BodyId{};
      if (auto id = world.find_body(name)) return *id;
      io::throw_scene_error(file, item, "unknown body '" + name + "'");
    };
    def.body_a = resolve(joint.body_a);
    def.body_b = resolve(joint.body_b);
    try {
      world.add_joint(def);
    } catch (const InvalidArgument& e) {
      io::throw_scene_error(file, item, without_own_name(e.what(), "joint", def.name));
    }
  }
  if (release) std::vector<SceneJoint>().swap(release->joints);
  for (std::size_t i = 0; i < scene.soft_bodies.size(); ++i) {
    const SceneSoftBody& soft = scene.soft_bodies[i];
    std::string item = "soft_bodies[" + std::to_string(i) + "]";
    if (!soft.def.name.empty()) item += " '" + soft.def.name + "'";
    SoftBodyDef def = soft.def;
    for (std::size_t k = 0; k < def.attachments.size(); ++k) {
      const std::string& name = soft.attach_bodies[k];
      if (name == "world") continue;
      const auto id = world.find_body(name);
      if (!id) io::throw_scene_error(file, item, "attach: unknown body '" + name + "'");
      def.attachments[k].body = *id;
    }
    try {
      world.add_soft_body(def);
    } catch (const InvalidArgument& e) {
      io::throw_scene_error(file, item, without_own_name(e.what(), "soft body", def.name));
    }
  }
  check_solver_choice(world, file);
  for (std::size_t i = 0; i < scene.collision_exclude.size(); ++i) {
    const auto& [name_a, name_b] = scene.collision_exclude[i];
    const std::string item = "collision_exclude[" + std::to_string(i) + "]";
    const auto a = world.find_body(name_a);
    const auto b = world.find_body(name_b);
    if (!a || !b) {
      io::throw_scene_error(file, item, "unknown body '" + (a ? name_b : name_a) + "'");
    }
    try {
      world.exclude_collision(*a, *b);
    } catch (const InvalidArgument& e) {
      io::throw_scene_error(file, item, e.what());
    }
  }
  return world;
}

}  // namespace

World build_world(const Scene& scene) { return build(scene, nullptr); }

World io::build_world_releasing(Scene& scene) { return build(scene, &scene); }

}  // namespace mabd
