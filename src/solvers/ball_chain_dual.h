// Chains of point-coincidence items (plain ball joints) with the co-rotated (polar) body
// operator: the dual blocks in closed form (DESIGN section 3), without rows. With
// J(p) D(R) = R J(p) and H^{-1} = D(R) Hb^{-1} D(R)^T,
//   J(p1) H^{-1} J(p2)^T = R K(p1, p2) R^T,   K(p1, p2) = J(p1) Hb^{-1} J(p2)^T,
// a constant 3x3 per body and anchor pair, computed once. An item k between bodies a and b
// has G_k = [J(pa), -J(pb)] (paper Eq. ball), so the block-tridiagonal system of the chain
// solver (Eq. chain-btd) is
//   D_k = R_a K_aa R_a^T + R_b K_bb R_b^T (+ compliance),  B_k = +-R_s K(p_k, p_k+1) R_s^T,
//   rhs_k = J(pa) y_a - J(pb) y_b + C_k,   y = H^{-1} f,
// solved by block Thomas on 3x3 blocks; then dq_s = y_s - H_s^{-1} G_s^T lambda once per body.
// The same multipliers as the row-by-row chain solver (chain_dual.h), without its per-row
// H^{-1} G^T vectors: a few 3x3 products per item and one body solve per body.
//
// Hinge, universal and fixed joints are point links with dot rows L (A_a u_i) . (A_b v_i) = 0
// (1 to 3, body-local unit vectors u_i, v_i). A dot row's gradient on side s is
// Jv(w)^T d with Jv(w) = [w0 I, w1 I, w2 I, 0], w the side's vector and d the other side's
// (L A_o w_o, world frame), so, like a point row, it has the closed form
//   g1 . H^{-1} g2 = e1^T K(P1, P2) e2,  e = R^T d,  K(P1, P2) = J(P1) Hb^{-1} J(P2)^T,
// for ports P (a body point, J; or a body vector, Jv), constant per body and port pair; the
// geometric-stiffness correction subtracts (Y(P1)^T e1) . C_b (Y(P2)^T e2) with the constant
// Y(P) = sum_k P_k Z0_k. Such items take blocks of 4 to 6 rows, without any body solve.
//
// A chain may also hold general items (prismatic joints): items of up to 6 equality rows,
// built at each solve (ItemRows). Their blocks come from W_s = H_s^{-1} G_s^T (one body solve
// per row and side), and the block Thomas sweep then runs on blocks of their size:
// D_k = sum_s G_ks W_ks, B_k = G_ks W_(k+1)s, with G_s written out on the other side. Bodies
// with contact corrections take the same body solves for the dot items' rows.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "joints/row.h"
#include "solvers/body_operators.h"
#include "solvers/thread_pool.h"

namespace mabd::detail {

/// An item of a chain: with rows = 0 a point link x_a(pa) = x_b(pb) (three point rows,
/// compliance in m/N); with rows in 1..6 a general item of that many equality rows, which the
/// solver builds at each solve (ItemRows; pa, pb and compliance are then unused).
struct PointLink {
  int a = -1, b = -1;  ///< bodies (-1: the world)
  Vec3 pa = Vec3::Zero(), pb = Vec3::Zero();  ///< anchors, body frames (m)
  double compliance = 0;  ///< of every row of a point link, dot rows included (m/N)
  int rows = 0;  ///< 0: a point link; else the rows of a general item
  /// Dot rows after the point rows of a point link (0 to 3): L (A_a u_i) . (A_b v_i) = 0,
  /// with u_i, v_i unit vectors in the frames of a and b, read during prepare() only.
  int dots = 0;
  const Vec3* u[3] = {};
  const Vec3* v[3] = {};
  double L = 1;  ///< length scale of the dot rows (m)
};

/// Appends the rows of general item `item` at the current iterate (gradients, values in m,
/// compliances in m/N), all of kind Equality.
using ItemRows = std::function<void(std::uint32_t item, std::vector<Row>& out)>;

class BallChainDual {
 public:
  /// Plans for chains of items (in path order, chain_dual.h), `links` describing each item
  /// (point link or general item, at most 6 rows). ops supplies the bodies' constant factors.
  void prepare(const std::vector<std::vector<std::uint32_t>>& chains,
               const std::vector<PointLink>& links, const BodyOperators& ops);
  /// Forgets the plan (the items are not all point links, or not chains).
  void clear() {
    ready_ = false;
    links_.clear();
    starts_.clear();
    K_.clear();
    anchors_.clear();
    compliances_.clear();
    offsets_.clear();
    general_.clear();
    general_of_.clear();
    Xg_.clear();
    port_vector_.clear();
    dotted_.clear();
    couplings_.clear();
    Y_.clear();
    dirs_.clear();
    link_of_.clear();
    items_ = 0;
    multipliers_ = 0;
  }
  bool ready() const { return ready_; }
  /// Chains with fewer items than this in all are solved on the calling thread.
  static constexpr std::size_t kParallelItems = 4096;
  /// Solves the dual at the iterate q (per body) into `lambda` (the rows of each item, in
  /// item order: 3 for a point link; see offset()) and y (in: H^{-1} f, out: the increment).
  /// `item_rows` builds the rows of the general items at q (unused without any). Returns
  /// false (y unchanged) if a pivot is singular. With a pool, groups of whole chains
  /// (independent components) are solved on its threads, with the same result to the bit.
  bool solve(const BodyOperators& ops, const std::vector<Vec12>& q, std::vector<Vec12>& y,
             std::vector<double>& lambda, const ItemRows& item_rows = {},
             ThreadPool* pool = nullptr);
  /// Index of item k's first multiplier in lambda (N, or N m / L for angular rows).
  std::size_t offset(std::uint32_t k) const {
    return offsets_.empty() ? 3 * std::size_t{k} : offsets_[k];
  }
  /// The rows general item k was solved with (at the last solve's iterate), or null for a
  /// point link.
  const std::vector<Row>* general_rows(std::uint32_t k) const;
  /// Items that are general (not point links).
  std::size_t general_items() const { return general_.size(); }
  /// Sets F = G_side^T x, the generalised force of the multipliers x (offset(k) on) of a point
  /// link k (dot rows included, at the last solve's iterate) on its body `side` (0: a, 1: b).
  /// Returns false for a general item, on the side of a dot item that is not reported (a, or
  /// b next to the world), and when no item of the plan has dot rows.
  bool item_force(std::uint32_t k, int side, const double* x, Vec12& F) const;

 private:
  struct Link {
    std::int32_t a = -1, b = -1;  ///< bodies of the item (-1 world)
    std::uint32_t item = 0;
    std::int8_t next_side = -1;  ///< side (0 = a, 1 = b) shared with the next item, -1 at the end
    std::int8_t prev_side = -1;  ///< side shared with the previous item, -1 at the start
    std::uint8_t m = 3;          ///< rows of the item
    bool general = false;        ///< a general item (its data in general_[kaa])
    std::uint8_t dots = 0;       ///< dot rows of a point link (m = 3 + dots)
    /// A point link with dots: its ports in dotted_, and its dot rows' directions on the
    /// reported side (b, or a next to the world) in dirs_ from dir on.
    std::uint32_t tab = 0, dir = 0;
    /// Port blocks with the next item in couplings_ (two point links, one with dots).
    std::uint32_t kc = 0;
    /// Point links: K(pa, pa), K(pb, pb), signed K(p_k, p_k+1) in K_. A general item keeps
    /// its index in general_ in kaa. When this item or the next is general, kn is the index
    /// of X_k in Xg_ instead.
    std::uint32_t kaa = 0, kbb = 0, kn = 0;
    std::uint32_t pa = 0, pb = 0;  ///< its anchors in anchors_
    std::uint32_t compliance = 0;  ///< its compliance in compliances_
  };
  using Block = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6>;
  using BlockVec = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1>;
  using SideW = Eigen::Matrix<double, 12, Eigen::Dynamic, 0, 12, 6>;
  /// Ports of a point link with dots, per side: [0] its anchor, [1 + i] its dot row i's
  /// vector (u_i on a, v_i on b), as ids in anchors_; K_ ids of every port pair and Y_ ids of
  /// every port (0 on a side that does not move).
  struct Dotted {
    std::uint32_t port[2][4];
    std::uint32_t K[2][4][4];
    std::uint32_t Y[2][4];
    double L;
    std::uint8_t dots;
  };
  /// Ports of two consecutive point links on their shared body: K_ ids of the port pairs
  /// (this item's ports by the next's) and the Y_ ids of each one's ports.
  struct Coupling {
    std::uint32_t K[4][4];
    std::uint32_t Y[2][4];
  };
  /// A general item: its rows and W_s = H_s^{-1} G_s^T per dynamic side, rebuilt each solve.
  struct General {
    std::size_t at = 0;  ///< its position in links_
    std::vector<Row> rows;
    SideW W[2];
  };
  bool ready_ = false;
  std::vector<Link> links_;   ///< every chain's items in path order, concatenated
  std::vector<std::size_t> starts_;  ///< where each chain starts in links_, then its size
  std::size_t items_ = 0;     ///< items (point links) of the plan
  std::vector<Vec3> anchors_;        ///< distinct anchors of the items (identical links share)
  std::vector<double> compliances_;  ///< distinct compliances of the items
  std::vector<Mat3> K_;       ///< distinct constant blocks (identical links share one)
  std::vector<Mat3> X_;       ///< X_k = D'_k^{-1} B_k of the elimination (0 at chain ends)
  std::size_t multipliers_ = 0;          ///< rows of all items
  std::vector<std::size_t> offsets_;     ///< first multiplier per item; empty: 3 per item
  std::vector<General> general_;         ///< the general items, in path order
  std::vector<std::int32_t> general_of_; ///< per item: index in general_ or -1; empty: none
  std::vector<Block> Xg_;                ///< X_k next to a general item
  std::vector<char> port_vector_;        ///< per entry of anchors_: a body vector (Jv)
  std::vector<Dotted> dotted_;           ///< distinct port sets of the links with dots
  std::vector<Coupling> couplings_;      ///< distinct port couplings
  std::vector<Mat3> Y_;                  ///< Y(P) per factor and port; [0] zero
  std::vector<Vec3> dirs_;               ///< dot rows' reported directions (last solve)
  std::vector<std::uint32_t> link_of_;   ///< per item: its position in links_ (with dots)

  /// G_side^T x of point link l (dot rows included, their world directions d on that side):
  /// the generalised force of its multipliers x on its body `side` (0: a, 1: b).
  Vec12 link_force(const Link& l, int side, const double* x, const Vec3* d) const;
};

}  // namespace mabd::detail
