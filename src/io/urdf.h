// URDF robot models -> mabd::Scene (docs/model-import.md).
#pragma once

#include <string>

#include "mabd/scene.h"

namespace mabd::io {

/// Reads the URDF file `path`. Throws SceneError "PATH: line L: <element name='n'>: what is
/// wrong" on malformed input; unsupported elements and attributes become Scene::warnings.
Scene load_urdf(const std::string& path, const ModelOptions& options);

}  // namespace mabd::io
