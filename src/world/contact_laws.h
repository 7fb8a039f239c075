// Contact laws shared by the collider contacts (contact.cpp) and the contacts between
// dynamic bodies (pair_contact.cpp): the exact model's compliance floor, the rigid effective
// mass of a body point and the penalty spring-damper (DESIGN section 7).
#pragma once

#include <cmath>

#include "body/affine.h"
#include "mabd/settings.h"
#include "world/world_impl.h"

namespace mabd::detail {

/// Exact model: compliance floor over each row's own compliance g^T H^{-1} g. Below 1e-3,
/// jointed boxes lying on the ground (their corner rows redundant with the joints on the
/// rigid motion) blew up within steps; at 1e-3 a resting box sinks about 1e-3 g beta h^2.
inline constexpr double kExactFloor = 1e-3;

/// Exact model, a soft body's contacts with static and kinematic bodies: their floor. The
/// floor is a spring; it stores 1/2 alpha lambda^2 while it carries a load and gives it back
/// as the load falls, which the step's energy does not see (at 1e-3 the armadillo_drop scene
/// gained 2.7e-4 J in a step as a foot landed and pressed 0.16 mm into the ground). No joint
/// makes these rows redundant, so they take a tenth of kExactFloor.
inline constexpr double kSoftStaticFloor = 1e-4;

/// Contacts between dynamic bodies: the friction rows' floor over g^T H^{-1} g. Their value is
/// the slip over the step, so a compliance lets a held point creep by alpha lambda_t each
/// step; 1e-7 keeps that under 1e-9 m per step for a point loaded by its own weight, and the
/// rows solvable (the complementarity solver factors the sticking rows exactly).
inline constexpr double kStickFloor = 1e-7;

/// Exact model, contacts between dynamic bodies: a penetration found at the start of a step
/// (a point that came in through a face the last step's normal did not guard, or bodies
/// placed overlapping) is pushed out at most this fast (m/s). Pushing it out within one step
/// would give the bodies the speed penetration / h, kinetic energy the step never had.
inline constexpr double kRecoverySpeed = 0.1;

inline Vec3 any_perpendicular(const Vec3& n) {
  const Vec3 a = std::abs(n.x()) < 0.6 ? Vec3::UnitX() : Vec3::UnitY();
  return (a - n * n.dot(a)).normalized();
}

/// Rigid effective mass (kg) of body point p (body frame) along world direction d:
/// 1 / (1/m + (p x d_b) . I^{-1} (p x d_b)), principal body frame (the affine mass alone
/// would count the stiff deformation modes).
inline double rigid_effective_mass(const BodyModel& B, const Vec12& q, const Vec3& p,
                            const Vec3& d) {
  const Vec3 pxd = p.cross(affine_A(q).transpose() * d);
  return 1.0 / (1.0 / B.mass() + pxd.cwiseAbs2().cwiseQuotient(B.principal_inertia()).sum());
}

/// Penalty row law of a row of effective mass m_eff (kg): stiffness k = m_eff / tau^2 (N/m)
/// and damper c_d = 2 zeta m_eff / tau (N s/m) on the change of the row value over the step,
/// lambda = k C + (c_d / h) (C - s0) = k_eff C - (c_d / h) s0.
struct PenaltyLaw {
  double k_eff;  ///< k + c_d / h (N/m)
  double pull;   ///< (c_d / h) s0 (N)
};
/// The penalty time constant tau (s): the setting, or by default dt / 4 in implicit Euler
/// (stiff enough for a 10-box stack to stand; its impacts stay inelastic at any tau) and
/// 2 dt under generalized-alpha (whose velocity update hands back part of a stiffer spring's
/// impulse; see settings.cpp).
inline double penalty_time_constant(const WorldSettings& s) {
  if (s.contact.time_constant > 0) return s.contact.time_constant;
  return s.time_integration == TimeIntegration::ImplicitEuler ? 0.25 * s.dt : 2 * s.dt;
}
/// The static stiffness k = m_eff / tau^2 (N/m) of a penalty row.
inline double penalty_stiffness(const WorldSettings& s, double m_eff) {
  const double tau = penalty_time_constant(s);
  return m_eff / (tau * tau);
}
inline PenaltyLaw penalty_law(const WorldSettings& s, double m_eff, double s0) {
  const double k = penalty_stiffness(s, m_eff), h = s.dt;
  const double cd = 2 * s.contact.damping_ratio * m_eff / penalty_time_constant(s);
  return {k + cd / h, (cd / h) * s0};
}

}  // namespace mabd::detail
