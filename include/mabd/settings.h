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

/// Time discretisation, both written as an incremental potential
/// E(q) = |q - qhat|^2_{M_A} / (2 beta h^2) + E_el(q) - f_ext . q with the constant
/// co-rotated matrix Hb = M_A / (beta h^2) + Kb.
enum class TimeIntegration {
  /// Newmark average acceleration (trapezoidal rule, beta = 1/4, gamma = 1/2). Second order;
  /// a free rigid rotation keeps its length (Cayley map), so one Newton iteration conserves
  /// angular momentum and leaves only the physical elastic deformation. Newton starts from
  /// the current motion continued rigidly. Default.
  Newmark,
  /// Implicit Euler (beta = 1), Newton started at q^n as in the paper (Alg. ABA: f = f_ext +
  /// M_A qdot / h). First order: with one iteration it conserves angular momentum well but
  /// stretches spinning bodies by about (h w)^2; converged it damps rotation at ~h w^2 per s.
  ImplicitEuler,
};

struct WorldSettings {
  double dt = 1e-3;                       ///< time step h (s), > 0
  Vec3 gravity = Vec3(0, 0, -9.81);       ///< m/s^2, world
  int newton_iterations = 1;              ///< Newton iteration cap per step, >= 1
  /// Newton stops early once the largest point displacement of the increment is below this (m).
  double tolerance = 1e-8;
  RotationMode rotation = RotationMode::Polar;
  IntegratorMode integrator = IntegratorMode::CoRotated;
  TimeIntegration time_integration = TimeIntegration::Newmark;
};

/// Throws InvalidArgument naming the field when a setting is out of range or not finite.
void validate_settings(const WorldSettings& settings);

}  // namespace mabd
