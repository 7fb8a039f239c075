// Affine-body kinematics (DESIGN section 1; paper Eqs. abd, G, E).
// q = [a1; a2; a3; t]: the columns of A and the translation; a body point with rest
// position xb (body frame, at the COM on principal axes) is at x = A xb + t.
#pragma once

#include <Eigen/Cholesky>

#include "mabd/math.h"

namespace mabd::detail {

inline Mat3 affine_A(const Vec12& q) { return Eigen::Map<const Mat3>(q.data()); }
inline Vec3 affine_t(const Vec12& q) { return q.tail<3>(); }
inline Vec3 block(const Vec12& q, int k) { return q.segment<3>(3 * k); }

inline Vec12 make_q(const Mat3& A, const Vec3& t) {
  Vec12 q;
  Eigen::Map<Mat3>(q.data()) = A;
  q.tail<3>() = t;
  return q;
}

/// World position of body point xb (m): J(xb) q.
/// The body-frame vector v with A(q) v = d, for a world vector d (m): A^{-1} d.
inline Vec3 to_body_frame(const Vec12& q, const Vec3& d) {
  return affine_A(q).inverse() * d;
}

inline Vec3 point(const Vec12& q, const Vec3& xb) {
  return xb[0] * block(q, 0) + xb[1] * block(q, 1) + xb[2] * block(q, 2) + block(q, 3);
}

/// Twist from velocities, V = G(A) qdot: w = 1/2 sum a_k x adot_k, v = tdot (paper Eq. G).
inline Twist twist_of(const Vec12& q, const Vec12& qdot) {
  Twist tw;
  for (int k = 0; k < 3; ++k) tw.angular += 0.5 * block(q, k).cross(block(qdot, k));
  tw.linear = block(qdot, 3);
  return tw;
}

/// Rigid embedding qdot = E(A) V: adot_k = w x a_k, tdot = v (paper Eq. E).
inline Vec12 velocities_of(const Vec12& q, const Vec3& w, const Vec3& v) {
  Vec12 qd;
  for (int k = 0; k < 3; ++k) qd.segment<3>(3 * k) = w.cross(block(q, k));
  qd.tail<3>() = v;
  return qd;
}

/// Generalised force of a spatial wrench, f_A = G(A)^T [tau; f] (paper Eq. G).
inline Vec12 wrench_force(const Vec12& q, const Vec3& torque, const Vec3& force) {
  Vec12 fa;
  for (int k = 0; k < 3; ++k) fa.segment<3>(3 * k) = 0.5 * torque.cross(block(q, k));
  fa.tail<3>() = force;
  return fa;
}

/// Acceleration of a free rigid motion with angular velocity w (rad/s) plus a uniform
/// acceleration g on the COM (m/s^2): adotdot_k = wdot x a_k + w x (w x a_k) with Euler's
/// I wdot = -w x (I w), I from the principal second moments sigma (kg m^2).
inline Vec12 rigid_acceleration(const Vec12& q, const Vec3& sigma, const Vec3& w, const Vec3& g) {
  const Mat3 A = affine_A(q);
  const Mat3 I = A * (sigma.sum() * Mat3::Identity() - Mat3(sigma.asDiagonal())) * A.transpose();
  const Vec3 wdot = I.ldlt().solve(-w.cross(I * w));
  Vec12 a;
  for (int k = 0; k < 3; ++k) a.segment<3>(3 * k) = wdot.cross(block(q, k)) + w.cross(w.cross(block(q, k)));
  a.tail<3>() = g;
  return a;
}

}  // namespace mabd::detail
