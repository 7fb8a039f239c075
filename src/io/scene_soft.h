// Soft bodies of a scene file (the top-level "soft_bodies" array): a tetrahedral mesh read
// from a file (TetGen .node/.ele, Gmsh .msh) or a generated box, placed, with a material and
// attachments to bodies. docs/scene-format.md, "Soft bodies".
#pragma once

#include <functional>
#include <string>

#include "io/json_reader.h"
#include "mabd/scene.h"

namespace mabd::io {

/// Reads every entry of `soft_bodies` into scene.soft_bodies. `material` parses a material
/// (a name or an object); mesh files resolve against `base_dir`. Throws SceneError naming
/// "soft_bodies[i]" and the field.
void add_soft_bodies(const Node& soft_bodies, const std::string& base_dir,
                     const std::function<Material(const Node&)>& material, Scene& scene);

}  // namespace mabd::io
