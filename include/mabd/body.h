// Body and material definitions: filled by the user (or the scene loader), then added to a
// World, which validates them.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "mabd/math.h"
#include "mabd/shape.h"

namespace mabd {

/// Elastic solid. Affine bodies are near-rigid: a larger Young's modulus means a stiffer body.
struct Material {
  double density = 1000.0;       ///< kg/m^3
  double youngs_modulus = 1e8;   ///< Pa
  double poisson_ratio = 0.3;    ///< dimensionless, in [0, 0.5)
};

enum class BodyKind {
  Dynamic,    ///< integrated by the solver
  Static,     ///< never moves
  Kinematic,  ///< follows a prescribed motion, unaffected by forces
};

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
};

}  // namespace mabd
