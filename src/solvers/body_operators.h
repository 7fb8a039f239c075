// The body operators a dual solver needs (DESIGN section 3), as a narrow interface: the world
// implements it from its per-iteration state (rotations, factors, geometric-stiffness and
// contact corrections), the solvers read it and never see the world itself.
//   H_i^{-1} v = D(R) Hb^{-1} D(R)^T v - (corrections)      (paper Eq. abd_final)
#pragma once

#include <cstddef>
#include <vector>

#include "body/body_hessian.h"
#include "mabd/math.h"

namespace mabd::detail {

class BodyOperators {
 public:
  virtual ~BodyOperators() = default;

  /// Number of bodies (indices 0 .. body_count() - 1; -1 stands for the world).
  std::size_t body_count() const { return count_; }
  /// True if `body` (-1: the world) moves in the step (a dynamic body). Not virtual: the
  /// solvers ask it per row.
  bool dynamic(int body) const { return body >= 0 && dynamic_[body]; }
  /// H_i^{-1} v of dynamic body i at the current iterate, every correction included.
  virtual Vec12 solve_body(std::size_t i, const Vec12& v) const = 0;

  // Co-rotated polar bodies (body_frame()): H^{-1} = D(R) Hb^{-1} D(R)^T - corrections, with
  // the constant structured factor Hb of each body. The solvers that assemble their blocks in
  // the body frame use these.
  /// True when every dynamic body's operator has the co-rotated polar form above.
  virtual bool body_frame() const = 0;
  /// R of dynamic body i (polar rotation of its A).
  virtual const Mat3& rotation(std::size_t i) const = 0;
  /// The constant factor Hb of dynamic body i (shared by identical bodies).
  virtual const BodyHessian& factor(std::size_t i) const = 0;
  /// True if body i's H^{-1} carries a correction (geometric stiffness, contacts).
  virtual bool corrected(std::size_t i) const = 0;
  /// Body-frame correction of the point block: R^T (J(p1) H_corr J(p2)^T) R, for p1, p2 body
  /// points (m, body frame) of a corrected body.
  virtual Mat3 correction_body_block(std::size_t i, const Vec3& p1, const Vec3& p2) const = 0;
  /// The correction of dynamic body i when it is a geometric-stiffness term alone:
  /// H_corr = D(R) Z0 C_b Z0^T D(R)^T with Z0 of factor(i) and C_b (body frame) set here, or
  /// null without any correction. Returns false when body i carries corrections of another
  /// kind (contacts), which only solve_body and correction_body_block apply.
  virtual bool geometric_correction(std::size_t i, const Mat3*& C_b) const {
    C_b = nullptr;
    return !corrected(i);
  }
  /// Subtracts the corrections of body i from the lower triangle of the clique
  /// a(k, l) = g_k . H_i^{-1} g_l (column-major n x n): vb[k] = D(R)^T g_k (body frame), g[k]
  /// the world-frame gradient.
  virtual void subtract_clique_correction(std::size_t i, int n, const Vec12* vb,
                                          const Vec12* const* g, double* a) const = 0;
  /// Starts loading body i's operator data into the cache (passes out of body order).
  virtual void prefetch(std::size_t /*i*/) const {}
  /// The clique of dynamic body i's rows in the body frame (body_frame()): the lower triangle
  /// of a(k, l) = g[k] . H_i^{-1} g[l] (column-major n x n, units of g^2 / H), from
  /// vb[k] = D(R)^T g[k] and zb[k] = Hb^{-1} vb[k] (both written, n each), less the
  /// corrections: no per-row H^{-1} G^T in the world frame.
  void body_frame_clique(std::size_t i, int n, const Vec12* const* g, Vec12* vb, Vec12* zb,
                         double* a) const {
    const Mat3& R = rotation(i);
    const BodyHessian& F = factor(i);
    for (int k = 0; k < n; ++k) {
      const Vec12& gk = *g[k];
      Vec12& v = vb[k];
      for (int c = 0; c < 3; ++c) {
        v.segment<3>(3 * c).noalias() = R.transpose() * gk.segment<3>(3 * c);
      }
      v.tail<3>() = gk.tail<3>();
      zb[k] = F.solve(v);
    }
    for (int l = 0; l < n; ++l) {
      for (int k = l; k < n; ++k) a[k + l * n] = vb[k].dot(zb[l]);
    }
    if (corrected(i)) subtract_clique_correction(i, n, vb, g, a);
  }

 protected:
  /// Sets the bodies: flags[i] is 1 for a dynamic body. The implementation calls it before
  /// handing itself to a solver, and keeps `flags` alive and unchanged while solvers use it.
  void set_dynamic_flags(const std::vector<char>& flags) {
    dynamic_ = flags.data();
    count_ = flags.size();
  }

 private:
  const char* dynamic_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace mabd::detail
