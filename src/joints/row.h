// Constraint rows. Every body point x = J(p) q and every body vector A v is linear in the
// affine coordinate q (DESIGN section 1), so each joint row below is a linear or bilinear
// polynomial in (q_a, q_b) and its gradient is exact.
#pragma once

#include <vector>

#include "mabd/math.h"

namespace mabd::detail {

enum class RowKind {
  Equality,  ///< C = 0
  Lower,     ///< C >= 0 (limits): active only when violated; its multiplier pushes only
  Bounded,   ///< C = 0 with |lambda| <= bound (drives with a force limit)
};

/// One scalar constraint row C(q_a, q_b) of a joint (m, or scaled to m by the joint's length).
struct Row {
  Vec12 ga = Vec12::Zero();  ///< dC/dq_a
  Vec12 gb = Vec12::Zero();  ///< dC/dq_b
  double c = 0;              ///< C(q)
  double compliance = 0;     ///< m/N
  RowKind kind = RowKind::Equality;
  double bound = 0;          ///< N, for Bounded rows
  double lever = 1;          ///< m: multiplier * lever = generalized force (N or N m)
};

// ---- primitives on q = [a1; a2; a3; t] -----------------------------------------------------

/// Gradient of d . (J(p) q) with respect to q (d constant).
inline Vec12 grad_point(const Vec3& p, const Vec3& d) {
  Vec12 g;
  g << p[0] * d, p[1] * d, p[2] * d, d;
  return g;
}

/// Gradient of d . (A v) with respect to q (d constant).
inline Vec12 grad_vector(const Vec3& v, const Vec3& d) {
  Vec12 g;
  g << v[0] * d, v[1] * d, v[2] * d, Vec3::Zero();
  return g;
}

inline Vec3 body_point(const Vec12& q, const Vec3& p) {
  return p[0] * q.segment<3>(0) + p[1] * q.segment<3>(3) + p[2] * q.segment<3>(6) + q.tail<3>();
}

inline Vec3 body_vector(const Vec12& q, const Vec3& v) {
  return v[0] * q.segment<3>(0) + v[1] * q.segment<3>(3) + v[2] * q.segment<3>(6);
}

/// Three rows: x_a(pa) - x_b(pb) = 0 (paper Eq. ball), built in place: row i has the
/// gradients grad_point(pa, e_i) and -grad_point(pb, e_i) (zero but for four entries each).
inline void add_point_rows(const Vec12& qa, const Vec12& qb, const Vec3& pa, const Vec3& pb,
                           std::vector<Row>& out) {
  const Vec3 d = body_point(qa, pa) - body_point(qb, pb);
  const std::size_t first = out.size();
  out.resize(first + 3);
  for (int i = 0; i < 3; ++i) {
    Row& r = out[first + i];
    r.c = d[i];
    for (int k = 0; k < 3; ++k) {
      r.ga[3 * k + i] = pa[k];
      r.gb[3 * k + i] = -pb[k];
    }
    r.ga[9 + i] = 1;
    r.gb[9 + i] = -1;
  }
}

/// Sets g = s * grad_vector(v, d).
inline void set_grad_vector(const Vec3& v, const Vec3& d, double s, Vec12& g) {
  for (int k = 0; k < 3; ++k) g.segment<3>(3 * k) = s * (v[k] * d);
  g.tail<3>().setZero();
}

/// Sets r to the row L (A_a u) . (A_b v) = 0 from au = A_a u and bv = A_b v.
inline void set_dot_row(const Vec3& au, const Vec3& bv, const Vec3& u, const Vec3& v, double L,
                        Row& r) {
  r.c = L * au.dot(bv);
  set_grad_vector(u, bv, L, r.ga);
  set_grad_vector(v, au, L, r.gb);
  r.lever = L;
}

/// One row: L (A_a u) . (A_b v) = 0 (perpendicular body vectors).
inline Row dot_row(const Vec12& qa, const Vec12& qb, const Vec3& u, const Vec3& v, double L) {
  Row r;
  set_dot_row(body_vector(qa, u), body_vector(qb, v), u, v, L, r);
  return r;
}

/// Pairs (i, j) of the rotation-lock rows (A_a ea_i) . (A_b eb_j).
inline constexpr int kLockPairs[3][2] = {{1, 2}, {2, 0}, {0, 1}};

/// Three rows locking the relative rotation: ea[i], eb[i] are the body-local images of one
/// world frame at the reference configuration; rows (A_a ea_i) . (A_b eb_j) for
/// (i, j) = (1, 2), (2, 0), (0, 1) vanish there and measure the three relative angles.
/// Built in place (each body vector once).
inline void add_rotation_lock_rows(const Vec12& qa, const Vec12& qb, const Vec3 ea[3],
                                   const Vec3 eb[3], double L, std::vector<Row>& out) {
  const std::size_t first = out.size();
  out.resize(first + 3);
  for (int i = 0; i < 3; ++i) {
    const Vec3& u = ea[kLockPairs[i][0]];
    const Vec3& v = eb[kLockPairs[i][1]];
    set_dot_row(body_vector(qa, u), body_vector(qb, v), u, v, L, out[first + i]);
  }
}

}  // namespace mabd::detail
