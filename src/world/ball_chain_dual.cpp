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
#include <array>
#include <map>

#include "body/affine.h"
#include "solvers/chol3.h"
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
    if (j.type != JointType::Ball || j.extras().limits || j.extras().cone || j.extras().spring || j.extras().drive) return false;
  }
  return true;
}

void World::Impl::prepare_ball_chains() {
  auto& bc = ball_chain;
  bc.ready = ball_chains_apply();
  bc.links.clear();
  bc.K.clear();
  if (!bc.ready) return;
  auto dynamic = [&](int body) { return body >= 0 && bodies[body].dynamic(); };
  // Signed K(p1, p2) = J(p1) Hb^{-1} J(p2)^T of body s, one copy per distinct value (the links
  // of a generated chain share a handful).
  std::map<std::array<double, 8>, std::uint32_t> known;
  auto constant_block = [&](int s, const Vec3& p1, const Vec3& p2, double sign) {
    const std::array<double, 8> key{double(bodies[s].factor), p1[0], p1[1], p1[2],
                                    p2[0], p2[1], p2[2], sign};
    auto it = known.find(key);
    if (it != known.end()) return it->second;
    Mat3 K;
    const auto& factor = factors[bodies[s].factor];
    for (int c = 0; c < 3; ++c) K.col(c) = detail::point(factor.solve(point_force(p2, Vec3::Unit(c))), p1);
    const auto id = static_cast<std::uint32_t>(bc.K.size());
    bc.K.push_back(sign * K);
    known.emplace(key, id);
    return id;
  };
  std::size_t total = 0;
  for (const auto& chain : chains) total += chain.size();
  bc.links.resize(total);
  bc.K.push_back(Mat3::Zero());  // index 0: the world side
  std::size_t at = 0;
  for (const auto& chain : chains) {
    for (std::size_t k = 0; k < chain.size(); ++k, ++at) {
      const auto& j = joints[chain[k]];
      BallChainLink& link = bc.links[at];
      link.joint = chain[k];
      link.a = j.a;
      link.b = j.b;
      link.kaa = dynamic(j.a) ? constant_block(j.a, j.pa, j.pa, 1.0) : 0;
      link.kbb = dynamic(j.b) ? constant_block(j.b, j.pb, j.pb, 1.0) : 0;
      if (k > 0) {
        // The side shared with the previous joint.
        const BallChainLink& prev = bc.links[at - 1];
        const int s = prev.next_side == 0 ? prev.a : prev.b;
        link.prev_side = j.a == s ? 0 : 1;
      }
      if (k + 1 < chain.size()) {
        const auto& jn = joints[chain[k + 1]];
        const int s = (dynamic(j.a) && (j.a == jn.a || j.a == jn.b)) ? j.a : j.b;
        link.next_side = s == j.a ? 0 : 1;
        const int next_side = s == jn.a ? 0 : 1;
        const Vec3& p1 = link.next_side == 0 ? j.pa : j.pb;
        const Vec3& p2 = next_side == 0 ? jn.pa : jn.pb;
        // Sides a carry +J, sides b -J: the sign of the product.
        link.kn = constant_block(s, p1, p2, link.next_side == next_side ? 1.0 : -1.0);
      }
    }
  }
}

bool World::Impl::solve_ball_chains() {
  auto& bc = ball_chain;
  const std::size_t total = bc.links.size();
  bc.X.resize(total);
  // lambda holds y_k = D'_k^{-1} b'_k until the back substitution overwrites them with the
  // multipliers (3 per joint, in joint order).
  lambda.assign(3 * joints.size(), 0.0);
  auto slot = [&](const BallChainLink& l) { return Eigen::Map<Vec3>(&lambda[3 * l.joint]); };
  auto dynamic = [&](int body) { return body >= 0 && bodies[body].dynamic(); };
  auto side_body = [](const BallChainLink& l, int side) { return side == 0 ? l.a : l.b; };
  auto side_anchor = [&](const BallChainLink& l, int side) -> const Vec3& {
    return side == 0 ? joints[l.joint].pa : joints[l.joint].pb;
  };
  const Vec12 world_q = detail::make_q(Mat3::Identity(), Vec3::Zero());
  auto q_of = [&](int body) -> const Vec12& { return body >= 0 ? q[body] : world_q; };
  // B_k: the coupling of the joint at `at` with the next one through their shared body.
  auto coupling = [&](std::size_t at) {
    const BallChainLink& j = bc.links[at];
    const BallChainLink& next = bc.links[at + 1];
    const int s = side_body(j, j.next_side);
    const Mat3& R = rot[s];
    if (!corrected(s)) return Mat3(R * bc.K[j.kn] * R.transpose());
    const double sign = j.next_side == next.prev_side ? 1.0 : -1.0;
    const Mat3 Kb = bc.K[j.kn] - sign * correction_body_block(s, side_anchor(j, j.next_side),
                                                       side_anchor(next, next.prev_side));
    return Mat3(R * Kb * R.transpose());
  };
  // Forward elimination over every chain: D'_k = D_k - B_{k-1}^T X_{k-1},
  // b'_k = b_k - X_{k-1}^T b'_{k-1}, X_k = D'_k^{-1} B_k, y_k = D'_k^{-1} b'_k. Nothing but
  // lambda and the scratch X is changed before every pivot has been accepted (the caller falls
  // back to the general solvers otherwise).
  Mat3 B_prev = Mat3::Zero(), X_prev = Mat3::Zero();
  Vec3 b_prev = Vec3::Zero();
  for (std::size_t at = 0; at < total; ++at) {
    const BallChainLink& j = bc.links[at];
    const auto& jm = joints[j.joint];  // anchors and compliance
    Mat3 D = jm.compliance * Mat3::Identity();
    Vec3 rhs = detail::point(q_of(j.a), jm.pa) - detail::point(q_of(j.b), jm.pb);
    if (dynamic(j.a)) {
      const Mat3& R = rot[j.a];
      if (!corrected(j.a)) {
        D.noalias() += R * bc.K[j.kaa] * R.transpose();
      } else {
        D.noalias() += R * (bc.K[j.kaa] - correction_body_block(j.a, jm.pa, jm.pa)) * R.transpose();
      }
      rhs += detail::point(y[j.a], jm.pa);
    }
    if (dynamic(j.b)) {
      const Mat3& R = rot[j.b];
      if (!corrected(j.b)) {
        D.noalias() += R * bc.K[j.kbb] * R.transpose();
      } else {
        D.noalias() += R * (bc.K[j.kbb] - correction_body_block(j.b, jm.pb, jm.pb)) * R.transpose();
      }
      rhs -= detail::point(y[j.b], jm.pb);
    }
    if (j.prev_side >= 0) {
      D.noalias() -= X_prev.transpose() * B_prev;
      rhs.noalias() -= X_prev.transpose() * b_prev;
    }
    detail::Chol3 llt;
    if (!llt.compute(D, 1e-7)) return false;  // not positive definite, or redundant rows
    slot(j) = llt.solve(rhs);
    b_prev = rhs;
    if (j.next_side >= 0) {
      B_prev = coupling(at);
      X_prev = llt.solve(B_prev);
      bc.X[at] = X_prev;
    }
  }
  // Back substitution x_k = y_k - X_k x_{k+1}, and the increment of each body once all its
  // joints are known: dq = y - H^{-1} G^T lambda.
  Vec3 x_next = Vec3::Zero();
  for (std::size_t pos = total; pos-- > 0;) {
    const BallChainLink& link = bc.links[pos];
    auto lambda_k = slot(link);
    Vec3 x = lambda_k;
    if (link.next_side >= 0) x.noalias() -= bc.X[pos] * x_next;
    lambda_k = x;
    for (int side = 0; side < 2; ++side) {
      const int s = side_body(link, side);
      if (!dynamic(s) || side == link.prev_side) continue;  // done with the previous joint
      const double sign = side == 0 ? 1.0 : -1.0;
      Vec12 F = point_force(side_anchor(link, side), sign * x);
      if (side == link.next_side) {
        const BallChainLink& next = bc.links[pos + 1];
        const double sn = next.prev_side == 0 ? 1.0 : -1.0;
        F += point_force(side_anchor(next, next.prev_side), sn * x_next);
      }
      y[s] -= solve_body(s, F);
    }
    x_next = x;
  }
  return true;
}

}  // namespace mabd
