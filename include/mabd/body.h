// Body and material definitions: filled by the user (or the scene loader), then added to a
// World, which validates them.
#pragma once

#include <functional>
#include <optional>
#include <cstdint>
#include <string>
#include <vector>

#include "mabd/math.h"
#include "mabd/shape.h"

namespace mabd {

/// Elastic solid. Affine bodies are near-rigid: a larger Young's modulus means a stiffer body.
struct Material {
  double density = 1000.0;       ///< kg/m^3
  double youngs_modulus = 1e8;   ///< Pa
  double poisson_ratio = 0.3;    ///< dimensionless, in [0, 0.5)
  /// Coulomb friction coefficient (dimensionless, >= 0). A contact pair uses the geometric
  /// mean of its two bodies' coefficients.
  double friction = 0.5;
};

/// One collision primitive of a body: a shape placed in the body's own (user) frame.
struct CollisionPrimitive {
  ShapeDef shape;  ///< in the primitive's frame (a plane: static and kinematic bodies only)
  Pose pose;       ///< primitive frame in the body's user frame (m, rotation)
};

/// How a body collides. By default with its own shape, in every group.
struct CollisionDef {
  bool enabled = true;  ///< false: the body never collides
  /// Primitives used instead of the body's shape; empty: the body's own shape.
  std::vector<CollisionPrimitive> primitives;
  std::uint32_t group = 1;           ///< collision group bits of this body
  std::uint32_t mask = 0xFFFFFFFFu;  ///< groups this body collides with (both sides must agree)
};

enum class BodyKind {
  Dynamic,    ///< integrated by the solver
  Static,     ///< never moves
  Kinematic,  ///< follows a prescribed motion, unaffected by forces
};

/// Lower-case name of a body kind as in scene files: "dynamic", "static" or "kinematic".
const char* body_kind_name(BodyKind kind);

/// Prescribed motion of a kinematic body: pose of the body's (user) frame at time t (s).
using MotionFunction = std::function<Pose(double t)>;

/// Everything needed to create a body. Positions, orientations and velocities are given for
/// the body's own (user) frame in world coordinates, at time 0.
struct BodyDef {
  std::string name;                      ///< unique within a world; may be empty
  ShapeDef shape;
  Material material;
  /// Total mass (kg). When set it overrides material.density (density = mass / volume).
  std::optional<double> mass;
  Vec3 position = Vec3::Zero();          ///< origin of the body frame in world (m)
  Quat orientation = Quat::Identity();   ///< body frame -> world rotation (normalised on add)
  Vec3 linear_velocity = Vec3::Zero();   ///< velocity of the centre of mass, world (m/s)
  Vec3 angular_velocity = Vec3::Zero();  ///< world axes (rad/s)
  BodyKind kind = BodyKind::Dynamic;
  /// Kinematic bodies only: the prescribed motion. Without it a kinematic body moves with
  /// its constant initial twist (velocities above, rotation about the centre of mass).
  MotionFunction motion;
  CollisionDef collision;  ///< collision shape and filter (see CollisionDef)
};

}  // namespace mabd
