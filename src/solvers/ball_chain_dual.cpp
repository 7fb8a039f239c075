#include "solvers/ball_chain_dual.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
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

/// Jv(w)^T v: the generalised force of a "vector force" v on body vector w (no translation).
Vec12 vector_force(const Vec3& w, const Vec3& v) {
  Vec12 g;
  g << w[0] * v, w[1] * v, w[2] * v, Vec3::Zero();
  return g;
}

/// Cholesky factor D = L L^T of a symmetric positive definite block of up to 6 x 6, with the
/// pivot test of Chol3 (min L_ii > rel_floor max L_ii), written out for each size (the loops
/// unrolled): Eigen's dynamic-size factor and solves, or loops over a run-time size, cost
/// several times their arithmetic at these sizes. Reads D's lower triangle only.
struct CholSmall {
  int n = 0;
  double L[6][6];
  double inv[6];  ///< 1 / L_ii: the solves multiply (a divide's latency chains the sweeps)

  // (Not inlined: the chain sweeps are flattened, and each size's code inlined at every call
  // would multiply their size, and their compile time under the sanitizers.)
  template <class M>
  __attribute__((noinline)) bool compute(const M& D, double rel_floor) {
    n = static_cast<int>(D.rows());
    switch (n) {
      case 1: return factor<1>(D, rel_floor);
      case 2: return factor<2>(D, rel_floor);
      case 3: return factor<3>(D, rel_floor);
      case 4: return factor<4>(D, rel_floor);
      case 5: return factor<5>(D, rel_floor);
      default: return factor<6>(D, rel_floor);
    }
  }

  /// b <- D^{-1} b for n entries at b with stride `stride`.
  void solve_in_place(double* b, int stride = 1) const { solve_columns(b, stride, 0, 1); }

  /// B <- D^{-1} B, column by column.
  template <class M>
  void solve_in_place(M& B) const {
    if (B.cols() > 0) solve_columns(B.data(), 1, static_cast<int>(B.outerStride()),
                                    static_cast<int>(B.cols()));
  }

 private:
  template <int N, class M>
  bool factor(const M& D, double rel_floor) {
    double lo = INFINITY, hi = 0;
    for (int j = 0; j < N; ++j) {
      double d = D(j, j);
      for (int k = 0; k < j; ++k) d -= L[j][k] * L[j][k];
      if (!(d > 0)) return false;
      L[j][j] = std::sqrt(d);
      inv[j] = 1.0 / L[j][j];
      lo = std::fmin(lo, L[j][j]);
      hi = std::fmax(hi, L[j][j]);
      for (int i = j + 1; i < N; ++i) {
        double v = D(i, j);
        for (int k = 0; k < j; ++k) v -= L[i][k] * L[j][k];
        L[i][j] = v * inv[j];
      }
    }
    return lo > rel_floor * hi;
  }

  /// `cols` columns of n entries (stride `stride`), `ld` apart.
  __attribute__((noinline)) void solve_columns(double* b, int stride, int ld, int cols) const {
    switch (n) {
      case 1: return solve_n<1>(b, stride, ld, cols);
      case 2: return solve_n<2>(b, stride, ld, cols);
      case 3: return solve_n<3>(b, stride, ld, cols);
      case 4: return solve_n<4>(b, stride, ld, cols);
      case 5: return solve_n<5>(b, stride, ld, cols);
      default: return solve_n<6>(b, stride, ld, cols);
    }
  }

  template <int N>
  void solve_n(double* b0, int stride, int ld, int cols) const {
    for (int c = 0; c < cols; ++c) {
      double* b = b0 + c * ld;
      double x[N];
      for (int i = 0; i < N; ++i) x[i] = b[i * stride];
      for (int i = 0; i < N; ++i) {
        double v = x[i];
        for (int k = 0; k < i; ++k) v -= L[i][k] * x[k];
        x[i] = v * inv[i];
      }
      for (int i = N; i-- > 0;) {
        double v = x[i];
        for (int k = i + 1; k < N; ++k) v -= L[k][i] * x[k];
        x[i] = v * inv[i];
      }
      for (int i = 0; i < N; ++i) b[i * stride] = x[i];
    }
  }
};

/// The lower triangle of D -= X^T B (X and B K x N, column-major, leading dimension K; D
/// N x N, leading dimension N), unrolled for each size.
template <int K, int N>
void schur_lower(const double* X, const double* B, double* D) {
  for (int c = 0; c < N; ++c) {
    for (int r = c; r < N; ++r) {
      double v = 0;
      for (int k = 0; k < K; ++k) v += X[k + r * K] * B[k + c * K];
      D[r + c * N] -= v;
    }
  }
}

template <int K>
bool schur_lower_k(int n, const double* X, const double* B, double* D) {
  switch (n) {
    case 3: schur_lower<K, 3>(X, B, D); return true;
    case 4: schur_lower<K, 4>(X, B, D); return true;
    case 5: schur_lower<K, 5>(X, B, D); return true;
    case 6: schur_lower<K, 6>(X, B, D); return true;
    default: return false;
  }
}

/// D -= X^T B on the lower triangle (D's upper one unread by CholSmall), for blocks of the
/// sizes of point links and their dot rows; Eigen's dynamic product for the others.
template <class M>
__attribute__((noinline)) void schur_update(M& D, const M& X, const M& B) {
  const int k = static_cast<int>(X.rows()), n = static_cast<int>(D.rows());
  bool done = false;
  switch (k) {
    case 3: done = schur_lower_k<3>(n, X.data(), B.data(), D.data()); break;
    case 4: done = schur_lower_k<4>(n, X.data(), B.data(), D.data()); break;
    case 5: done = schur_lower_k<5>(n, X.data(), B.data(), D.data()); break;
    case 6: done = schur_lower_k<6>(n, X.data(), B.data(), D.data()); break;
    default: break;
  }
  if (!done) D.noalias() -= X.transpose().lazyProduct(B);
}

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
  bool any_dots = false;
  for (const PointLink& l : links) {
    if (l.dots < 0 || l.dots > 3 || (l.dots > 0 && l.rows > 0)) return;
    any_dots = any_dots || l.dots > 0;
  }
  if (any_general || any_dots) {
    general_of_.assign(items_, -1);
    offsets_.resize(items_);
    for (std::size_t k = 0; k < items_; ++k) {
      offsets_[k] = multipliers_;
      multipliers_ += links[k].rows > 0 ? static_cast<std::size_t>(links[k].rows)
                                        : 3 + static_cast<std::size_t>(links[k].dots);
    }
    if (any_dots) link_of_.assign(items_, 0);
  } else {
    multipliers_ = 3 * items_;
  }
  ready_ = true;
  // The items' anchors, one copy per value up to round-off (anchor_key), and compliances,
  // one copy per distinct value (bitwise).
  // Body vectors (the dot rows' ports) are kept apart from the points.
  std::map<std::pair<std::array<std::int64_t, 4>, bool>, std::uint32_t> anchor_ids;
  auto port_id = [&](const Vec3& p, bool vector) {
    const auto [it, added] = anchor_ids.emplace(std::make_pair(anchor_key(p), vector),
                                                static_cast<std::uint32_t>(anchors_.size()));
    if (added) {
      anchors_.push_back(p);
      port_vector_.push_back(vector);
    }
    return it->second;
  };
  auto anchor_id = [&](const Vec3& p) { return port_id(p, false); };
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
    for (int c = 0; c < 3; ++c) {
      const Vec3 e = Vec3::Unit(c);
      const Vec12 z = factor.solve(port_vector_[i2] ? vector_force(p2, e) : point_force(p2, e));
      K.col(c) = point(z, p1);
      if (port_vector_[i1]) K.col(c) -= z.tail<3>();  // Jv(p1) z
    }
    const auto id = static_cast<std::uint32_t>(K_.size());
    K_.push_back(sign * K);
    known.emplace(key, id);
    return id;
  };
  // Y(P) = sum_k P_k Z0_k of body s's factor at port i (Z0 is zero on t: points and
  // vectors alike), one copy per factor and port.
  std::map<std::pair<const BodyHessian*, std::uint32_t>, std::uint32_t> known_y;
  auto y_block = [&](int s, std::uint32_t i) -> std::uint32_t {
    if (!ops.dynamic(s)) return 0;
    const BodyHessian& factor = ops.factor(s);
    const auto [it, added] =
        known_y.emplace(std::make_pair(&factor, i), static_cast<std::uint32_t>(Y_.size()));
    if (added) {
      const Vec3& p = anchors_[i];
      Y_.push_back(p[0] * factor.Z0.block<3, 3>(0, 0) + p[1] * factor.Z0.block<3, 3>(3, 0) +
                   p[2] * factor.Z0.block<3, 3>(6, 0));
    }
    return it->second;
  };
  Y_.push_back(Mat3::Zero());  // index 0: a side that does not move
  // Distinct port sets and couplings (a generated chain holds a handful), keyed by their bytes.
  std::map<std::string, std::uint32_t> known_dotted, known_coupling;
  // The index of `value` in `table`, appended if new (zero-filled structs, keyed by bytes).
  auto intern = [](std::map<std::string, std::uint32_t>& known, auto& table, const auto& value) {
    const std::string key(reinterpret_cast<const char*>(&value), sizeof value);
    const auto [it, added] = known.emplace(key, static_cast<std::uint32_t>(table.size()));
    if (added) table.push_back(value);
    return it->second;
  };
  // What a port set's blocks depend on (the sides' factors, ports and L): a generated chain's
  // links look up their blocks once.
  std::map<std::tuple<const BodyHessian*, const BodyHessian*, std::array<std::uint32_t, 8>,
                      double>,
           std::uint32_t>
      known_inputs;
  auto factor_of = [&](int s) { return ops.dynamic(s) ? &ops.factor(s) : nullptr; };
  auto dotted_id = [&](const PointLink& j, const Link& link) {
    Dotted d;
    std::memset(&d, 0, sizeof d);
    d.dots = static_cast<std::uint8_t>(j.dots);
    d.L = j.L;
    d.port[0][0] = link.pa;
    d.port[1][0] = link.pb;
    for (int i = 0; i < j.dots; ++i) {
      d.port[0][1 + i] = port_id(*j.u[i], true);
      d.port[1][1 + i] = port_id(*j.v[i], true);
    }
    std::array<std::uint32_t, 8> ports;
    ports.fill(~0u);
    for (int r = 0; r <= j.dots; ++r) {
      ports[r] = d.port[0][r];
      ports[4 + r] = d.port[1][r];
    }
    const auto inputs = std::make_tuple(factor_of(j.a), factor_of(j.b), ports, j.L);
    if (auto it = known_inputs.find(inputs); it != known_inputs.end()) return it->second;
    for (int side = 0; side < 2; ++side) {
      const int s = side == 0 ? j.a : j.b;
      if (!ops.dynamic(s)) continue;
      for (int r = 0; r <= j.dots; ++r) {
        d.Y[side][r] = y_block(s, d.port[side][r]);
        for (int c = 0; c <= j.dots; ++c) {
          d.K[side][r][c] = constant_block(s, d.port[side][r], d.port[side][c], 1.0);
        }
      }
    }
    const std::uint32_t id = intern(known_dotted, dotted_, d);
    known_inputs.emplace(inputs, id);
    return id;
  };
  // The ports of link `l` on its side `side` (its anchor, then its dots' vectors there).
  auto side_ports = [&](const Link& l, int side, std::uint32_t* out) {
    if (l.dots == 0) {
      out[0] = side == 0 ? l.pa : l.pb;
      return 1;
    }
    const Dotted& d = dotted_[l.tab];
    for (int r = 0; r <= l.dots; ++r) out[r] = d.port[side][r];
    return 1 + l.dots;
  };
  std::map<std::tuple<const BodyHessian*, std::array<std::uint32_t, 8>>, std::uint32_t>
      known_pairs;
  auto coupling_id = [&](int s, const Link& l, const Link& n) {
    Coupling c;
    std::memset(&c, 0, sizeof c);
    std::uint32_t pl[4], pn[4];
    const int nl = side_ports(l, l.next_side, pl), nn = side_ports(n, n.prev_side, pn);
    std::array<std::uint32_t, 8> ports;
    ports.fill(~0u);
    std::copy(pl, pl + nl, ports.begin());
    std::copy(pn, pn + nn, ports.begin() + 4);
    const auto inputs = std::make_tuple(&ops.factor(s), ports);
    if (auto it = known_pairs.find(inputs); it != known_pairs.end()) return it->second;
    for (int r = 0; r < nl; ++r) {
      c.Y[0][r] = y_block(s, pl[r]);
      for (int k = 0; k < nn; ++k) c.K[r][k] = constant_block(s, pl[r], pn[k], 1.0);
    }
    for (int k = 0; k < nn; ++k) c.Y[1][k] = y_block(s, pn[k]);
    const std::uint32_t id = intern(known_coupling, couplings_, c);
    known_pairs.emplace(inputs, id);
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
        if (j.dots > 0) {
          link.dots = static_cast<std::uint8_t>(j.dots);
          link.m = static_cast<std::uint8_t>(3 + j.dots);
          link.tab = dotted_id(j, link);
          link.dir = static_cast<std::uint32_t>(dirs_.size());
          dirs_.resize(dirs_.size() + static_cast<std::size_t>(j.dots));
        }
      }
      if (!link_of_.empty()) link_of_[chain[k]] = static_cast<std::uint32_t>(at);
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
        if (link.general || jn.rows > 0 || j.dots > 0 || jn.dots > 0) {
          link.kn = static_cast<std::uint32_t>(Xg_.size());  // X_k of variable size
          Xg_.emplace_back();
          continue;  // the port coupling, if any, once the next link is planned
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
  // Port couplings between consecutive point links of which one has dots (their shared body
  // moves: a chain passes through moving bodies only).
  for (std::size_t at = 0; at + 1 < total; ++at) {
    Link& l = links_[at];
    const Link& n = links_[at + 1];
    if (l.next_side < 0 || l.general || n.general || (l.dots == 0 && n.dots == 0)) continue;
    l.kc = coupling_id(l.next_side == 0 ? l.a : l.b, l, n);
  }
}

bool BallChainDual::item_force(std::uint32_t k, int side, const double* x, Vec12& F) const {
  if (link_of_.empty() || general_of_[k] >= 0) return false;
  const Link& l = links_[link_of_[k]];
  // The dot rows' directions are kept on the reported side (b, or a next to the world).
  if (l.dots > 0 && side != (l.b >= 0 ? 1 : 0)) return false;
  F = link_force(l, side, x, l.dots > 0 ? &dirs_[l.dir] : nullptr);
  return true;
}

Vec12 BallChainDual::link_force(const Link& l, int side, const double* x, const Vec3* d) const {
  const double sign = side == 0 ? 1.0 : -1.0;
  Vec12 F = point_force(anchors_[side == 0 ? l.pa : l.pb], sign * Vec3(x));
  if (l.dots == 0) return F;
  const Dotted& t = dotted_[l.tab];
  for (int r = 0; r < l.dots; ++r) {
    F.noalias() += x[3 + r] * vector_force(anchors_[t.port[side][1 + r]], d[r]);
  }
  return F;
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
  auto wide = [](const Link& l) { return l.general || l.dots > 0; };
  // The directions d (world) of link l's dot rows on its side `side`: L A_o w_o of the other
  // side o's vector w_o.
  auto dot_dirs = [&](const Link& l, int side, Vec3* d) {
    const Dotted& t = dotted_[l.tab];
    const int o = 1 - side;
    const Vec12& qo = q_of(side_body(l, o));
    for (int r = 0; r < l.dots; ++r) d[r] = t.L * body_vector(qo, anchors_[t.port[o][1 + r]]);
  };
  // The rows of a point link (dots included) on one side: row r's gradient is J(P)^T d_r for
  // the port P in `slot` (0 the anchor, 1 + i dot i's vector). On a moving body, `mode` says
  // how their blocks are made: 1 by the ports' constant blocks, from e_r = R^T d_r (body
  // frame) and, with a geometric correction C_b, t_r = Y(P_r)^T e_r and C_b t_r; 2 by body
  // solves (contact corrections).
  struct SideRows {
    int n = 0, mode = 0;
    std::uint8_t slot[6];
    Vec3 d[6], e[6], t[6], ct[6];
    const Mat3* C = nullptr;
  };
  // Fills the rows of link l's side `side`, with Y the Y_ ids of its ports there.
  auto side_rows = [&](const Link& l, int side, const std::uint32_t* Y, SideRows& out) {
    const double sign = side == 0 ? 1.0 : -1.0;
    out.n = 3 + l.dots;
    for (int i = 0; i < 3; ++i) {
      out.slot[i] = 0;
      out.d[i] = sign * Vec3::Unit(i);
    }
    if (l.dots > 0) dot_dirs(l, side, out.d + 3);
    for (int r = 3; r < out.n; ++r) out.slot[r] = static_cast<std::uint8_t>(r - 2);
    const int s = side_body(l, side);
    out.mode = 0;
    if (!ops.dynamic(s)) return;
    out.mode = ops.geometric_correction(s, out.C) ? 1 : 2;
    if (out.mode == 2) return;
    const Mat3& R = ops.rotation(s);
    for (int r = 0; r < 3; ++r) out.e[r] = sign * R.row(r).transpose();
    for (int r = 3; r < out.n; ++r) out.e[r].noalias() = R.transpose() * out.d[r];
    if (out.C == nullptr) return;
    for (int r = 0; r < out.n; ++r) {
      out.t[r].noalias() = Y_[Y[out.slot[r]]].transpose() * out.e[r];
      out.ct[r].noalias() = *out.C * out.t[r];
    }
  };
  auto side_gradient = [&](const Link& l, int side, const SideRows& rows, int r) {
    if (r < 3) return point_force(side_anchor(l, side), rows.d[r]);
    return vector_force(anchors_[dotted_[l.tab].port[side][r - 2]], rows.d[r]);
  };
  // out(r, c) += g_Ar . H_s^{-1} g_Bc (mode 1) from the ports' constant blocks:
  // e_r^T K(P_r, P_c) e_c, less the geometric term t_r . C_b t_c. With `lower` (A = B) only
  // r >= c.
  auto port_products = [&](const SideRows& A, const SideRows& B, const std::uint32_t (&K)[4][4],
                           bool lower, Block& out) {
    for (int c = 0; c < B.n; ++c) {
      Vec3 w[4];
      const int first = lower ? c : 0;
      int have = -1;  // the slots up to `have` have w (A's rows come in slot order)
      for (int r = first; r < A.n; ++r) {
        const int p = A.slot[r];
        if (p > have) {
          w[p].noalias() = K_[K[p][B.slot[c]]] * B.e[c];
          have = p;
        }
        out(r, c) += A.e[r].dot(w[p]);
      }
      if (A.C == nullptr) continue;
      for (int r = first; r < A.n; ++r) out(r, c) -= A.t[r].dot(B.ct[c]);
    }
  };
  // The same by body solves, on a body with contact corrections (mode 2).
  auto solved_products = [&](int s, const Link& la, int sa, const SideRows& A, const Link& lb,
                             int sb, const SideRows& B, Block& out) {
    Vec12 gA[6];
    for (int r = 0; r < A.n; ++r) gA[r] = side_gradient(la, sa, A, r);
    for (int c = 0; c < B.n; ++c) {
      const Vec12 W = ops.solve_body(s, side_gradient(lb, sb, B, c));
      for (int r = 0; r < A.n; ++r) out(r, c) += gA[r].dot(W);
    }
  };
  // The blocks next to a wide item (general, or with dots): B_k = G_ks H_s^{-1} G_(k+1)s^T
  // (m_k x m_(k+1)), by W of a general item, else by the ports of the two point links. Two
  // point links' rows on their shared body: this item's from `rows` if not null; the next
  // item's are left in `next_rows` (mode 0 when not made) for its own block.
  auto coupling_general = [&](std::size_t at, const SideRows* rows, SideRows& next_rows) {
    const Link& j = links_[at];
    const Link& n = links_[at + 1];
    const int js = j.next_side, ns = n.prev_side;
    const int s = side_body(j, js);
    Block B(j.m, n.m);
    next_rows.mode = 0;
    if (j.general && n.general) {
      const General& gj = general_[j.kaa];
      const General& gn = general_[n.kaa];
      for (int r = 0; r < j.m; ++r) {
        for (int c = 0; c < n.m; ++c) B(r, c) = grad(gj.rows[r], js).dot(gn.W[ns].col(c));
      }
    } else if (j.general || n.general) {
      const Link& pl = j.general ? n : j;  // the point link
      const int ps = j.general ? ns : js;
      const SideW& W = j.general ? general_[j.kaa].W[js] : general_[n.kaa].W[ns];
      const std::uint32_t none[4] = {0, 0, 0, 0};
      SideRows pr;
      side_rows(pl, ps, none, pr);
      for (int r = 0; r < pr.n; ++r) {
        const Vec12 g = side_gradient(pl, ps, pr, r);
        for (int w = 0; w < W.cols(); ++w) {
          if (j.general) {
            B(w, r) = g.dot(W.col(w));
          } else {
            B(r, w) = g.dot(W.col(w));
          }
        }
      }
    } else {
      const Coupling& cp = couplings_[j.kc];
      SideRows own;
      if (rows == nullptr) {
        side_rows(j, js, cp.Y[0], own);
        rows = &own;
      }
      side_rows(n, ns, cp.Y[1], next_rows);
      B.setZero();
      if (rows->mode == 1) {
        port_products(*rows, next_rows, cp.K, false, B);
      } else {
        solved_products(s, j, js, *rows, n, ns, next_rows, B);
      }
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
  // D_k (lower triangle) and b_k of a point link with dots, its rows on both sides left in
  // `rows` (those of side `have`, if 0 or 1, are there already); keeps its dot rows'
  // directions on the reported side.
  auto dotted_block = [&](const Link& j, Block& D, BlockVec& rhs, SideRows (&rows)[2],
                          int have) {
    const Dotted& t = dotted_[j.tab];
    const int m = j.m;
    D.setZero(m, m);
    D.diagonal().setConstant(compliances_[j.compliance]);
    rhs.resize(m);
    const Vec12& qa = q_of(j.a);
    const Vec12& qb = q_of(j.b);
    rhs.head<3>() = point(qa, anchors_[j.pa]) - point(qb, anchors_[j.pb]);
    for (int r = 0; r < j.dots; ++r) {
      rhs[3 + r] = t.L * body_vector(qa, anchors_[t.port[0][1 + r]])
                             .dot(body_vector(qb, anchors_[t.port[1][1 + r]]));
    }
    const int reported = j.b >= 0 ? 1 : 0;
    for (int side = 0; side < 2; ++side) {
      const int s = side_body(j, side);
      SideRows& sr = rows[side];
      if (side != have) side_rows(j, side, t.Y[side], sr);
      if (side == reported) {
        for (int r = 0; r < j.dots; ++r) dirs_[j.dir + r] = sr.d[3 + r];
      }
      if (sr.mode == 0) continue;
      const Vec3 ys = point(y[s], side_anchor(j, side));  // rhs += G_s y_s
      for (int r = 0; r < 3; ++r) rhs[r] += sr.d[r].dot(ys);
      for (int r = 3; r < m; ++r) {
        rhs[r] += sr.d[r].dot(body_vector(y[s], anchors_[t.port[side][r - 2]]));
      }
      if (sr.mode == 1) {
        port_products(sr, sr, t.K[side], true, D);
      } else {
        solved_products(s, j, side, sr, j, side, sr, D);
      }
    }
  };
  // G_s^T x of the item's side: the generalised force of its multipliers x on body s.
  auto side_force = [&](const Link& l, int side, const double* x) {
    if (!l.general) {
      Vec3 d[3];
      if (l.dots > 0) dot_dirs(l, side, d);
      return link_force(l, side, x, d);
    }
    const General& g = general_[l.kaa];
    Vec12 F = Vec12::Zero();
    for (int r = 0; r < l.m; ++r) F.noalias() += grad(g.rows[r], side) * x[r];
    return F;
  };
  auto next_is_wide = [&](const Link& l, std::size_t at) {
    return l.next_side >= 0 && (wide(l) || wide(links_[at + 1]));
  };
  // Forward elimination over every chain: D'_k = D_k - B_{k-1}^T X_{k-1},
  // b'_k = b_k - X_{k-1}^T b'_{k-1}, X_k = D'_k^{-1} B_k, y_k = D'_k^{-1} b'_k. Nothing but
  // lambda and the scratch X is changed before every pivot has been accepted (the caller falls
  // back to the general solvers otherwise). Between point links the blocks are 3x3 (Mat3);
  // next to a general item they take its size (Block).
  // Chains are independent components: a range of whole chains is eliminated, and then
  // substituted back, on its own. Without general items or dot rows (kMixed false) only the
  // 3x3 path is compiled in (flattened, below).
  auto forward = [&]<bool kMixed>(std::size_t first, std::size_t last) {
    Mat3 B_prev = Mat3::Zero(), X_prev = Mat3::Zero();
    Vec3 b_prev = Vec3::Zero();
    Block Bg_prev, Xg_prev;
    BlockVec bg_prev;
    bool prev_general = false;  // the coupling with the previous item is of variable size
    // A point link's rows per side, and those of the next one on their shared body (made by
    // the coupling; mode 0 if not).
    SideRows rows[2], next_rows;
    for (std::size_t at = first; at < last; ++at) {
      const Link& j = links_[at];
      const bool next_general = kMixed && next_is_wide(j, at);
      if (kMixed && j.prev_side < 0) prev_general = false;
      if (!kMixed || (!wide(j) && !prev_general)) {
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
          Bg_prev = coupling_general(at, nullptr, next_rows);
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
      } else if (j.dots > 0) {
        int have = -1;  // the side whose rows the coupling with the previous item made
        if (j.prev_side >= 0 && next_rows.mode != 0) {
          rows[j.prev_side] = next_rows;
          have = j.prev_side;
        }
        dotted_block(j, D, rhs, rows, have);
      } else {
        Mat3 D3;
        Vec3 r3;
        point_block(j, D3, r3);
        D = D3;
        rhs = r3;
      }
      if (j.prev_side >= 0) {
        schur_update(D, Xg_prev, Bg_prev);
        rhs.noalias() -= Xg_prev.transpose().lazyProduct(bg_prev);
      }
      CholSmall llt;
      if (!llt.compute(D, 1e-7)) return false;
      auto x = slot_general(j);
      x = rhs;
      llt.solve_in_place(x.data());
      prev_general = next_general;
      if (next_general) {
        const bool own = !j.general && j.dots > 0 && rows[j.next_side].mode != 0;
        Bg_prev = coupling_general(at, own ? &rows[j.next_side] : nullptr, next_rows);
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
  auto backward = [&]<bool kMixed>(std::size_t first, std::size_t last) {
    Vec3 x_next = Vec3::Zero();
    for (std::size_t pos = last; pos-- > first;) {
      const Link& link = links_[pos];
      if (kMixed && (wide(link) || next_is_wide(link, pos))) {
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
        if (!wide(link)) x_next = x;
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
  const bool mixed = !offsets_.empty();  // general items or dot rows
  // The 3x3 passes are flattened (every helper inlined: about 15% faster). The mixed ones are
  // not: flattened with the dot rows' and general items' helpers, they grew past what a
  // sanitizer build compiles in reasonable time and memory.
  auto forward_points = [&](std::size_t first, std::size_t last) __attribute__((flatten)) {
    return forward.template operator()<false>(first, last);
  };
  auto backward_points = [&](std::size_t first, std::size_t last) __attribute__((flatten)) {
    backward.template operator()<false>(first, last);
  };
  auto forward_range = [&](std::size_t first, std::size_t last) {
    return mixed ? forward.template operator()<true>(first, last) : forward_points(first, last);
  };
  auto backward_range = [&](std::size_t first, std::size_t last) {
    if (mixed) {
      backward.template operator()<true>(first, last);
    } else {
      backward_points(first, last);
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
