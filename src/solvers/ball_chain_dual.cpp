#include "solvers/ball_chain_dual.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

#include "body/affine.h"
#include "solvers/chol3.h"

namespace mabd::detail {

namespace {

/// Key of an anchor up to round-off: its coordinates on a grid of 2^-40 of its largest one.
/// A chain generated along a curve holds the same anchors in every link's body frame with
/// different round-off; one value shares their constant blocks (the difference, about 1e-16
/// of the anchor, is below any joint residual).
std::array<std::int64_t, 4> anchor_key(const Vec3& p) {
  const double largest = p.cwiseAbs().maxCoeff();
  if (largest == 0) return {0, 0, 0, std::numeric_limits<std::int64_t>::min()};
  int e = 0;
  std::frexp(largest, &e);
  const double scale = std::ldexp(1.0, 40 - e);
  return {std::llround(p[0] * scale), std::llround(p[1] * scale), std::llround(p[2] * scale), e};
}

/// J(p)^T v: the generalised force of a point force v at body point p.
Vec12 point_force(const Vec3& p, const Vec3& v) {
  Vec12 g;
  g << p[0] * v, p[1] * v, p[2] * v, v;
  return g;
}

/// Cholesky factor D = L L^T of a symmetric positive definite block of up to 6 x 6, with the
/// pivot test of Chol3 (min L_ii > rel_floor max L_ii), written out: Eigen's dynamic-size
/// factor and solves cost more than their arithmetic at these sizes.
struct CholSmall {
  int n = 0;
  double L[6][6];

  template <class M>
  bool compute(const M& D, double rel_floor) {
    n = static_cast<int>(D.rows());
    double lo = INFINITY, hi = 0;
    for (int j = 0; j < n; ++j) {
      double d = D(j, j);
      for (int k = 0; k < j; ++k) d -= L[j][k] * L[j][k];
      if (!(d > 0)) return false;
      L[j][j] = std::sqrt(d);
      lo = std::fmin(lo, L[j][j]);
      hi = std::fmax(hi, L[j][j]);
      for (int i = j + 1; i < n; ++i) {
        double v = D(i, j);
        for (int k = 0; k < j; ++k) v -= L[i][k] * L[j][k];
        L[i][j] = v / L[j][j];
      }
    }
    return lo > rel_floor * hi;
  }

  /// b <- D^{-1} b for n entries at b with stride `stride`.
  void solve_in_place(double* b, int stride = 1) const {
    for (int i = 0; i < n; ++i) {
      double v = b[i * stride];
      for (int k = 0; k < i; ++k) v -= L[i][k] * b[k * stride];
      b[i * stride] = v / L[i][i];
    }
    for (int i = n; i-- > 0;) {
      double v = b[i * stride];
      for (int k = i + 1; k < n; ++k) v -= L[k][i] * b[k * stride];
      b[i * stride] = v / L[i][i];
    }
  }

  /// B <- D^{-1} B, column by column.
  template <class M>
  void solve_in_place(M& B) const {
    for (Eigen::Index c = 0; c < B.cols(); ++c) solve_in_place(&B(0, c), 1);
  }
};

}  // namespace

void BallChainDual::prepare(const std::vector<std::vector<std::uint32_t>>& chains,
                            const std::vector<PointLink>& links, const BodyOperators& ops) {
  clear();
  items_ = links.size();
  // Multipliers per item in item order: 3 per point link, a general item's rows.
  bool any_general = false;
  for (const PointLink& l : links) {
    if (l.rows < 0 || l.rows > 6) return;  // not planned: the general solvers take them
    any_general = any_general || l.rows > 0;
  }
  if (any_general) {
    general_of_.assign(items_, -1);
    offsets_.resize(items_);
    for (std::size_t k = 0; k < items_; ++k) {
      offsets_[k] = multipliers_;
      multipliers_ += links[k].rows > 0 ? static_cast<std::size_t>(links[k].rows) : 3;
    }
  } else {
    multipliers_ = 3 * items_;
  }
  ready_ = true;
  // The items' anchors, one copy per value up to round-off (anchor_key), and compliances,
  // one copy per distinct value (bitwise).
  std::map<std::array<std::int64_t, 4>, std::uint32_t> anchor_ids;
  auto anchor_id = [&](const Vec3& p) {
    const auto [it, added] =
        anchor_ids.emplace(anchor_key(p), static_cast<std::uint32_t>(anchors_.size()));
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
  // Signed K(p1, p2) = J(p1) Hb^{-1} J(p2)^T of body s at anchors i1, i2, one copy per
  // factor and anchor pair (the links of a generated chain share a handful).
  std::map<std::tuple<const BodyHessian*, std::uint32_t, std::uint32_t, bool>, std::uint32_t>
      known;
  auto constant_block = [&](int s, std::uint32_t i1, std::uint32_t i2, double sign) {
    const BodyHessian& factor = ops.factor(s);
    const auto key = std::make_tuple(&factor, i1, i2, sign > 0);
    auto it = known.find(key);
    if (it != known.end()) return it->second;
    const Vec3& p1 = anchors_[i1];
    const Vec3& p2 = anchors_[i2];
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
      if (j.rows > 0) {
        link.general = true;
        link.m = static_cast<std::uint8_t>(j.rows);
        link.kaa = static_cast<std::uint32_t>(general_.size());
        general_of_[chain[k]] = static_cast<std::int32_t>(general_.size());
        general_.push_back(General{at, {}, {}});
      } else {
        link.pa = anchor_id(j.pa);
        link.pb = anchor_id(j.pb);
        link.compliance = compliance_id(j.compliance);
        link.kaa = ops.dynamic(j.a) ? constant_block(j.a, link.pa, link.pa, 1.0) : 0;
        link.kbb = ops.dynamic(j.b) ? constant_block(j.b, link.pb, link.pb, 1.0) : 0;
      }
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
        if (link.general || jn.rows > 0) {
          link.kn = static_cast<std::uint32_t>(Xg_.size());  // X_k of variable size
          Xg_.emplace_back();
          continue;
        }
        const int next_side = s == jn.a ? 0 : 1;
        const std::uint32_t p1 = link.next_side == 0 ? link.pa : link.pb;
        const std::uint32_t p2 = anchor_id(next_side == 0 ? jn.pa : jn.pb);
        // Sides a carry +J, sides b -J: the sign of the product.
        link.kn = constant_block(s, p1, p2, link.next_side == next_side ? 1.0 : -1.0);
      }
    }
  }
  starts_.push_back(total);
}

const std::vector<Row>* BallChainDual::general_rows(std::uint32_t k) const {
  if (general_of_.empty() || general_of_[k] < 0) return nullptr;
  return &general_[static_cast<std::size_t>(general_of_[k])].rows;
}

bool BallChainDual::solve(const BodyOperators& ops, const std::vector<Vec12>& q,
                          std::vector<Vec12>& y, std::vector<double>& lambda,
                          const ItemRows& item_rows, ThreadPool* pool) {
  const std::size_t total = links_.size();
  X_.resize(total);
  // lambda holds y_k = D'_k^{-1} b'_k until the back substitution overwrites them with the
  // multipliers (the rows of each item, in item order).
  lambda.assign(multipliers_, 0.0);
  // The multipliers of a point link (3 per item when no item is general).
  auto slot = [&](const Link& l, bool mixed) {
    return Eigen::Map<Vec3>(&lambda[mixed ? offset(l.item) : 3 * std::size_t{l.item}]);
  };
  auto slot_general = [&](const Link& l) {
    return Eigen::Map<Eigen::VectorXd>(&lambda[offset(l.item)], l.m);
  };
  auto side_body = [](const Link& l, int side) { return side == 0 ? l.a : l.b; };
  auto side_anchor = [&](const Link& l, int side) -> const Vec3& {
    return anchors_[side == 0 ? l.pa : l.pb];
  };
  auto grad = [](const Row& r, int side) -> const Vec12& { return side == 0 ? r.ga : r.gb; };
  const Vec12 world_q = make_q(Mat3::Identity(), Vec3::Zero());
  auto q_of = [&](int body) -> const Vec12& { return body >= 0 ? q[body] : world_q; };
  // The general items' rows at q, and W_s = H_s^{-1} G_s^T of each dynamic side.
  if (!general_.empty()) {
    if (!item_rows) return false;
    for (General& g : general_) {
      const Link& l = links_[g.at];
      g.rows.clear();
      item_rows(l.item, g.rows);
      if (g.rows.size() != l.m) return false;
      for (const Row& r : g.rows) {
        if (r.kind != RowKind::Equality) return false;
      }
      for (int side = 0; side < 2; ++side) {
        const int s = side_body(l, side);
        if (!ops.dynamic(s)) continue;
        g.W[side].resize(12, l.m);
        for (int r = 0; r < l.m; ++r) g.W[side].col(r) = ops.solve_body(s, grad(g.rows[r], side));
      }
    }
  }
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
  // The blocks next to a general item. B_k = G_ks W_(k+1)s (m_k x m_(k+1)), with
  // G_s = +-J(p) (side a +, side b -) on a point link's side.
  auto coupling_general = [&](std::size_t at) {
    const Link& j = links_[at];
    const Link& n = links_[at + 1];
    const int js = j.next_side, ns = n.prev_side;
    Block B(j.m, n.m);
    if (j.general && n.general) {
      const General& gj = general_[j.kaa];
      const General& gn = general_[n.kaa];
      for (int r = 0; r < j.m; ++r) {
        for (int c = 0; c < n.m; ++c) B(r, c) = grad(gj.rows[r], js).dot(gn.W[ns].col(c));
      }
    } else if (j.general) {
      const SideW& W = general_[j.kaa].W[js];
      const double sn = ns == 0 ? 1.0 : -1.0;
      for (int r = 0; r < j.m; ++r) {
        B.row(r) = sn * point(Vec12(W.col(r)), side_anchor(n, ns)).transpose();
      }
    } else {
      const SideW& W = general_[n.kaa].W[ns];
      const double sj = js == 0 ? 1.0 : -1.0;
      for (int c = 0; c < n.m; ++c) B.col(c) = sj * point(Vec12(W.col(c)), side_anchor(j, js));
    }
    return B;
  };
  // D_k and b_k = C_k + G_k y of a point link (closed form) and of a general item.
  auto point_block = [&](const Link& j, Mat3& D, Vec3& rhs) {
    const Vec3& pa = anchors_[j.pa];
    const Vec3& pb = anchors_[j.pb];
    D = compliances_[j.compliance] * Mat3::Identity();
    rhs = point(q_of(j.a), pa) - point(q_of(j.b), pb);
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
  };
  auto general_block = [&](const Link& j, Block& D, BlockVec& rhs) {
    const General& g = general_[j.kaa];
    D.setZero(j.m, j.m);
    rhs.resize(j.m);
    for (int r = 0; r < j.m; ++r) {
      D(r, r) = g.rows[r].compliance;
      rhs[r] = g.rows[r].c;
    }
    for (int side = 0; side < 2; ++side) {
      const int s = side_body(j, side);
      if (!ops.dynamic(s)) continue;
      for (int r = 0; r < j.m; ++r) {
        const Vec12& gr = grad(g.rows[r], side);
        rhs[r] += gr.dot(y[s]);
        for (int c = 0; c < j.m; ++c) D(r, c) += gr.dot(g.W[side].col(c));
      }
    }
  };
  // G_s^T x of the item's side: the generalised force of its multipliers x on body s.
  auto side_force = [&](const Link& l, int side, const double* x) {
    if (!l.general) {
      return Vec12(point_force(side_anchor(l, side), (side == 0 ? 1.0 : -1.0) * Vec3(x)));
    }
    const General& g = general_[l.kaa];
    Vec12 F = Vec12::Zero();
    for (int r = 0; r < l.m; ++r) F.noalias() += grad(g.rows[r], side) * x[r];
    return F;
  };
  auto next_is_general = [&](const Link& l, std::size_t at) {
    return l.next_side >= 0 && (l.general || links_[at + 1].general);
  };
  // Forward elimination over every chain: D'_k = D_k - B_{k-1}^T X_{k-1},
  // b'_k = b_k - X_{k-1}^T b'_{k-1}, X_k = D'_k^{-1} B_k, y_k = D'_k^{-1} b'_k. Nothing but
  // lambda and the scratch X is changed before every pivot has been accepted (the caller falls
  // back to the general solvers otherwise). Between point links the blocks are 3x3 (Mat3);
  // next to a general item they take its size (Block).
  // Chains are independent components: a range of whole chains is eliminated, and then
  // substituted back, on its own. Without general items (kMixed false) only the 3x3 path is
  // compiled in. Both passes are flattened (every helper inlined): the 3x3 path is otherwise
  // about 15% slower.
  auto forward = [&]<bool kMixed>(std::size_t first, std::size_t last) __attribute__((flatten)) {
    Mat3 B_prev = Mat3::Zero(), X_prev = Mat3::Zero();
    Vec3 b_prev = Vec3::Zero();
    Block Bg_prev, Xg_prev;
    BlockVec bg_prev;
    bool prev_general = false;  // the coupling with the previous item is of variable size
    for (std::size_t at = first; at < last; ++at) {
      const Link& j = links_[at];
      const bool next_general = kMixed && next_is_general(j, at);
      if (kMixed && j.prev_side < 0) prev_general = false;
      if (!kMixed || (!j.general && !prev_general)) {
        Mat3 D;
        Vec3 rhs;
        point_block(j, D, rhs);
        if (j.prev_side >= 0) {
          D.noalias() -= X_prev.transpose() * B_prev;
          rhs.noalias() -= X_prev.transpose() * b_prev;
        }
        Chol3 llt;
        if (!llt.compute(D, 1e-7)) return false;  // not positive definite, or redundant rows
        slot(j, kMixed) = llt.solve(rhs);
        if (next_general) {
          Bg_prev = coupling_general(at);
          Xg_prev.resize(3, Bg_prev.cols());
          for (int c = 0; c < Bg_prev.cols(); ++c) Xg_prev.col(c) = llt.solve(Vec3(Bg_prev.col(c)));
          Xg_[j.kn] = Xg_prev;
          bg_prev = rhs;
          prev_general = true;
        } else if (j.next_side >= 0) {
          b_prev = rhs;
          B_prev = coupling(at);
          X_prev = llt.solve(B_prev);
          X_[at] = X_prev;
        }
        continue;
      }
      if constexpr (!kMixed) continue;
      // A general item, or a point link after one.
      Block D;
      BlockVec rhs;
      if (j.general) {
        general_block(j, D, rhs);
      } else {
        Mat3 D3;
        Vec3 r3;
        point_block(j, D3, r3);
        D = D3;
        rhs = r3;
      }
      if (j.prev_side >= 0) {
        D.noalias() -= Xg_prev.transpose().lazyProduct(Bg_prev);
        rhs.noalias() -= Xg_prev.transpose().lazyProduct(bg_prev);
      }
      CholSmall llt;
      if (!llt.compute(D, 1e-7)) return false;
      auto x = slot_general(j);
      x = rhs;
      llt.solve_in_place(x.data());
      prev_general = next_general;
      if (next_general) {
        Bg_prev = coupling_general(at);
        Xg_prev = Bg_prev;
        llt.solve_in_place(Xg_prev);
        Xg_[j.kn] = Xg_prev;
        bg_prev = rhs;
      } else if (j.next_side >= 0) {  // a point link before a point link
        b_prev = rhs;
        B_prev = coupling(at);
        X_prev = B_prev;
        llt.solve_in_place(X_prev);
        X_[at] = X_prev;
      }
    }
    return true;
  };
  // Back substitution x_k = y_k - X_k x_{k+1}, and the increment of each body once all its
  // items are known: dq = y - H^{-1} G^T lambda.
  auto backward = [&]<bool kMixed>(std::size_t first, std::size_t last) __attribute__((flatten)) {
    Vec3 x_next = Vec3::Zero();
    for (std::size_t pos = last; pos-- > first;) {
      const Link& link = links_[pos];
      if (kMixed && (link.general || next_is_general(link, pos))) {
        auto x = slot_general(link);
        if (link.next_side >= 0) {
          const Link& next = links_[pos + 1];
          x.noalias() -= Xg_[link.kn].lazyProduct(slot_general(next));
        }
        for (int side = 0; side < 2; ++side) {
          const int s = side_body(link, side);
          if (!ops.dynamic(s) || side == link.prev_side) continue;
          Vec12 F = side_force(link, side, x.data());
          if (side == link.next_side) {
            const Link& next = links_[pos + 1];
            F += side_force(next, next.prev_side, &lambda[offset(next.item)]);
          }
          y[s] -= ops.solve_body(s, F);
        }
        if (!link.general) x_next = x;
        continue;
      }
      auto lambda_k = slot(link, kMixed);
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
  const bool mixed = !general_.empty();
  auto forward_range = [&](std::size_t first, std::size_t last) {
    return mixed ? forward.template operator()<true>(first, last)
                 : forward.template operator()<false>(first, last);
  };
  auto backward_range = [&](std::size_t first, std::size_t last) {
    if (mixed) {
      backward.template operator()<true>(first, last);
    } else {
      backward.template operator()<false>(first, last);
    }
  };
  const std::size_t chains = starts_.size() - 1;
  const int parts = pool && chains >= 2 && total >= kParallelItems ? pool->threads() : 1;
  if (parts == 1) {
    if (!forward_range(0, total)) return false;
    backward_range(0, total);
    return true;
  }
  std::vector<std::size_t> bounds(static_cast<std::size_t>(parts) + 1, total);
  for (int k = 0; k < parts; ++k) {
    const std::size_t target = total * static_cast<std::size_t>(k) / parts;
    bounds[k] = *std::lower_bound(starts_.begin(), starts_.end(), target);
  }
  std::vector<char> ok(static_cast<std::size_t>(parts), 1);
  pool->run(static_cast<std::size_t>(parts), [&](int, std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k) ok[k] = forward_range(bounds[k], bounds[k + 1]);
  });
  for (char good : ok)
    if (!good) return false;
  pool->run(static_cast<std::size_t>(parts), [&](int, std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k) backward_range(bounds[k], bounds[k + 1]);
  });
  return true;
}

}  // namespace mabd::detail
