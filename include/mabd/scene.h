// Scene files (JSON, docs/scene-format.md) and robot models (URDF, MJCF,
// docs/model-import.md).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "mabd/body.h"
#include "mabd/joint.h"
#include "mabd/settings.h"
#include "mabd/soft_body.h"

namespace mabd {

class World;

/// A joint as written in a scene: bodies by name ("world" for the world).
struct SceneJoint {
  JointDef def;          ///< body ids are filled by build_world
  std::string body_a;    ///< name of the first body, or "world"
  std::string body_b;    ///< name of the second body, or "world"
};

/// A soft body as written in a scene: its attachments name their bodies.
struct SceneSoftBody {
  SoftBodyDef def;                        ///< attachment body ids are filled by build_world
  std::vector<std::string> attach_bodies; ///< per def.attachments entry: a body or "world"
};

/// A parsed, validated scene: settings plus body definitions (meshes already loaded).
struct Scene {
  std::string path;                          ///< file it came from ("" if from a string)
  WorldSettings settings;
  std::map<std::string, Material> materials;
  std::vector<BodyDef> bodies;
  std::vector<SceneJoint> joints;
  std::vector<SceneSoftBody> soft_bodies;   ///< "soft_bodies", added after the joints
  /// Pairs of bodies (by name) that never collide with each other ("collision_exclude").
  std::vector<std::pair<std::string, std::string>> collision_exclude;
  /// Steps `mabd run` takes when no --steps is given (settings.steps, default 1000).
  int default_steps = 1000;
  /// Likely unit slips the loader noticed (angles in degrees, sizes in millimetres, masses no
  /// solid of that size has): one line each, naming the item. The scene is valid regardless.
  std::vector<std::string> warnings;
};

/// Reads and validates a scene file. Throws SceneError whose one-line message names the
/// file, the item (e.g. "bodies[2] 'rod': shape.size[1]") and what is wrong. A path ending
/// in .urdf, .xml or .mjcf is a robot model, read by load_model with default options.
Scene load_scene(const std::string& path);

/// How robot models are imported (docs/model-import.md).
struct ModelOptions {
  /// URDF: the root link moves freely instead of being welded to the world (a link named
  /// "world" joined to the root by a floating joint does the same).
  bool floating_base = false;
};

/// Reads a URDF (.urdf) or MJCF (.xml, .mjcf) robot model into a scene: the same bodies and
/// joints a JSON scene would hold, in SI units, z up. Elements and attributes that have no
/// equivalent are listed in Scene::warnings. Malformed input throws SceneError
/// "FILE: line L: <element name='n'>: what is wrong". Any other extension is read as a JSON
/// scene.
Scene load_model(const std::string& path, const ModelOptions& options = {});

/// Parses a scene from JSON text; `name` is used in messages and `base_dir` resolves
/// relative mesh paths.
Scene parse_scene(const std::string& json_text, const std::string& name,
                  const std::string& base_dir = ".");

/// Builds a World from a scene. Throws SceneError if the world rejects an item.
World build_world(const Scene& scene);

}  // namespace mabd
