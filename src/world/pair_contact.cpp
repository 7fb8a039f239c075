// Contact between two dynamic bodies (DESIGN section 7). A body that touches another dynamic
// body brings its contacts with colliders into the same problem (side b fixed): one friction
// law for a stack or a pile, solved together.
//
// Rows of one contact point: body a's point pa against body b's point pb (body frames), with
// the normal n (from b towards a) and tangents t1, t2 fixed in world for the step:
//   normal:   C_n = n . (x_a(pan) - x_b(pbn)) - offset                >= 0 (pushes: lambda <= 0)
//             (pan, pbn: the core points of round bodies, offset their radii; else pa, pb)
//   friction: C_t = t . ((x_a(pa) - x_a^n(pa)) - (x_b(pb) - x_b^n(pb))) = 0 while sticking
// (the relative slip over the step: a sticking point does not creep). x(p) = J(p) q is linear
// in q, so the rows are exact within the step (an exact normal row lets a penetration found
// at the step's start shrink at kRecoverySpeed, not vanish at once). Compliances: penalty
// normal rows are the collider contacts' spring-damper on the pair's reduced effective mass;
// exact normal rows take the exact model's floor, 1e-3 of g^T H^{-1} g, and friction rows
// (the slip, which a compliance turns into creep) 1e-7.
//
// These rows couple moving bodies, so they would change the joint topology (a chain touching
// a wheel is no longer a chain). They stay out of it: with M_J^{-1} the inverse constrained by
// the joints (the joint solve applied to a force), the Schur complement of the contact rows
// over the joint solve is D = G_c M_J^{-1} G_c^T and the right-hand side b = C + G_c y, y the
// increment with the joints alone (solvers/contact_schur.h). The complementarity problem on D
// (contact_lcp.h) gives the multipliers, and y -= M_J^{-1} G_c^T lambda the increment.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "body/affine.h"
#include "joints/row.h"
#include "solvers/contact_schur.h"
#include "world/contact_laws.h"
#include <limits>

#include "world/world_impl.h"

namespace mabd {

namespace {

/// A contact warm-starts from last step's contact of the same feature while its point on body a
/// moved by less than this share of a's bounding radius.
constexpr double kWarmReach = 0.25;

std::uint64_t pair_key(std::uint32_t a, std::uint32_t b) {
  if (a > b) std::swap(a, b);
  return (std::uint64_t(a) << 32) | b;
}

std::uint32_t find_root(std::vector<std::uint32_t>& parent, std::uint32_t i) {
  while (parent[i] != i) {
    parent[i] = parent[parent[i]];
    i = parent[i];
  }
  return i;
}

}  // namespace

void World::Impl::update_articulations() {
  if (articulation_joints_seen == joints.size() && articulation.size() == bodies.size()) return;
  articulation.resize(bodies.size());
  std::iota(articulation.begin(), articulation.end(), 0u);
  joint_pairs.clear();
  for (const auto& j : joints) {
    if (j.a < 0 || j.b < 0) continue;
    joint_pairs.insert(pair_key(std::uint32_t(j.a), std::uint32_t(j.b)));
    if (!bodies[j.a].dynamic() || !bodies[j.b].dynamic()) continue;
    const std::uint32_t ra = find_root(articulation, j.a), rb = find_root(articulation, j.b);
    if (ra != rb) articulation[std::max(ra, rb)] = std::min(ra, rb);
  }
  for (std::uint32_t i = 0; i < articulation.size(); ++i) {
    articulation[i] = find_root(articulation, i);
  }
  // The bodies of each articulation (joint_response.cpp).
  art_begin.assign(bodies.size() + 1, 0);
  for (std::uint32_t a : articulation) ++art_begin[a + 1];
  for (std::size_t k = 0; k < bodies.size(); ++k) art_begin[k + 1] += art_begin[k];
  art_members.resize(bodies.size());
  {
    std::vector<std::uint32_t> fill(art_begin.begin(), art_begin.end() - 1);
    for (std::uint32_t i = 0; i < articulation.size(); ++i) art_members[fill[articulation[i]]++] = i;
  }
  response_cache.clear();
  sparse_factors.clear();  // (articulation numbers may now name other bodies)
  // Articulations with a colliding body (two at least, or pairs need self-collision).
  std::vector<char> seen(bodies.size(), 0);
  collidable_articulations = 0;
  for (std::size_t i = 0; i < collidable_body.size(); ++i) {
    if (!collidable_body[i] || seen[articulation[i]]) continue;
    seen[articulation[i]] = 1;
    ++collidable_articulations;
  }
  articulation_joints_seen = joints.size();
}

void World::Impl::detect_pair_contacts(double margin) {
  const auto accept = [this](std::uint32_t a, std::uint32_t b) {
    if (articulation[a] != articulation[b]) return settings.contact.bodies;
    return settings.contact.self_collision && joint_pairs.count(pair_key(a, b)) == 0;
  };
  collision.detect_pairs(collision_poses, margin, pair_points, accept);
  paired_body.assign(bodies.size(), 0);
  for (const auto& cp : pair_points) {
    const std::uint32_t a = cp.body, b = cp.collider;
    if (!add_pair_contact(cp, true)) continue;
    paired_body[a] = paired_body[b] = 1;
  }
  if (pair_contacts.empty()) paired_body.clear();
}

bool World::Impl::add_pair_contact(const detail::ContactPoint& cp, bool dynamic_pair) {
  const std::uint32_t a = cp.body, b = cp.collider;
  const auto& A = bodies[a];
  const auto& B = bodies[b];
  PairContact c;
  c.a = a;
  c.b = b;
  c.feature = cp.feature;
  c.pa = A.R_up().transpose() * (cp.p_body - A.com_u());
  c.pb = B.R_up().transpose() * (cp.p_collider - B.com_u());
  c.n = cp.normal;
  // The normal row between the core points of round bodies, less their radii: the same gap,
  // and no torque on a sphere or capsule turning about its centre or axis (see
  // detect_contacts in contact.cpp).
  c.pan = c.pa + detail::to_body_frame(q[a], cp.body_radius * c.n);
  c.pbn = c.pb - detail::to_body_frame(q[b], cp.collider_radius * c.n);
  c.offset = cp.body_radius + cp.collider_radius;
  c.mu = settings.contact.friction ? std::sqrt(A.friction() * B.friction()) : 0.0;
  Vec3 v = detail::point(qdot[a], c.pa) - detail::point(qdot[b], c.pb);
  // The broad margin covers the fastest body's travel; a pair keeps the points its own
  // approach can close within the step (twice, for the step's acceleration): bodies falling
  // side by side are no candidates, nor the faces of a bowl a body is not moving towards.
  // The approach accelerates by gravity, or by the points' relative acceleration of the
  // last step where that closes faster: joints and loads pull too (a pulley's chain, pulled
  // onto its wheel at 3 g by its tension, had links 2 mm off the wheel and receding from it
  // that came 2 mm into it within the step).
  const double h = settings.dt;
  Vec3 acc_rel = detail::point(qddot_of(a), c.pa);
  if (dynamic_pair) acc_rel -= detail::point(qddot_of(b), c.pb);
  const double closing = std::max(settings.gravity.norm(), -c.n.dot(acc_rel));
  if (cp.gap >= settings.contact.margin + 2 * h * std::max(-c.n.dot(v), 0.0) + closing * h * h) {
    return false;
  }
  // Tangents along the relative sliding velocity (the pyramid aligned with the slip).
  v -= c.n * c.n.dot(v);
  c.t1 = v.norm() > 1e-9 ? Vec3(v.normalized()) : detail::any_perpendicular(c.n);
  c.t2 = c.n.cross(c.t1);
  // The detector measures the shapes at their rigid poses (R, com), the row the affine images
  // of the points; on a strained body the two differ by millimetres. Where the detector finds
  // the bodies deeper than the row's own value, the row's value is the start: measured from
  // the detector's, the recovery bound gave way by the difference step after step (two soft
  // legs, E = 1 MPa at 4% strain, sank 2 mm a step into each other under a pushing exact
  // contact, 6.4 cm in all). Where the row finds them deeper, the detector's gap stands, so
  // that a strained body is not held at the affine measure's extra depth.
  c.s0 = std::min(std::max(cp.gap, c.normal_gap(q[a], q[b])), 0.0);
  const double ma = detail::rigid_effective_mass(A, q[a], c.pan, c.n);
  c.m_eff = dynamic_pair
                ? 1.0 / (1.0 / ma + 1.0 / detail::rigid_effective_mass(B, q[b], c.pbn, c.n))
                : ma;
  // The same feature as last step, at nearly the same body point (a link sliding over a wheel
  // touches it a little further along each step): its forces warm-start the solve.
  auto key = [](const PairContact& x) { return std::make_tuple(x.a, x.b, x.feature); };
  const auto old = std::lower_bound(
      pair_contacts_prev.begin(), pair_contacts_prev.end(), c,
      [&](const PairContact& x, const PairContact& y) { return key(x) < key(y); });
  if (old != pair_contacts_prev.end() && key(*old) == key(c) &&
      (old->pa - c.pa).norm() <= kWarmReach * A.info.size) {
    const Vec3 ft = old->lambda[1] * old->t1 + old->lambda[2] * old->t2;
    c.lambda[0] = old->lambda[0];
    c.lambda[1] = ft.dot(c.t1);
    c.lambda[2] = ft.dot(c.t2);
  }
  pairs_on_joints |= contact_jointed(a) || (dynamic_pair && contact_jointed(b));
  pair_contacts.push_back(c);
  return true;
}

void World::Impl::finish_pair_contacts() {
  auto key = [](const PairContact& x) { return std::make_tuple(x.a, x.b, x.feature); };
  std::sort(pair_contacts.begin(), pair_contacts.end(),
            [&](const PairContact& x, const PairContact& y) { return key(x) < key(y); });
  if (pair_contacts.empty()) {
    pair_force.clear();
  } else {
    pair_force.assign(bodies.size(), Vec12::Zero());
  }
}

void World::Impl::load_pair_forces() {
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (!bodies[i].dynamic()) continue;
    y[i] = y_free[i];
    if (!pair_force[i].isZero(0)) y[i] += solve_body(i, pair_force[i]);
  }
  const int n = 3 * static_cast<int>(pair_contacts.size());
  pair_applied.resize(n);
  for (int r = 0; r < n; ++r) pair_applied[r] = pair_contacts[r / 3].lambda[r % 3];
}

bool World::Impl::pair_joint_sets_change() const {
  if (dual_used == nullptr || closed_form_dual) return false;
  if (coupled) {  // only a limit left out of the contacts' problem can be pushed through
    for (int r = 0; r < row_set.size(); ++r) {
      if (coupled_mark.size() != static_cast<std::size_t>(row_set.size()) || coupled_mark[r] != 2) {
        continue;
      }
      const detail::Row& row = row_set.rows[r];
      double c = row.c;
      if (dynamic(row_set.row_a[r])) c += row.ga.dot(y[row_set.row_a[r]]);
      if (dynamic(row_set.row_b[r])) c += row.gb.dot(y[row_set.row_b[r]]);
      if (c < -settings.tolerance) return true;
    }
    return false;
  }
  const auto& rs = row_set;
  const auto& index = dual_scratch.index;
  const auto& state = dual_scratch.state;
  const bool through = contact_schur.dy_through_joints() && response_sol.size() == dual_active;
  for (int r = 0; r < rs.size(); ++r) {
    const detail::Row& row = rs.rows[r];
    if (row.kind == detail::RowKind::Equality) continue;
    // The row's multiplier with the contacts' share (y = y_J - dy, dy's joint part -sol).
    const double l = lambda[r] - (through && index[r] >= 0 ? response_sol[index[r]] : 0.0);
    if (row.kind == detail::RowKind::Bounded) {
      if (state[r] == DualRowState::Active && std::abs(l) > row.bound * (1 + 1e-9)) return true;
      continue;
    }
    if (state[r] == DualRowState::Active) {
      if (l > 1e-9 * (1 + std::abs(lambda[r]))) return true;  // a limit that pulls
    } else {
      double c = row.c;
      if (dynamic(rs.row_a[r])) c += row.ga.dot(y[rs.row_a[r]]);
      if (dynamic(rs.row_b[r])) c += row.gb.dot(y[rs.row_b[r]]);
      if (c < -settings.tolerance) return true;  // a limit the contacts push through
    }
  }
  return false;
}

// The joints' limits and force-limited drives of the articulations the contacts touch join the
// contacts' problem, their multipliers bounded like a contact's (a limit pushes only, a drive
// within its force): a drive saturated, a limit engaged or released by the contacts is decided
// with them, and the contacts' response runs on the joints' equality rows alone. A limit
// neither active nor near (kCoupleReach at the joint solve's increment) stays out; should the
// contacts push through it, the next pass takes it (pair_joint_sets_change).
void World::Impl::add_coupled_joint_rows(detail::ContactRows& rows) {
  coupled_rows.clear();
  coupled = !joints.empty() && pairs_on_joints && dual_used != nullptr && !closed_form_dual;
  response_limits = !coupled;
  if (!coupled) return;
  constexpr double kCoupleReach = 1e-2;  // m (row units)
  const auto& rs = row_set;
  coupled_art.assign(art_begin.size(), 0);
  for (const PairContact& c : pair_contacts) {
    coupled_art[articulation[c.a]] = 1;
    if (bodies[c.b].dynamic()) coupled_art[articulation[c.b]] = 1;
  }
  coupled_mark.assign(rs.size(), 0);
  for (std::size_t art = 0; art + 1 < art_begin.size(); ++art) {
    if (!coupled_art[art]) continue;
    for (std::uint32_t m = art_begin[art]; m < art_begin[art + 1]; ++m) {
      for (int r : rs.rows_of[art_members[m]]) {
        const detail::Row& row = rs.rows[r];
        if (coupled_mark[r] || row.kind == detail::RowKind::Equality) continue;
        coupled_mark[r] = 1;
        int a = rs.row_a[r], b = rs.row_b[r];
        Vec12 ga = row.ga, gb = row.gb;
        double c = row.c;
        if (dynamic(a)) c += ga.dot(y[a]);
        if (dynamic(b)) c += gb.dot(y[b]);
        if (row.kind == detail::RowKind::Lower &&
            dual_scratch.state[r] != DualRowState::Active && c > kCoupleReach) {
          coupled_mark[r] = 2;  // out, watched
          continue;
        }
        if (!dynamic(a)) {
          std::swap(a, b);
          std::swap(ga, gb);
        }
        if (!dynamic(b)) b = -1;
        double alpha = ga.dot(solve_body(a, ga));
        if (b >= 0) alpha += gb.dot(solve_body(b, gb));
        rows.ga.push_back(ga);
        rows.gb.push_back(b >= 0 ? gb : Vec12(Vec12::Zero()));
        rows.a.push_back(a);
        rows.b.push_back(b);
        rows.alpha.push_back(std::max(row.compliance, detail::kStickFloor * alpha));
        rows.value.push_back(row.c);
        const bool limit = row.kind == detail::RowKind::Lower;
        rows.extra_lo.push_back(limit ? -std::numeric_limits<double>::infinity() : -row.bound);
        rows.extra_hi.push_back(limit ? 0.0 : row.bound);
        coupled_rows.push_back(r);
      }
    }
  }
}

void World::Impl::solve_pair_contacts(bool loaded) {
  const int points = static_cast<int>(pair_contacts.size());
  stats.body_contacts = stats.contact_sweeps = stats.contact_pivots = 0;
  if (points == 0) return;
  const double h = settings.dt;
  const bool penalty = settings.contact.model == ContactModel::Penalty;
  // Rows at the current iterate: value, gradients and compliance.
  detail::ContactRows& rows = pair_rows;
  rows.clear();
  for (int k = 0; k < points; ++k) {
    const PairContact& c = pair_contacts[k];
    const Vec3 xa = detail::point(q[c.a], c.pa), xb = detail::point(q[c.b], c.pb);
    const Vec3 slip =
        (xa - detail::point(q_prev[c.a], c.pa)) - (xb - detail::point(q_prev[c.b], c.pb));
    rows.mu.push_back(c.mu);
    for (int t = 0; t < 3; ++t) {
      const Vec3& d = t == 0 ? c.n : (t == 1 ? c.t1 : c.t2);
      const bool b_moves = bodies[c.b].dynamic();  // else a collider (b_moves: no gradient)
      const Vec12 ga = detail::grad_point(t == 0 ? c.pan : c.pa, d);
      const Vec12 gb =
          b_moves ? Vec12(-detail::grad_point(t == 0 ? c.pbn : c.pb, d)) : Vec12::Zero();
      double value = t == 0 ? c.normal_gap(q[c.a], q[c.b]) : d.dot(slip);
      // The exact model's floor (every friction row, exact normal rows), or the penalty law.
      double alpha = ga.dot(solve_body(c.a, ga));
      if (b_moves) alpha += gb.dot(solve_body(c.b, gb));
      alpha *= t == 0 ? detail::kExactFloor : detail::kStickFloor;
      if (penalty && t == 0) {
        const detail::PenaltyLaw law = detail::penalty_law(settings, c.m_eff, c.s0);
        alpha = 1.0 / law.k_eff;
        value -= law.pull / law.k_eff;
      } else if (t == 0) {
        // C >= -(the step's penetration less what kRecoverySpeed removes in one step).
        value += std::max(0.0, -c.s0 - detail::kRecoverySpeed * h);
      }
      rows.ga.push_back(ga);
      rows.gb.push_back(gb);
      rows.a.push_back(static_cast<std::int32_t>(c.a));
      rows.b.push_back(b_moves ? static_cast<std::int32_t>(c.b) : -1);
      rows.alpha.push_back(alpha);
      rows.value.push_back(value);
    }
  }
  add_coupled_joint_rows(rows);
  const int nc = 3 * points, n = rows.size();
  Eigen::VectorXd lambda(n);
  for (int k = 0; k < points; ++k) {
    for (int t = 0; t < 3; ++t) lambda[3 * k + t] = pair_contacts[k].lambda[t];
  }
  // What y carries already: the loaded contact forces, and the coupled rows' multipliers of
  // the joint solve (the response runs on the equality rows alone).
  const bool contacts_applied = loaded && pair_applied.size() == nc;
  Eigen::VectorXd applied = Eigen::VectorXd::Zero(n);
  if (contacts_applied) applied.head(nc) = pair_applied;
  for (int e = 0; e < n - nc; ++e) applied[nc + e] = this->lambda[coupled_rows[e]];
  lambda.tail(n - nc) = applied.tail(n - nc);
  const auto response = [this](std::vector<Vec12>& z, std::vector<std::uint32_t>& touched) {
    joint_response(z, touched);
  };
  const detail::ContactSchur::JointBlock block = joint_block_fn();
  contact_schur.set_screening(true);  // most candidate points of the margin never touch
  // Groups above LcpOptions::large_group_rows (a pile of boxes, about 10,000 rows) keep to
  // the sweeps whose friction bounds follow the normal forces: their active-set loop, tried
  // once per step, failed after several factorisations of the whole group, and the rounds
  // of sweeps before it cost 8 x 100 sweeps (falling_joints: 1,048 to 765 ms a step over
  // its 3 s, the same penetration and joint residual).
  detail::LcpOptions options;
  options.pivot_large_groups = false;
  const detail::LcpResult result =
      contact_schur.solve(rows, *this, articulation, jointed_body, response, y, lambda, pair_z,
                          contacts_applied || n > nc ? &applied : nullptr, options, &block);
  stats.contact_sweeps = result.sweeps;
  stats.contact_pivots = result.pivots;
  for (int k = 0; k < points; ++k) {
    for (int t = 0; t < 3; ++t) pair_contacts[k].lambda[t] = lambda[3 * k + t];
    if (lambda[3 * k] < 0) ++stats.body_contacts;
  }
  for (int e = 0; e < n - nc; ++e) this->lambda[coupled_rows[e]] = lambda[nc + e];
  // The increment, and the generalized contact forces -G^T lambda per body.
  std::fill(pair_force.begin(), pair_force.end(), Vec12::Zero());
  for (int r = 0; r < nc; ++r) {
    pair_force[rows.a[r]] -= rows.ga[r] * lambda[r];
    if (rows.b[r] >= 0) pair_force[rows.b[r]] -= rows.gb[r] * lambda[r];
  }
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (bodies[i].dynamic()) y[i] -= pair_z[i];
  }
}

}  // namespace mabd
