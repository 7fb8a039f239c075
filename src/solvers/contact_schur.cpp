// Contact rows on their Schur complement over the joint solve (contact_schur.h).
#include "solvers/contact_schur.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <unordered_map>

namespace mabd::detail {

namespace {

/// Rows of the points `points` (three each) and every extra row, into `out`.
void take_rows(const ContactRows& rows, const std::vector<int>& points, ContactRows& out) {
  out.clear();
  const int nc = 3 * static_cast<int>(rows.mu.size());
  auto take = [&](int r) {
    out.ga.push_back(rows.ga[r]);
    out.gb.push_back(rows.gb[r]);
    out.a.push_back(rows.a[r]);
    out.b.push_back(rows.b[r]);
    out.alpha.push_back(rows.alpha[r]);
    out.value.push_back(rows.value[r]);
  };
  for (int k : points) {
    out.mu.push_back(rows.mu[k]);
    for (int t = 0; t < 3; ++t) take(3 * k + t);
  }
  for (int r = nc; r < rows.size(); ++r) take(r);
  out.extra_lo = rows.extra_lo;
  out.extra_hi = rows.extra_hi;
}

/// Row r's value at the increment y (m).
double value_at(const ContactRows& rows, int r, const std::vector<Vec12>& y) {
  double v = rows.value[r] + rows.ga[r].dot(y[rows.a[r]]);
  if (rows.b[r] >= 0) v += rows.gb[r].dot(y[rows.b[r]]);
  return v;
}

/// Row r's value after the increment y - dy (m).
double value_after(const ContactRows& rows, int r, const std::vector<Vec12>& y,
                   const std::vector<Vec12>& dy) {
  double v = rows.value[r] + rows.ga[r].dot(y[rows.a[r]] - dy[rows.a[r]]);
  if (rows.b[r] >= 0) v += rows.gb[r].dot(y[rows.b[r]] - dy[rows.b[r]]);
  return v;
}

}  // namespace

LcpResult ContactSchur::solve(const ContactRows& rows, const BodyOperators& ops,
                              const std::vector<std::uint32_t>& articulation,
                              const std::vector<char>& jointed, const JointResponse& response,
                              const std::vector<Vec12>& y, Eigen::VectorXd& lambda,
                              std::vector<Vec12>& dy, const Eigen::VectorXd* applied,
                              const LcpOptions& options, const JointBlock* block) {
  if (block != nullptr && find_clusters(rows, articulation) > 1) {
    return solve_clusters(rows, ops, articulation, jointed, response, y, lambda, dy, applied,
                          options, *block);
  }
  return solve_one(rows, ops, articulation, jointed, response, y, lambda, dy, applied, options,
                   block);
}

int ContactSchur::find_clusters(const ContactRows& rows,
                                const std::vector<std::uint32_t>& articulation) {
  // Union-find over the articulations under the rows (a fixed side has none).
  const int n = rows.size();
  const int points = static_cast<int>(rows.mu.size());
  art_slot_.clear();
  parent_.clear();
  auto slot = [&](std::int32_t body) {
    const auto [it, added] = art_slot_.try_emplace(articulation[body], 0);
    if (added) {
      it->second = static_cast<int>(parent_.size());
      parent_.push_back(it->second);
    }
    return it->second;
  };
  auto find = [&](int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  };
  row_slot_.resize(n);
  for (int r = 0; r < n; ++r) {
    int sa = slot(rows.a[r]);
    row_slot_[r] = sa;
    if (rows.b[r] < 0) continue;
    const int ra = find(sa), rb = find(slot(rows.b[r]));
    if (ra != rb) parent_[std::max(ra, rb)] = std::min(ra, rb);
  }
  // Each cluster's points and then its extra rows, clusters in the order of their first row.
  cluster_of_.assign(parent_.size(), -1);
  cluster_start_.clear();
  std::vector<int>& count = cluster_count_;
  count.clear();
  const int nc = 3 * points;
  auto cluster = [&](int r) {
    int& c = cluster_of_[find(row_slot_[r])];
    if (c < 0) {
      c = static_cast<int>(count.size());
      count.push_back(0);
    }
    return c;
  };
  for (int k = 0; k < points; ++k) ++count[cluster(3 * k)];
  for (int r = nc; r < n; ++r) ++count[cluster(r)];
  const int clusters = static_cast<int>(count.size());
  if (clusters <= 1) return clusters;
  cluster_start_.assign(clusters + 1, 0);
  for (int c = 0; c < clusters; ++c) cluster_start_[c + 1] = cluster_start_[c] + count[c];
  cluster_items_.resize(cluster_start_[clusters]);
  for (int c = 0; c < clusters; ++c) count[c] = cluster_start_[c];
  // Items: a point k as k, an extra row r as -(r + 1); points first within each cluster.
  for (int k = 0; k < points; ++k) cluster_items_[count[cluster(3 * k)]++] = k;
  for (int r = nc; r < n; ++r) cluster_items_[count[cluster(r)]++] = -(r + 1);
  return clusters;
}

LcpResult ContactSchur::solve_clusters(const ContactRows& rows, const BodyOperators& ops,
                                       const std::vector<std::uint32_t>& articulation,
                                       const std::vector<char>& jointed,
                                       const JointResponse& response, const std::vector<Vec12>& y,
                                       Eigen::VectorXd& lambda, std::vector<Vec12>& dy,
                                       const Eigen::VectorXd* applied, const LcpOptions& options,
                                       const JointBlock& block) {
  const int n = rows.size();
  const int nc = 3 * static_cast<int>(rows.mu.size());
  if (lambda.size() != n) lambda = Eigen::VectorXd::Zero(n);
  const int clusters = static_cast<int>(cluster_start_.size()) - 1;
  LcpResult total;
  total.exact = true;
  int responses = 0, points_solved = 0, working_sets = 0;
  Eigen::VectorXd sub_lambda, sub_applied;
  // Each cluster's increments write only its bodies (until the loop ends, or throws).
  struct SparseDy {
    bool& on;
    explicit SparseDy(bool& flag) : on(flag) { on = true; }
    ~SparseDy() { on = false; }
  };
  std::optional<SparseDy> sparse_dy(std::in_place, sparse_dy_);
  for (int c = 0; c < clusters; ++c) {
    // The cluster's rows, in their order in `rows`: its points' three rows, then its extras.
    ContactRows& sub = cluster_rows_;
    sub.clear();
    cluster_map_.clear();
    auto take = [&](int r) {
      sub.ga.push_back(rows.ga[r]);
      sub.gb.push_back(rows.gb[r]);
      sub.a.push_back(rows.a[r]);
      sub.b.push_back(rows.b[r]);
      sub.alpha.push_back(rows.alpha[r]);
      sub.value.push_back(rows.value[r]);
      cluster_map_.push_back(r);
    };
    for (int e = cluster_start_[c]; e < cluster_start_[c + 1]; ++e) {
      const int item = cluster_items_[e];
      if (item >= 0) {
        sub.mu.push_back(rows.mu[item]);
        for (int t = 0; t < 3; ++t) take(3 * item + t);
      } else {
        const int r = -item - 1;
        sub.extra_lo.push_back(rows.extra_lo[r - nc]);
        sub.extra_hi.push_back(rows.extra_hi[r - nc]);
        take(r);
      }
    }
    const int m = sub.size();
    sub_lambda.resize(m);
    for (int e = 0; e < m; ++e) sub_lambda[e] = lambda[cluster_map_[e]];
    if (applied != nullptr) {
      sub_applied.resize(m);
      for (int e = 0; e < m; ++e) sub_applied[e] = (*applied)[cluster_map_[e]];
    }
    const LcpResult r = solve_one(sub, ops, articulation, jointed, response, y, sub_lambda,
                                  cluster_dy_, applied != nullptr ? &sub_applied : nullptr,
                                  options, &block);
    for (int e = 0; e < m; ++e) lambda[cluster_map_[e]] = sub_lambda[e];
    total.sweeps += r.sweeps;
    total.pivots += r.pivots;
    total.rounds = std::max(total.rounds, r.rounds);
    total.exact = total.exact && r.exact;
    total.residual = std::max(total.residual, r.residual);
    total.bound_change = std::max(total.bound_change, r.bound_change);
    total.large_failed = total.large_failed || r.large_failed;
    responses += responses_;
    points_solved += points_solved_;
    working_sets = std::max(working_sets, working_sets_);
  }
  sparse_dy.reset();
  // dy for every row at once (one response: the joint multipliers it leaves are those of the
  // whole increment).
  body_responses(rows, ops);
  responses_ = 0;
  increment_less(rows, jointed, response, lambda, applied, dy);
  responses_ += responses;
  points_solved_ = points_solved;
  working_sets_ = working_sets;
  return total;
}

LcpResult ContactSchur::solve_one(const ContactRows& rows, const BodyOperators& ops,
                                  const std::vector<std::uint32_t>& articulation,
                                  const std::vector<char>& jointed,
                                  const JointResponse& response, const std::vector<Vec12>& y,
                                  Eigen::VectorXd& lambda, std::vector<Vec12>& dy,
                                  const Eigen::VectorXd* applied, const LcpOptions& options,
                                  const JointBlock* block) {
  const int n = rows.size();
  const int points = static_cast<int>(rows.mu.size());
  const int nc = 3 * points;
  points_solved_ = points;
  working_sets_ = 1;
  if (!screening_ || points == 0) {
    return solve_all(rows, ops, articulation, jointed, response, y, lambda, dy, applied, options,
                     block);
  }
  if (lambda.size() != n) lambda = Eigen::VectorXd::Zero(n);
  // The first set: the points holding a force (warm start or applied) alone when they are a
  // quarter of the points or fewer (a net falling onto its collider touches it at y almost
  // everywhere but rests on a few; the others join after the first solve). Else those and
  // the points touching at y, or one solve on all points if that leaves out a quarter or less
  // (less saved than a second set would cost).
  in_set_.assign(points, 0);
  touch_.assign(points, 0);
  int in = 0, holding = 0;
  for (int k = 0; k < points; ++k) {
    bool hold = false;
    for (int t = 0; t < 3; ++t) {
      hold |= lambda[3 * k + t] != 0 || (applied != nullptr && (*applied)[3 * k + t] != 0);
    }
    touch_[k] = value_at(rows, 3 * k, y) < 0;
    in_set_[k] = hold;
    holding += hold;
    in += hold || touch_[k];
  }
  if (holding > 0 && 4 * holding <= points) {
    in = holding;
  } else if (4 * in >= 3 * points) {
    return solve_all(rows, ops, articulation, jointed, response, y, lambda, dy, applied, options,
                     block);
  } else {
    for (int k = 0; k < points; ++k) in_set_[k] |= touch_[k];
  }
  lambda0_ = lambda;
  LcpResult total;
  // A large group that failed its active-set loop keeps to the sweeps in the later sets.
  LcpOptions set_options = options;
  auto add = [&](const LcpResult& r) {
    total.sweeps += r.sweeps;
    total.pivots += r.pivots;
    total.rounds = std::max(total.rounds, r.rounds);
    total.exact = r.exact;
    total.residual = r.residual;
    total.bound_change = r.bound_change;
    total.sweep_gap = r.sweep_gap;
    total.large_failed = total.large_failed || r.large_failed;
    if (r.large_failed) set_options.pivot_large_groups = false;
  };
  // Sets after the first start from the multipliers of the last one when a group of it kept
  // to the sweeps whose friction bounds follow the normal forces (a pile of boxes), and their
  // sweeps end once no row's value changes by more than twice what the first set's last
  // sweep changed (sweep_gap; such sweeps stall there, within 30% from one full sweep to the
  // next). The points added are a few percent of the set, and each set from the warm start
  // swept its whole budget again (falling_joints: 3 sets of 200 sweeps a solve).
  constexpr double kCarryGap = 2;
  bool carry = false;
  Eigen::VectorXd sub_lambda, sub_applied;
  constexpr int kMaxSets = 8;
  for (int set = 1;; ++set) {
    sub_points_.clear();
    for (int k = 0; k < points; ++k) {
      if (in_set_[k]) sub_points_.push_back(k);
    }
    take_rows(rows, sub_points_, sub_);
    const int m = sub_.size(), mc = 3 * static_cast<int>(sub_points_.size());
    auto gather = [&](const Eigen::VectorXd& from, Eigen::VectorXd& to) {
      to.resize(m);
      for (std::size_t p = 0; p < sub_points_.size(); ++p) {
        to.segment<3>(3 * static_cast<int>(p)) = from.segment<3>(3 * sub_points_[p]);
      }
      to.tail(m - mc) = from.tail(n - nc);
    };
    // Without carry, every set from the warm start: the path of one solve. (With friction the
    // bounds' fixed point need not be unique; from the last set's multipliers a penalty stack
    // of boxes, its groups solved by pivots, ended on another one, friction forces fighting
    // each other inside it, and diverged.)
    gather(carry ? lambda : lambda0_, sub_lambda);
    if (applied != nullptr) gather(*applied, sub_applied);
    add(solve_all(sub_, ops, articulation, jointed, response, y, sub_lambda, dy,
                  applied != nullptr ? &sub_applied : nullptr, set_options, block));
    for (std::size_t p = 0; p < sub_points_.size(); ++p) {
      lambda.segment<3>(3 * sub_points_[p]) = sub_lambda.segment<3>(3 * static_cast<int>(p));
    }
    lambda.tail(n - nc) = sub_lambda.tail(m - mc);
    points_solved_ = static_cast<int>(sub_points_.size());
    working_sets_ = set;
    if (!carry && total.sweep_gap > 0) {
      carry = true;
      set_options.gap_tolerance = std::max(options.gap_tolerance, kCarryGap * total.sweep_gap);
    }
    // The points left out that the increment pushes through join the set.
    int added = 0;
    for (int k = 0; k < points; ++k) {
      if (!in_set_[k] && value_after(rows, 3 * k, y, dy) < 0) {
        in_set_[k] = 1;
        ++added;
      }
    }
    if (added == 0) return total;
    if (set == kMaxSets || in + added == points) break;
    in += added;
  }
  // The sets kept growing: the whole problem.
  if (!carry) lambda = lambda0_;
  add(solve_all(rows, ops, articulation, jointed, response, y, lambda, dy, applied,
                set_options, block));
  points_solved_ = points;
  ++working_sets_;
  return total;
}

LcpResult ContactSchur::solve_all(const ContactRows& rows, const BodyOperators& ops,
                                  const std::vector<std::uint32_t>& articulation,
                                  const std::vector<char>& jointed,
                                  const JointResponse& response, const std::vector<Vec12>& y,
                                  Eigen::VectorXd& lambda, std::vector<Vec12>& dy,
                                  const Eigen::VectorXd* applied, const LcpOptions& options,
                                  const JointBlock* block) {
  assemble(rows, ops, articulation, jointed, response, y, block);
  if (applied != nullptr) lcp_.b += lcp_.D * *applied;  // y carries D applied already
  const LcpResult result = solve_contact_lcp(lcp_, lambda, options, &lcp_work_);
  increment_less(rows, jointed, response, lambda, applied, dy);
  return result;
}

const ContactLcp& ContactSchur::assemble(const ContactRows& rows, const BodyOperators& ops,
                                         const std::vector<std::uint32_t>& articulation,
                                         const std::vector<char>& jointed,
                                         const JointResponse& response,
                                         const std::vector<Vec12>& y,
                                         const JointBlock* block) {
  const int n = rows.size();
  const std::size_t bodies = y.size();  // (the operators may not have their flags set)
  responses_ = 0;
  lcp_.alpha.resize(n);
  lcp_.b.resize(n);
  lcp_.mu = rows.mu;
  lcp_.extra_lo = rows.extra_lo;
  lcp_.extra_hi = rows.extra_hi;
  body_responses(rows, ops);
  for (int r = 0; r < n; ++r) {
    lcp_.alpha[r] = rows.alpha[r];
    lcp_.b[r] = rows.value[r] + rows.ga[r].dot(y[rows.a[r]]);
    if (rows.b[r] >= 0) lcp_.b[r] += rows.gb[r].dot(y[rows.b[r]]);
  }
  bodies_ = bodies;  // (increment's body count)
  if (block != nullptr) {
    assemble_blocks(rows, articulation, jointed, *block);
    return lcp_;
  }
  // A fixed side has no articulation: the row's other one stands for both.
  auto art_a = [&](int r) { return articulation[rows.a[r]]; };
  auto art_b = [&](int r) { return rows.b[r] >= 0 ? articulation[rows.b[r]] : art_a(r); };

  // Rows touching each articulation, and groups of rows on disjoint articulations.
  std::unordered_map<std::uint32_t, std::vector<int>> rows_of_art, groups_of_art;
  std::vector<std::vector<int>> groups;
  for (int r = 0; r < n; ++r) {
    const std::uint32_t A = art_a(r), B = art_b(r);
    rows_of_art[A].push_back(r);
    if (B != A) rows_of_art[B].push_back(r);
    auto& ga = groups_of_art[A];
    auto& gb = groups_of_art[B];
    int g = 0;
    while (std::find(ga.begin(), ga.end(), g) != ga.end() ||
           std::find(gb.begin(), gb.end(), g) != gb.end()) {
      ++g;
    }
    if (g == static_cast<int>(groups.size())) groups.emplace_back();
    groups[g].push_back(r);
    ga.push_back(g);
    if (B != A) gb.push_back(g);
  }
  // D column by column: the responses z = M_J^{-1} g_j of a group's rows at once. z_ is zero
  // between them (each group clears what it touched): a large world writes it once.
  if (z_.size() != bodies) z_.assign(bodies, Vec12::Zero());
  trip_.clear();
  std::vector<int> seen(n, -1);
  for (const auto& group : groups) {
    bool needs_joints = false;
    touched_.clear();
    for (int r : group) needs_joints |= add_response(rows, jointed, z_, r, 1.0);
    if (needs_joints) {
      response(z_, touched_);
      ++responses_;
    }
    for (int j : group) {
      const std::uint32_t A = art_a(j), B = art_b(j);
      for (std::uint32_t art : {A, B}) {
        for (int i : rows_of_art[art]) {
          if (seen[i] == j) continue;
          seen[i] = j;
          double v = 0;
          const std::uint32_t ai = art_a(i);
          if (ai == A || ai == B) v += rows.ga[i].dot(z_[rows.a[i]]);
          if (rows.b[i] >= 0) {
            const std::uint32_t bi = art_b(i);
            if (bi == A || bi == B) v += rows.gb[i].dot(z_[rows.b[i]]);
          }
          trip_.emplace_back(i, j, v);
        }
      }
    }
    for (std::uint32_t i : touched_) z_[i] = Vec12::Zero();
  }
  symmetric_.assemble(n, trip_, lcp_.D);
  return lcp_;
}

bool ContactSchur::add_response(const ContactRows& rows, const std::vector<char>& jointed,
                                std::vector<Vec12>& z, int r, double l) {
  auto joined = [&](std::int32_t i) { return i >= 0 && jointed[i] != 0; };
  z[rows.a[r]] += wa_[r] * l;
  touched_.push_back(static_cast<std::uint32_t>(rows.a[r]));
  if (rows.b[r] >= 0) {
    z[rows.b[r]] += wb_[r] * l;
    touched_.push_back(static_cast<std::uint32_t>(rows.b[r]));
  }
  return joined(rows.a[r]) || joined(rows.b[r]);
}

void ContactSchur::body_responses(const ContactRows& rows, const BodyOperators& ops) {
  const int n = rows.size();
  wa_.resize(n);
  wb_.resize(n);
  for (int r = 0; r < n; ++r) {
    wa_[r] = ops.solve_body(rows.a[r], rows.ga[r]);
    wb_[r] = rows.b[r] >= 0 ? ops.solve_body(rows.b[r], rows.gb[r]) : Vec12::Zero();
  }
}

void ContactSchur::increment_less(const ContactRows& rows, const std::vector<char>& jointed,
                                  const JointResponse& response, const Eigen::VectorXd& lambda,
                                  const Eigen::VectorXd* applied, std::vector<Vec12>& dy) {
  if (applied != nullptr) {
    increment(rows, jointed, response, lambda - *applied, dy);
  } else {
    increment(rows, jointed, response, lambda, dy);
  }
}

void ContactSchur::increment(const ContactRows& rows, const std::vector<char>& jointed,
                             const JointResponse& response, const Eigen::VectorXd& lambda,
                             std::vector<Vec12>& dy) {
  // One response for all rows. Under solve_clusters the scratch dy is zero but where the last
  // increment wrote (a large world is not cleared once per cluster).
  if (sparse_dy_ && dy.size() == bodies_) {
    for (std::uint32_t i : dy_written_) dy[i] = Vec12::Zero();
  } else {
    dy.assign(bodies_, Vec12::Zero());
  }
  bool needs_joints = false;
  touched_.clear();
  for (int r = 0; r < rows.size(); ++r) {
    if (lambda[r] != 0) needs_joints |= add_response(rows, jointed, dy, r, lambda[r]);
  }
  dy_through_joints_ = needs_joints;
  if (needs_joints) {
    response(dy, touched_);
    ++responses_;
  }
  if (sparse_dy_) dy_written_ = touched_;
}

}  // namespace mabd::detail
