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
#pragma once

#include <cstdint>
#include <vector>

#include "solvers/body_operators.h"
#include "solvers/thread_pool.h"

namespace mabd::detail {

/// An item x_a(pa) = x_b(pb) (three point rows), compliance in m/N.
struct PointLink {
  int a = -1, b = -1;  ///< bodies (-1: the world)
  Vec3 pa = Vec3::Zero(), pb = Vec3::Zero();  ///< anchors, body frames (m)
  double compliance = 0;
};

class BallChainDual {
 public:
  /// Plans for chains of items (in path order, chain_dual.h) that are all point links
  /// (`links`, one per item). ops supplies the bodies' constant factors.
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
    items_ = 0;
  }
  bool ready() const { return ready_; }
  /// Chains with fewer items than this in all are solved on the calling thread.
  static constexpr std::size_t kParallelItems = 4096;
  /// Solves the dual at the iterate q (per body) into `lambda` (3 per item, in item order)
  /// and y (in: H^{-1} f, out: the increment). Returns false (y unchanged) if a pivot is
  /// singular. With a pool, groups of whole chains (independent components) are solved on
  /// its threads, with the same result to the bit.
  bool solve(const BodyOperators& ops, const std::vector<Vec12>& q, std::vector<Vec12>& y,
             std::vector<double>& lambda, ThreadPool* pool = nullptr);

 private:
  struct Link {
    std::int32_t a = -1, b = -1;  ///< bodies of the item (-1 world)
    std::uint32_t item = 0;
    std::int8_t next_side = -1;  ///< side (0 = a, 1 = b) shared with the next item, -1 at the end
    std::int8_t prev_side = -1;  ///< side shared with the previous item, -1 at the start
    std::uint32_t kaa = 0, kbb = 0, kn = 0;  ///< K(pa, pa), K(pb, pb), signed K(p_k, p_k+1)
    std::uint32_t pa = 0, pb = 0;  ///< its anchors in anchors_
    std::uint32_t compliance = 0;  ///< its compliance in compliances_
  };
  bool ready_ = false;
  std::vector<Link> links_;   ///< every chain's items in path order, concatenated
  std::vector<std::size_t> starts_;  ///< where each chain starts in links_, then its size
  std::size_t items_ = 0;     ///< items (point links) of the plan
  std::vector<Vec3> anchors_;        ///< distinct anchors of the items (identical links share)
  std::vector<double> compliances_;  ///< distinct compliances of the items
  std::vector<Mat3> K_;       ///< distinct constant blocks (identical links share one)
  std::vector<Mat3> X_;       ///< X_k = D'_k^{-1} B_k of the elimination (0 at chain ends)
};

}  // namespace mabd::detail
