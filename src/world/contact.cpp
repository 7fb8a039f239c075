// Contact between dynamic bodies and colliders (static and kinematic bodies), DESIGN section 7.
//
// Rows of one contact point at a body point p (body frame) against a collider point, normal n
// and tangents t1, t2 (world, carried by the collider):
//   normal:   C_n = n . (x(p) - x_c)            >= 0 (pushes: lambda <= 0)
//   friction: C_t = t . (x(p) - x_anchor)       = 0 while sticking, |lambda_t| <= mu |lambda_n|
// x(p) = J(p) q is linear in q, so a row's gradient is exact within a step (the point and the
// normal are fixed at detection). Each row is compliant, C + G dq = alpha lambda:
//   penalty: alpha = 1 / (k + c_d / h), k = m_eff / tau^2, c_d = 2 zeta m_eff / tau, with m_eff
//            the row's own rigid effective mass, and a damper on the change of
//            the row value over the step (target C* = (c_d / h) C_0 / (k + c_d / h));
//   exact:   alpha = 1e-3 (g^T H^{-1} g), the zero-compliance limit with a floor that keeps
//            coplanar contact sets (4 box corners: 12 rows on 9 independent directions) and
//            contact rows redundant with joints solvable.
// The rows of one body are a low-rank (Woodbury) update of its pre-factored inverse (see
// World::Impl::ContactBody): the joint solvers see a corrected H^{-1} and right-hand side and
// keep their topology. After the joint solve the multipliers follow from the increment,
// lambda = (C + G dq) / alpha; rows that pull are released and points that would push are
// added, a few passes until the sets settle. Friction (isotropic, the elliptic cone):
//   penalty: elasto-plastic. The friction rows stay springs on an anchor; beyond the cone the
//            anchor is dragged after the point so that the force lies on the cone, and the
//            rows of a sliding point lose their dampers. Sticking holds without creep (the
//            anchor stays), sliding carries its anchor from step to step.
//   exact:   a point beyond the cone slides with the fixed force mu |lambda_n| against its
//            slip over the step; a slip that the force turns round or stops sticks again.
// Contacts keep their sets, forces and anchors from step to step (same body point).
#include <algorithm>
#include <array>
#include <cmath>

#include "body/affine.h"
#include "body/rotation.h"
#include "joints/row.h"
#include "mabd/error.h"
#include "world/contact_laws.h"
#include "world/world_impl.h"

namespace mabd {

namespace {

/// Relative change of a sliding friction force (against mu |lambda_n|) that takes another
/// contact pass.
constexpr double kForceTolerance = 1e-6;
/// Slip speed (m/s) below which a sliding point sticks again.
constexpr double kStickSpeed = 1e-4;
/// Tangential speed (m/s) above which a new contact may start sliding.
constexpr double kSlideSpeed = kStickSpeed;
/// Penalty: a friction force this far outside its cone (relative) holds back the release of
/// the body's normal rows for a pass.
constexpr double kSettleExcess = 0.05;

}  // namespace

using detail::any_perpendicular;
using detail::kExactFloor;
using detail::penalty_law;
using detail::penalty_stiffness;
using detail::PenaltyLaw;
using detail::rigid_effective_mass;

void World::Impl::register_collision(std::size_t i, const BodyDef& def) {
  detail::CollisionGeometry g;
  g.kind = def.kind;
  g.group = def.collision.group;
  g.mask = def.collision.mask;
  if (def.collision.enabled) {
    if (def.collision.primitives.empty()) {
      g.primitives.push_back(CollisionPrimitive{def.shape, Pose{}});
    } else {
      g.primitives = def.collision.primitives;
    }
  }
  collision.add_body(static_cast<std::uint32_t>(i), g);
  ++collision_bodies;
  if (g.primitives.empty()) return;
  if (def.kind == BodyKind::Dynamic) {
    has_collidable_dynamic = true;
    ++collidable_dynamic;
    collidable_body.resize(i + 1, 0);
    collidable_body[i] = 1;
    articulation_joints_seen = static_cast<std::size_t>(-1);  // recount the articulations
  } else {
    has_colliders = true;
  }
}

Pose World::Impl::user_pose(std::size_t i, const Vec12& qi) const {
  const auto& b = bodies[i];
  Mat3 R;
  if (!detail::polar_rotation(detail::affine_A(qi), R)) R = Mat3::Identity();
  return Pose{detail::point(qi, b.origin_b()), Quat(R * b.R_up().transpose()).normalized()};
}

void World::Impl::update_jointed() {
  if (jointed_body.size() == bodies.size() && jointed_joints_seen == joints.size()) return;
  jointed_body.assign(bodies.size(), 0);
  for (const auto& j : joints) {
    if (j.a >= 0) jointed_body[j.a] = 1;
    if (j.b >= 0) jointed_body[j.b] = 1;
  }
  jointed_joints_seen = joints.size();
}

void World::Impl::detect_contacts() {
  contacts_prev.swap(contacts);
  contacts.clear();
  contact_bodies.clear();
  pair_contacts_prev.swap(pair_contacts);
  pair_contacts.clear();
  paired_body.clear();
  pairs_on_joints = false;
  bool pairs = (settings.contact.bodies || settings.contact.self_collision) &&
               collidable_dynamic >= 2 && settings.contact.model != ContactModel::None;
  if (pairs) {
    // One articulation without self-collision (a net on a cylinder): no pair can collide.
    update_articulations();
    pairs = settings.contact.self_collision || collidable_articulations >= 2;
  }
  if (settings.contact.model == ContactModel::None || !has_collidable_dynamic ||
      (!has_colliders && !pairs)) {
    contact_of.clear();
    return;
  }
  const double h = settings.dt;
  // Poses of the user frames at q^n, and how far any point can travel in one step: at its
  // speed, and at a dynamic body's acceleration of the last step (joints and loads pull as
  // gravity does, which the margin below adds for every body).
  collision_poses.resize(bodies.size());
  double reach = 0;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const auto& b = bodies[i];
    collision_poses[i] = user_pose(i, q[i]);
    if (b.info.kind == BodyKind::Static) continue;
    const double speed = qdot[i].tail<3>().norm() + b.info.size * qdot[i].head<9>().norm();
    double accel = 0;
    if (b.dynamic()) {
      const Vec12& a = qddot_of(i);
      accel = a.tail<3>().norm() + b.info.size * a.head<9>().norm();
    }
    reach = std::max(reach, speed * h + accel * h * h);
  }
  const double margin = settings.contact.margin + reach + 0.5 * settings.gravity.norm() * h * h;
  if (has_colliders) {
    collision.detect(collision_poses, margin, contact_points);
  } else {
    contact_points.clear();
  }

  contact_of.assign(bodies.size(), -1);
  update_jointed();
  const bool friction = settings.contact.friction;
  const bool penalty = settings.contact.model == ContactModel::Penalty;
  // Bodies in contact with another dynamic body take their collider contacts into the same
  // complementarity problem (pair_contact.cpp): one friction law for a pile or a stack. So do
  // jointed bodies under the exact model with friction: their contacts solved over the joint
  // solve's Schur complement, with the joints' limits and drives, as a chain's links touching
  // a wheel are. Folded into each body's operator instead, a net draped with friction over a
  // cylinder diverged at step 112 (h = 2e-3), as a chain of small stiff links draped over a
  // collider did within steps. Without friction the folded rows give the same steps
  // (net_on_cylinder to its end at h = 2e-3 and 1/30, the same energies) about 15 to 100
  // times faster than the Schur complement.
  if (pairs) detect_pair_contacts(margin);
  const bool jointed_exact = !penalty && !joints.empty() && settings.contact.friction;
  std::size_t prev = 0;
  for (const auto& cp : contact_points) {
    if ((!paired_body.empty() && paired_body[cp.body]) ||
        (jointed_exact && jointed_body[cp.body])) {
      if (!pairs) {  // the first: the articulations the pair solve works on
        update_articulations();
        pairs = true;
      }
      add_pair_contact(cp, false);
      continue;
    }
    const auto& B = bodies[cp.body];
    const auto& Cm = bodies[cp.collider];
    Contact c;
    c.body = cp.body;
    c.collider = cp.collider;
    c.feature = cp.feature;
    c.p = B.R_up().transpose() * (cp.p_body - B.com_u());
    c.pc = Cm.R_up().transpose() * (cp.p_collider - Cm.com_u());
    const Mat3 Ac = detail::affine_A(q[cp.collider]);  // a rotation: colliders are rigid
    c.nc = Ac.transpose() * cp.normal;
    // The normal row acts at the body's core point (a sphere's centre, a capsule's axis) and
    // at the collider point lifted by the body's radius along the normal: the same gap, and
    // its value follows the round surface as the body turns. At a material point of the
    // surface, a sphere or capsule turning about its centre or axis (free there but for a tiny
    // inertia) moves that point off the line of contact, and the push there turns it further
    // (a negative rotational stiffness): Newton on a draped net of stiff links at h = 1/30
    // cycled without converging. The friction rows keep the surface point (rolling).
    c.pn = c.p + detail::to_body_frame(q[cp.body], cp.body_radius * cp.normal);
    c.pcn = c.pc + cp.body_radius * c.nc;
    c.mu = friction ? std::sqrt(B.friction() * Cm.friction()) : 0.0;
    // The same feature as last step (same body point): keep its state and friction anchor.
    auto key = [](const Contact& x) { return std::make_tuple(x.body, x.collider, x.feature); };
    while (prev < contacts_prev.size() && key(contacts_prev[prev]) < key(c)) ++prev;
    const Vec3 x0 = detail::point(q[c.body], c.p);
    const Vec3 xc = detail::affine_t(q[c.collider]);
    c.anchor = Ac.transpose() * (x0 - xc);
    // Tangent basis along the relative sliding velocity (the pyramid aligned with the slip).
    const Vec3 n = cp.normal;
    Vec3 v = detail::point(qdot[c.body], c.p) - detail::point(qdot[c.collider], c.pc);
    v -= n * n.dot(v);
    Vec3 t1 = v.norm() > 1e-9 ? Vec3(v.normalized()) : any_perpendicular(n);
    const bool matched = prev < contacts_prev.size() && key(contacts_prev[prev]) == key(c) &&
                         (contacts_prev[prev].p - c.p).norm() <= 1e-9 * std::max(1.0, B.info.size);
    if (penalty && matched && contacts_prev[prev].active && contacts_prev[prev].m_eff[0] > 0) {
      // Penalty: the friction springs keep their directions (turned into the new tangent
      // plane should the normal have moved) and every spring its stiffness (Contact::m_eff).
      // (A state saved without the effective masses has 0: taken again here.)
      const Contact& old = contacts_prev[prev];
      Vec3 kept = Ac * old.t1c;
      if (std::abs(n.dot(kept)) > 1e-12) kept -= n * n.dot(kept);
      if (kept.norm() > 0.5) {
        t1 = kept.normalized();
        std::copy(old.m_eff, old.m_eff + 3, c.m_eff);
      }
    }
    c.t1c = Ac.transpose() * t1;
    c.t2c = Ac.transpose() * n.cross(t1);
    if (matched && contacts_prev[prev].active) {
      // Its sets and forces as the last step ended them (the friction force carried over to
      // the new tangents), the anchor while it sticks.
      const Contact& old = contacts_prev[prev];
      c.active = c.was_active = true;
      c.lambda[0] = old.lambda[0];
      const Vec3 ft = old.lambda[1] * old.t1c + old.lambda[2] * old.t2c;  // collider frame
      c.lambda[1] = ft.dot(c.t1c);
      c.lambda[2] = ft.dot(c.t2c);
      if (penalty) {  // the spring carries its anchor; it slides on while it was dragged
        c.sliding = old.dragged;
        c.anchor = old.anchor;
      } else {
        c.sliding = old.sliding;
        if (!old.sliding) c.anchor = old.anchor;
      }
    } else if (c.mu > 0 && v.norm() > std::max(c.mu * settings.gravity.norm() * h, kSlideSpeed)) {
      // A new contact that slips faster than friction could stop in one step under its
      // weight is not caught by a stiff sticking row that the passes would then have to undo.
      // It starts sliding: exact, its force follows the normal force from the first pass;
      // penalty, its spring has no damper and is dragged onto the cone by the passes.
      c.sliding = true;
    }
    if (penalty && c.m_eff[0] <= 0) {
      c.m_eff[0] = rigid_effective_mass(B, q[c.body], c.pn, n);
      c.m_eff[1] = rigid_effective_mass(B, q[c.body], c.p, t1);
      c.m_eff[2] = rigid_effective_mass(B, q[c.body], c.p, n.cross(t1));
    }
    // Row values at q^n, for the dampers.
    const Vec3 anchor_w = Ac * c.anchor + xc;
    c.s0[0] = std::min(cp.gap, 0.0);
    c.s0[1] = t1.dot(x0 - anchor_w);
    c.s0[2] = n.cross(t1).dot(x0 - anchor_w);
    if (contact_of[c.body] < 0) {
      contact_of[c.body] = static_cast<std::int32_t>(contact_bodies.size());
      ContactBody cb;
      cb.body = c.body;
      cb.begin = static_cast<std::uint32_t>(contacts.size());
      contact_bodies.push_back(std::move(cb));
    }
    contacts.push_back(c);
    contact_bodies.back().end = static_cast<std::uint32_t>(contacts.size());
  }
  if (pairs) finish_pair_contacts();
  contact_first_build = true;
}

void World::Impl::contact_operator(ContactBody& cb) {
  const std::size_t i = cb.body;
  cb.rows = 0;  // solve_body below: without this body's contact correction
  const bool penalty = settings.contact.model == ContactModel::Penalty;
  Vec12 f = cb.f;
  struct Pending {
    Vec12 g;
    double value, s0, m_eff;
    int contact, kind;
  };
  std::vector<Pending> rows;
  rows.reserve(3 * (cb.end - cb.begin));
  for (std::uint32_t k = cb.begin; k < cb.end; ++k) {
    Contact& c = contacts[k];
    const Vec12& qc = q[c.collider];
    const Mat3 Ac = detail::affine_A(qc);
    const Vec3 n = Ac * c.nc, t1 = Ac * c.t1c, t2 = Ac * c.t2c;  // world, at the collider's pose
    const double gap = normal_gap(c, q[i]);
    if (contact_first_build && !c.active && gap < 0) c.active = true;
    if (!c.active) continue;
    rows.push_back({detail::grad_point(c.pn, n), gap, c.s0[0], c.m_eff[0], int(k), 0});
    if (c.mu <= 0) continue;
    const Vec3 x = detail::point(q[i], c.p);
    const Vec3 anchor = Ac * c.anchor + detail::affine_t(qc);
    if (c.sliding && !penalty) {  // exact: friction at the cone, a fixed force
      f -= detail::grad_point(c.p, t1) * c.lambda[1] + detail::grad_point(c.p, t2) * c.lambda[2];
      continue;
    }
    rows.push_back(
        {detail::grad_point(c.p, t1), t1.dot(x - anchor), c.s0[1], c.m_eff[1], int(k), 1});
    rows.push_back(
        {detail::grad_point(c.p, t2), t2.dot(x - anchor), c.s0[2], c.m_eff[2], int(k), 2});
  }
  const int r = static_cast<int>(rows.size());
  // The rows and their penalty compliances (the exact model's follow from V below).
  Eigen::Matrix<double, Eigen::Dynamic, 12> G(r, 12);
  Eigen::VectorXd alpha = Eigen::VectorXd::Zero(r);
  std::vector<std::pair<int, int>> row_of(static_cast<std::size_t>(r));
  cb.c.resize(r);
  for (int a = 0; a < r; ++a) {
    G.row(a) = rows[a].g.transpose();
    row_of[a] = {rows[a].contact, rows[a].kind};
    if (penalty && rows[a].kind > 0 && contacts[rows[a].contact].sliding) {
      alpha[a] = 1.0 / penalty_stiffness(settings, rows[a].m_eff);
      cb.c[a] = rows[a].value;
    } else if (penalty) {
      const PenaltyLaw law = penalty_law(settings, rows[a].m_eff, rows[a].s0);
      alpha[a] = 1.0 / law.k_eff;
      cb.c[a] = rows[a].value - law.pull / law.k_eff;
    } else {
      cb.c[a] = rows[a].value;
    }
  }
  // The same rows and compliances as the operator built in this iteration (a pass that only
  // dragged a friction anchor or moved a sliding force): V and S_c^{-1} stand, and so does
  // every dual matrix built on them.
  const bool same = cb.built == operator_stamp && row_of == cb.row_of && cb.G.rows() == r &&
                    cb.alpha.size() == r && G == cb.G && (!penalty || alpha == cb.alpha);
  if (!same) {
    cb.G = G;
    cb.row_of = std::move(row_of);
    cb.V.resize(12, r);
    for (int a = 0; a < r; ++a) {
      cb.V.col(a) = solve_body(i, rows[a].g);
      if (!penalty) alpha[a] = kExactFloor * rows[a].g.dot(cb.V.col(a));
    }
    cb.alpha = alpha;
    if (r > 0) {
      Eigen::MatrixXd S = cb.G * cb.V;
      S = 0.5 * (S + S.transpose());
      S.diagonal() += cb.alpha;
      Eigen::LDLT<Eigen::MatrixXd> ldlt(S);
      cb.S_inv = ldlt.solve(Eigen::MatrixXd::Identity(r, r));
      cb.S_inv = 0.5 * (cb.S_inv + cb.S_inv.transpose());
    }
    cb.built = operator_stamp;
    resolvable.solver = nullptr;
    stale_operators.bodies.push_back(static_cast<std::uint32_t>(i));
  }
  cb.f_rows = f;
  const Vec12 y_free = solve_body(i, f);
  if (r == 0) {
    y[i] = y_free;
    return;
  }
  y[i] = y_free - cb.V * (cb.S_inv * (cb.V.transpose() * f + cb.c));
  cb.rows = r;
}

void World::Impl::contact_operators() {
  for (auto& cb : contact_bodies) contact_operator(cb);
  contact_first_build = false;
}

bool World::Impl::update_contacts(bool last_pass) {
  const bool penalty = settings.contact.model == ContactModel::Penalty;
  bool any_change = false;
  for (auto& cb : contact_bodies) {
    const std::size_t i = cb.body;
    const Vec12& dq = y[i];
    // lambda = (c + G dq) / alpha; without joint rows on the body, the same from its own
    // right-hand side, S_c^{-1} (V^T f + c), which does not divide a round-off-sized
    // residual by the exact model's tiny compliance.
    const bool own = !contact_jointed(i);
    Eigen::VectorXd lambda_own;
    // (The pair contacts' force on the body, when it has some, adds to its right-hand side.)
    if (own && cb.rows > 0) {
      const bool paired = !pair_force.empty();
      lambda_own = cb.S_inv * (cb.V.transpose() *
                                   (paired ? Vec12(cb.f_rows + pair_force[i]) : cb.f_rows) +
                               cb.c);
    }
    for (int a = 0; a < cb.rows; ++a) {
      const double lambda = own ? lambda_own[a] : (cb.c[a] + cb.G.row(a).dot(dq)) / cb.alpha[a];
      contacts[cb.row_of[a].first].lambda[cb.row_of[a].second] = lambda;
    }
    // Penalty: while a friction force of the body is still far outside its cone, the
    // normal rows are not released: the excess friction's torque would lift them, and the
    // passes settle the friction first.
    bool settling = false;
    for (std::uint32_t k = cb.begin; penalty && k < cb.end; ++k) {
      const Contact& c = contacts[k];
      const double bound = c.mu * std::max(-c.lambda[0], 0.0);
      settling |= c.active && c.mu > 0 &&
                  std::hypot(c.lambda[1], c.lambda[2]) > (1 + kSettleExcess) * bound;
    }
    bool changed = false;
    for (std::uint32_t k = cb.begin; k < cb.end; ++k) {
      Contact& c = contacts[k];
      const Mat3 Ac = detail::affine_A(q[c.collider]);
      if (!c.active) {
        // Would the row push at the end of this iteration? Exact: where the point would
        // penetrate. Penalty: where spring and damper together would push (a penetrating
        // point that separates fast enough stays free: the law never pulls).
        const double gap = normal_gap(c, Vec12(q[i] + dq));
        bool pushes = gap < 0;
        if (pushes && penalty) {
          const PenaltyLaw law = penalty_law(settings, c.m_eff[0], c.s0[0]);
          pushes = law.k_eff * gap - law.pull < 0;
        }
        if (pushes && !last_pass) {  // its friction state as detection or release left it
          c.active = true;
          changed = true;
        }
        continue;
      }
      const double push = -c.lambda[0];
      const Vec3 t1 = Ac * c.t1c, t2 = Ac * c.t2c;
      if (penalty && c.mu > 0) {
        const double lt = std::hypot(c.lambda[1], c.lambda[2]);
        const double bound = c.mu * std::max(push, 0.0);  // a pulling row: no friction
        // Penalty friction is elasto-plastic: the rows stay springs; beyond the cone the
        // anchor is dragged after the point until the force lies on the cone, along the
        // spring's own force (continuous, never a direction taken from a tiny slip).
        if (lt > bound * (1 + 1e-9)) {
          // Target force on the cone; the dragged spring carries it without its damper (k only:
          // a damper on the slip would be viscous friction on top of Coulomb's).
          const double s = bound / lt;
          const Vec3 x_end = detail::point(Vec12(q[i] + dq), c.p);
          const Vec3 anchor_w = Ac * c.anchor + detail::affine_t(q[c.collider]);
          Vec3 shift = Vec3::Zero();
          for (int k = 1; k <= 2; ++k) {
            const Vec3& t = k == 1 ? t1 : t2;
            c.lambda[k] *= s;
            const double stiffness = penalty_stiffness(settings, c.m_eff[k]);
            shift += t * (t.dot(x_end - anchor_w) - c.lambda[k] / stiffness);
          }
          c.anchor += Ac.transpose() * shift;
          if (!c.sliding) changed = true;  // its rows lose their dampers
          c.sliding = c.dragged = true;
          if (!last_pass && 1 - s > kForceTolerance) changed = true;
        }
      }
      if (push < 0) {  // pulls: release
        if (!last_pass && !settling) {
          c.active = false;
          c.lambda[0] = c.lambda[1] = c.lambda[2] = 0;
          changed = true;
        }
        continue;
      }
      if (c.mu <= 0 || penalty) continue;
      const double lt = std::hypot(c.lambda[1], c.lambda[2]);
      const double bound = c.mu * push;
      if (!c.sliding) {
        if (lt <= bound * (1 + 1e-9)) continue;  // sticks: inside the cone
        // Slides from here on, along the direction of the sticking force; should it stick
        // again within the step, it holds where the step began. (A point that slides into the
        // step has that anchor from detection.)
        c.sliding = true;
        changed = true;
        const Mat3 Ac0 = detail::affine_A(q_prev[c.collider]);
        c.anchor = Ac0.transpose() *
                   (detail::point(q_prev[i], c.p) - detail::affine_t(q_prev[c.collider]));
        c.lambda[1] *= bound / lt;
        c.lambda[2] *= bound / lt;
        continue;
      }
      // Sliding: the friction force -lambda_t opposes the slip of the point over the step
      // (relative to the collider's material point), with magnitude mu |lambda_n|. A slip
      // that the force has turned round (or stopped) means the point sticks instead.
      const Vec3 x_end = detail::point(Vec12(q[i] + dq), c.p);
      Vec3 slip = (x_end - detail::point(q_prev[i], c.p)) -
                  (detail::point(q[c.collider], c.pc) - detail::point(q_prev[c.collider], c.pc));
      const double s1 = slip.dot(t1), s2 = slip.dot(t2), sn = std::hypot(s1, s2);
      // A slip turned round by the force, or slower than kStickSpeed, sticks (held where the
      // step began): a point at the cone's edge without a slip of its own then alternates
      // between a sticking row and the force on the cone along the sticking force, never a
      // direction taken from round-off.
      if (!last_pass &&
          (sn < kStickSpeed * settings.dt || s1 * c.lambda[1] + s2 * c.lambda[2] < 0)) {
        c.sliding = false;  // its anchor is already the step's start point (see above)
        changed = true;
        continue;
      }
      if (sn == 0) continue;
      const double l1 = bound * s1 / sn, l2 = bound * s2 / sn;
      if (!last_pass && std::hypot(l1 - c.lambda[1], l2 - c.lambda[2]) > kForceTolerance * bound) {
        changed = true;
      }
      c.lambda[1] = l1;
      c.lambda[2] = l2;
    }
    cb.dirty = changed;
    any_change |= changed;
  }
  return any_change;
}

Mat3 World::Impl::contact_point_block(std::size_t i, const Vec3& p1, const Vec3& p2) const {
  const ContactBody& cb = contact_bodies[contact_of[i]];
  auto JV = [&](const Vec3& p) {
    Eigen::Matrix<double, 3, Eigen::Dynamic> m(3, cb.rows);
    for (int a = 0; a < cb.rows; ++a) m.col(a) = detail::point(cb.V.col(a), p);
    return m;
  };
  const auto j1 = JV(p1);
  return j1 * cb.S_inv * (&p1 == &p2 ? j1 : JV(p2)).transpose();
}

Mat3 World::Impl::correction_body_block(std::size_t i, const Vec3& p1, const Vec3& p2) const {
  Mat3 m = geo[i] >= 0 ? geo_body_block(i, p1, p2) : Mat3::Zero();
  if (!contact_of.empty() && contact_of[i] >= 0 && contact_bodies[contact_of[i]].rows > 0) {
    const Mat3& R = rot[i];
    m += R.transpose() * contact_point_block(i, p1, p2) * R;
  }
  return m;
}

void World::Impl::subtract_clique_correction(std::size_t b, int n, const Vec12* vb,
                                             const Vec12* const* g, double* a) const {
  if (geo[b] >= 0) {
    // Geometric term (body frame): - (Z0^T v_i) . C_b (Z0^T v_l).
    const Mat3& C = geo_c(b);
    const auto& Z0 = factors[bodies[b].factor].Z0;
    // On the stack for the usual cliques (the tree solver factors nodes on several threads).
    constexpr int kStack = 24;
    std::array<Vec3, kStack> sb_stack, csb_stack;
    std::vector<Vec3> sb_heap, csb_heap;
    if (n > kStack) {
      sb_heap.resize(n);
      csb_heap.resize(n);
    }
    Vec3* sb = n > kStack ? sb_heap.data() : sb_stack.data();
    Vec3* csb = n > kStack ? csb_heap.data() : csb_stack.data();
    for (int i = 0; i < n; ++i) {
      Vec3 t = Vec3::Zero();
      for (int k2 = 0; k2 < 3; ++k2) {
        t.noalias() += Z0.block<3, 3>(3 * k2, 0).transpose() * vb[i].segment<3>(3 * k2);
      }
      sb[i] = t;
      csb[i].noalias() = C * sb[i];
    }
    for (int l = 0; l < n; ++l) {
      for (int i = l; i < n; ++i) a[i + l * n] -= sb[i].dot(csb[l]);
    }
  }
  if (!contact_of.empty() && contact_of[b] >= 0 && contact_bodies[contact_of[b]].rows > 0) {
    // Contact rows (world frame): - (V^T g_i) . S_c^{-1} (V^T g_l).
    const ContactBody& cb = contact_bodies[contact_of[b]];
    Eigen::MatrixXd Vg(cb.rows, n);
    for (int i = 0; i < n; ++i) Vg.col(i) = cb.V.transpose() * *g[i];
    const Eigen::MatrixXd SVg = cb.S_inv * Vg;
    for (int l = 0; l < n; ++l) {
      for (int i = l; i < n; ++i) a[i + l * n] -= Vg.col(i).dot(SVg.col(l));
    }
  }
}

double World::Impl::penalty_energy(bool at_start) const {
  return contact_energy_at(at_start ? q_prev : q, true);
}

double World::Impl::contact_energy_at(const std::vector<Vec12>& qs, bool reach_only) const {
  if (settings.contact.model != ContactModel::Penalty) return 0;
  const auto spring = [&](double m_eff, double extension) {
    return 0.5 * penalty_stiffness(settings, m_eff) * extension * extension;
  };
  double e = 0;
  for (const Contact& c : contacts) {
    if (reach_only && !impact_reach[articulation[c.body]]) continue;
    const double gap = normal_gap(c, qs[c.body], qs[c.collider]);
    if (gap < 0) e += spring(c.m_eff[0], gap);
    // The friction rows' springs on their anchors (active points only: a released point's
    // spring is gone, and a new point's anchor is where it touched).
    if (!c.active || c.mu <= 0) continue;
    const Mat3 Ac = detail::affine_A(qs[c.collider]);
    const Vec3 anchor = Ac * c.anchor + detail::affine_t(qs[c.collider]);
    const Vec3 d = detail::point(qs[c.body], c.p) - anchor;
    e += spring(c.m_eff[1], (Ac * c.t1c).dot(d)) + spring(c.m_eff[2], (Ac * c.t2c).dot(d));
  }
  for (const PairContact& c : pair_contacts) {
    if (reach_only && !impact_reach[articulation[c.a]]) continue;
    const double gap = c.normal_gap(qs[c.a], qs[c.b]);
    if (gap < 0) e += spring(c.m_eff, gap);
  }
  return e;
}

void World::Impl::contact_stats() {
  stats.contacts = 0;
  stats.max_penetration = 0;
  for (const auto& c : contacts) {
    if (!c.active) continue;
    ++stats.contacts;
    stats.max_penetration = std::max(stats.max_penetration, -normal_gap(c, q[c.body]));
  }
  for (const auto& c : pair_contacts) {
    if (!(c.lambda[0] < 0)) continue;
    ++stats.contacts;
    stats.max_penetration = std::max(stats.max_penetration, -c.normal_gap(q[c.a], q[c.b]));
  }
  // Soft bodies' surface nodes that push (the iterate is the step's end: before end_step).
  for (const SoftBody& sb : soft_bodies) {
    for (const SoftContact& c : sb.contacts) {
      if (!(c.lambda[0] < 0)) continue;
      ++stats.contacts;
      const Vec3 x = soft_point(sb.solid->iterate(), c.corners, c.nodes, c.weights);
      stats.max_penetration =
          std::max(stats.max_penetration, -c.n.dot(x - detail::point(q[c.body], c.p)));
    }
  }
}

// ---- Public queries ----------------------------------------------------------------------

std::vector<ContactInfo> World::contacts() const {
  const Impl& w = *impl_;
  std::vector<ContactInfo> out;
  for (const auto& c : w.contacts) {
    if (!c.active) continue;
    ContactInfo info;
    info.body = BodyId{c.body};
    info.collider = BodyId{c.collider};
    info.point = detail::point(w.q[c.body], c.p);
    info.normal = detail::affine_A(w.q[c.collider]) * c.nc;
    info.depth = -w.normal_gap(c, w.q[c.body]);
    info.force = w.contact_force(c);
    info.sliding = c.sliding;
    out.push_back(info);
  }
  for (const auto& c : w.pair_contacts) {
    if (!(c.lambda[0] < 0)) continue;
    ContactInfo info;
    info.body = BodyId{c.a};
    info.collider = BodyId{c.b};
    info.point = detail::point(w.q[c.a], c.pa);
    info.normal = c.n;
    info.depth = -c.normal_gap(w.q[c.a], w.q[c.b]);
    info.force = -(c.lambda[0] * c.n + c.lambda[1] * c.t1 + c.lambda[2] * c.t2);
    info.sliding = std::hypot(c.lambda[1], c.lambda[2]) >= c.mu * -c.lambda[0] * (1 - 1e-9) &&
                   c.mu > 0;
    out.push_back(info);
  }
  // Soft bodies' surface nodes that push (their rows' forces act on the node as -d lambda).
  for (std::uint32_t k = 0; k < w.soft_bodies.size(); ++k) {
    const Impl::SoftBody& sb = w.soft_bodies[k];
    for (const Impl::SoftContact& c : sb.contacts) {
      if (!(c.lambda[0] < 0)) continue;
      ContactInfo info;
      info.soft_body = SoftBodyId{k};
      info.node = c.node;
      info.collider = BodyId{static_cast<std::uint32_t>(c.body)};
      info.point = Impl::soft_point(sb.solid->positions(), c.corners, c.nodes, c.weights);
      info.normal = c.n;
      info.depth = -c.n.dot(info.point - detail::point(w.q[c.body], c.p));
      info.force = -(c.lambda[0] * c.n + c.lambda[1] * c.t1 + c.lambda[2] * c.t2);
      info.sliding = c.mu > 0 && std::hypot(c.lambda[1], c.lambda[2]) >=
                                     c.mu * -c.lambda[0] * (1 - 1e-9);
      out.push_back(info);
    }
  }
  return out;
}

void World::exclude_collision(BodyId a, BodyId b) {
  impl_->check_id(a);
  impl_->check_id(b);
  impl_->collision.exclude_pair(a.index, b.index);
}

}  // namespace mabd
