// Contacts of soft bodies: their surface nodes against every colliding body (static,
// kinematic or dynamic), found at the start of a step and kept for it; their rows join the
// attachments' in the soft bodies' iteration (soft_bodies.cpp).
#include <algorithm>
#include <cmath>

#include "body/affine.h"
#include "world/contact_laws.h"
#include "world/world_impl.h"

namespace mabd {
namespace {

/// Tangents t1, t2 completing the unit normal n to a right-handed frame.
void tangents(const Vec3& n, Vec3& t1, Vec3& t2) {
  t1 = (std::abs(n.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY()).cross(n).normalized();
  t2 = n.cross(t1);
}

}  // namespace

void World::Impl::soft_detect() {
  for (SoftBody& s : soft_bodies) s.contacts.swap(s.contacts_prev);
  for (SoftBody& s : soft_bodies) s.contacts.clear();
  soft_touch_dynamic = false;
  if (settings.contact.model == ContactModel::None || collision.colliding_bodies() == 0) return;
  const double h = settings.dt;
  // Poses of the user frames at q^n, and how far a body point can travel in one step.
  std::vector<Pose> poses(bodies.size());
  double reach = 0;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const auto& b = bodies[i];
    poses[i] = user_pose(i, q_prev[i]);
    if (b.info.kind == BodyKind::Static) continue;
    // Kinematic bodies moved to t + h already (move_kinematic): their travel is q - q_prev.
    const Vec12 dq = b.dynamic() ? Vec12(h * qdot[i]) : Vec12(q[i] - q_prev[i]);
    reach = std::max(reach, dq.tail<3>().norm() + b.info.size * dq.head<9>().norm());
  }
  std::vector<Vec3> points;
  std::vector<detail::PointContact> found;
  for (SoftBody& s : soft_bodies) {
    const fem::FemState& st = s.solid->state();
    points.clear();
    double speed = 0;
    for (int i : s.surface) {
      points.push_back(st.x.segment<3>(3 * i));
      speed = std::max(speed, Vec3(st.v.segment<3>(3 * i)).norm());
    }
    const double margin =
        settings.contact.margin + reach + speed * h + 0.5 * settings.gravity.norm() * h * h;
    // Never against the bodies it is attached to.
    auto attached = [&](std::uint32_t b) {
      for (const auto* list : {&s.links, &s.pins}) {
        for (const SoftLink& l : *list) {
          if (l.body == static_cast<std::int32_t>(b)) return true;
        }
      }
      return false;
    };
    collision.detect_points(poses, points, margin, attached, found);
    for (const detail::PointContact& pc : found) {
      SoftContact c;
      c.node = s.surface[pc.point];
      if (s.solid->free_dof(c.node) < 0) continue;  // pinned: it goes where its pin says
      c.body = static_cast<std::int32_t>(pc.body);
      const auto& b = bodies[pc.body];
      c.p = b.R_up().transpose() * (pc.p_body - b.com_u());
      c.n = pc.normal;
      // The normal row on a sphere or capsule runs from its core point, less the radius: the
      // same gap, and no turn of the body about its centre or axis moves it. (From the
      // touched point, a turn would carry that point off under the node: a light round body
      // would spin to let the node in.)
      c.offset = pc.radius;
      c.pn = c.p - detail::to_body_frame(q_prev[pc.body], pc.radius * c.n);
      tangents(c.n, c.t1, c.t2);
      c.mu = settings.contact.friction ? std::sqrt(s.friction * b.friction()) : 0.0;
      c.s0 = pc.gap;
      c.x0 = st.x.segment<3>(3 * c.node);
      c.c0 = detail::point(q_prev[pc.body], c.p);
      // Warm start from the same node on the same body last step.
      for (const SoftContact& old : s.contacts_prev) {
        if (old.node == c.node && old.body == c.body) {
          c.lambda = old.lambda;
          break;
        }
      }
      soft_touch_dynamic |= b.dynamic();
      s.contacts.push_back(c);
    }
  }
}

void World::Impl::soft_contact_rows() {
  const double h = settings.dt;
  for (std::uint32_t k = 0; k < soft_bodies.size(); ++k) {
    const SoftBody& s = soft_bodies[k];
    for (const SoftContact& c : s.contacts) {
      const Vec3 x = s.solid->iterate().segment<3>(3 * c.node);
      const Vec3 xb = detail::point(q[c.body], c.p);
      const bool moves = bodies[c.body].dynamic();
      for (int t = 0; t < 3; ++t) {
        SoftRow r;
        r.soft = k;
        r.node = c.node;
        r.d = t == 0 ? c.n : (t == 1 ? c.t1 : c.t2);
        r.body = moves ? c.body : -1;
        r.p = t == 0 ? c.pn : c.p;
        r.axis = t;
        r.s0 = c.s0;
        if (t == 0) {
          r.value = c.n.dot(x - detail::point(q[c.body], c.pn)) - c.offset;
          // Exact contact: C >= -(the step's penetration less what kRecoverySpeed removes).
          if (settings.contact.model == ContactModel::Exact) {
            r.value += std::max(0.0, -c.s0 - detail::kRecoverySpeed * h);
          }
        } else {
          r.value = r.d.dot((x - c.x0) - (xb - c.c0));  // slip over the step
        }
        soft_row_list.push_back(r);
      }
    }
  }
}

}  // namespace mabd
