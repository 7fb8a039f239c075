// Contact rows between moving bodies solved on their Schur complement over the joint solve
// (DESIGN section 7). The joints keep their structured solver (chain, tree, loops): with
// M_J^{-1} the inverse constrained by the joints (H^{-1} followed by the joint solve's
// projection), the contact rows see
//   D = G_c M_J^{-1} G_c^T,   b = C + G_c y       (y: the increment with the joints alone),
// and after the complementarity problem on them (contact_lcp.h) the increment changes by
//   dy = M_J^{-1} G_c^T lambda.
// A column of D is one joint response (one structured solve); rows whose articulations are
// disjoint share one, since a response stays in the articulations it starts in. Bodies
// without joint rows need no joint solve at all (M_J^{-1} = H^{-1} there). Given a JointBlock,
// D comes instead one articulation at a time, all its rows at once:
//   D = G_c H^{-1} G_c^T - sum over articulations of P^T (S + A)^{-1} P
// (solvers/ldlt_block.h: hundreds of contacts on one net cost a fraction of a response each).
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "mabd/math.h"
#include "solvers/body_operators.h"
#include "solvers/contact_lcp.h"
#include "solvers/lcp_workspace.h"
#include "solvers/symmetric_assembly.h"

namespace mabd::detail {

/// The contact rows of one Newton iteration: three per point (normal, t1, t2), each on a
/// movable body a and a movable body b != a or nothing that moves (b = -1, gb unused).
struct ContactRows {
  std::vector<Vec12> ga, gb;         ///< gradients of each row on its bodies
  std::vector<std::int32_t> a, b;    ///< bodies of each row (b = -1: fixed)
  std::vector<double> alpha;         ///< compliance per row (m/N), > 0
  std::vector<double> value;         ///< row value C at the current iterate (m)
  std::vector<double> mu;            ///< friction coefficient per point
  /// Rows after the 3 per point: fixed bounds on their multipliers (N).
  std::vector<double> extra_lo, extra_hi;
  int size() const { return static_cast<int>(ga.size()); }
  void clear() {
    extra_lo.clear();
    extra_hi.clear();
    ga.clear();
    gb.clear();
    a.clear();
    b.clear();
    alpha.clear();
    value.clear();
    mu.clear();
  }
};

class ContactSchur {
 public:
  /// z holds H^{-1} F (per body) on entry and M_J^{-1} F on return (the joint solve applied).
  /// `touched` lists the bodies where z is nonzero on entry; the response appends every body
  /// whose z it changes (so neither side scans every body).
  using JointResponse =
      std::function<void(std::vector<Vec12>& z, std::vector<std::uint32_t>& touched)>;
  /// A contact row's sides in one articulation: (body, H^{-1} g on it); body -1: no side.
  struct BlockColumn {
    std::int32_t body[2] = {-1, -1};
    Vec12 w[2];
  };
  /// The joints' share of D on one articulation, all its rows at once (the batched form of
  /// one response per row): C = P^T (S + A)^{-1} P with S + A the articulation's joint
  /// system and P[l, j] = g_l . (H^{-1} g_j) over column j's sides (m/N, n x n).
  using JointBlock = std::function<void(std::uint32_t articulation,
                                        const std::vector<BlockColumn>& columns,
                                        Eigen::MatrixXd& C)>;

  /// Solves the contact rows over the joints: `articulation[i]` groups the bodies joined by
  /// joints, `jointed[i]` is 1 for a body with joint rows (its responses need the joint
  /// solve), y the increment with the joints alone (one per body). lambda holds a warm start on entry and
  /// the multipliers on return; dy = M_J^{-1} G_c^T lambda per body (subtract it from y).
  /// `applied` (optional): multipliers whose forces y already carries (the joints were
  /// solved under them); lambda is then the total and dy = M_J^{-1} G_c^T (lambda - applied).
  LcpResult solve(const ContactRows& rows, const BodyOperators& ops,
                  const std::vector<std::uint32_t>& articulation, const std::vector<char>& jointed,
                  const JointResponse& response, const std::vector<Vec12>& y,
                  Eigen::VectorXd& lambda, std::vector<Vec12>& dy,
                  const Eigen::VectorXd* applied = nullptr, const LcpOptions& options = {},
                  const JointBlock* block = nullptr);
  /// The problem's matrix D = G_c M_J^{-1} G_c^T and b = C + G_c y (alpha, mu and the extra
  /// bounds copied from `rows`), without solving it: for rows solved elsewhere (equalities
  /// coupled to other systems). Arguments as for solve(). With `block`, D's joint share comes
  /// one articulation at a time (D = G_c H^{-1} G_c^T - sum of the blocks) instead of one
  /// response per group of rows on disjoint articulations.
  const ContactLcp& assemble(const ContactRows& rows, const BodyOperators& ops,
                             const std::vector<std::uint32_t>& articulation,
                             const std::vector<char>& jointed, const JointResponse& response,
                             const std::vector<Vec12>& y, const JointBlock* block = nullptr);
  /// Screening of separated points in solve() (off by default). On, the problem is solved on
  /// a working set and the extra rows: the points holding a force (warm start or applied)
  /// where they are a quarter of the points or fewer, else those and the points touching at y
  /// (normal row value C + G_c y < 0). The points left out keep lambda = 0; any of them that
  /// the increment pushes through (value + G_c (y - dy) < 0) joins the set, which is solved
  /// again from the same warm start (or, where a group's sweeps are its solve, from the last
  /// set's multipliers: LcpResult::sweep_gap). The result solves the whole problem; D is
  /// assembled only on the set (most candidate points of a speculative margin never touch).
  void set_screening(bool on) { screening_ = on; }
  /// dy = M_J^{-1} G_c^T lambda per body for the rows of the last assemble() or solve().
  void increment(const ContactRows& rows, const std::vector<char>& jointed,
                 const JointResponse& response, const Eigen::VectorXd& lambda,
                 std::vector<Vec12>& dy);
  /// True if the last solve's dy went through the joint solve (its last response).
  bool dy_through_joints() const { return dy_through_joints_; }
  /// The problem of the last solve (D, alpha, b, mu); under screening, that of its working
  /// set's rows (in their order in `rows`); with a JointBlock and rows in several clusters
  /// (groups of articulations no row joins, solved one after the other), the last cluster's.
  const ContactLcp& problem() const { return lcp_; }
  /// Joint responses (structured solves) and articulation blocks the last solve took.
  int responses() const { return responses_; }
  /// Points in the last solve's problem (all of them without screening) and the working sets
  /// it solved (1 without screening).
  int points_solved() const { return points_solved_; }
  int working_sets() const { return working_sets_; }

 private:
  /// D by articulation blocks (assemble with a JointBlock).
  void assemble_blocks(const ContactRows& rows, const std::vector<std::uint32_t>& articulation,
                       const std::vector<char>& jointed, const JointBlock& block);
  /// z += l H^{-1} g of row r on its bodies (listed in touched_); true if one is jointed.
  bool add_response(const ContactRows& rows, const std::vector<char>& jointed,
                    std::vector<Vec12>& z, int r, double l);

  /// wa_, wb_: H^{-1} g of every row on its bodies.
  void body_responses(const ContactRows& rows, const BodyOperators& ops);
  /// dy = M_J^{-1} G_c^T (lambda - applied) (applied: what y carries already, or null).
  void increment_less(const ContactRows& rows, const std::vector<char>& jointed,
                      const JointResponse& response, const Eigen::VectorXd& lambda,
                      const Eigen::VectorXd* applied, std::vector<Vec12>& dy);
  /// solve() on rows that all share one cluster (or without a JointBlock).
  LcpResult solve_one(const ContactRows& rows, const BodyOperators& ops,
                      const std::vector<std::uint32_t>& articulation,
                      const std::vector<char>& jointed, const JointResponse& response,
                      const std::vector<Vec12>& y, Eigen::VectorXd& lambda,
                      std::vector<Vec12>& dy, const Eigen::VectorXd* applied,
                      const LcpOptions& options, const JointBlock* block);
  /// Clusters of the rows: rows whose articulations no row joins are independent problems.
  /// Returns their number; with more than one, cluster_start_ / cluster_items_ list each
  /// cluster's points (k) and extra rows (-(r + 1)).
  int find_clusters(const ContactRows& rows, const std::vector<std::uint32_t>& articulation);
  /// solve() one cluster after the other (each assembled, screened and solved on its own:
  /// a world of many separate machines costs the sum of their problems), then dy at once.
  LcpResult solve_clusters(const ContactRows& rows, const BodyOperators& ops,
                           const std::vector<std::uint32_t>& articulation,
                           const std::vector<char>& jointed, const JointResponse& response,
                           const std::vector<Vec12>& y, Eigen::VectorXd& lambda,
                           std::vector<Vec12>& dy, const Eigen::VectorXd* applied,
                           const LcpOptions& options, const JointBlock& block);
  /// One solve on all rows (D assembled on all of them).
  LcpResult solve_all(const ContactRows& rows, const BodyOperators& ops,
                      const std::vector<std::uint32_t>& articulation,
                      const std::vector<char>& jointed, const JointResponse& response,
                      const std::vector<Vec12>& y, Eigen::VectorXd& lambda,
                      std::vector<Vec12>& dy, const Eigen::VectorXd* applied,
                      const LcpOptions& options, const JointBlock* block);

  ContactLcp lcp_;
  LcpWorkspace lcp_work_;  ///< the complementarity solve's scratch
  bool screening_ = false;
  int points_solved_ = 0, working_sets_ = 0;
  ContactRows sub_;                 ///< the working set's rows
  std::vector<int> sub_points_;     ///< its points (indices in the rows given)
  std::vector<char> in_set_, touch_;
  Eigen::VectorXd lambda0_;  ///< the warm start every working set starts from
  std::vector<Vec12> wa_, wb_;  ///< H^{-1} g per row and side
  std::vector<Vec12> z_;      ///< responses' scratch, all zero between uses
  std::size_t bodies_ = 0;    ///< bodies of the last assemble (dy's size)
  std::vector<std::uint32_t> touched_;
  std::vector<Eigen::Triplet<double>> trip_;
  SymmetricAssembly symmetric_;  ///< D = 0.5 (D + D^T) from trip_
  // assemble_blocks: its groups (articulations, lone bodies) and their dense blocks.
  std::unordered_map<std::uint32_t, int> art_group_;
  std::unordered_map<std::int32_t, int> body_group_;
  std::vector<std::int64_t> group_key_;  ///< articulation, or -1 - body for a lone body
  std::vector<int> side_group_, side_pos_;  ///< per row side: its group, its place in it
  std::vector<int> group_start_, group_rows_, fill_;
  std::vector<std::size_t> block_start_;
  std::vector<double> block_;
  int responses_ = 0;
  bool dy_through_joints_ = false;
  // Clusters (find_clusters, solve_clusters).
  std::unordered_map<std::uint32_t, int> art_slot_;  ///< articulation -> union-find slot
  std::vector<int> parent_, row_slot_, cluster_of_, cluster_count_;
  std::vector<int> cluster_start_, cluster_items_;
  ContactRows cluster_rows_;         ///< one cluster's rows
  std::vector<int> cluster_map_;     ///< their indices in the rows given
  std::vector<Vec12> cluster_dy_;    ///< the clusters' increments (scratch)
  bool sparse_dy_ = false;           ///< increment clears only dy_written_
  std::vector<std::uint32_t> dy_written_;
};

}  // namespace mabd::detail
