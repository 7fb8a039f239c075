// Robot models placed in a scene (the top-level "models" array of a scene file): a URDF or
// MJCF file read by load_model, renamed with a prefix and moved to a base pose, its bodies,
// joints and collision exclusions appended to the scene. docs/scene-format.md, "Models".
#pragma once

#include <string>
#include <vector>

#include "io/json_reader.h"
#include "mabd/scene.h"

namespace mabd::io {

/// Reads every entry of `models` ({"file", "position", "orientation", "prefix",
/// "floating_base"}), appends its bodies, exclusions and warnings to `scene` and returns its
/// joints (the caller appends them after the scene's own joints).
/// Files resolve against `base_dir`. The scene's settings apply; a model's own (MJCF
/// <option>) do not. Throws SceneError naming "models[i]" and, for a bad model file, the
/// model loader's message (file, line, element).
std::vector<SceneJoint> add_models(const Node& models, const std::string& base_dir, Scene& scene);

}  // namespace mabd::io
