#include "solvers/ball_chain_dual.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <utility>

#include "body/affine.h"
#include "solvers/chol3.h"

namespace mabd::detail {

namespace {

/// J(p)^T v: the generalised force of a point force v at body point p.
Vec12 point_force(const Vec3& p, const Vec3& v) {
  Vec12 g;
  g << p[0] * v, p[1] * v, p[2] * v, v;
  return g;
}

}  // namespace

void BallChainDual::prepare(const std::vector<std::vector<std::uint32_t>>& chains,
                            const std::vector<PointLink>& links, const BodyOperators& ops) {
  clear();
  ready_ = true;
  items_ = links.size();
  // The items' anchors and compliances, one copy per distinct value (bitwise).
  std::map<std::array<std::uint64_t, 3>, std::uint32_t> anchor_ids;
  auto anchor_id = [&](const Vec3& p) {
    std::array<std::uint64_t, 3> key;
    std::memcpy(key.data(), p.data(), sizeof key);
    const auto [it, added] = anchor_ids.emplace(key, static_cast<std::uint32_t>(anchors_.size()));
    if (added) anchors_.push_back(p);
    return it->second;
  };
  std::map<std::uint64_t, std::uint32_t> compliance_ids;
  auto compliance_id = [&](double c) {
    std::uint64_t key;
    std::memcpy(&key, &c, sizeof key);
    const auto [it, added] =
        compliance_ids.emplace(key, static_cast<std::uint32_t>(compliances_.size()));
    if (added) compliances_.push_back(c);
    return it->second;
  };
  // Signed K(p1, p2) = J(p1) Hb^{-1} J(p2)^T of body s, one copy per distinct value (the links
  // of a generated chain share a handful).
  std::map<std::pair<const BodyHessian*, std::array<double, 7>>, std::uint32_t> known;
  auto constant_block = [&](int s, const Vec3& p1, const Vec3& p2, double sign) {
    const BodyHessian& factor = ops.factor(s);
    const std::pair<const BodyHessian*, std::array<double, 7>> key{
        &factor, {p1[0], p1[1], p1[2], p2[0], p2[1], p2[2], sign}};
    auto it = known.find(key);
    if (it != known.end()) return it->second;
    Mat3 K;
    for (int c = 0; c < 3; ++c) K.col(c) = point(factor.solve(point_force(p2, Vec3::Unit(c))), p1);
    const auto id = static_cast<std::uint32_t>(K_.size());
    K_.push_back(sign * K);
    known.emplace(key, id);
    return id;
  };
  std::size_t total = 0;
  for (const auto& chain : chains) total += chain.size();
  links_.resize(total);
  K_.push_back(Mat3::Zero());  // index 0: the world side
  std::size_t at = 0;
  for (const auto& chain : chains) {
    starts_.push_back(at);
    for (std::size_t k = 0; k < chain.size(); ++k, ++at) {
      const PointLink& j = links[chain[k]];
      Link& link = links_[at];
      link.item = chain[k];
      link.a = j.a;
      link.b = j.b;
      link.pa = anchor_id(j.pa);
      link.pb = anchor_id(j.pb);
      link.compliance = compliance_id(j.compliance);
      link.kaa = ops.dynamic(j.a) ? constant_block(j.a, j.pa, j.pa, 1.0) : 0;
      link.kbb = ops.dynamic(j.b) ? constant_block(j.b, j.pb, j.pb, 1.0) : 0;
      if (k > 0) {
        // The side shared with the previous item.
        const Link& prev = links_[at - 1];
        const int s = prev.next_side == 0 ? prev.a : prev.b;
        link.prev_side = j.a == s ? 0 : 1;
      }
      if (k + 1 < chain.size()) {
        const PointLink& jn = links[chain[k + 1]];
        const int s = (ops.dynamic(j.a) && (j.a == jn.a || j.a == jn.b)) ? j.a : j.b;
        link.next_side = s == j.a ? 0 : 1;
        const int next_side = s == jn.a ? 0 : 1;
        const Vec3& p1 = link.next_side == 0 ? j.pa : j.pb;
        const Vec3& p2 = next_side == 0 ? jn.pa : jn.pb;
        // Sides a carry +J, sides b -J: the sign of the product.
        link.kn = constant_block(s, p1, p2, link.next_side == next_side ? 1.0 : -1.0);
      }
    }
  }
  starts_.push_back(total);
}

bool BallChainDual::solve(const BodyOperators& ops, const std::vector<Vec12>& q,
                          std::vector<Vec12>& y, std::vector<double>& lambda, ThreadPool* pool) {
  const std::size_t total = links_.size();
  X_.resize(total);
  // lambda holds y_k = D'_k^{-1} b'_k until the back substitution overwrites them with the
  // multipliers (3 per item, in item order).
  lambda.assign(3 * items_, 0.0);
  auto slot = [&](const Link& l) { return Eigen::Map<Vec3>(&lambda[3 * l.item]); };
  auto side_body = [](const Link& l, int side) { return side == 0 ? l.a : l.b; };
  auto side_anchor = [&](const Link& l, int side) -> const Vec3& {
    return anchors_[side == 0 ? l.pa : l.pb];
  };
  const Vec12 world_q = make_q(Mat3::Identity(), Vec3::Zero());
  auto q_of = [&](int body) -> const Vec12& { return body >= 0 ? q[body] : world_q; };
  // B_k: the coupling of the item at `at` with the next one through their shared body.
  auto coupling = [&](std::size_t at) {
    const Link& j = links_[at];
    const Link& next = links_[at + 1];
    const int s = side_body(j, j.next_side);
    const Mat3& R = ops.rotation(s);
    if (!ops.corrected(s)) return Mat3(R * K_[j.kn] * R.transpose());
    const double sign = j.next_side == next.prev_side ? 1.0 : -1.0;
    const Mat3 Kb = K_[j.kn] - sign * ops.correction_body_block(s, side_anchor(j, j.next_side),
                                                                side_anchor(next, next.prev_side));
    return Mat3(R * Kb * R.transpose());
  };
  // Forward elimination over every chain: D'_k = D_k - B_{k-1}^T X_{k-1},
  // b'_k = b_k - X_{k-1}^T b'_{k-1}, X_k = D'_k^{-1} B_k, y_k = D'_k^{-1} b'_k. Nothing but
  // lambda and the scratch X is changed before every pivot has been accepted (the caller falls
  // back to the general solvers otherwise).
  // Chains are independent components: a range of whole chains is eliminated, and then
  // substituted back, on its own.
  auto forward = [&](std::size_t first, std::size_t last) {
    Mat3 B_prev = Mat3::Zero(), X_prev = Mat3::Zero();
    Vec3 b_prev = Vec3::Zero();
    for (std::size_t at = first; at < last; ++at) {
      const Link& j = links_[at];
      const Vec3& pa = anchors_[j.pa];
      const Vec3& pb = anchors_[j.pb];
      Mat3 D = compliances_[j.compliance] * Mat3::Identity();
      Vec3 rhs = point(q_of(j.a), pa) - point(q_of(j.b), pb);
      // Side s of the item (anchor p, block K(p, p)): D += R K R^T, rhs += -+ J(p) y_s.
      auto add_side = [&](int s, const Vec3& p, std::uint32_t k, bool side_b) {
        if (!ops.dynamic(s)) return;
        const Mat3& R = ops.rotation(s);
        if (!ops.corrected(s)) {
          D.noalias() += R * K_[k] * R.transpose();
        } else {
          D.noalias() += R * (K_[k] - ops.correction_body_block(s, p, p)) * R.transpose();
        }
        if (side_b) {
          rhs -= point(y[s], p);
        } else {
          rhs += point(y[s], p);
        }
      };
      add_side(j.a, pa, j.kaa, false);
      add_side(j.b, pb, j.kbb, true);
      if (j.prev_side >= 0) {
        D.noalias() -= X_prev.transpose() * B_prev;
        rhs.noalias() -= X_prev.transpose() * b_prev;
      }
      Chol3 llt;
      if (!llt.compute(D, 1e-7)) return false;  // not positive definite, or redundant rows
      slot(j) = llt.solve(rhs);
      b_prev = rhs;
      if (j.next_side >= 0) {
        B_prev = coupling(at);
        X_prev = llt.solve(B_prev);
        X_[at] = X_prev;
      }
    }
    return true;
  };
  // Back substitution x_k = y_k - X_k x_{k+1}, and the increment of each body once all its
  // items are known: dq = y - H^{-1} G^T lambda.
  auto backward = [&](std::size_t first, std::size_t last) {
    Vec3 x_next = Vec3::Zero();
    for (std::size_t pos = last; pos-- > first;) {
      const Link& link = links_[pos];
      auto lambda_k = slot(link);
      Vec3 x = lambda_k;
      if (link.next_side >= 0) x.noalias() -= X_[pos] * x_next;
      lambda_k = x;
      for (int side = 0; side < 2; ++side) {
        const int s = side_body(link, side);
        if (!ops.dynamic(s) || side == link.prev_side) continue;  // done with the previous item
        const double sign = side == 0 ? 1.0 : -1.0;
        Vec12 F = point_force(side_anchor(link, side), sign * x);
        if (side == link.next_side) {
          const Link& next = links_[pos + 1];
          const double sn = next.prev_side == 0 ? 1.0 : -1.0;
          F += point_force(side_anchor(next, next.prev_side), sn * x_next);
        }
        y[s] -= ops.solve_body(s, F);
      }
      x_next = x;
    }
  };
  // Ranges of whole chains, about equal in items: range k runs from the first chain that
  // starts at or after k total / parts. Every pivot is accepted before y changes.
  const std::size_t chains = starts_.size() - 1;
  const int parts = pool && chains >= 2 && total >= kParallelItems ? pool->threads() : 1;
  if (parts == 1) {
    if (!forward(0, total)) return false;
    backward(0, total);
    return true;
  }
  std::vector<std::size_t> bounds(static_cast<std::size_t>(parts) + 1, total);
  for (int k = 0; k < parts; ++k) {
    const std::size_t target = total * static_cast<std::size_t>(k) / parts;
    bounds[k] = *std::lower_bound(starts_.begin(), starts_.end(), target);
  }
  std::vector<char> ok(static_cast<std::size_t>(parts), 1);
  pool->run(static_cast<std::size_t>(parts), [&](int, std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k) ok[k] = forward(bounds[k], bounds[k + 1]);
  });
  for (char good : ok)
    if (!good) return false;
  pool->run(static_cast<std::size_t>(parts), [&](int, std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k) backward(bounds[k], bounds[k + 1]);
  });
  return true;
}

}  // namespace mabd::detail
