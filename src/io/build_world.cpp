// Scene -> World.
#include <string>

#include "io/json_reader.h"
#include "mabd/error.h"
#include "mabd/scene.h"
#include "mabd/world.h"

namespace mabd {

World build_world(const Scene& scene) {
  const std::string file = scene.path.empty() ? std::string("scene") : scene.path;
  World world = [&]() {
    try {
      return World(scene.settings);
    } catch (const InvalidArgument& e) {
      io::throw_scene_error(file, "settings", e.what());
    }
  }();
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
  return world;
}

}  // namespace mabd
