// Chains of plain ball joints with the co-rotated (polar) body operator: the dual blocks in
// closed form (DESIGN section 3). With J(p) D(R) = R J(p) and H^{-1} = D(R) Hb^{-1} D(R)^T,
//   J(p1) H^{-1} J(p2)^T = R K(p1, p2) R^T,   K(p1, p2) = J(p1) Hb^{-1} J(p2)^T,
// a constant 3x3 per body and anchor pair, computed once. A ball joint k between bodies a and
// b has G_k = [J(pa), -J(pb)], so the block-tridiagonal system of the chain solver is
//   D_k = R_a K_aa R_a^T + R_b K_bb R_b^T (+ compliance),  B_k = +-R_s K(p_k, p_k+1) R_s^T,
//   rhs_k = J(pa) y_a - J(pb) y_b + C_k,   y = H^{-1} f,
// solved by block Thomas on 3x3 blocks; then dq_s = y_s - H_s^{-1} G_s^T lambda once per body.
// The same multipliers as the row-by-row chain solver (chain_dual.cpp), without its per-row
// H^{-1} G^T vectors: a few 3x3 products per joint and one body solve per body.
#include "body/affine.h"
#include "world/world_impl.h"

namespace mabd {

namespace {

/// J(p)^T v: the generalised force of a point force v at body point p.
Vec12 point_force(const Vec3& p, const Vec3& v) {
  Vec12 g;
  g << p[0] * v, p[1] * v, p[2] * v, v;
  return g;
}

}  // namespace

bool World::Impl::ball_chains_apply() const {
  if (!all_chains) return false;
  if (settings.integrator == IntegratorMode::Vanilla) return false;
  if (settings.rotation != RotationMode::Polar) return false;
  for (const auto& j : joints) {
    if (j.type != JointType::Ball || j.limits || j.cone || j.spring || j.drive) return false;
  }
  return true;
}

void World::Impl::prepare_ball_chains() {
  auto& bc = ball_chain;
  bc.ready = ball_chains_apply();
  bc.links.clear();
  if (!bc.ready) return;
  auto dynamic = [&](int body) { return body >= 0 && bodies[body].dynamic(); };
  // K(p1, p2) = J(p1) Hb^{-1} J(p2)^T of body s.
  auto constant_block = [&](int s, const Vec3& p1, const Vec3& p2) {
    Mat3 K;
    const auto& factor = factors[bodies[s].factor];
    for (int c = 0; c < 3; ++c) K.col(c) = detail::point(factor.solve(point_force(p2, Vec3::Unit(c))), p1);
    return K;
  };
  std::size_t total = 0;
  for (const auto& chain : chains) total += chain.size();
  bc.links.resize(total);
  std::size_t at = 0;
  for (const auto& chain : chains) {
    for (std::size_t k = 0; k < chain.size(); ++k, ++at) {
      const auto& j = joints[chain[k]];
      BallChainLink& link = bc.links[at];
      link.joint = chain[k];
      link.Kaa = dynamic(j.a) ? constant_block(j.a, j.pa, j.pa) : Mat3::Zero();
      link.Kbb = dynamic(j.b) ? constant_block(j.b, j.pb, j.pb) : Mat3::Zero();
      link.next_side = -1;
      link.prev_side = -1;
      if (k + 1 < chain.size()) {
        const auto& jn = joints[chain[k + 1]];
        const int s = (dynamic(j.a) && (j.a == jn.a || j.a == jn.b)) ? j.a : j.b;
        link.next_side = s == j.a ? 0 : 1;
        const int next_side = s == jn.a ? 0 : 1;
        const Vec3& p1 = link.next_side == 0 ? j.pa : j.pb;
        const Vec3& p2 = next_side == 0 ? jn.pa : jn.pb;
        // Sides a carry +J, sides b -J: the sign of the product.
        const double sign = link.next_side == next_side ? 1.0 : -1.0;
        link.Kn = sign * constant_block(s, p1, p2);
      }
    }
  }
  // The side of each joint shared with the previous joint of its chain.
  at = 0;
  for (const auto& chain : chains) {
    for (std::size_t k = 0; k < chain.size(); ++k, ++at) {
      if (k == 0) continue;
      const auto& jp = joints[chain[k - 1]];
      const int s = bc.links[at - 1].next_side == 0 ? jp.a : jp.b;
      bc.links[at].prev_side = joints[chain[k]].a == s ? 0 : 1;
    }
  }
}

bool World::Impl::solve_ball_chains() {
  auto& bc = ball_chain;
  const std::size_t total = bc.links.size();
  bc.llt.resize(total);
  bc.X.resize(total);
  bc.b.resize(total);
  lambda.assign(3 * joints.size(), 0.0);
  auto dynamic = [&](int body) { return body >= 0 && bodies[body].dynamic(); };
  auto side_body = [&](const detail::JointModel& j, int side) { return side == 0 ? j.a : j.b; };
  auto side_anchor = [&](const detail::JointModel& j, int side) -> const Vec3& {
    return side == 0 ? j.pa : j.pb;
  };
  // J(p) Z of a body with a geometric-stiffness correction (H^{-1} -= Z C Z^T).
  auto JZ = [&](int s, const Vec3& p) {
    Mat3 out;
    for (int c = 0; c < 3; ++c) out.col(c) = detail::point(geo_Z[s].col(c), p);
    return out;
  };
  // Forward elimination over every chain: D'_k = D_k - B_{k-1}^T X_{k-1},
  // b'_k = b_k - X_{k-1}^T b'_{k-1}, X_k = D'_k^{-1} B_k. Nothing is changed before every
  // pivot has been accepted (the caller falls back to the general solvers otherwise).
  Mat3 B_prev = Mat3::Zero();
  for (std::size_t at = 0; at < total; ++at) {
    const BallChainLink& link = bc.links[at];
    const auto& j = joints[link.joint];
    Mat3 D = j.compliance * Mat3::Identity();
    Vec3 rhs = detail::point(joint_q(j.a), j.pa) - detail::point(joint_q(j.b), j.pb);
    if (dynamic(j.a)) {
      const Mat3& R = rot[j.a];
      D.noalias() += R * link.Kaa * R.transpose();
      rhs += detail::point(y[j.a], j.pa);
      if (geo[j.a]) {
        const Mat3 z = JZ(j.a, j.pa);
        D.noalias() -= z * geo_C[j.a] * z.transpose();
      }
    }
    if (dynamic(j.b)) {
      const Mat3& R = rot[j.b];
      D.noalias() += R * link.Kbb * R.transpose();
      rhs -= detail::point(y[j.b], j.pb);
      if (geo[j.b]) {
        const Mat3 z = JZ(j.b, j.pb);
        D.noalias() -= z * geo_C[j.b] * z.transpose();
      }
    }
    if (link.prev_side >= 0) {
      D.noalias() -= bc.X[at - 1].transpose() * B_prev;
      rhs.noalias() -= bc.X[at - 1].transpose() * bc.b[at - 1];
    }
    auto& llt = bc.llt[at];
    llt.compute(D);
    if (llt.info() != Eigen::Success) return false;
    const auto diag = llt.matrixLLT().diagonal();
    if (!(diag.minCoeff() > 1e-7 * diag.maxCoeff())) return false;  // redundant rows
    bc.b[at] = rhs;
    if (link.next_side >= 0) {
      const BallChainLink& next = bc.links[at + 1];
      const int s = side_body(j, link.next_side);
      const Mat3& R = rot[s];
      B_prev.noalias() = R * link.Kn * R.transpose();
      if (geo[s]) {
        const double sign = link.next_side == next.prev_side ? 1.0 : -1.0;
        B_prev.noalias() -= sign * JZ(s, side_anchor(j, link.next_side)) * geo_C[s] *
                            JZ(s, side_anchor(joints[next.joint], next.prev_side)).transpose();
      }
      bc.X[at] = llt.solve(B_prev);
    }
  }
  // Back substitution x_k = D'_k^{-1} b'_k - X_k x_{k+1}, and the increment of each body once
  // all its joints are known: dq = y - H^{-1} G^T lambda.
  Vec3 x_next = Vec3::Zero();
  for (std::size_t pos = total; pos-- > 0;) {
    const BallChainLink& link = bc.links[pos];
    const auto& j = joints[link.joint];
    Vec3 x = bc.llt[pos].solve(bc.b[pos]);
    if (link.next_side >= 0) x.noalias() -= bc.X[pos] * x_next;
    Eigen::Map<Vec3> lambda_k(&lambda[3 * link.joint]);
    lambda_k = x;
    for (int side = 0; side < 2; ++side) {
      const int s = side_body(j, side);
      if (!dynamic(s) || side == link.prev_side) continue;  // done with the previous joint
      const double sign = side == 0 ? 1.0 : -1.0;
      Vec12 F = point_force(side_anchor(j, side), sign * x);
      if (side == link.next_side) {
        const BallChainLink& next = bc.links[pos + 1];
        const double sn = next.prev_side == 0 ? 1.0 : -1.0;
        F += point_force(side_anchor(joints[next.joint], next.prev_side), sn * x_next);
      }
      y[s] -= solve_body(s, F);
    }
    x_next = x;
  }
  return true;
}

}  // namespace mabd
