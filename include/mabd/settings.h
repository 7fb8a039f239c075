// Simulation settings shared by the C++ API and scene files ("settings" object).
#pragma once

#include <string>
#include <vector>

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

/// Time discretisation. Both are written as an incremental potential
/// E(q) = |q - qhat|^2_{M_A} / (2 beta' h^2) + E_el(q) - f_ext . q with the constant
/// co-rotated matrix Hb = M_A / (beta' h^2) + Kb, forces and joints taken at the end of the
/// step, and Newton started from the current motion continued rigidly.
enum class TimeIntegration {
  /// Generalized-alpha (Chung-Hulbert, in the constrained form of Arnold-Bruls): second
  /// order, high-frequency (elastic, constraint) vibrations damped according to
  /// `spectral_radius`, rigid rotation almost undamped: one Newton iteration keeps angular
  /// momentum and leaves only the physical elastic deformation. Default.
  GeneralizedAlpha,
  /// Implicit Euler (beta' = 1), as in the paper: first order, damps rotation at about
  /// h w^2 per second.
  ImplicitEuler,
};

/// A prescribed wind field (paper, tree scenes): aerodynamic drag on every dynamic body,
///   F = 1/2 density drag_coefficient A(n) |w| w,   w = u(x, t) - v   (N, world),
/// applied through the body's centre of mass x (m) with v its velocity (m/s), at the start of
/// each step (explicit), where the air velocity is a mean wind with a travelling gust,
///   u(x, t) = velocity (1 + gust sin(2 pi (t - x . e / |velocity|) / gust_period)),
/// e = velocity / |velocity|, and A(n) the area (m^2) the body presents to the flow direction
/// n = w / |w|: that of its equivalent box (the box with the body's mass and principal second
/// moments, exact for boxes), sum over its axes k of |n . e_k| times the face area normal to
/// e_k. The impulse of one step is capped at m |w| (a body cannot overtake the air within a
/// step). Off while velocity is zero.
struct Wind {
  Vec3 velocity = Vec3::Zero();   ///< mean air velocity (m/s, world)
  double density = 1.2;           ///< air density (kg/m^3), >= 0
  double drag_coefficient = 1.0;  ///< dimensionless, >= 0
  double gust = 0;                ///< relative gust amplitude, >= 0
  double gust_period = 2.0;       ///< s, > 0
};

/// How contacts between dynamic bodies and colliders (static and kinematic bodies) are
/// enforced (DESIGN section 7). Both treat a body's contact rows as a low-rank update of its
/// pre-factored system matrix, so the joint solvers keep their topology.
enum class ContactModel {
  None,     ///< no collision detection
  /// Implicit penalty (the paper's): each contact row is a spring-damper whose stiffness
  /// k = m_eff / time_constant^2 follows the row's own effective mass m_eff (kg), so one
  /// setting serves a 10 g link and a 50 kg box; critically damped by default.
  Penalty,
  /// The zero-compliance limit: no penetration at the end of the step beyond a compliance
  /// floor of 1e-3 of each row's own effective compliance (which keeps coplanar contact sets
  /// and contact rows redundant with joints solvable; a resting body sinks about
  /// 1e-3 g h^2), pushing forces only. Integrates with TimeIntegration::ImplicitEuler only
  /// (validation rejects generalized-alpha: its second-order velocity update turns the
  /// contact impulses into a rebound); scene files default to it with this model.
  Exact,
};

/// Contact parameters ("settings.contact" in scene files).
struct ContactSettings {
  /// Off by default: scenes and programs opt in.
  ContactModel model = ContactModel::None;
  /// Penalty: time constant tau (s) of the contact spring, k = m_eff / tau^2; 0 means dt / 4
  /// in implicit Euler (a 10-box stack stands) and 2 dt under generalized-alpha, where it must
  /// be at least dt (its velocity update returns a stiffer spring's impacts with energy
  /// gained); implicit Euler takes any tau > 0 and its impacts stay inelastic.
  /// A resting body sinks by about g tau^2 (times its share of the load per contact row).
  double time_constant = 0;
  /// Penalty: damping ratio of the contact spring-damper (dimensionless, >= 0).
  double damping_ratio = 1.0;
  /// Speculative margin (m): points closer than this at the start of a step become candidate
  /// contacts; added to the distance each body can travel in one step. >= 0.
  double margin = 1e-3;
  /// Coulomb friction on/off (coefficients come from the bodies' materials).
  bool friction = true;
  /// Contact between two dynamic bodies of different articulations (bodies not connected
  /// through joints between dynamic bodies). Their rows join the joint solve through a Schur
  /// complement over it (DESIGN section 7).
  bool bodies = true;
  /// Contact between two dynamic bodies of the same articulation (self-collision). Bodies
  /// that share a joint never collide (World::exclude_collision excludes other pairs).
  bool self_collision = false;
};

/// Solver for the dual system S lambda = b (paper sections "Case I" to "Case IV").
enum class DualSolverKind {
  /// Matched to the joint topology: chain if every component is a chain; else the tree
  /// solver for chains, trees and components with up to 8 loop joints and the sparse one
  /// for the other components (graphs); graphs alone, with 24,000 joint rows or more and
  /// no contact or soft body: the iterative one
  Auto,
  Sparse,     ///< general sparse Cholesky of S (any topology), symbolic analysis reused
  Chain,      ///< block-tridiagonal Thomas, O(K); every component must be a chain
  Tree,       ///< ABD-ABA tree elimination, O(K), plus a Schur complement on loop joints
  Iterative,  ///< preconditioned iterative solve for very large graphs (residual reported)
};

/// The scene-file / command-line name of a solver kind ("auto", "sparse", ...).
const char* dual_solver_name(DualSolverKind kind);
/// All accepted solver names, in enum order.
const std::vector<std::string>& dual_solver_names();

struct WorldSettings {
  double dt = 1e-3;                       ///< time step h (s), > 0
  Vec3 gravity = Vec3(0, 0, -9.81);       ///< m/s^2, world
  int newton_iterations = 1;              ///< Newton iteration cap per step, >= 1
  /// Newton stops early once the largest point displacement of the increment is below this (m).
  double tolerance = 1e-8;
  RotationMode rotation = RotationMode::Polar;
  IntegratorMode integrator = IntegratorMode::CoRotated;
  TimeIntegration time_integration = TimeIntegration::GeneralizedAlpha;
  /// Generalized-alpha spectral radius at infinite frequency, in [0, 1]: 1 keeps every
  /// vibration (trapezoidal-like), smaller values damp high frequencies faster.
  double spectral_radius = 0.8;
  DualSolverKind solver = DualSolverKind::Auto;
  /// Iterative dual solver: stop when |b - S lambda| <= tolerance * |b| (relative), > 0.
  double dual_tolerance = 1e-10;
  /// Iterative dual solver: iteration cap per solve, >= 1. A solve that reaches it is done by
  /// the sparse Cholesky instead, and so are the rest of that step's dual systems.
  int dual_max_iterations = 1000;
  /// Threads of the per-body phases of a step (predict, body operators, update, checks,
  /// velocities), in [1, 256]. Each thread takes a contiguous range of the bodies, and the
  /// results are the same to the bit for every count. The closed-form ball chain solver
  /// also solves separate chains on the threads. Phases over fewer than 4096 bodies, and the
  /// other dual solvers and the contact solves, run on the calling thread.
  int threads = 1;
  Wind wind;  ///< aerodynamic loads on every dynamic body (off by default)
  ContactSettings contact;  ///< contact with colliders (off by default)
};

/// The scene-file name of a contact model ("none", "penalty", "exact").
const char* contact_model_name(ContactModel model);

/// Throws InvalidArgument naming the field when a setting is out of range or not finite.
void validate_settings(const WorldSettings& settings);

}  // namespace mabd
