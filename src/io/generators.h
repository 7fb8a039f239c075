// Procedural scene generators (the top-level "generators" array of a scene file): chains,
// nets and trees built directly as BodyDef / SceneJoint lists. The format is documented in
// docs/scene-format.md, section "Generators".
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "io/json_reader.h"
#include "mabd/body.h"
#include "mabd/scene.h"
#include "mabd/shape.h"

namespace mabd::io {

/// The loader's own parsers, so generated items are validated exactly like explicit ones.
struct GeneratorParsers {
  /// Parses and validates a shape object (as a body's "shape").
  std::function<ShapeDef(const Node&)> shape;
  /// Parses a material reference: a name from "materials" or an inline material object.
  std::function<Material(const Node&)> material;
  /// Parses a "collision" value (false, true or a collision object) for a dynamic body.
  std::function<CollisionDef(const Node&)> collision;
};

/// Memory the system can still give this process without swapping (bytes): MemAvailable of
/// /proc/meminfo, else the free physical pages; nullopt when neither is known.
std::optional<double> available_memory();

/// Runs every generator of `generators` (the top-level "generators" array) in order. Their
/// bodies are appended to scene.bodies; their joints are returned (the caller appends them
/// after the explicit joints). `top` is the document, used to check that explicit joint
/// names do not use a generator's reserved prefix. Throws SceneError on bad input, with
/// items labelled "generators[i] 'name'".
std::vector<SceneJoint> run_generators(const Node& top, const Node& generators,
                                       const GeneratorParsers& parsers, Scene& scene);

}  // namespace mabd::io
