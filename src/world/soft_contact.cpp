// Contacts of soft bodies: their surface nodes against every colliding body (static,
// kinematic or dynamic), found at the start of a step and kept for it; their rows join the
// attachments' in the soft bodies' iteration (soft_bodies.cpp).
#include <algorithm>
#include <cmath>

#include "body/affine.h"
#include "collision/closest_point.h"
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
  std::vector<Vec3> points, vertices, outward;
  std::vector<detail::PointContact> found;
  std::vector<detail::TriangleContact> found_faces;
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
    // Contact c (its node or face point set) with body `body` at p_user (the body's user
    // frame), normal n from the body, the body's rounding and the gap (m).
    auto touch = [&](SoftContact& c, std::uint32_t body, const Vec3& p_user, const Vec3& n,
                     double radius, double gap) {
      c.body = static_cast<std::int32_t>(body);
      const auto& b = bodies[body];
      c.p = b.R_up().transpose() * (p_user - b.com_u());
      c.n = n;
      // The normal row on a sphere or capsule runs from its core point, less the radius: the
      // same gap, and no turn of the body about its centre or axis moves it. (From the
      // touched point, a turn would carry that point off under the node: a light round body
      // would spin to let the node in.)
      c.offset = radius;
      c.pn = c.p - detail::to_body_frame(q_prev[body], radius * c.n);
      tangents(c.n, c.t1, c.t2);
      c.mu = settings.contact.friction ? std::sqrt(s.friction * b.friction()) : 0.0;
      c.s0 = gap;
      c.x0 = soft_point(st.x, c.corners, c.nodes, c.weights);
      c.c0 = detail::point(q_prev[body], c.p);
      soft_touch_dynamic |= b.dynamic();
    };
    collision.detect_points(poses, points, margin, attached, found);
    const std::size_t first = s.contacts.size();
    for (const detail::PointContact& pc : found) {
      SoftContact c;
      c.node = c.nodes[0] = s.surface[pc.point];
      if (s.solid->free_dof(c.node) < 0) continue;  // pinned: it goes where its pin says
      touch(c, pc.body, pc.p_body, pc.normal, pc.radius, pc.gap);
      s.contacts.push_back(c);
    }
    // A body's edge or corner between the nodes: the points of the faces it nears.
    outward.clear();
    for (const auto& f : s.faces) {
      const Vec3 a = st.x.segment<3>(3 * f[0]);
      const Vec3 e = (st.x.segment<3>(3 * f[1]) - a).cross(st.x.segment<3>(3 * f[2]) - a);
      const double len = e.norm();
      outward.push_back(len > 0 ? Vec3(e / len) : Vec3::UnitZ());
    }
    vertices.resize(s.solid->model().num_nodes());
    for (std::size_t i = 0; i < vertices.size(); ++i) vertices[i] = st.x.segment<3>(3 * i);
    found_faces.clear();
    if (s.face_contacts) {
      collision.detect_triangles(poses, vertices, s.faces, outward, margin, attached, found_faces);
    }
    for (const detail::TriangleContact& tc : found_faces) {
      SoftContact c;
      c.corners = 3;
      const auto& f = s.faces[tc.triangle];
      bool free = true;
      for (int k = 0; k < 3; ++k) {
        c.nodes[k] = f[k];
        free = free && s.solid->free_dof(f[k]) >= 0;
      }
      if (!free) continue;  // a pinned corner goes where its pin says
      c.weights = tc.weights;
      int most = 0;
      for (int k = 1; k < 3; ++k) most = c.weights[k] > c.weights[most] ? k : most;
      c.node = c.nodes[most];
      touch(c, tc.body, tc.p_body, tc.normal, tc.radius, tc.gap);
      const auto& b = bodies[tc.body];
      c.core0 = b.R_up().transpose() * (tc.core0 - b.com_u());
      c.core1 = b.R_up().transpose() * (tc.core1 - b.com_u());
      s.contacts.push_back(c);
    }
    // Warm starts from the same node, or the same face, on the same body last step.
    for (std::size_t i = first; i < s.contacts.size(); ++i) {
      SoftContact& c = s.contacts[i];
      for (const SoftContact& old : s.contacts_prev) {
        if (old.corners == c.corners && old.nodes == c.nodes && old.body == c.body) {
          c.lambda = old.lambda;
          break;
        }
      }
    }
  }
}

void World::Impl::soft_contact_rows() {
  const double h = settings.dt;
  for (std::uint32_t k = 0; k < soft_bodies.size(); ++k) {
    SoftBody& s = soft_bodies[k];
    for (SoftContact& c : s.contacts) {
      if (c.corners == 3 && c.offset > 0) {
        // A face against a round body: the face's point nearest the core and the direction to
        // it at this iterate (the gradient of their distance), so that the face rolls over
        // the body. Fixed for the step, the point pivoted: the face turned into the body by
        // about r (turn)^2 / 2 a step, and pushing it out next step did work.
        const Eigen::VectorXd& xi = s.solid->iterate();
        const Vec3 a = xi.segment<3>(3 * c.nodes[0]), b = xi.segment<3>(3 * c.nodes[1]),
                   e = xi.segment<3>(3 * c.nodes[2]);
        const Vec3 p0 = detail::point(q[c.body], c.core0), p1 = detail::point(q[c.body], c.core1);
        double t = 0;
        Vec3 near;
        detail::closest_segment_triangle(p0, p1, a, b, e, t, near);
        const Vec3 core = p0 + t * (p1 - p0);
        const double dist = (near - core).norm();
        if (dist > 1e-12 * c.offset) {
          c.pn = (1 - t) * c.core0 + t * c.core1;
          c.weights = detail::barycentric(near, a, b, e).cwiseMax(0.0);
          c.weights /= c.weights.sum();
          c.n = (near - core) / dist;
          tangents(c.n, c.t1, c.t2);
          c.p = c.pn + detail::to_body_frame(q[c.body], c.offset * c.n);
          c.x0 = soft_point(s.solid->state().x, 3, c.nodes, c.weights);
          c.c0 = detail::point(q_prev[c.body], c.p);
        }
      }
      const Vec3 x = soft_point(s.solid->iterate(), c.corners, c.nodes, c.weights);
      const Vec3 xb = detail::point(q[c.body], c.p);
      const bool moves = bodies[c.body].dynamic();
      for (int t = 0; t < 3; ++t) {
        SoftRow r;
        r.soft = k;
        r.node = c.node;
        r.corners = c.corners;
        r.nodes = c.nodes;
        r.weights = c.weights;
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
