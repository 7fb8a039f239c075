// Simulation settings shared by the C++ API and scene files ("settings" object).
#pragma once

#include "mabd/math.h"

namespace mabd {

/// How the co-rotated solver obtains each body's rotation R from its affine matrix A.
enum class RotationMode {
  Polar,       ///< exact polar decomposition A = R S (paper Eq. polar)
  Normalized,  ///< length-preserving shortcut R a ~ |a|/|A a| A a (paper Eq. len_preserving,
               ///< Alg. 1); elasticity then uses the Green strain (A^T A - I)/2
};

/// Which single-body integrator is used.
enum class IntegratorMode {
  CoRotated,  ///< constant pre-factored Hb = M_A/h^2 + Kb (paper Eq. abd_final)
  Vanilla,    ///< original ABD: energy k |A A^T - I|^2, Hessian rebuilt and factored every
              ///< Newton iteration (the paper's baseline, for comparison)
};

struct WorldSettings {
  double dt = 1e-3;                       ///< time step h (s), > 0
  Vec3 gravity = Vec3(0, 0, -9.81);       ///< m/s^2, world
  int newton_iterations = 1;              ///< Newton iteration cap per step, >= 1
  /// Newton stops early once the largest point displacement of the increment is below this (m).
  double tolerance = 1e-8;
  RotationMode rotation = RotationMode::Polar;
  IntegratorMode integrator = IntegratorMode::CoRotated;
};

/// Throws InvalidArgument naming the field when a setting is out of range or not finite.
void validate_settings(const WorldSettings& settings);

}  // namespace mabd
