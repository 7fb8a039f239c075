// Scene -> World for callers that no longer need the definitions once the world holds them.
#pragma once

#include "mabd/scene.h"
#include "mabd/world.h"

namespace mabd::io {

/// build_world(scene), releasing scene.bodies once the bodies are added and scene.joints
/// once the joints are (both left empty): the definitions of a large scene and the world
/// built from them are not held at the same time in full. The same world, the same errors.
World build_world_releasing(Scene& scene);

}  // namespace mabd::io
